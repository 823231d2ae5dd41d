"""UCB-Multileave: multileave every ranker that no other beats with confidence.

The multileaving baseline of the MergeDTS paper (seed 001, section 6.6, steps 1-5), with the
multileaving method left to the environment (the paper used SOSM; here team-draft, probabilistic or
any method of :mod:`irbandits.clicks.multileaving`). At step ``t``:

1. compute ``u_ij = w_ij / n_ij + sqrt(alpha ln(t + C) / n_ij)`` (the paper's Table 1; ``x / 0 := 1``);
2. the candidates are the rankers ``i`` with ``u_ij >= 0.5`` for every ``j`` (none beats them with
   confidence; all rankers when there is none);
3. multileave the candidates: with ``m`` slots per step, ``m`` of them drawn uniformly at random
   when there are more, else every candidate, repeated in turn to fill the slots (a multileaving
   environment compares distinct rankers only);
4. show the list and collect the clicks (the environment);
5. every pair of distinct rankers shown with different credit is one duel, won by the one with more
   credit, added to ``W``.

Nothing is eliminated: a ranker beaten now is a candidate again once ``ln(t + C)`` has grown
enough. The paper ran it with ``alpha = 0.51`` (the defaults here) and, as we read its Table 1,
the ``C`` of the MergeDTS run it was compared with (tuned: 4,000,000). Two arms per step (``select``)
are two candidates drawn at random, or the only candidate against itself. Recommendation: the
arm with the most empirical wins (``w_ij > w_ji``), ties to the lowest index.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(UCBMultileave(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import recommend_copeland_winner, record, threshold
from irbandits.params import Param
from irbandits.rng import randint


@njit(cache=True)
def rows_below(rowmax, level, out):
    """Write the arms whose largest threshold is at most ``level`` (no other arm beats them with
    confidence at that level, see :mod:`~irbandits.dueling.bounds`) to ``out``, or every arm when
    there is none; return how many."""
    n = 0
    for i in range(rowmax.shape[0]):
        if rowmax[i] <= level:
            out[n] = i
            n += 1
    if n == 0:
        for i in range(rowmax.shape[0]):
            out[i] = i
        n = rowmax.shape[0]
    return n


@njit(cache=True)
def unbeaten(rowmax, t, C, out):
    """Steps 1-2 at step ``t + 1``: write the arms no other beats with confidence (``u_ij >= 0.5`` for
    every j) to ``out``, or every arm when there is none; return how many."""
    return rows_below(rowmax, math.log(t + 1 + C), out)


@njit(cache=True)
def _candidates(st, rng, arms):
    """Step 3: fill ``arms`` with the candidates (see the module)."""
    W, t, thr, rowmax, params, cand, slot, pair = st
    m = arms.shape[0]
    n = unbeaten(rowmax, t[0], params[1], cand)
    for s in range(min(m, n)):  # a partial Fisher-Yates shuffle: a uniform subset in random order
        j = s + randint(rng, n - s)
        cand[s], cand[j] = cand[j], cand[s]
        arms[s] = cand[s]
    for s in range(n, m):
        arms[s] = arms[s - n]


@njit(cache=True)
def _refresh(W, thr, rowmax, rows):
    """New row maxima of the thresholds for the arms in ``rows``."""
    K = W.shape[0]
    for i in rows:
        top = -np.inf
        for j in range(K):
            if thr[i, j] > top:
                top = thr[i, j]
        rowmax[i] = top


@njit(cache=True)
def _duel(W, thr, c, d, c_won, alpha):
    record(W, c, d, c_won)
    thr[c, d] = threshold(W, c, d, alpha)
    thr[d, c] = threshold(W, d, c, alpha)


@njit(cache=True)
def _select(st, rng):
    pair = st[-1]
    _candidates(st, rng, pair)
    return pair[0], pair[1]


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, thr, rowmax, params, cand, slot, pair = st
    if c != d:
        _duel(W, thr, c, d, c_won, params[0])
        pair[0], pair[1] = c, d
        _refresh(W, thr, rowmax, pair)
    t[0] += 1


@njit(cache=True)
def _select_many(st, rng, arms):
    _candidates(st, rng, arms)


@njit(cache=True)
def _update_many(st, rng, arms, credit):
    """Step 5: every pair of distinct arms with different credit is one duel (an arm shown in several
    slots counts once, with its first slot's credit: the environment credits rankers, not slots)."""
    W, t, thr, rowmax, params, cand, slot, pair = st
    n = 0
    for s in range(arms.shape[0]):  # the distinct arms in cand[:n], the slot of each one's first appearance
        k = 0
        while k < n and cand[k] != arms[s]:
            k += 1
        if k == n:
            cand[n], slot[n] = arms[s], s
            n += 1
    for x in range(n):
        for y in range(x + 1, n):
            if credit[slot[x]] != credit[slot[y]]:
                _duel(W, thr, cand[x], cand[y], credit[slot[x]] > credit[slot[y]], params[0])
    _refresh(W, thr, rowmax, cand[:n])
    t[0] += 1


class UCBMultileave(DuelingAlgorithm):
    """Multileave every ranker not beaten with confidence (the MergeDTS paper's multileaving baseline)."""

    name = "UCB-Multileave"
    description = "multileave every arm no other beats by the UCB (u_ij >= 0.5 for all j); never eliminates"
    reference = "MergeDTS paper (seed 001) section 6.6: the ranker selection of its multileaving baseline"
    params = (
        Param("alpha", float, 0.51, "exploration", lambda a: a > 0, "> 0"),
        Param("C", float, 4_000_000.0, "added to t in ln(t + C)", lambda c: c >= 0, ">= 0"),
    )
    multi_dueling = True

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(recommend_copeland_winner)
    _select_many = staticmethod(_select_many)
    _update_many = staticmethod(_update_many)

    def candidates(self) -> np.ndarray:
        """The arms the next step would multileave (all of them given enough slots): those no other
        beats with confidence now."""
        W, t, thr, rowmax, params = self._st[:5]
        out = np.empty(self.K, np.int64)
        return out[:unbeaten(rowmax, t[0], params[1], out)]

    def _init_state(self, K, alpha, C):
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            thr=np.full((K, K), -np.inf),
            rowmax=np.full(K, -np.inf),
            params=np.array([alpha, C]),
            cand=np.zeros(K, np.int64),
            slot=np.zeros(K, np.int64),
            pair=np.zeros(2, np.int64),
        )
