"""How many impressions an online comparison of two rankers needs: repeated A/B tests of absolute
click metrics and repeated interleaving experiments under the click simulator.

An **A/B test** shows every other impression ranker A's list and the rest ranker B's (each on a
uniformly drawn query, ties at random, one simulated user) and compares an absolute metric of the
two samples (:func:`irbandits.clicks.stats.ab_test`). The metrics are those of the lecture slides
(``../shared/seeds/004``, "Absolute Metrics", after Radlinski et al. 2008), with the change the
slides hypothesise as quality falls:

- ``abandonment``: the share of impressions without a click (rises);
- ``clicks``: clicks per impression (falls);
- ``clicks@1``: the share of impressions with a click on the top result (falls);
- ``max-rr``: 1 / rank of the highest click, over the impressions with a click (falls);
- ``mean-rr``: the mean of 1 / rank over the clicks, over the impressions with a click (falls).

An **interleaving experiment** shows every impression an interleaved list of A and B
(:mod:`irbandits.clicks.interleaving`) and counts A's wins, losses and ties
(:func:`irbandits.clicks.stats.sign_test`). Both kinds run ``repetitions`` independent experiments
(numba threads, a generator per repetition: the same numbers for every thread count) and keep their
counts after every number of impressions in ``grid``.

>>> from irbandits.clicks.ltr import read_ltr
>>> data = read_ltr("../shared/data/ltr/letor3-np2004-fold1/test.txt.gz")
>>> r = data.rankers([22, 0])
>>> ab = ab_tests(simulate_ab(r, "navigational", 0, 1, [2000], repetitions=4))
>>> bool((ab[ab.metric == "abandonment"].effect > 0).all())   # feature 23's users abandon less
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit, prange

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.interleaving import CUTOFF, get_method
from irbandits.clicks.ltr import Rankers
from irbandits.clicks.matrix import check_rankers, compare, new_work, resolve_model
from irbandits.clicks.online_metrics import show_alone
from irbandits.clicks.stats import ab_test, sign_test
from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, randint

# metric -> +1 if higher means better (the slides' hypothesised change as quality falls, reversed)
ABSOLUTE = {"abandonment": -1, "clicks": 1, "clicks@1": 1, "max-rr": 1, "mean-rr": 1}
SUMS = 10  # per arm: impressions, abandoned, clicks, clicks^2, clicks@1, clicked impressions, max RR, ^2, mean RR, ^2
# metric -> where in the sums its sample size, its total and its total of squares are (0/1 metrics: total = squares)
_SAMPLE = {"abandonment": (0, 1, 1), "clicks": (0, 2, 3), "clicks@1": (0, 4, 4), "max-rr": (5, 6, 7), "mean-rr": (5, 8, 9)}


# ----- low level ------------------------------------------------------------------------------
@njit(cache=True)
def _absolute(shown, clicks, s):
    """Add one impression's absolute metrics to the sums ``s`` (see :data:`SUMS`)."""
    n, c, first, rr = 0, 0, -1, 0.0
    while n < shown.shape[0] and shown[n] >= 0:
        if clicks[n]:
            c += 1
            rr += 1.0 / (n + 1)
            if first < 0:
                first = n
        n += 1
    s[0] += 1
    if c == 0:
        s[1] += 1
        return
    top, mean = 1.0 / (first + 1), rr / c
    s[2] += c
    s[3] += c * c
    s[4] += clicks[0]
    s[5] += 1
    s[6] += top
    s[7] += top * top
    s[8] += mean
    s[9] += mean * mean


@njit(parallel=True, cache=True)
def _ab(lists, model, a, b, grid, rngs, out, length):
    for r in prange(rngs.shape[0]):
        rng, work = rngs[r], new_work(length)
        s = np.zeros((2, SUMS))
        k = 0
        for i in range(grid[-1]):
            arm = i & 1
            show_alone(lists, model, work, a if arm == 0 else b, rng)
            _absolute(work[2], work[6], s[arm])
            if i + 1 == grid[k]:
                out[r, k] = s
                k += 1


@njit(parallel=True)
def _interleaved(interleave, credit, lists, model, a, b, grid, rngs, out, length):
    Q = lists[2].shape[1] - 1
    for r in prange(rngs.shape[0]):
        rng, work = rngs[r], new_work(length)
        wins, losses, ties, k = 0, 0, 0, 0
        for i in range(grid[-1]):
            o = compare(interleave, credit, lists, model, a, b, randint(rng, Q), rng, work)
            if o > 0:
                wins += 1
            elif o < 0:
                losses += 1
            else:
                ties += 1
            if i + 1 == grid[k]:
                out[r, k, 0], out[r, k, 1], out[r, k, 2] = wins, losses, ties
                k += 1


