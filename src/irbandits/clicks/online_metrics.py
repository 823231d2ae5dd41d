"""The quality of the lists users saw during an online run: clicks and NDCG, counted in the compiled loop.

The MergeDTS paper (``../shared/seeds/001``, section 6.6, Figure 5) judges online evaluation by what
the simulated users were shown: **CTR@10**, the number of clicks on the shown (interleaved or
multileaved) top-10 list per impression, and **NDCG@10** of that list,

    NDCG@10(R) = DCG@10(R) / DCG@10(R*),   DCG@10(R) = sum_i (2^rel(R_i) - 1) / log2(i + 1)

(its equation 11, ranks i from 1; ``R*`` the query's ideal ranking; a query without a relevant
document scores 0). With lists of another ``length`` both are taken at that length.

A :class:`MeteredEnvironment` wraps a :class:`~irbandits.clicks.environment.ClickEnvironment` or a
:class:`~irbandits.clicks.multidueling.MultileaveEnvironment`: every step's shown list and clicks are
added to running totals inside the compiled loop, kept at the run's checkpoints, and returned as the
``clicks`` and ``ndcg`` columns of :func:`irbandits.simulate.simulate` (cumulative sums: the mean per
impression between two checkpoints is their difference over the steps between them). A step that
compares nothing (a self-duel, or a multi-duel of one ranker) still shows that ranker's list to a
user; the meter draws that impression from its own generator (seeded from ``seed`` and the run's arm
permutation), so the comparisons and the algorithm's trajectory are those of the plain environment,
bit for bit. A metered run is never fast-forwarded: every step is shown to a user.

:func:`ranker_quality` gives the same two numbers for each ranker's own list: the quality of a run
that has settled on that ranker.

>>> from irbandits.clicks.ltr import read_ltr
>>> data = read_ltr("../shared/data/ltr/letor3-np2004-fold1/test.txt.gz")
>>> q = ranker_quality(data.rankers([22, 0]), "navigational", impressions=2000, seed=0)
>>> bool(q.ndcg[0] > q.ndcg[1] + 0.3)    # feature 23 ranks the named page far higher than feature 1
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from numba import njit, prange

from irbandits.clicks.click_models import ClickModel, simulate_clicks
from irbandits.clicks.interleaving import CUTOFF
from irbandits.clicks.ltr import Rankers, top_k
from irbandits.clicks.matrix import check_rankers, new_work, resolve_model
from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, randint

COLUMNS = ("clicks", "ndcg")  # what a metered run adds to the results table (cumulative sums)


# ----- low level ------------------------------------------------------------------------------
def grading(rankers: Rankers, length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What the NDCG kernel reads: each document's gain ``2^rel - 1`` and query, each query's ideal
    DCG@``length``, and the discounts ``1 / log2(i + 2)`` of the 0-based ranks 0 .. length-1."""
    gain = 2.0 ** rankers.labels - 1.0
    discount = 1.0 / np.log2(np.arange(2, length + 2))
    sizes = np.diff(rankers.bounds)
    query = np.repeat(np.arange(len(sizes)), sizes)
    ideal = np.array([np.sort(gain[lo:hi])[::-1][:length] @ discount[:min(length, hi - lo)]
                      for lo, hi in zip(rankers.bounds[:-1], rankers.bounds[1:])])
    return gain, query, ideal, discount


@njit(cache=True)
def list_metrics(shown, clicks, gain, query, ideal, discount):
    """``(clicks, NDCG)`` of one shown list: its slots up to the first -1 (or all of them)."""
    n, c, dcg = 0, 0, 0.0
    while n < shown.shape[0] and shown[n] >= 0:
        dcg += gain[shown[n]] * discount[n]
        c += clicks[n]
        n += 1
    if n == 0:
        return 0, 0.0
    best = ideal[query[shown[0]]]
    return c, dcg / best if best > 0 else 0.0


