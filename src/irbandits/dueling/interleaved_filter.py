"""Interleaved Filter, IF (Yue, Broder, Kleinberg & Joachims, "The K-armed dueling bandits problem",
JCSS 2012, Algorithm 1 "IF"; lecture slides, seed 004; thesis, seed 002, section 2.2.1).

Explore, then exploit. An incumbent b (drawn at random at the first step) duels every arm of the
set W of remaining candidates once per *round* (the slides: against all of them "simultaneously";
here in a fresh random order each round, so that no arm is always compared first). At the end of a round,
with ``P_b,j`` = b's wins over j since the last reset / comparisons per pair ``t`` and
``c_t = sqrt(4 ln(1 / delta) / t)``, ``delta = 1 / (T K^2)``:

1. every j in W with ``P_b,j - c_t > 1/2`` (b beats j with confidence) leaves W;
2. if some j in W has ``P_b,j + c_t < 1/2`` (j beats b with confidence), then *IF pruning*: every
   j in W with ``P_b,j > 1/2`` (lost more often than it won) leaves W; that j becomes the new
   incumbent (the listing takes any such j: here the one with the smallest ``P_b,j``, ties at
   random), leaves W, and all tallies restart.

When W is empty the incumbent is committed and duels itself ever after. With the horizon T used up
before that (the explore phase of the listing ends at T), the incumbent is committed at step T.
Recommendation: the incumbent ("the best bandit found so far").

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(IF(P.K, seed=1, horizon=50_000), P, horizon=50_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm, from_horizon
from irbandits.dueling.bounds import empirical_copeland_winner, pick, record, shuffled
from irbandits.params import Param
from irbandits.rng import randint

# info slots: incumbent (-1 before the first step), position in the round, |W|, comparisons per
# pair since the reset, committed, horizon (0: none)
_BEST, _POS, _NW, _ROUND, _DONE, _T = range(6)


@njit(cache=True)
def _new_round(info, inW, order, rng):
    """The next round's order: W shuffled; committed when W is empty."""
    n = shuffled(inW, order, rng)
    info[_NW] = n
    info[_POS] = 0
    if n == 0:
        info[_DONE] = 1


@njit(cache=True)
def _select(st, rng):
    W, t, params, info, inW, order, iwins, ties = st
    if info[_BEST] < 0:  # the first step: a random incumbent, W = every other arm
        info[_BEST] = randint(rng, inW.shape[0])
        inW[:] = True
        inW[info[_BEST]] = False
        _new_round(info, inW, order, rng)
    b = info[_BEST]
    if info[_DONE]:
        return b, b
    return b, order[info[_POS]]


@njit(cache=True)
def _end_of_round(info, inW, order, iwins, ties, c2, rng):
    """Steps 1 and 2 of the module docstring, then the next round."""
    K = inW.shape[0]
    n = info[_ROUND]
    width = math.sqrt(c2 / n)
    for j in range(K):  # 1. arms beaten with confidence leave W
        if inW[j] and iwins[j] / n - width > 0.5:
            inW[j] = False
    low, k = 2.0, 0
    for j in range(K):  # 2. the arms beating the incumbent with confidence, smallest P_b,j first
        if inW[j]:
            p = iwins[j] / n
            if p + width < 0.5:
                if p < low:
                    low, k = p, 0
                if p == low:
                    ties[k] = j
                    k += 1
    if k > 0:
        new = pick(ties, k, rng)
        for j in range(K):  # IF pruning: the arms that lost to the old incumbent more often than they won
            if inW[j] and iwins[j] > n - iwins[j]:
                inW[j] = False
        inW[new] = False
        info[_BEST] = new
        info[_ROUND] = 0
        iwins[:] = 0
    _new_round(info, inW, order, rng)


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, params, info, inW, order, iwins, ties = st
    record(W, c, d, c_won)
    t[0] += 1
    if info[_DONE] or info[_BEST] < 0:
        return
    b, j = info[_BEST], order[info[_POS]]
    if (c == b and d == j) or (c == j and d == b):  # the duel asked for (another changes only W)
        if c_won == (c == b):
            iwins[j] += 1
        info[_POS] += 1
        if info[_POS] == info[_NW]:
            info[_ROUND] += 1
            _end_of_round(info, inW, order, iwins, ties, params[0], rng)
    if info[_T] > 0 and t[0] >= info[_T]:
        info[_DONE] = 1


@njit(cache=True)
def _recommend(st):
    W, t, params, info, inW, order, iwins, ties = st
    return info[_BEST] if info[_BEST] >= 0 else empirical_copeland_winner(W)


@njit(cache=True)
def _absorbed(st):
    """True once the incumbent is committed: every later step is the duel (b, b)."""
    return st[3][_DONE] == 1 and st[3][_BEST] >= 0


class IF(DuelingAlgorithm):
    """Interleaved Filter: an incumbent duels all remaining arms until one beats it with confidence."""

    name = "IF"
    description = "Interleaved Filter: explore-then-exploit hill climbing with confidence intervals (needs the horizon)"
    reference = "Yue, Broder, Kleinberg & Joachims JCSS 2012, Algorithm 1; slides (seed 004); thesis (seed 002) 2.2.1"
    params = (Param("delta", float, None, "failure probability; None: 1 / (T K^2) for the horizon T",
                    lambda d: 0 < d < 1, "in (0, 1)"),)

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)
    _absorbed = staticmethod(_absorbed)

    def _init_state(self, K, delta):
        delta = from_horizon(self.name, self.horizon, delta, lambda T: 1.0 / (T * K * K))
        info = np.zeros(6, np.int64)
        info[_BEST] = -1
        info[_T] = self.horizon or 0
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([4.0 * math.log(1.0 / delta)]),  # c_t^2 * t
            info=info,
            inW=np.zeros(K, np.bool_),  # membership of W
            order=np.zeros(K, np.int64),  # this round's W, in play order
            iwins=np.zeros(K, np.int64),  # the incumbent's wins over each arm since the reset
            ties=np.zeros(K, np.int64),
        )
