"""Run dueling-bandit algorithms against Bernoulli problems: compiled loops, many runs, seeds.

One run is a compiled loop over the horizon, no Python call per step: it returns to Python only
between chunks of 10^5 steps or more (to report progress and let Ctrl-C through). Every run
draws its own arm permutation, algorithm seed and environment seed from
``SeedSequence(seed).spawn(runs)``, so results do not depend on ``jobs``, and run r of every
algorithm sees the same permutation and the same environment stream (paired comparisons). With an
output directory every finished run is saved at once: an interrupted simulation resumes there. A
run whose algorithm can no longer change its choices (its ``_absorbed`` kernel says so, e.g.
MergeDTS down to one arm) is finished in closed form, with the same numbers bit for bit.

Regret kinds (``regret=``, ``irbandits simulate --regret KIND``). Each kind gives every arm i a gap
g_i >= 0 (0 for the winner of that kind; the Condorcet gaps may be negative on a problem without a
Condorcet winner, see below) and a rule combining the gaps of the arms a step shows: the two arms
(c, d) of a duel, or the m arms of a multi-duel (``environment`` with ``per_step``):

| kind | gap g_i of arm i | one duel (c, d) | m arms shown |
|---|---|---|---|
| `condorcet` | Delta_1i = p_1i - 1/2, arm 1 the Condorcet winner (else the first Copeland winner: `P.gaps`) | (g_c + g_d) / 2 | mean |
| `copeland` | cpld(1) - cpld(i), scores normalised by K - 1 (`P.copeland_gaps`) | (g_c + g_d) / 2 | mean |
| `borda` | b(1) - b(i), b(i) = sum_{j != i} p_ij / (K - 1), arm 1 a Borda winner (`P.borda_gaps`) | (g_c + g_d) / 2 | mean |
| `von-neumann` | sum_j w_j p_ji - 1/2, w the von Neumann winner (`P.von_neumann_gaps`) | (g_c + g_d) / 2 | mean |
| `weak` | Delta_1i, as `condorcet` | min(g_c, g_d) | min |
| `strong` | Delta_1i, as `condorcet` | max(g_c, g_d) | max |
| `auto` | `condorcet` when the problem has a Condorcet winner, else `copeland` | | |

* ``condorcet`` is the lecture slides' regret (seed 004, "Formal framework": add the *average* of
  eps(b*, b_1) and eps(b*, b_2)) and the thesis's Condorcet regret (seed 002, section 2.1.2, Eq. 2.3);
  the project spec (``online.md``) takes the gaps from the first Copeland winner's row when there is
  no Condorcet winner, as the MergeDTS experiments do, so it is defined (and may be negative) there.
* ``copeland``: the thesis's Copeland regret (seed 002, Eq. 2.4, (2 Cpld(1) - Cpld(c) - Cpld(d)) / K with
  Cpld a count) times K / (2 (K - 1)): scores normalised by K - 1, averaged over the two arms
  (:meth:`~irbandits.problems.PreferenceMatrix.copeland_regret`).
* ``weak`` and ``strong``: the project spec (``online.md``) and
  :meth:`~irbandits.problems.PreferenceMatrix.strong_regret`: weak regret min{eps(b*, b_t), eps(b*, b'_t)}
  (a duel that shows the best arm costs nothing; Yue, Broder, Kleinberg & Joachims, "The K-armed
  dueling bandits problem", JCSS 78(5), 2012, section 2, and the slides' Lemma 5 bound this one) and
  strong regret max{eps(b*, b_t), eps(b*, b'_t)} (the worse arm shown). Yue et al.'s strong regret is
  the *sum* of the two gaps: exactly twice ``condorcet`` (the slides' average), so it needs no kind of
  its own. Both use ``condorcet``'s gaps, so the same reference arm on a problem without a Condorcet
  winner.
* ``borda``: the Borda (average-win) regret against the Borda winner, averaged over the two arms as
  ``condorcet`` is (the adversarial dueling-bandit papers, e.g. Saha, Koren & Mansour, ICML 2021, sum
  the two arms' gaps instead: twice this).
* ``von-neumann``: how much the von Neumann winner w (the optimal mixed strategy of the symmetric
  zero-sum game P - 1/2, ``problems --describe`` shows it) beats each arm shown, averaged over the two
  (Dudik, Hofmann, Schapire, Slivkins & Zoghi, "Contextual dueling bandits", COLT 2015, measure
  preferences in [-1, 1]: twice this). g_i >= 0 because w is optimal, and g_i = 0 on w's support when the game has a
  fully mixed part, so an arm of the support is never a loss; with a Condorcet winner w is that arm
  and ``von-neumann`` equals ``condorcet`` (up to the linear program's rounding).
* m arms shown: ``weak`` is the least gap shown, ``strong`` the largest; every other kind takes their
  mean (so a two-arm multi-duel pays what the duel does).

Columns: ``copeland_regret`` is always the cumulative Copeland regret; ``regret`` is the cumulative
regret of the chosen kind, except for ``copeland``, whose numbers are the ``copeland_regret`` column
already: then ``regret`` holds the Condorcet regret (so ``auto``, the default, leaves the table as it
always was on every problem). ``table.attrs`` records ``regret_kind`` (the kind chosen, ``auto``
resolved) and ``regret_column`` (the column holding it); ``config.json`` in ``out`` records the kind.

>>> from irbandits.problems import get_problem
>>> df = simulate(get_problem("arxiv"), ["RUCB"], horizon=10_000, runs=2, seed=3, progress=False)
>>> sorted(df.columns)[:4], int(df.step.max()), df.attrs["regret_kind"]
(['algorithm', 'copeland_regret', 'correct', 'recommended'], 10000, 'condorcet')
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from numba import njit

from irbandits.dueling.base import AlgorithmSpec, DuelingAlgorithm, parse_spec, require_multi_dueling
from irbandits.errors import IrbanditsError
from irbandits.io import write_parquet
from irbandits.problems import PreferenceMatrix
from irbandits.rng import new_rng, uniform
from irbandits.tasks import Failed, Interrupted, ProgressBar, report, run_tasks

CHUNK_STEPS = 100_000  # the fewest steps a compiled loop runs between returns to Python
CHUNK_SECONDS = 0.25  # chunks grow until one takes about this long
COLUMNS = ["algorithm", "run", "step", "regret", "copeland_regret", "recommended", "correct", "run_seconds"]


@njit
def bernoulli_duel(P, env, c, d):
    """The Bernoulli proxy: c beats d with probability ``P[c, d]``."""
    return uniform(env) < P[c, d]


ABSORB_EVERY = 1024  # steps between two checks of an algorithm's ``_absorbed`` kernel (a power of 2)


MEAN, LEAST, MOST = 0, 1, 2  # how a step's regret combines the gaps of the arms it shows (``Regret.combine``)


@dataclass(frozen=True)
class Regret:
    """A kind of regret (see the module docstring): its ``name`` (as ``regret=`` takes it), ``title``
    (in tables and plots), ``gaps(problem)`` (one per arm) and how a step ``combine``-s its arms' gaps."""

    name: str
    title: str
    gaps: Callable[[PreferenceMatrix], np.ndarray]
    combine: int = MEAN

    @property
    def column(self) -> str:
        """The results column holding this kind's cumulative regret."""
        return "copeland_regret" if self.name == "copeland" else "regret"

    @property
    def in_regret(self) -> "Regret":
        """The kind the ``regret`` column holds when this one is chosen (``copeland``: Condorcet)."""
        return REGRETS["condorcet"] if self.name == "copeland" else self