@njit(cache=True)
def show_alone(lists, model, work, r, rng):
    """One user shown ranker ``r``'s own list for a random query: fills ``work``'s shown list (the
    slots after it -1), grades and clicks."""
    order, gend, start, labels = lists
    click, stop, exam, stop_rank = model
    shown, grades, clicks = work[2], work[5], work[6]
    q = randint(rng, start.shape[1] - 1)
    n = top_k(order, gend, start, r, q, shown.shape[0], rng, shown)
    shown[n:] = -1
    for i in range(n):
        grades[i] = labels[shown[i]]
    simulate_clicks(grades, n, click, stop, exam, stop_rank, rng, clicks)


@njit(cache=True)
def _record(inner, meter, arm):
    """Add the list the step showed to the meter's totals (when it showed none, ``arm``'s ranker's
    own list, drawn here); keep them when the step is a checkpoint."""
    gain, query, ideal, discount, rng, first, totals, counters, steps, out = meter
    work = inner[2]
    if work[2][0] < 0:
        show_alone(inner[0], inner[1], work, inner[3][arm], rng)
    c, ndcg = list_metrics(work[2], work[6], gain, query, ideal, discount)
    totals[0] += c
    totals[1] += ndcg
    counters[0] += 1
    k = counters[1]
    if k < steps.shape[0] and counters[0] == steps[k]:
        out[k, 0], out[k, 1] = totals[0], totals[1]
        counters[1] = k + 1


@lru_cache(maxsize=None)
def metered_duel(duel):
    """``duel(world, env, c, d)`` that also meters the list shown (world: ``(inner world, meter)``)."""

    @njit
    def metered(world, env, c, d):
        inner, meter = world
        work = inner[2]
        work[2][:] = -1                        # still -1 after the duel: nothing was shown
        won = duel(inner, env, c, d)
        _record(inner, meter, c)
        return won

    return metered


@lru_cache(maxsize=None)
def metered_multiduel(multiduel):
    """``multiduel(world, env, arms, credit)`` that also meters the list shown."""

    @njit
    def metered(world, env, arms, out):
        inner, meter = world
        work = inner[2]
        work[2][:] = -1
        multiduel(inner, env, arms, out)
        _record(inner, meter, arms[0])

    return metered


@njit(parallel=True, cache=True)
def _quality(lists, model, gain, query, ideal, discount, rankers, impressions, rngs, out, length):
    for p in prange(rankers.shape[0]):
        work, rng = new_work(length), rngs[p]
        s = np.zeros(4)
        for _ in range(impressions):
            show_alone(lists, model, work, rankers[p], rng)
            c, ndcg = list_metrics(work[2], work[6], gain, query, ideal, discount)
            s[0] += c
            s[1] += c * c
            s[2] += ndcg
            s[3] += ndcg * ndcg
        out[p] = s / impressions


