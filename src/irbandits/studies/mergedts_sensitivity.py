"""MergeDTS paper (seed 001) section 6.7, Figure 6: MergeDTS's sensitivity to alpha, M and C on
MSLR-Navigational, and the runs that eliminate the Condorcet winner.

    irbandits reproduce mergedts-sensitivity           # 10^6 steps, 10 runs per setting
    irbandits reproduce mergedts-sensitivity --full    # the paper's 10^7 steps, 100 runs

The grids follow section 5.6: alpha = 0.8^0 .. 0.8^9 with M = 4 and C = 4,726,908 (C(epsilon) at
alpha = 1.01, M = 4, K = 136: the "default values"); then M = 2, 4, 8, 16 with alpha = 0.8^6 and
that C; then C = 4 x 10^2 .. 4 x 10^6 and 4,726,908 with alpha = 0.8^6 and M = 16. A *failure* is a
run at whose end MergeDTS has eliminated the Condorcet winner (read from the algorithm's state,
not guessed from its recommendation: at 10^6 steps large-alpha runs still hold several arms).

Run r of every setting sees the same arm permutation and coin flips as run r of
:func:`irbandits.simulate.simulate` with the same seed. ``out`` keeps each grid's table
(``out/<grid>-T<horizon>-runs<runs>-seed<seed>.parquet``); a rerun with the same settings reads it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from irbandits.dueling import MergeDTS
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import run_one, run_streams
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import MSLR, plot_problems
from irbandits.tasks import Failed, run_tasks

DEFAULT = dict(horizon=10**6, runs=10)
FULL = dict(horizon=10**7, runs=100)
NAME = "mergedts-sensitivity"
PAPER = "MergeDTS paper, section 6.7 (Figure 6)"  # the claims' source
PAPER_SCALE = "10^7 x 100 per setting"  # the paper's horizon x runs
C_DEFAULT = 4_726_908
GRIDS = {
    "alpha": [(f"alpha=0.8^{k}", dict(alpha=0.8**k, M=4, C=C_DEFAULT)) for k in range(10)],
    "M": [(f"M={m}", dict(alpha=0.8**6, M=m, C=C_DEFAULT)) for m in (2, 4, 8, 16)],
    "C": [(f"C={c:,}", dict(alpha=0.8**6, M=16, C=c)) for c in (400, 4_000, 40_000, 400_000, 4_000_000, C_DEFAULT)],
}
PAPER_FAILURES = {"alpha=0.8^9": 10, "alpha=0.8^8": 4, "alpha=0.8^7": 1}  # of 100 runs at 10^7 steps
TITLES = {"alpha": "MergeDTS, alpha grid (M = 4, C = 4,726,908)", "M": "MergeDTS, M grid (alpha = 0.8^6, C = 4,726,908)",
          "C": "MergeDTS, C grid (alpha = 0.8^6, M = 16)"}


def _run(context: tuple, task: tuple) -> pd.DataFrame:
    """Run ``run`` of one setting on ``context = (problem, horizon)``: the trajectory, and ``lost``
    (the Condorcet winner is eliminated at the end)."""
    problem, horizon = context
    label, params, run, run_seed = task
    perm, env_ss, alg_ss = run_streams(run_seed, problem.K)
    algo = MergeDTS(problem.K, seed=alg_ss, horizon=horizon, **params)
    r = run_one(algo, problem, horizon, seed=env_ss, perm=perm)
    winner = int(np.flatnonzero(perm == problem.condorcet_winner)[0])
    lost = bool(algo.state["arrays"]["where"][winner] < 0)
    return pd.DataFrame(dict(algorithm=label, run=run, step=r.steps, regret=r.regret, correct=r.correct, lost=lost))


def run_grid(grid: str, problem: PreferenceMatrix, horizon: int, runs: int, seed: int = 0, jobs: int = 1,
             out: str | Path | None = None) -> pd.DataFrame:
    """Every setting of ``GRIDS[grid]`` for ``runs`` runs; columns algorithm (the setting), run, step,
    regret, correct, lost, problem (= ``grid``)."""
    cache = None if out is None else Path(out) / f"{grid}-T{horizon}-runs{runs}-seed{seed}.parquet"
    if cache is not None and cache.is_file():
        return pd.read_parquet(cache)
    seeds = np.random.SeedSequence(seed).spawn(runs)
    tasks = [(label, params, r, seeds[r]) for label, params in GRIDS[grid] for r in range(runs)]
    pieces: list = [None] * len(tasks)
    for outcome in run_tasks(_run, tasks, (problem, horizon), workers=jobs, progress=False,
                             label=f"mergedts-sensitivity: {grid} grid"):
        if isinstance(outcome, Failed):
            raise RuntimeError(f"mergedts-sensitivity run {tasks[outcome.index][:3]} failed: {outcome.error}")
        pieces[outcome.index] = outcome.value
    table = pd.concat(pieces, ignore_index=True).assign(problem=grid)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(cache, index=False)
    return table


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, matrix: str | Path = MSLR,
              grids=tuple(GRIDS)) -> pd.DataFrame:
    """The alpha, M and C grids on MSLR-Navigational, one table (``problem`` names the grid); runs
    without a progress bar (``progress`` is taken for the command's common call)."""
    problem = PreferenceMatrix.load(matrix, name="mslr-navigational")
    return pd.concat([run_grid(g, problem, int(horizon), runs, seed, jobs, out) for g in grids], ignore_index=True)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per grid and setting: runs, regret mean and SE at the last step, failures (runs that lost the winner)."""
    last = table[table.step == table.step.max()]
    g = last.groupby(["problem", "algorithm"], sort=False)
    out = g.regret.agg(["size", "mean", "std"]).rename(columns={"size": "runs"})
    out["se"] = out.pop("std").fillna(0.0) / np.sqrt(out.runs)
    out["failures"] = g.lost.sum()
    return out.reset_index()


def claims(s: pd.DataFrame, runs: int) -> list[tuple[str, str, bool]]:
    """(the paper's claim, this run's numbers, whether they agree) for section 6.7."""
    by = s.set_index(["problem", "algorithm"])
    out = []
    for label, k in PAPER_FAILURES.items():
        if ("alpha", label) in by.index:
            n = int(by.loc[("alpha", label), "failures"])
            p = binomtest(n, runs, k / 100).pvalue
            out.append((f"{label}: {k} failure{'s' * (k > 1)} in 100 runs", f"{n} in {runs} (binomial p = {p:.2f} at rate {k} %)",
                        p >= 0.05))
    safe = [a for a in by.loc["alpha"].index if a not in PAPER_FAILURES] if "alpha" in by.index.levels[0] else []
    if safe:
        n = int(by.loc[[("alpha", a) for a in safe], "failures"].sum())
        out.append(("alpha >= 0.8^6: no failures", f"{n} failures in {runs * len(safe)} runs", n == 0))
    if ("alpha", "alpha=0.8^4") in by.index and ("alpha", "alpha=0.8^0") in by.index:
        ratio = by.loc[("alpha", "alpha=0.8^4"), "mean"] / by.loc[("alpha", "alpha=0.8^0"), "mean"]
        out.append(("regret at alpha = 0.8^4 is about a third of alpha = 1", f"ratio {ratio:.2f}", 0.2 <= ratio <= 0.5))
    if "M" in by.index.levels[0]:
        means = by.loc["M", "mean"]
        out.append(("the larger M, the lower the regret (M = 2, 4, 8, 16)",
                    ", ".join(f"{m:,.0f}" for m in means), bool(np.all(np.diff(means.to_numpy()) < 0))))
    if "C" in by.index.levels[0]:
        c = by.loc["C"]
        low = int(c.failures.iloc[:4].sum())
        high = int(c.failures.iloc[4:].sum())
        out.append(("C = 4,000,000 is the lowest C without failures (C <= 400,000 fail)",
                    f"{low} failures at C <= 400,000, {high} at C >= 4,000,000", low > 0 and high == 0))
        means = c["mean"].to_numpy()
        out.append(("lower C, lower regret", ", ".join(f"{m:,.0f}" for m in means),
                    bool(np.all(np.diff(means[:5]) > 0))))
    return out


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], matrix: str | Path = MSLR,
         grids=tuple(GRIDS), **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`)."""
    problem = PreferenceMatrix.load(matrix, name="mslr-navigational")
    return [Work(g, label, int(horizon), runs, dueling(problem, lambda T, q=params: MergeDTS(problem.K, seed=0, horizon=T,
                                                                                           **q), int(horizon)))
            for g in grids for label, params in GRIDS[g]]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    s = summary(table)
    return rows(NAME, PAPER, claims(s, int(s.runs.max())),
                scale(table.step.max(), int(s.runs.max()), PAPER_SCALE, what="runs per setting"))


def report(table: pd.DataFrame) -> str:
    """Markdown: the settings' regret and failures, then the paper's claims beside this run's numbers."""
    s = summary(table)
    runs = int(s.runs.max())
    lines = [f"MSLR-Navigational (136 rankers), {int(table.step.max()):,} steps, {runs} runs per setting "
             "(paper: 10^7 steps, 100 runs); arms permuted per run.", "",
             "| grid | setting | cumulative regret (mean +- SE) | failures (lost the Condorcet winner) | paper's failures |",
             "|---|---|---|---|---|"]
    for _, r in s.iterrows():
        paper = f"{PAPER_FAILURES[r.algorithm]} / 100" if r.algorithm in PAPER_FAILURES else (
            "0 / 100 (implied)" if r.problem == "alpha" else "")
        lines.append(f"| {r.problem} | {r.algorithm} | {r['mean']:,.0f} +- {r.se:,.0f} | {int(r.failures)} / {r.runs} "
                     f"| {paper} |")
    lines += ["", markdown(claim_rows(table), "paper (section 6.7)")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    return plot_problems(table, out, "mergedts-sensitivity", TITLES)