REGRETS = {r.name: r for r in (
    Regret("condorcet", "Condorcet", lambda P: P.gaps),
    Regret("copeland", "Copeland", lambda P: P.copeland_gaps),
    Regret("borda", "Borda", lambda P: P.borda_gaps),
    Regret("von-neumann", "von Neumann", lambda P: P.von_neumann_gaps),
    Regret("weak", "weak", lambda P: P.gaps, LEAST),
    Regret("strong", "strong", lambda P: P.gaps, MOST),
)}
REGRET_KINDS = (*REGRETS, "auto")


def regret_kind(kind: str | Regret, problem: PreferenceMatrix, option: str = "regret") -> Regret:
    """The :class:`Regret` named ``kind`` (``auto``: ``condorcet`` when ``problem`` has a Condorcet
    winner, else ``copeland``); an unknown name is an error naming ``option`` and listing the kinds."""
    if isinstance(kind, Regret):
        return kind
    name = str(kind).strip().lower().replace("_", "-")
    if name == "auto":
        name = "condorcet" if problem.condorcet_winner is not None else "copeland"
    if name not in REGRETS:
        raise IrbanditsError(f"{option} must be one of {', '.join(REGRET_KINDS)}; got {kind!r}")
    return REGRETS[name]


# A step's regret from the gaps of its arms, one kernel per ``Regret.combine``: the loops take it as an
# argument, so each is compiled into the loop (no branch per step; the default is the loop it always was).
@njit(cache=True, _nrt=False)  # no reference counting of the arrays: called every step
def _pair_gap(gaps, c, d):
    """One duel's regret: the mean gap of the two arms (``MEAN``)."""
    return 0.5 * (gaps[c] + gaps[d])


