"""Multileaving: one list from more than two rankers, credit for each of them.

Kernels share one signature (``lists`` int64[m, L], ``lens`` int64[m], lists of L results, the
length of ``shown``)::

    multileave(lists, lens, rng, shown, assign, prob) -> n       # prob: float64[L, m]
    credit(lists, lens, shown, n, assign, prob, clicks, out)      # out[r]: credit of ranker r

- ``team-draft`` multileaving (Schuth et al. 2014): in every round the rankers take turns in a
  random order, each adding its best result not yet shown; a click credits the team of its result.
- ``probabilistic`` multileaving (Schuth et al. 2015): in every round the rankers take turns in a
  random order, each drawing from its softmax over its remaining results (P(d) proportional to
  1 / rank(d)^3); a clicked slot s credits ranker r with P(r placed it | list) =
  P_r(d_s) / sum_r' P_r'(d_s), computed per slot with a uniform prior over rankers (exact per-slot
  marginalisation of the choice of ranker; the round structure is ignored in the prior).
- ``optimized`` multileaving (Schuth et al. 2014) and ``roughly-optimized`` (Manabe et al. 2017):
  a list drawn from the LP's distribution (:mod:`irbandits.clicks.optimized`); a click on d credits
  ranker r with 1 / rank_r(d) (``prob[i, r]``).
- ``pairwise-preference`` multileaving (Oosterhuis & de Rijke 2017, :mod:`irbandits.clicks.preference`):
  credit from the click-inferred pairwise preferences each ranker agrees with.
- ``sosm``, sample-only scored multileaving (Brost, Cox, Seldin & Lioma, SIGIR 2016; the
  multileaving of the MergeDTS paper's section 6.6): the rankers' common prefix, then team-draft
  rounds; a click on d credits *every* ranker with 1 / (k + 1)^3, k the rank of d in that ranker's
  ranking of the shown results (``prob[i, r]``; a result outside the ranker's list shares the mean
  weight of the ranks below its own, see :func:`~irbandits.clicks.interleaving.sosm_weights`).

Ranker i beats j in a multileaved comparison when its credit is larger; :func:`multileave_wins`
runs many such steps, each on a random query with a random subset of rankers.

>>> ml = multileave("team-draft", [["a", "b", "c"], ["c", "b", "a"], ["d", "e", "f"]], seed=2)
>>> sorted(ml.shown.tolist())
['a', 'b', 'c', 'd', 'e', 'f']
>>> ml.credit([ml.shown.tolist().index("d")]).tolist()     # a click on d credits the third ranker
[0.0, 0.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit

from irbandits.clicks import optimized, preference
from irbandits.clicks.click_models import ClickModel, simulate_clicks
from irbandits.clicks.interleaving import (
    CUTOFF,
    check_length,
    clicks_at,
    encode,
    rank_weight,
    sosm_fill,
    sosm_weights,
    team_rounds,
)
from irbandits.clicks.ltr import Rankers, top_k
from irbandits.clicks.matrix import Estimate, check_rankers, resolve_model
from irbandits.clicks.positions import position as _position
from irbandits.errors import IrbanditsError
from irbandits.params import Registry
from irbandits.problems import PreferenceMatrix
from irbandits.rng import new_rng, randint, shuffle, uniform


# ----- low level ------------------------------------------------------------------------------
@njit(cache=True)
def _shuffled(m, rng):
    p = np.arange(m)
    shuffle(rng, p)
    return p


@njit(cache=True)
def team_draft_multileave(lists, lens, rng, shown, assign, prob):
    return team_rounds(lists, lens, rng, shown, assign, 0)


@njit(cache=True)
def team_multicredit(lists, lens, shown, n, assign, prob, clicks, out):
    out[:] = 0.0
    for i in range(n):
        if clicks[i]:
            out[assign[i]] += 1.0


@njit(cache=True)
def probabilistic_multileave(lists, lens, rng, shown, assign, prob):
    m, L = lists.shape[0], shown.shape[0]
    used = np.zeros((m, lists.shape[1]), np.bool_)
    w = np.zeros(m)
    for r in range(m):
        for i in range(lens[r]):
            w[r] += rank_weight(i)
    n = 0
    while n < L:
        added = False
        for r in _shuffled(m, rng):
            if w[r] <= 1e-300 or n == L:
                continue
            target = uniform(rng) * w[r]
            pick = -1
            for i in range(lens[r]):
                if not used[r, i]:
                    pick = i
                    target -= rank_weight(i)
                    if target < 0.0:
                        break
            if pick < 0:
                w[r] = 0.0
                continue
            d = lists[r, pick]
            total = 0.0
            for s in range(m):
                pos = _position(lists[s], lens[s], d)
                prob[n, s] = rank_weight(pos) / w[s] if pos >= 0 and not used[s, pos] else 0.0
                total += prob[n, s]
            for s in range(m):
                prob[n, s] /= total
                pos = _position(lists[s], lens[s], d)
                if pos >= 0 and not used[s, pos]:
                    used[s, pos] = True
                    w[s] -= rank_weight(pos)
            shown[n], assign[n] = d, r
            n += 1
            added = True
        if not added:
            break
    return n


@njit(cache=True)
def marginalised_multicredit(lists, lens, shown, n, assign, prob, clicks, out):
    out[:] = 0.0
    for i in range(n):
        if clicks[i]:
            for r in range(lists.shape[0]):
                out[r] += prob[i, r]


@njit
def optimized_multileave(lists, lens, rng, shown, assign, prob):
    n = optimized.draw(lists, lens, False, uniform(rng), shown, prob)
    assign[:n] = -1
    return n


@njit
def roughly_optimized_multileave(lists, lens, rng, shown, assign, prob):
    n = optimized.draw(lists, lens, True, uniform(rng), shown, prob)
    assign[:n] = -1
    return n


@njit(cache=True)
def preference_multileave(lists, lens, rng, shown, assign, prob):
    return preference.fill(lists, lens, rng, shown, assign, prob[:, 0])


@njit(cache=True)
def preference_multicredit(lists, lens, shown, n, assign, prob, clicks, out):
    preference.scores(lists, lens, shown, n, assign, prob[:, 0], clicks, out)


@njit(cache=True)
def sosm_multileave(lists, lens, rng, shown, assign, prob):
    """SOSM's list (:func:`~irbandits.clicks.interleaving.sosm_fill`); ``prob[i, r]`` is what a click
    on slot i scores for ranker r (:func:`~irbandits.clicks.interleaving.sosm_weights`)."""
    n = sosm_fill(lists, lens, rng, shown, assign)
    for r in range(lists.shape[0]):
        sosm_weights(lists[r], lens[r], shown, n, prob[:, r])
    return n


@njit(cache=True)
def new_multiwork(m, length=CUTOFF):
    """Scratch arrays for one multileaved comparison of up to ``m`` rankers and lists of
    ``length`` results: their lists and lengths, shown list, assignment, slot probabilities,
    grades and clicks."""
    return (np.empty((m, length), np.int64), np.empty(m, np.int64), np.empty(length, np.int64),
            np.empty(length, np.int64), np.empty((length, m)), np.empty(length, np.int64),
            np.empty(length, np.bool_))


@njit
def multicompare(multileave, credit, lists, model, who, m, q, rng, work, cr):
    """One multileaved comparison of rankers ``who[:m]`` (distinct) on query ``q``: writes each
    one's credit to ``cr[:m]``."""
    order, gend, start, labels = lists
    click, stop, exam, stop_rank = model
    ls, lens, shown, assign, prob, grades, clicks = work
    for s in range(m):
        lens[s] = top_k(order, gend, start, who[s], q, ls.shape[1], rng, ls[s])
    n = multileave(ls[:m], lens[:m], rng, shown, assign, prob)
    for i in range(n):
        grades[i] = labels[shown[i]]
    simulate_clicks(grades, n, click, stop, exam, stop_rank, rng, clicks)
    credit(ls[:m], lens[:m], shown, n, assign, prob, clicks, cr[:m])


