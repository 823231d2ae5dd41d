"""Run dueling-bandit algorithms against Bernoulli problems: compiled loops, many runs, seeds.

One run is a single compiled loop over the whole horizon (no Python call per step). Every run
draws its own arm permutation, algorithm seed and environment seed from
``SeedSequence(seed).spawn(runs)``, so results do not depend on ``jobs``, and run r of every
algorithm sees the same permutation and the same environment stream (paired comparisons).

>>> from irbandits.problems import get_problem
>>> df = simulate(get_problem("arxiv"), ["RUCB"], horizon=10_000, runs=2, seed=3, progress=False)
>>> sorted(df.columns)[:4], int(df.step.max())
(['algorithm', 'copeland_regret', 'correct', 'recommended'], 10000)
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from numba import njit

from irbandits.dueling.base import AlgorithmSpec, DuelingAlgorithm, parse_spec, require_multi_dueling
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix
from irbandits.rng import new_rng, uniform

COLUMNS = ["algorithm", "run", "step", "regret", "copeland_regret", "recommended", "correct", "run_seconds"]


@njit
def bernoulli_duel(P, env, c, d):
    """The Bernoulli proxy: c beats d with probability ``P[c, d]``."""
    return uniform(env) < P[c, d]


@njit
def _run(select, update, recommend, st, rng, env, duel, world, gaps, cgaps, checkpoints, out_reg, out_creg, out_rec):
    """The simulation loop: one duel per step (``duel(world, env, c, d) -> c won``), regret
    recorded at checkpoints."""
    reg = 0.0
    creg = 0.0
    k = 0
    for step in range(1, checkpoints[-1] + 1):
        c, d = select(st, rng)
        c_won = duel(world, env, c, d)
        update(st, rng, c, d, c_won)
        reg += 0.5 * (gaps[c] + gaps[d])
        creg += 0.5 * (cgaps[c] + cgaps[d])
        if step == checkpoints[k]:
            out_reg[k] = reg
            out_creg[k] = creg
            out_rec[k] = recommend(st)
            k += 1


@njit
def _run_many(select_many, update_many, recommend, st, rng, env, multiduel, world, m, gaps, cgaps, checkpoints,
              out_reg, out_creg, out_rec):
    """The multi-dueling loop: ``m`` arms per step compared at once (``multiduel(world, env, arms,
    credit)``); a step's regret is the mean gap of the arms shown (for m = 2, exactly ``_run``'s)."""
    arms, credit = np.empty(m, np.int64), np.empty(m)
    reg = 0.0
    creg = 0.0
    k = 0
    for step in range(1, checkpoints[-1] + 1):
        select_many(st, rng, arms)
        multiduel(world, env, arms, credit)
        update_many(st, rng, arms, credit)
        g, cg = 0.0, 0.0
        for a in arms:
            g += gaps[a]
            cg += cgaps[a]
        reg += g / m
        creg += cg / m
        if step == checkpoints[k]:
            out_reg[k] = reg
            out_creg[k] = creg
            out_rec[k] = recommend(st)
            k += 1


def checkpoints(horizon: int, per_decade: int = 10) -> np.ndarray:
    """Log-spaced steps 1 .. horizon (always including the horizon)."""
    horizon = int(horizon)
    n = max(2, int(np.ceil(np.log10(max(horizon, 10)) * per_decade)) + 1)
    return np.unique(np.concatenate([np.geomspace(1, horizon, n).round().astype(np.int64), [horizon]]))


@dataclass
class RunResult:
    """The trajectory of one run at its checkpoints (arms in the problem's own labels)."""

    steps: np.ndarray
    regret: np.ndarray
    copeland_regret: np.ndarray
    recommended: np.ndarray
    correct: np.ndarray
    seconds: float


def run_one(
    algorithm: DuelingAlgorithm,
    problem: PreferenceMatrix,
    horizon: int,
    seed=0,
    steps: np.ndarray | None = None,
    perm: np.ndarray | None = None,
    environment=None,
) -> RunResult:
    """Run ``algorithm`` (which continues from its current state) for ``horizon`` duels.

    ``perm`` relabels arms (the algorithm's arm i is the problem's arm ``perm[i]``); ``seed`` seeds
    the environment's coin flips. ``environment`` replaces the Bernoulli proxy: an object with a
    compiled ``duel`` kernel and ``world(perm)`` giving its data (e.g.
    :class:`irbandits.clicks.environment.ClickEnvironment`); regret still comes from ``problem``.
    An environment with ``per_step`` = m and a ``multiduel`` kernel (e.g.
    :class:`irbandits.clicks.multidueling.MultileaveEnvironment`) shows m arms per step to a
    multi-dueling algorithm; a step's regret is then the mean gap of its m arms.
    """
    if algorithm.K != problem.K:
        raise IrbanditsError(f"{algorithm.name} has K={algorithm.K} but problem {problem.name} has K={problem.K}")
    perm = np.arange(problem.K) if perm is None else np.asarray(perm)
    steps = checkpoints(horizon) if steps is None else np.asarray(steps, dtype=np.int64)
    P = np.ascontiguousarray(problem.p[np.ix_(perm, perm)])
    gaps = np.ascontiguousarray(problem.gaps[perm])
    cgaps = np.ascontiguousarray(problem.copeland_gaps[perm])
    out_reg, out_creg = np.zeros(len(steps)), np.zeros(len(steps))
    out_rec = np.zeros(len(steps), np.int64)
    cls, m = type(algorithm), getattr(environment, "per_step", None)
    if m is None:
        duel, world = (bernoulli_duel, P) if environment is None else (environment.duel, environment.world(perm))
        loop, kernels, extra = _run, (cls._select, cls._update, cls._recommend), (duel, world)
    else:
        require_multi_dueling(cls)
        loop, kernels = _run_many, (cls._select_many, cls._update_many, cls._recommend)
        extra = (environment.multiduel, environment.world(perm), int(m))
    warm = algorithm.clone()  # compile on a throwaway copy, so timings measure only running
    loop(*kernels, warm._st, warm._rng, new_rng(0), *extra, gaps, cgaps, np.ones(1, np.int64),
         np.zeros(1), np.zeros(1), np.zeros(1, np.int64))
    start = time.perf_counter()
    loop(*kernels, algorithm._st, algorithm._rng, new_rng(seed), *extra, gaps, cgaps, steps, out_reg, out_creg, out_rec)
    seconds = time.perf_counter() - start
    rec = perm[out_rec]
    return RunResult(steps, out_reg, out_creg, rec, np.isin(rec, problem.winners), seconds)


def run_streams(run_seed: np.random.SeedSequence, K: int) -> tuple[np.ndarray, np.random.SeedSequence, np.random.SeedSequence]:
    """A run's arm permutation, environment seed and algorithm seed (run r of ``simulate(seed=s)``
    has ``run_seed = SeedSequence(s).spawn(runs)[r]``)."""
    # fixed children (not .spawn(), which counts calls) so every algorithm of run r sees the same seeds
    perm_ss, env_ss, alg_ss = (
        np.random.SeedSequence(run_seed.entropy, spawn_key=(*run_seed.spawn_key, i)) for i in range(3)
    )
    return np.random.default_rng(perm_ss).permutation(K), env_ss, alg_ss


def _task(spec: AlgorithmSpec, problem: PreferenceMatrix, horizon: int, run: int, run_seed, environment=None) -> pd.DataFrame:
    perm, env_ss, alg_ss = run_streams(run_seed, problem.K)
    algo = spec.make(problem.K, seed=alg_ss, horizon=horizon)
    r = run_one(algo, problem, horizon, seed=env_ss, perm=perm, environment=environment)
    return pd.DataFrame(dict(
        algorithm=spec.label, run=run, step=r.steps, regret=r.regret, copeland_regret=r.copeland_regret,
        recommended=r.recommended, correct=r.correct, run_seconds=r.seconds,
    ))


def _piece_path(out: Path, label: str, run: int) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in label)
    return out / "runs" / f"{safe}--{run}.parquet"


