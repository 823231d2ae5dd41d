"""Interleaved comparisons of two rankers: team-draft, balanced and probabilistic interleaving.

Each method is a pair of compiled kernels with one signature, so the simulation code takes any of
them as an argument::

    interleave(a, na, b, nb, rng, shown, assign, prob) -> n     # the list shown to the user
    credit(a, na, b, nb, shown, n, assign, prob, clicks) -> o   # o in [-1, 1]; > 0: A wins

- ``team-draft`` (Radlinski et al. 2008; slides ``../shared/seeds/004``, Algorithm 2): the team
  with fewer members (a coin on a tie) adds its best result not yet shown; clicks count per team.
- ``balanced`` (Joachims 2003): a coin picks who starts; A and B alternate through their own
  lists, skipping results already shown, until one list runs out; with d the lowest clicked result and k = min(rank_A(d), rank_B(d)), the ranker with more
  clicks in its top k wins.
- ``probabilistic`` (Hofmann et al. 2011): each ranker is a softmax over its remaining results,
  P(d) proportional to 1 / rank(d)^tau, tau = 3; a fair coin picks the ranker of every slot. Credit
  by the actual assignment. ``probabilistic-marginalised`` shows the same list but credits the
  expectation over every assignment that could have produced it: given the list the slots are
  independent, slot s came from A with ``prob[s] = P_A(d_s) / (P_A(d_s) + P_B(d_s))``, and the
  outcome is P(A has more clicked slots) - P(B has more), from the Poisson-binomial distribution.

Lists are at most 10 long (``CUTOFF``). For a live system, :func:`interleave` returns an
:class:`Interleaved` whose ``shown`` list goes to the user and whose ``credit`` takes the clicks.

>>> il = interleave("team-draft", [1, 2, 3, 4], [3, 1, 5, 6], seed=4)
>>> il.shown.tolist(), il.assign.tolist()        # team 0 is A, team 1 is B
([1, 3, 5, 2, 6], [0, 1, 1, 0, 1])
>>> il.credit([2])                                # a click on B's document 5: B wins
-1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from numba import njit

from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, randint, uniform

CUTOFF = 10
TAU = 3.0
_RANK_WEIGHT = 1.0 / np.arange(1, CUTOFF + 1) ** TAU


# ----- low level ------------------------------------------------------------------------------
@njit(cache=True)
def _position(x, n, d):
    for i in range(n):
        if x[i] == d:
            return i
    return -1


@njit(cache=True)
def _sign(v):
    return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)


@njit(cache=True)
def team_draft(a, na, b, nb, rng, shown, assign, prob):
    n, ia, ib, size_a, size_b = 0, 0, 0, 0, 0
    while n < CUTOFF:
        while ia < na and _position(shown, n, a[ia]) >= 0:
            ia += 1
        while ib < nb and _position(shown, n, b[ib]) >= 0:
            ib += 1
        if ia == na or ib == nb:  # the slides' loop condition: both still have an unshown result
            break
        if size_a < size_b or (size_a == size_b and randint(rng, 2) == 1):
            shown[n], assign[n] = a[ia], 0
            size_a += 1
        else:
            shown[n], assign[n] = b[ib], 1
            size_b += 1
        n += 1
    return n


@njit(cache=True)
def team_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    score = 0
    for i in range(n):
        if clicks[i]:
            score += 1 if assign[i] == 0 else -1
    return _sign(score)


@njit(cache=True)
def balanced(a, na, b, nb, rng, shown, assign, prob):
    a_first = randint(rng, 2) == 1
    n, ka, kb = 0, 0, 0
    while n < CUTOFF and ka < na and kb < nb:
        if ka < kb or (ka == kb and a_first):
            d = a[ka]
            ka += 1
        else:
            d = b[kb]
            kb += 1
        if _position(shown, n, d) < 0:
            shown[n], assign[n] = d, -1
            n += 1
    return n


@njit(cache=True)
def balanced_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    last = -1
    for i in range(n):
        if clicks[i]:
            last = i
    if last < 0:
        return 0.0
    ra, rb = _position(a, na, shown[last]), _position(b, nb, shown[last])
    k = min(ra if ra >= 0 else CUTOFF, rb if rb >= 0 else CUTOFF) + 1
    ha, hb = 0, 0
    for i in range(last + 1):
        if clicks[i]:
            pa, pb = _position(a, na, shown[i]), _position(b, nb, shown[i])
            ha += 0 <= pa < k
            hb += 0 <= pb < k
    return _sign(ha - hb)


@njit(cache=True)
def probabilistic(a, na, b, nb, rng, shown, assign, prob):
    used_a, used_b = 0, 0  # bit i set: the result at rank i has been shown
    wa, wb = 0.0, 0.0
    for i in range(na):
        wa += _RANK_WEIGHT[i]
    for i in range(nb):
        wb += _RANK_WEIGHT[i]
    left_a, left_b, n = na, nb, 0
    while n < CUTOFF and (left_a > 0 or left_b > 0):
        from_a = left_b == 0 or (left_a > 0 and randint(rng, 2) == 1)
        x, nx, used, w = (a, na, used_a, wa) if from_a else (b, nb, used_b, wb)
        target = uniform(rng) * w
        pick = -1
        for i in range(nx):
            if not (used >> i) & 1:
                pick = i
                target -= _RANK_WEIGHT[i]
                if target < 0.0:
                    break
        d = x[pick]
        pa, pb = _position(a, na, d), _position(b, nb, d)
        pa_d = _RANK_WEIGHT[pa] / wa if pa >= 0 else 0.0  # d is unshown, so unused in both lists
        pb_d = _RANK_WEIGHT[pb] / wb if pb >= 0 else 0.0
        shown[n], assign[n], prob[n] = d, 0 if from_a else 1, pa_d / (pa_d + pb_d)
        if pa >= 0:
            used_a |= 1 << pa
            wa -= _RANK_WEIGHT[pa]
            left_a -= 1
        if pb >= 0:
            used_b |= 1 << pb
            wb -= _RANK_WEIGHT[pb]
            left_b -= 1
        n += 1
    return n


@njit(cache=True)
def marginalised_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    dist = np.zeros(CUTOFF + 1)  # distribution of the number of clicked slots that came from A
    dist[0] = 1.0
    c = 0
    for i in range(n):
        if clicks[i]:
            q = prob[i]
            for k in range(c + 1, 0, -1):
                dist[k] = dist[k] * (1.0 - q) + dist[k - 1] * q
            dist[0] *= 1.0 - q
            c += 1
    o = 0.0
    for k in range(c + 1):
        o += dist[k] * _sign(2 * k - c)
    return o


# ----- registry -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Method:
    """An interleaving method: name, one-line description and its two kernels."""

    name: str
    description: str
    interleave: Callable
    credit: Callable


METHODS = {m.name: m for m in [
    Method("team-draft", "team-draft interleaving (Radlinski et al. 2008), clicks per team", team_draft, team_credit),
    Method("balanced", "balanced interleaving (Joachims 2003)", balanced, balanced_credit),
    Method("probabilistic", "probabilistic interleaving (Hofmann et al. 2011), tau = 3, "
           "credit marginalised over assignments", probabilistic, marginalised_credit),
    Method("probabilistic-assignment", "probabilistic interleaving, tau = 3, credit by the actual assignment",
           probabilistic, team_credit),
]}


def get_method(name: str) -> Method:
    """The interleaving method called ``name``, or an error listing the methods."""
    if name.lower() not in METHODS:
        raise IrbanditsError(f"unknown interleaving method {name!r}; known: {', '.join(METHODS)}")
    return METHODS[name.lower()]


# ----- one comparison at a time -----------------------------------------------------------------
def encode(rankings, names) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rankings of any document ids as the kernels' input: int64[m, 10] (padded with -1), the
    lengths, and the ids in order of first appearance (kernel document i is ``ids[i]``)."""
    ids = list(dict.fromkeys(d for r in rankings for d in r))
    index = {d: i for i, d in enumerate(ids)}
    lists, lens = np.full((len(rankings), CUTOFF), -1, np.int64), np.zeros(len(rankings), np.int64)
    for r, (ranking, name) in enumerate(zip(rankings, names)):
        ranking = list(ranking)
        if len(ranking) > CUTOFF or len(set(ranking)) != len(ranking):
            raise IrbanditsError(f"{name} must list at most {CUTOFF} distinct documents, got {ranking}")
        lists[r, :len(ranking)] = [index[d] for d in ranking]
        lens[r] = len(ranking)
    return lists, lens, np.asarray(ids)