@njit(cache=True, _nrt=False)
def _pair_least(gaps, c, d):
    """One duel's regret: the lesser gap of the two arms (``LEAST``)."""
    return min(gaps[c], gaps[d])


@njit(cache=True, _nrt=False)
def _pair_most(gaps, c, d):
    """One duel's regret: the larger gap of the two arms (``MOST``)."""
    return max(gaps[c], gaps[d])


@njit(cache=True, _nrt=False)
def _mean_gap(gaps, arms):
    """One multi-duel's regret: the mean gap of the arms shown (``MEAN``)."""
    g = 0.0
    for a in arms:
        g += gaps[a]
    return g / arms.shape[0]


@njit(cache=True, _nrt=False)
def _least_gap(gaps, arms):
    """One multi-duel's regret: the least gap of the arms shown (``LEAST``)."""
    g = gaps[arms[0]]
    for i in range(1, arms.shape[0]):
        g = min(g, gaps[arms[i]])
    return g


@njit(cache=True, _nrt=False)
def _most_gap(gaps, arms):
    """One multi-duel's regret: the largest gap of the arms shown (``MOST``)."""
    g = gaps[arms[0]]
    for i in range(1, arms.shape[0]):
        g = max(g, gaps[arms[i]])
    return g


PAIR_REGRET = {MEAN: _pair_gap, LEAST: _pair_least, MOST: _pair_most}
MANY_REGRET = {MEAN: _mean_gap, LEAST: _least_gap, MOST: _most_gap}  # for two arms, PAIR_REGRET's bit for bit


@njit(cache=True)
def repeated_sum(x, inc, n):
    """``x`` after ``n`` float64 additions ``x += inc``, bit for bit, in few operations.

    Within one binade ``2^(e-1) <= |x| < 2^e`` sums round to the grid of spacing ``u = 2^(e-53)``, so
    every addition adds ``inc`` rounded to that grid, the same amount each time, unless ``inc / u``
    is a half-integer (round half to even would depend on ``x``). So jump over whole runs of
    additions that stay two grid steps inside the binade, and take the additions across a binade's
    edge, at ties and while ``|x| < |inc|`` one at a time: a few dozen per decade of ``n``.
    """
    while n > 0:
        if inc == 0.0:
            return x
        if abs(x) >= abs(inc) and abs(x) >= 1e-300:
            e = math.frexp(abs(x))[1]
            top, u = math.ldexp(1.0, e), math.ldexp(1.0, e - 53)
            q = inc / u  # exact: u is a power of two
            if q - math.floor(q) != 0.5:
                step = math.floor(q + 0.5) * u
                if step == 0.0:  # inc is below half a grid step: x never moves again
                    return x
                lo, hi = (top / 2 + 2 * u, top - 2 * u) if x > 0 else (2 * u - top, -top / 2 - 2 * u)
                m = min(n, int(((hi if step > 0 else lo) - x) / step))
                while m > 0 and not lo <= x + m * step <= hi:
                    m -= 1
                if m > 0:
                    x += m * step  # exact: a multiple of u inside the binade
                    n -= m
                    continue
        x += inc
        n -= 1
    return x


@njit(cache=True)
def _finish(inc, cinc, rec, checkpoints, out_reg, out_creg, out_rec, step, reg, creg, k):
    """Fast-forward: fill the checkpoints after ``step`` as if every later step added ``inc`` to the
    regret and ``cinc`` to the Copeland regret and recommended ``rec``."""
    for kk in range(k, checkpoints.shape[0]):
        reg = repeated_sum(reg, inc, checkpoints[kk] - step)
        creg = repeated_sum(creg, cinc, checkpoints[kk] - step)
        step = checkpoints[kk]
        out_reg[kk], out_creg[kk], out_rec[kk] = reg, creg, rec
    return reg, creg, checkpoints.shape[0]