@njit
def _multileave_wins(multileave, credit, lists, model, K, m, steps, rng, wins, length):
    Q = lists[2].shape[1] - 1
    work, cr = new_multiwork(m, length), np.empty(m)
    for _ in range(steps):
        who = _shuffled(K, rng)[:m]
        q = randint(rng, Q)
        multicompare(multileave, credit, lists, model, who, m, q, rng, work, cr)
        for s in range(m):
            for t in range(m):
                if s != t:
                    wins[who[s], who[t]] += 1.0 if cr[s] > cr[t] else (0.5 if cr[s] == cr[t] else 0.0)


# ----- registry and public ----------------------------------------------------------------------
@dataclass(frozen=True)
class Multileaving:
    """A multileaving method: name, description, its two kernels, and whether it credits clicks per
    team (``assign`` holds each slot's ranker)."""

    name: str
    description: str
    multileave: Callable
    credit: Callable
    teams: bool = False


METHODS = Registry("multileaving method", [
    Multileaving("team-draft", "team-draft multileaving (Schuth et al. 2014)", team_draft_multileave, team_multicredit,
                 True),
    Multileaving("probabilistic", "probabilistic multileaving (Schuth et al. 2015), tau = 3, per-slot marginalised credit",
                 probabilistic_multileave, marginalised_multicredit),
    Multileaving("optimized", "optimized multileaving (Schuth et al. 2014), LP over prefix-constrained lists, "
                 "1/rank credit", optimized_multileave, marginalised_multicredit),
    Multileaving("roughly-optimized", "roughly optimized multileaving (Manabe et al. 2017), the LP's "
                 "unbiasedness constraint relaxed", roughly_optimized_multileave, marginalised_multicredit),
    Multileaving("pairwise-preference", "pairwise-preference multileaving (Oosterhuis & de Rijke 2017)",
                 preference_multileave, preference_multicredit),
    Multileaving("sosm", "sample-only scored multileaving (Brost et al. 2016): team-draft list, every click "
                 "scored for every ranker by its ranking of the shown results", sosm_multileave,
                 marginalised_multicredit),
])