def _setup(rankers: Rankers, click_model, a: int, b: int, grid, repetitions: int, seed, length: int):
    length = check_rankers(rankers, length)
    grid = np.asarray(grid, dtype=np.int64)
    if grid.ndim != 1 or len(grid) == 0 or grid[0] < 1 or (np.diff(grid) <= 0).any():
        raise IrbanditsError(f"grid must be increasing numbers of impressions >= 1, got {grid.tolist()}")
    for r in (a, b):
        if not 0 <= r < rankers.K:
            raise IrbanditsError(f"ranker {r} out of range 0..{rankers.K - 1}")
    if repetitions < 1:
        raise IrbanditsError(f"repetitions must be positive, got {repetitions}")
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    rngs = np.stack([new_rng(s) for s in ss.spawn(repetitions)])
    return length, resolve_model(click_model, rankers.grades, length), grid, rngs


# ----- public ---------------------------------------------------------------------------------
def simulate_ab(rankers: Rankers, click_model: str | ClickModel, a: int, b: int, grid, repetitions: int = 40,
                seed: int | np.random.SeedSequence = 0, length: int = CUTOFF) -> dict:
    """``repetitions`` A/B tests of rankers ``a`` and ``b`` (A first, then alternating): the sums of
    :data:`SUMS` per arm after each number of impressions in ``grid`` (``sums[r, k, arm]``)."""
    length, model, grid, rngs = _setup(rankers, click_model, a, b, grid, repetitions, seed, length)
    out = np.zeros((repetitions, len(grid), 2, SUMS))
    _ab(rankers.arrays(), model.arrays(), int(a), int(b), grid, rngs, out, length)
    return dict(grid=grid, sums=out)


def simulate_interleaving(rankers: Rankers, click_model: str | ClickModel, method: str, a: int, b: int, grid,
                          repetitions: int = 40, seed: int | np.random.SeedSequence = 0,
                          length: int = CUTOFF) -> dict:
    """``repetitions`` interleaving experiments of ``a`` against ``b`` with ``method``: a's wins,
    losses and ties after each number of impressions in ``grid`` (``counts[r, k]``)."""
    length, model, grid, rngs = _setup(rankers, click_model, a, b, grid, repetitions, seed, length)
    m = get_method(method)
    out = np.zeros((repetitions, len(grid), 3), np.int64)
    _interleaved(m.interleave, m.credit, rankers.arrays(), model.arrays(), int(a), int(b), grid, rngs, out, length)
    return dict(grid=grid, counts=out, method=m.name)


def ab_tests(result: dict) -> pd.DataFrame:
    """Every metric of :data:`ABSOLUTE` tested after each number of impressions of every repetition
    of :func:`simulate_ab`: columns metric, repetition, impressions, effect (A's mean minus B's,
    oriented so that > 0 favours A, per :data:`ABSOLUTE`), variance (the impressions times the
    variance of ``effect``, as :func:`~irbandits.clicks.stats.ab_impressions_needed` takes it; NaN
    while an arm has no sample) and p_value (:func:`~irbandits.clicks.stats.ab_test`)."""
    s, grid = result["sums"], result["grid"]
    R, G = s.shape[:2]
    rows = []
    for metric, sign in ABSOLUTE.items():
        count, total, square = (s[..., i] for i in _SAMPLE[metric])
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where(count > 0, total / count, 0.0)
            var = np.where(count > 1, (square - count * mean**2) / np.maximum(count - 1, 1), 0.0)
            spread = var[..., 0] / count[..., 0] + var[..., 1] / count[..., 1]
        p = ab_test(mean[..., 0], var[..., 0], count[..., 0], mean[..., 1], var[..., 1], count[..., 1])
        rows.append(pd.DataFrame(dict(
            metric=metric, repetition=np.repeat(np.arange(R), G), impressions=np.tile(grid, R),
            effect=(sign * (mean[..., 0] - mean[..., 1])).ravel(),
            variance=np.where(np.isfinite(spread), spread * grid[None, :], np.nan).ravel(), p_value=p.ravel())))
    return pd.concat(rows, ignore_index=True)


def interleaving_tests(result: dict) -> pd.DataFrame:
    """The sign test after each number of impressions of every repetition of
    :func:`simulate_interleaving`: columns metric (the method), repetition, impressions, wins, losses,
    ties (a's), effect (a's win share with ties as half, minus 1/2) and p_value."""
    c, grid = result["counts"], result["grid"]
    R, G = c.shape[:2]
    w, l, t = c[..., 0], c[..., 1], c[..., 2]
    p = np.array([[sign_test(w[r, k], l[r, k]) for k in range(G)] for r in range(R)])
    return pd.DataFrame(dict(metric=result["method"], repetition=np.repeat(np.arange(R), G),
                             impressions=np.tile(grid, R), wins=w.ravel(), losses=l.ravel(), ties=t.ravel(),
                             effect=((w + 0.5 * t) / (w + l + t) - 0.5).ravel(), p_value=p.ravel()))