# ----- public ---------------------------------------------------------------------------------
class MeteredEnvironment:
    """A click environment whose runs also report what users saw: ``clicks`` and ``ndcg`` columns
    (cumulative over the steps) at the checkpoints of ``horizon`` (see the module)."""

    max_chunk = 1 << 62  # no limit on the steps between two returns to Python

    def __init__(self, environment, horizon: int, seed: int = 0):
        from irbandits.simulate import checkpoints

        if getattr(environment, "log", None):
            raise IrbanditsError("a metered environment cannot also log its comparisons; meter or log, not both")
        self.inner = environment
        self.horizon = int(horizon)
        self.steps = checkpoints(self.horizon)
        self.seed = int(seed)
        self._grading = grading(environment.rankers, environment.length)

    @property
    def K(self) -> int:
        return self.inner.K

    @property
    def rankers(self) -> Rankers:
        return self.inner.rankers

    @property
    def length(self) -> int:
        return self.inner.length

    @property
    def per_step(self) -> int | None:
        """Rankers per multileaved comparison (None for a pairwise environment)."""
        return getattr(self.inner, "per_step", None)

    @property
    def duel(self):
        return metered_duel(self.inner.duel)

    @property
    def multiduel(self):
        return metered_multiduel(self.inner.multiduel)

    def estimate(self, *args, **kwargs):
        """The inner environment's reference matrix (see its ``estimate``)."""
        return self.inner.estimate(*args, **kwargs)

    def world(self, perm: np.ndarray) -> tuple:
        """``(the inner environment's world, the meter)``."""
        rng = new_rng(np.random.SeedSequence([self.seed, *np.asarray(perm, dtype=np.int64).tolist()]))
        meter = (*self._grading, rng, rng.copy(), np.zeros(2), np.zeros(2, np.int64), self.steps,
                 np.zeros((len(self.steps), 2)))
        return self.inner.world(perm), meter

    def drain(self, world: tuple, write: bool = True) -> None:
        """Called by :func:`irbandits.simulate.run_one` after each chunk; ``write=False`` (after the
        compile call, whose step is not part of the run) starts the meter afresh."""
        if not write:
            rng, first, totals, counters, _, out = world[1][4:]
            rng[:], totals[:], counters[:], out[:] = first, 0.0, 0, 0.0

    def columns(self, world: tuple, steps: np.ndarray) -> dict[str, np.ndarray]:
        """The metered columns at the run's checkpoints ``steps`` (those of ``horizon``)."""
        if not np.array_equal(steps, self.steps):
            raise IrbanditsError(f"the metered environment records at the checkpoints of horizon {self.horizon:,}; "
                                 f"this run has other checkpoints (horizon {int(steps[-1]):,})")
        out = world[1][-1]
        return {name: out[:, i].copy() for i, name in enumerate(COLUMNS)}

    def __repr__(self) -> str:
        return f"MeteredEnvironment({self.inner!r})"


def ranker_quality(rankers: Rankers, click_model: str | ClickModel = "navigational", impressions: int = 20_000,
                   seed: int = 0, length: int = CUTOFF) -> pd.DataFrame:
    """Per ranker, the clicks (CTR@``length``) and NDCG@``length`` of its own list over ``impressions``
    users on uniformly drawn queries (ties at random, clicks by the model): columns ranker, name,
    ctr, ctr_se, ndcg, ndcg_se. The same for every thread count (a generator per ranker)."""
    if impressions < 1:
        raise IrbanditsError(f"impressions must be positive, got {impressions}")
    length = check_rankers(rankers, length)
    model = resolve_model(click_model, rankers.grades, length)
    rngs = np.stack([new_rng(s) for s in np.random.SeedSequence(seed).spawn(rankers.K)])
    out = np.empty((rankers.K, 4))
    _quality(rankers.arrays(), model.arrays(), *grading(rankers, length), np.arange(rankers.K), int(impressions),
             rngs, out, length)
    se = lambda m, m2: np.sqrt(np.maximum(m2 - m * m, 0.0) / impressions)  # noqa: E731
    return pd.DataFrame(dict(ranker=np.arange(rankers.K), name=rankers.names, ctr=out[:, 0],
                             ctr_se=se(out[:, 0], out[:, 1]), ndcg=out[:, 2], ndcg_se=se(out[:, 2], out[:, 3])))


def per_impression(table: pd.DataFrame, column: str, steps=None) -> pd.DataFrame:
    """The mean per impression of a metered ``column`` (cumulative, see the module) over windows of
    steps: per algorithm and run, one row per window ending at each of ``steps`` (default every
    checkpoint; others are taken at the last checkpoint at or before them), ``step`` its last step,
    ``start`` its first, ``column`` the mean."""
    order = {name: i for i, name in enumerate(table.algorithm.unique())}  # keep the table's order of algorithms
    t = table.sort_values(["algorithm", "run", "step"], key=lambda c: c.map(order) if c.name == "algorithm" else c,
                          kind="stable")
    if steps is not None:
        have = np.sort(t.step.unique())
        ends = have[np.clip(np.searchsorted(have, np.asarray(steps), side="right") - 1, 0, None)]
        t = t[t.step.isin(ends)]
    g = t.groupby(["algorithm", "run"], sort=False)
    done, total = g.step.shift(fill_value=0), g[column].shift(fill_value=0.0)
    return t.assign(start=done + 1, **{column: (t[column] - total) / (t.step - done)})[
        ["algorithm", "run", "start", "step", column]].reset_index(drop=True)