def get_multileaving(name: str) -> Multileaving:
    return METHODS.get(name)


@dataclass
class Multileaved:
    """One multileaved list: show ``shown``; :meth:`credit` gives each ranker's credit for clicks."""

    method: Multileaving
    shown: np.ndarray
    assign: np.ndarray
    prob: np.ndarray
    _lists: np.ndarray
    _lens: np.ndarray
    shown_index: np.ndarray

    def credit(self, clicked_positions) -> np.ndarray:
        out = np.zeros(len(self._lens))
        self.method.credit(self._lists, self._lens, self.shown_index, len(self.shown_index), self.assign, self.prob,
                           clicks_at(clicked_positions, len(self.shown_index)), out)
        return out


def multileave(method: str, rankings, seed: int = 0, length: int = CUTOFF) -> Multileaved:
    """Multileave ``rankings`` (a sequence of lists of document ids, best first; their top
    ``length`` count) into a list of at most ``length`` results."""
    ml = get_multileaving(method)
    length = check_length(length)
    if len(rankings) < 2:
        raise IrbanditsError(f"multileaving needs at least 2 rankings, got {len(rankings)}")
    lists, lens, ids = encode(rankings, [f"ranking {r}" for r in range(len(rankings))], length)
    shown, assign = np.empty(length, np.int64), np.empty(length, np.int64)
    prob = np.zeros((length, len(lens)))
    n = ml.multileave(lists, lens, new_rng(seed), shown, assign, prob)
    return Multileaved(ml, ids[shown[:n]], assign[:n].copy(), prob[:n].copy(), lists, lens, shown[:n].copy())


def multileave_wins(rankers: Rankers, click_model: str | ClickModel = "navigational", method: str = "team-draft",
                    steps: int = 10_000, per_step: int | None = None, seed: int = 0,
                    length: int = CUTOFF) -> np.ndarray:
    """Pairwise wins from ``steps`` multileaved comparisons, each of ``per_step`` random rankers
    (default all) on a random query, lists of ``length`` results: ``W[i, j]`` counts i's wins over
    j (a tie counts half)."""
    m = rankers.K if per_step is None else int(per_step)
    if not 2 <= m <= rankers.K:
        raise IrbanditsError(f"per_step must be 2..{rankers.K}, got {per_step}")
    length = check_rankers(rankers, length)
    ml, model = get_multileaving(method), resolve_model(click_model, rankers.grades, length)
    wins = np.zeros((rankers.K, rankers.K))
    _multileave_wins(ml.multileave, ml.credit, rankers.arrays(), model.arrays(), rankers.K, m, int(steps),
                     new_rng(seed), wins, length)
    return wins


def estimate_by_multileaving(rankers: Rankers, click_model: str | ClickModel = "navigational",
                             method: str = "team-draft", comparisons: int = 4000, per_step: int | None = None,
                             seed: int = 0, name: str = "ltr-multileaved", length: int = CUTOFF) -> Estimate:
    """A preference matrix from multileaved comparisons of ``per_step`` random rankers each (default
    all), run until every pair has met about ``comparisons`` times: p_ij = W_ij / (W_ij + W_ji)."""
    m = rankers.K if per_step is None else int(per_step)
    W = multileave_wins(rankers, click_model, method, multileave_steps(rankers.K, m, comparisons), m, seed, length)
    N = W + W.T
    np.fill_diagonal(N, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        P = np.where(N > 0, W / N, 0.5)
        se = np.where(N > 0, np.sqrt(P * (1 - P) / N), 0.0)
    np.fill_diagonal(P, 0.5)
    return Estimate(PreferenceMatrix(P, name=name), se, list(rankers.names), int(comparisons))


def multileave_steps(K: int, per_step: int, comparisons: int) -> int:
    """Multileaved lists of ``per_step`` of ``K`` rankers for each pair to meet ``comparisons`` times."""
    return int(np.ceil(comparisons * K * (K - 1) / max(per_step * (per_step - 1), 1)))