def _check_out_dir(out: Path, config: dict) -> None:
    """Make ``out`` ready for resuming; refuse to mix results of different experiments."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs").mkdir(exist_ok=True)
    cfg_path = out / "config.json"
    if cfg_path.exists():
        old = json.loads(cfg_path.read_text())
        if {k: old.get(k) for k in ("problem", "matrix_sha", "horizon", "seed", "environment")} != {
            k: config.get(k) for k in ("problem", "matrix_sha", "horizon", "seed", "environment")
        }:
            raise IrbanditsError(f"{out} holds results of a different experiment ({old}); use another --out")
    cfg_path.write_text(json.dumps(config, indent=1))


def simulate(
    problem: PreferenceMatrix,
    algorithms: Sequence[str | AlgorithmSpec],
    horizon: int,
    runs: int = 10,
    seed: int = 0,
    jobs: int = 1,
    out: str | Path | None = None,
    progress: bool = True,
    environment=None,
) -> pd.DataFrame:
    """Simulate every algorithm ``runs`` times on ``problem`` and return a tidy table.

    Columns: algorithm, run, step, regret (cumulative Condorcet), copeland_regret (cumulative),
    recommended (arm in the problem's labels), correct (recommended is a winner), run_seconds.
    With ``out``, every finished run is written to ``out/runs/`` at once and the whole table to
    ``out/results.parquet``; a rerun with the same ``out`` skips the runs already there.
    ``environment`` (see :func:`run_one`) makes every duel a real one, e.g. an interleaved comparison,
    or every step one multileaved comparison of m arms (multi-dueling algorithms only).
    """
    horizon = int(horizon)
    if horizon < 1 or runs < 1 or jobs < 1:
        raise IrbanditsError(f"horizon, runs and jobs must be positive (got {horizon}, {runs}, {jobs})")
    specs = [a if isinstance(a, AlgorithmSpec) else parse_spec(a) for a in algorithms]
    if getattr(environment, "per_step", None) is not None:
        for s in specs:
            require_multi_dueling(s.cls)
    if len({s.label for s in specs}) != len(specs):
        raise IrbanditsError("the same algorithm label is given twice")
    run_seeds = np.random.SeedSequence(seed).spawn(runs)
    out = Path(out) if out is not None else None
    if out is not None:
        import hashlib

        _check_out_dir(out, dict(problem=problem.name, matrix_sha=hashlib.sha256(problem.p.tobytes()).hexdigest(),
                                 horizon=horizon, seed=seed, runs=runs, algorithms=[s.label for s in specs],
                                 environment=None if environment is None else repr(environment)))
    pieces: list[pd.DataFrame] = []
    todo = []
    for s in specs:
        for r in range(runs):
            if out is not None and _piece_path(out, s.label, r).exists():
                pieces.append(pd.read_parquet(_piece_path(out, s.label, r)))
            else:
                todo.append((s, r))

    def done(df: pd.DataFrame) -> None:
        pieces.append(df)
        if out is not None:
            df.to_parquet(_piece_path(out, df.algorithm.iloc[0], int(df.run.iloc[0])), index=False)

    with _progress(progress, len(todo), horizon) as advance:
        if jobs == 1 or len(todo) <= 1:
            for s, r in todo:
                done(_task(s, problem, horizon, r, run_seeds[r], environment))
                advance()
        else:
            with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
                futures = [pool.submit(_task, s, problem, horizon, r, run_seeds[r], environment) for s, r in todo]
                for f in as_completed(futures):
                    done(f.result())
                    advance()
    order = {s.label: i for i, s in enumerate(specs)}
    table = pd.concat(pieces, ignore_index=True)
    table = table.sort_values(["algorithm", "run", "step"], key=lambda c: c.map(order) if c.name == "algorithm" else c)
    table = table.reset_index(drop=True)[COLUMNS]
    if out is not None:
        table.to_parquet(out / "results.parquet", index=False)
    return table


class _progress:
    """A rich progress bar counting duels, or nothing when disabled."""

    def __init__(self, enabled: bool, tasks: int, horizon: int, label: str = "simulating runs"):
        self.enabled, self.tasks, self.horizon, self.label = enabled and tasks > 0, tasks, horizon, label

    def __enter__(self):
        if not self.enabled:
            return lambda: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self._bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), TimeRemainingColumn(), transient=False)
        self._bar.start()
        task = self._bar.add_task("runs", total=self.tasks)
        return lambda: self._bar.advance(task)

    def __exit__(self, *exc):
        if self.enabled:
            self._bar.stop()
        return False


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm at the final step: regret mean and standard error, accuracy, time, speed."""
    last = table[table.step == table.step.max()]
    g = last.groupby("algorithm", sort=False)
    runs = g.size()
    summary = pd.DataFrame(dict(
        runs=runs,
        regret_mean=g.regret.mean(),
        regret_se=g.regret.std(ddof=1).fillna(0.0) / np.sqrt(runs),
        copeland_regret_mean=g.copeland_regret.mean(),
        accuracy=g.correct.mean(),
        seconds=g.run_seconds.sum(),
        steps_per_s=table.step.max() * runs / g.run_seconds.sum().clip(lower=1e-9),
    ))
    return summary.reset_index()