@njit
def _run(select, update, recommend, st, rng, env, duel, world, gaps, step_regret, cgaps, checkpoints, out_reg, out_creg,
         out_rec, first, last, reg, creg, k):
    """Steps ``first .. last`` of the simulation loop: one duel per step (``duel(world, env, c, d) -> c
    won``), regret (``step_regret(gaps, c, d)``) and Copeland regret recorded at checkpoints;
    returns the totals and checkpoint index to go on from."""
    for step in range(first, last + 1):
        c, d = select(st, rng)
        c_won = duel(world, env, c, d)
        update(st, rng, c, d, c_won)
        reg += step_regret(gaps, c, d)
        creg += _pair_gap(cgaps, c, d)
        if step == checkpoints[k]:
            out_reg[k] = reg
            out_creg[k] = creg
            out_rec[k] = recommend(st)
            k += 1
    return reg, creg, k


@njit
def _run_many(select_many, update_many, recommend, st, rng, env, multiduel, world, m, gaps, step_regret, cgaps,
              checkpoints, out_reg, out_creg, out_rec, first, last, reg, creg, k):
    """The multi-dueling loop: ``m`` arms per step compared at once (``multiduel(world, env, arms,
    credit)``); a step's regret is ``step_regret(gaps, arms)`` (:data:`MANY_REGRET`; its Copeland regret
    the mean gap of the arms shown): for m = 2, exactly ``_run``'s."""
    arms, credit = np.empty(m, np.int64), np.empty(m)
    for step in range(first, last + 1):
        select_many(st, rng, arms)
        multiduel(world, env, arms, credit)
        update_many(st, rng, arms, credit)
        reg += step_regret(gaps, arms)
        creg += _mean_gap(cgaps, arms)
        if step == checkpoints[k]:
            out_reg[k] = reg
            out_creg[k] = creg
            out_rec[k] = recommend(st)
            k += 1
    return reg, creg, k