def clicks_at(clicked_positions, shown: int) -> np.ndarray:
    """The kernels' click array for clicks at these 0-based positions of a shown list."""
    clicks = np.zeros(CUTOFF, np.bool_)
    for p in clicked_positions:
        if not 0 <= int(p) < shown:
            raise IrbanditsError(f"clicked position {p} is not in the shown list of {shown}")
        clicks[int(p)] = True
    return clicks


@dataclass
class Interleaved:
    """One interleaved list: show ``shown``; pass the clicked positions to :meth:`credit`."""

    method: Method
    shown: np.ndarray
    assign: np.ndarray
    prob: np.ndarray
    _lists: np.ndarray
    _lens: np.ndarray
    _shown: np.ndarray

    def credit(self, clicked_positions) -> float:
        """Outcome in [-1, 1] for clicks at these 0-based positions of ``shown``: > 0 means A won."""
        (a, b), (na, nb) = self._lists, self._lens
        return float(self.method.credit(a, na, b, nb, self._shown, len(self._shown), self.assign, self.prob,
                                        clicks_at(clicked_positions, len(self._shown))))


def interleave(method: str, a, b, seed: int | None = None, rng: np.ndarray | None = None) -> Interleaved:
    """Interleave rankings ``a`` and ``b`` (document ids of any kind, best first) with ``method``."""
    m = get_method(method)
    lists, lens, ids = encode([a, b], ["ranking A", "ranking B"])
    rng = new_rng(seed or 0) if rng is None else rng
    shown, assign, prob = np.full(CUTOFF, -1, np.int64), np.zeros(CUTOFF, np.int64), np.zeros(CUTOFF)
    n = m.interleave(lists[0], lens[0], lists[1], lens[1], rng, shown, assign, prob)
    return Interleaved(m, ids[shown[:n]], assign[:n].copy(), prob[:n].copy(), lists, lens, shown[:n].copy())