# The absorbing test runs between pieces of the loop, not inside it: a call in the loop body, even
# one never taken, slows MergeDTS's steps by ~15% and mergeRUCB's twofold (it blocks inlining).
@njit
def _run_absorbing(select, update, recommend, absorbed, st, rng, env, duel, world, gaps, step_regret, cgaps, checkpoints,
                   out_reg, out_creg, out_rec, first, last, reg, creg, k):
    """``_run`` in pieces ending on multiples of ``ABSORB_EVERY``; after each, stop if ``absorbed(st)``.
    Returns ``_run``'s totals and checkpoint index, and the step it stopped at (0: it did not)."""
    while first <= last:
        stop = min(last, (first + ABSORB_EVERY - 1) // ABSORB_EVERY * ABSORB_EVERY)
        reg, creg, k = _run(select, update, recommend, st, rng, env, duel, world, gaps, step_regret, cgaps, checkpoints,
                            out_reg, out_creg, out_rec, first, stop, reg, creg, k)
        if stop % ABSORB_EVERY == 0 and k < checkpoints.shape[0] and absorbed(st):
            return reg, creg, k, stop
        first = stop + 1
    return reg, creg, k, 0


@njit
def _run_many_absorbing(select_many, update_many, recommend, absorbed, st, rng, env, multiduel, world, m, gaps,
                        step_regret, cgaps, checkpoints, out_reg, out_creg, out_rec, first, last, reg, creg, k):
    """``_run_many`` as :func:`_run_absorbing` runs ``_run``."""
    while first <= last:
        stop = min(last, (first + ABSORB_EVERY - 1) // ABSORB_EVERY * ABSORB_EVERY)
        reg, creg, k = _run_many(select_many, update_many, recommend, st, rng, env, multiduel, world, m, gaps, step_regret,
                                 cgaps, checkpoints, out_reg, out_creg, out_rec, first, stop, reg, creg, k)
        if stop % ABSORB_EVERY == 0 and k < checkpoints.shape[0] and absorbed(st):
            return reg, creg, k, stop
        first = stop + 1
    return reg, creg, k, 0


def checkpoints(horizon: int, per_decade: int = 10) -> np.ndarray:
    """Log-spaced steps 1 .. horizon (always including the horizon)."""
    horizon = int(horizon)
    n = max(2, int(np.ceil(np.log10(max(horizon, 10)) * per_decade)) + 1)
    return np.unique(np.concatenate([np.geomspace(1, horizon, n).round().astype(np.int64), [horizon]]))


@dataclass
class RunResult:
    """The trajectory of one run at its checkpoints (arms in the problem's own labels); ``regret`` is
    the cumulative regret of the kind ``regret_kind`` names, except that for ``copeland`` (which is
    ``copeland_regret``) it is the Condorcet regret (see the module docstring)."""

    steps: np.ndarray
    regret: np.ndarray
    copeland_regret: np.ndarray
    recommended: np.ndarray
    correct: np.ndarray
    seconds: float
    absorbed_at: int = 0  # the step after which the run was finished in closed form (0: it was not)
    columns: dict = field(default_factory=dict)  # the environment's own per-checkpoint columns, if any
    regret_kind: str = "condorcet"  # the kind of regret chosen (``auto`` resolved)


def run_one(
    algorithm: DuelingAlgorithm,
    problem: PreferenceMatrix,
    horizon: int,
    seed=0,
    steps: np.ndarray | None = None,
    perm: np.ndarray | None = None,
    environment=None,
    on_steps: Callable[[int], None] | None = None,
    fast_forward: bool = False,
    regret: str | Regret = "auto",
) -> RunResult:
    """Run ``algorithm`` (which continues from its current state) for ``horizon`` duels.

    The compiled loop runs in chunks of at least ``CHUNK_STEPS`` steps, grown to take about
    ``CHUNK_SECONDS`` each; after each chunk ``on_steps(steps in the chunk)`` is called and Ctrl-C
    gets through. Chunks do not change results.

    ``perm`` relabels arms (the algorithm's arm i is the problem's arm ``perm[i]``); ``seed`` seeds
    the environment's coin flips. ``environment`` replaces the Bernoulli proxy: an object with a
    compiled ``duel`` kernel and ``world(perm)`` giving its data (e.g.
    :class:`irbandits.clicks.environment.ClickEnvironment`); regret still comes from ``problem``.
    An environment with ``per_step`` = m and a ``multiduel`` kernel (e.g.
    :class:`irbandits.clicks.multidueling.MultileaveEnvironment`) shows m arms per step to a
    multi-dueling algorithm; a step's regret is then the mean gap of its m arms.

    ``fast_forward``: for an algorithm with an ``_absorbed`` kernel (see
    :class:`~irbandits.dueling.base.DuelingAlgorithm`), check every ``ABSORB_EVERY`` steps whether
    its choices can no longer change, and if so finish the run in closed form (each remaining step
    adds the fixed choice's gap; the sums are bit for bit those of the step-by-step loop, see
    :func:`repeated_sum`). The result is identical, but ``algorithm`` is left in its state at the
    step ``absorbed_at`` of the result (off by default, because callers may go on from the state;
    :func:`simulate`, which discards it, turns it on).

    An environment whose ``drain`` is not None gets ``drain(world)`` after every chunk (of at most
    its ``max_chunk`` steps), outside the timed loop: a logging environment writes its comparisons
    (and then no run is fast-forwarded, so every comparison is logged). An environment with
    ``columns(world, steps)`` adds per-checkpoint columns of its own to the result (e.g. the metered
    clicks and NDCG of :class:`irbandits.clicks.online_metrics.MeteredEnvironment`).

    ``regret``: the kind of regret (``condorcet``, ``copeland``, ``borda``, ``von-neumann``, ``weak``,
    ``strong`` or ``auto``; see the module docstring), summed step by step in the compiled loop and
    in closed form by the fast-forward alike. The result's ``regret`` holds it, ``copeland_regret``
    the Copeland regret.
    """
    kind = regret_kind(regret, problem)
    if algorithm.K != problem.K:
        raise IrbanditsError(f"{algorithm.name} has K={algorithm.K} but problem {problem.name} has K={problem.K}")
    perm = np.arange(problem.K) if perm is None else np.asarray(perm)
    steps = checkpoints(horizon) if steps is None else np.asarray(steps, dtype=np.int64)
    P = np.ascontiguousarray(problem.p[np.ix_(perm, perm)])
    gaps = np.ascontiguousarray(kind.in_regret.gaps(problem)[perm], dtype=np.float64)
    cgaps = np.ascontiguousarray(problem.copeland_gaps[perm])
    out_reg, out_creg = np.zeros(len(steps)), np.zeros(len(steps))
    out_rec = np.zeros(len(steps), np.int64)
    cls, m = type(algorithm), getattr(environment, "per_step", None)
    step_regret = (PAIR_REGRET if m is None else MANY_REGRET)[kind.in_regret.combine]
    drain = getattr(environment, "drain", None)  # a logging environment: empty its log after each chunk
    measured = getattr(environment, "columns", None)
    absorbing = fast_forward and cls._absorbed is not None and drain is None
    if m is None:
        duel, world = (bernoulli_duel, P) if environment is None else (environment.duel, environment.world(perm))
        loop, kernels, extra = _run, (cls._select, cls._update, cls._recommend), (duel, world)
    else:
        require_multi_dueling(cls)
        loop, kernels = _run_many, (cls._select_many, cls._update_many, cls._recommend)
        extra = (environment.multiduel, environment.world(perm), int(m))
    if absorbing:
        loop, kernels = (_run_absorbing if m is None else _run_many_absorbing), (*kernels, cls._absorbed)
    warm = algorithm.clone()  # compile on a throwaway copy, so timings measure only running
    loop(*kernels, *warm.kernel_state, new_rng(0), *extra, gaps, step_regret, cgaps, np.ones(1, np.int64),
         np.zeros(1), np.zeros(1), np.zeros(1, np.int64), 1, 1, 0.0, 0.0, 0)
    if drain is not None:
        drain(extra[1], write=False)  # the compile call's comparison is not part of the run
    state = (*kernels, *algorithm.kernel_state, new_rng(seed), *extra, gaps, step_regret, cgaps, steps, out_reg,
             out_creg, out_rec)
    seconds, done, reg, creg, k, chunk, absorbed_at = 0.0, 0, 0.0, 0.0, 0, CHUNK_STEPS, 0
    while done < steps[-1]:
        stop = min(int(steps[-1]), done + (chunk if drain is None else min(chunk, environment.max_chunk)))
        start = time.perf_counter()
        reg, creg, k, *absorbed = loop(*state, done + 1, stop, reg, creg, k)
        if absorbed and absorbed[0]:
            absorbed_at = int(absorbed[0])
            reg, creg, k = _fast_forward(algorithm, m, gaps, step_regret, cgaps, steps, out_reg, out_creg, out_rec,
                                         absorbed_at, reg, creg, k)
            stop = int(steps[-1])
        elapsed = time.perf_counter() - start
        seconds += elapsed
        if drain is not None:
            drain(extra[1])
        if on_steps is not None:
            on_steps(stop - done)
        done = stop
        chunk = max(CHUNK_STEPS, min(4 * chunk, int(chunk * CHUNK_SECONDS / max(elapsed, 1e-9))))
    rec = perm[out_rec]
    return RunResult(steps, out_reg, out_creg, rec, np.isin(rec, problem.winners), seconds, absorbed_at,
                     {} if measured is None else measured(extra[1], steps), kind.name)


def _fast_forward(algorithm, m, gaps, step_regret, cgaps, steps, out_reg, out_creg, out_rec, step, reg, creg, k):
    """Finish an absorbed run from ``step`` on: its fixed choice's regret every remaining step, by the
    kernels of the loop (:func:`_finish`)."""
    cls, (st, rng) = type(algorithm), algorithm.kernel_state
    if m is None:
        c, d = cls._select(st, rng)
        inc, cinc = step_regret(gaps, c, d), _pair_gap(cgaps, c, d)
    else:
        arms = np.empty(int(m), np.int64)
        cls._select_many(st, rng, arms)
        inc, cinc = step_regret(gaps, arms), _mean_gap(cgaps, arms)
    return _finish(inc, cinc, cls._recommend(st), steps, out_reg, out_creg, out_rec, step, reg, creg, k)


def run_streams(run_seed: np.random.SeedSequence, K: int) -> tuple[np.ndarray, np.random.SeedSequence, np.random.SeedSequence]:
    """A run's arm permutation, environment seed and algorithm seed (run r of ``simulate(seed=s)``
    has ``run_seed = SeedSequence(s).spawn(runs)[r]``)."""
    # fixed children (not .spawn(), which counts calls) so every algorithm of run r sees the same seeds
    perm_ss, env_ss, alg_ss = (
        np.random.SeedSequence(run_seed.entropy, spawn_key=(*run_seed.spawn_key, i)) for i in range(3)
    )
    return np.random.default_rng(perm_ss).permutation(K), env_ss, alg_ss


def simulate_run(spec: AlgorithmSpec, problem: PreferenceMatrix, horizon: int, run: int, run_seed, environment=None,
                 fast_forward: bool = True, on_steps: Callable[[int], None] | None = None,
                 regret: str = "auto") -> pd.DataFrame:
    """Run ``run`` of ``spec`` (seeded by ``run_seed``, see :func:`run_streams`): its rows of the table."""
    perm, env_ss, alg_ss = run_streams(run_seed, problem.K)
    algo = spec.make(problem.K, seed=alg_ss, horizon=horizon)
    r = run_one(algo, problem, horizon, seed=env_ss, perm=perm, environment=environment, on_steps=on_steps,
                fast_forward=fast_forward, regret=regret)
    return pd.DataFrame(dict(
        algorithm=spec.label, run=run, step=r.steps, regret=r.regret, copeland_regret=r.copeland_regret,
        recommended=r.recommended, correct=r.correct, run_seconds=r.seconds, **r.columns,
    ))


def _run_task(context: tuple, task: tuple) -> pd.DataFrame:
    """Run ``task`` (spec, run, run seed) of :func:`simulate` in :func:`~irbandits.tasks.run_tasks`,
    reporting its steps."""
    problem, horizon, environment, fast_forward, regret = context
    spec, run, run_seed = task
    return simulate_run(spec, problem, horizon, run, run_seed, environment, fast_forward, on_steps=report, regret=regret)


def piece_path(out: Path, label: str, run: int) -> Path:
    """Where run ``run`` of the algorithm labelled ``label`` is kept under the results folder ``out``."""
    safe = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in label)
    return out / "runs" / f"{safe}--{run}.parquet"


def _differences(old: dict, new: dict) -> list[str]:
    """The settings of ``old`` that differ from ``new``, each as the option that would give it."""
    out = []
    if old.get("problem") != new["problem"]:
        out.append(f"problem {old.get('problem')}, not {new['problem']}")
    elif old.get("matrix_sha") != new["matrix_sha"]:
        out.append(f"another matrix named {new['problem']}")
    for key, option in (("horizon", "--horizon"), ("runs", "--runs"), ("seed", "--seed")):
        if old.get(key) != new[key]:
            out.append(f"{option} {old.get(key)}, not {new[key]}")
    kinds = [REGRETS.get(k) for k in (old.get("regret", "condorcet"), new["regret"])]  # none written before kinds
    if None in kinds or kinds[0].in_regret.name != kinds[1].in_regret.name:  # copeland's column is condorcet's
        out.append(f"--regret {old.get('regret', 'condorcet')}, not {new['regret']}")
    if sorted(old.get("algorithms") or []) != sorted(new["algorithms"]):
        out.append(f"-a {' -a '.join(old.get('algorithms') or [])}, not -a {' -a '.join(new['algorithms'])}")
    if old.get("environment") != new["environment"]:
        proxy = "Bernoulli duels on the matrix (no --ltr)"
        out.append(f"{old.get('environment') or proxy}, not {new['environment'] or proxy}")
    return out


def _prepare_out(out: Path, config: dict, force: bool) -> None:
    """Make ``out`` ready to resume results of the same settings; refuse results of other settings
    (naming them) unless ``force``, which removes them."""
    cfg_path = out / "config.json"
    if cfg_path.is_file():
        try:
            old = json.loads(cfg_path.read_text())
            differences = _differences(old, config)
        except (ValueError, AttributeError):
            differences = ["a config.json that irbandits did not write"]
        if differences and not force:
            raise IrbanditsError(f"results in {out} were made with {'; '.join(differences)}; "
                                 f"use --force to replace them, or another --out")
        if differences:
            shutil.rmtree(out / "runs", ignore_errors=True)
            (out / "results.parquet").unlink(missing_ok=True)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    cfg_path.write_text(json.dumps(config, indent=1))


def simulate(
    problem: PreferenceMatrix,
    algorithms: Sequence[str | AlgorithmSpec],
    horizon: int,
    runs: int = 10,
    seed: int = 0,
    jobs: int = 1,
    out: str | Path | None = None,
    progress: bool | Callable[[int], None] = True,
    environment=None,
    force: bool = False,
    fast_forward: bool = True,
    regret: str = "auto",
) -> pd.DataFrame:
    """Simulate every algorithm ``runs`` times on ``problem`` and return a tidy table.

    Columns: algorithm, run, step, regret (cumulative, of the kind ``regret``: ``condorcet``,
    ``copeland``, ``borda``, ``von-neumann``, ``weak``, ``strong`` or ``auto``, see the module docstring;
    Condorcet when the kind is ``copeland``), copeland_regret (cumulative), recommended (arm in the
    problem's labels), correct (recommended is a winner), run_seconds, and those an environment adds
    (see :func:`run_one`). ``table.attrs``: ``regret_kind`` (``auto`` resolved) and ``regret_column``
    (the column holding that kind).
    With ``out``, every finished run is written to ``out/runs/`` at once and the whole table to
    ``out/results.parquet``; a rerun with the same settings and ``out`` skips the runs already there.
    Results of other settings in ``out`` are an error naming the settings, unless ``force``, which
    removes them. ``progress``: a progress bar counting steps on standard error, or a function called
    with the number of steps just done. Runs go to ``jobs`` processes by
    :func:`~irbandits.tasks.run_tasks`; Ctrl-C cancels the runs not finished, stops the workers and
    raises :class:`~irbandits.tasks.Interrupted`. ``environment`` (see :func:`run_one`) makes every
    duel a real one, e.g. an interleaved comparison, or every step one multileaved comparison of m
    arms (multi-dueling algorithms only). ``fast_forward``: finish the runs of algorithms whose choices
    can no longer change in closed form (see :func:`run_one`); the table is the same without it.
    """
    horizon = int(horizon)
    if horizon < 1 or runs < 1 or jobs < 1:
        raise IrbanditsError(f"horizon, runs and jobs must be positive (got {horizon}, {runs}, {jobs})")
    kind = regret_kind(regret, problem)
    specs = [a if isinstance(a, AlgorithmSpec) else parse_spec(a) for a in algorithms]
    if getattr(environment, "per_step", None) is not None:
        for s in specs:
            require_multi_dueling(s.cls)
    if len({s.label for s in specs}) != len(specs):
        raise IrbanditsError("the same algorithm label is given twice")
    run_seeds = np.random.SeedSequence(seed).spawn(runs)
    out = Path(out) if out is not None else None
    if out is not None:
        _prepare_out(out, dict(problem=problem.name, matrix_sha=hashlib.sha256(problem.p.tobytes()).hexdigest(),
                               horizon=horizon, seed=seed, runs=runs, algorithms=[s.label for s in specs],
                               environment=None if environment is None else repr(environment), regret=kind.name),
                     force)
    pieces: list[pd.DataFrame] = []
    todo = []
    for s in specs:
        for r in range(runs):
            if out is not None and piece_path(out, s.label, r).exists():
                pieces.append(pd.read_parquet(piece_path(out, s.label, r)))
            else:
                todo.append((s, r, run_seeds[r]))
    reported = [0] * len(todo)  # the steps counted so far of each run

    def moved(i: int, steps: int) -> None:
        if reported[i] < horizon:  # steps that arrive after their run's end are counted already
            reported[i] += steps
            advance(steps)

    try:
        with _reporter(progress, len(todo), horizon) as advance:
            for outcome in run_tasks(_run_task, todo, (problem, horizon, environment, fast_forward, kind.name),
                                     workers=jobs, progress=False, on_progress=moved):
                if isinstance(outcome, Failed):
                    raise outcome.exception
                pieces.append(outcome.value)
                if out is not None:
                    spec, run, _ = todo[outcome.index]
                    write_parquet(outcome.value, piece_path(out, spec.label, run))
                advance(horizon - reported[outcome.index], runs=1)
                reported[outcome.index] = horizon
    except KeyboardInterrupt:
        raise Interrupted(len(pieces) if out is not None else 0, len(specs) * runs, out, "runs") from None
    order = {s.label: i for i, s in enumerate(specs)}
    table = pd.concat(pieces, ignore_index=True)
    table = table.sort_values(["algorithm", "run", "step"], key=lambda c: c.map(order) if c.name == "algorithm" else c)
    table = table.reset_index(drop=True)[COLUMNS + [c for c in table.columns if c not in COLUMNS]]
    table.attrs.update(regret_kind=kind.name, regret_column=kind.column)
    if out is not None:
        write_parquet(table, out / "results.parquet")
    return table


def _reporter(progress: bool | Callable[[int], None], tasks: int, horizon: int):
    """``advance(steps, runs=0)`` for :func:`simulate`: a bar, or the caller's function of the steps."""
    if callable(progress):
        return nullcontext(lambda steps, runs=0: progress(steps))
    return ProgressBar(progress, tasks, "simulating", horizon)


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm at the final step: mean and standard error of the regret and of the Copeland regret,
    accuracy, mean seconds per run, steps per second."""
    last = table[table.step == table.step.max()]
    g = last.groupby("algorithm", sort=False)
    runs = g.size()
    summary = pd.DataFrame(dict(
        runs=runs,
        regret_mean=g.regret.mean(),
        regret_se=g.regret.std(ddof=1).fillna(0.0) / np.sqrt(runs),
        copeland_regret_mean=g.copeland_regret.mean(),
        copeland_regret_se=g.copeland_regret.std(ddof=1).fillna(0.0) / np.sqrt(runs),
        accuracy=g.correct.mean(),
        seconds_per_run=g.run_seconds.mean(),
        steps_per_s=table.step.max() * runs / g.run_seconds.sum().clip(lower=1e-9),
    ))
    return summary.reset_index()
