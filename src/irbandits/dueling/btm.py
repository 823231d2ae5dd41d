"""Beat the Mean, BTM (Yue & Joachims, "Beat the mean bandit", ICML 2011, Algorithm 1 "Beat-the-Mean"
run by Algorithm 2 "BTM-Online"; thesis, seed 002, section 2.2.1).

Explore, then exploit. Every arm b of the working set W keeps ``n_b`` comparisons and ``w_b`` wins
*as the arm under test*, and ``P_b = w_b / n_b`` (1/2 while ``n_b = 0``) estimates how often b beats
the mean bandit of W. Each step:

1. b = the arm of W with the fewest comparisons (ties at random); b' = a random other arm of W;
   the duel is (b, b') and only b's tallies count it;
2. with ``n* = min_W n_b`` and ``c* = c(n*) = 3 gamma^2 sqrt(ln(1 / delta) / n*)`` (1 if n* = 0),
   ``delta = 1 / (2 T K)``: if ``min_W P + c* <= max_W P - c*``, the arm of smallest P (the first
   in arm order) leaves W and every remaining arm's tallies forget its comparisons with it.

When one arm is left, or the horizon T is used up (the listing's ``t < T``), the arm of largest P
(first in arm order) is committed and duels itself ever after.

Deviation: the listing draws b' from all of W, b itself included; here b' != b, because a
self-duel carries no information in this project (``../shared/spec/online.md``) and an environment
may not even answer it with a fair coin. The Condorcet winner still beats the mean of the others.

Recommendation: the listing's return value, the arm of W with the largest P (the committed arm
once committed).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(BTM(P.K, seed=1, horizon=20_000), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm, from_horizon
from irbandits.dueling.bounds import pick, record
from irbandits.params import Param
from irbandits.rng import randint

# info slots: committed arm (-1 while exploring), |W|, horizon (0: none)
_BEST, _NW, _T = range(3)


@njit(cache=True)
def _estimate(wb, nb, b):
    return wb[b] / nb[b] if nb[b] > 0 else 0.5


@njit(cache=True)
def _best(inW, wb, nb):
    """argmax of P over W, the first in arm order."""
    best, arm = -1.0, 0
    for b in range(inW.shape[0]):
        if inW[b] and _estimate(wb, nb, b) > best:
            best, arm = _estimate(wb, nb, b), b
    return arm


@njit(cache=True)
def _select(st, rng):
    W, t, params, info, inW, BW, BN, wb, nb, ties = st
    if info[_BEST] >= 0:
        return info[_BEST], info[_BEST]
    K = inW.shape[0]
    fewest, k = np.iinfo(np.int64).max, 0
    for b in range(K):
        if inW[b]:
            if nb[b] < fewest:
                fewest, k = nb[b], 0
            if nb[b] == fewest:
                ties[k] = b
                k += 1
    b = pick(ties, k, rng)
    r = randint(rng, info[_NW] - 1)  # the r-th arm of W \ {b}
    for o in range(K):
        if inW[o] and o != b:
            if r == 0:
                return b, o
            r -= 1
    return b, b  # not reached


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, params, info, inW, BW, BN, wb, nb, ties = st
    record(W, c, d, c_won)
    t[0] += 1
    if info[_BEST] >= 0:
        return
    K = inW.shape[0]
    if c != d and inW[c] and inW[d]:
        BN[c, d] += 1
        nb[c] += 1
        if c_won:
            BW[c, d] += 1
            wb[c] += 1
        fewest = np.iinfo(np.int64).max
        low, high, worst = 2.0, -1.0, 0
        for b in range(K):
            if inW[b]:
                fewest = min(fewest, nb[b])
                p = _estimate(wb, nb, b)
                if p < low:
                    low, worst = p, b
                high = max(high, p)
        width = 1.0 if fewest == 0 else params[0] * math.sqrt(params[1] / fewest)
        if low + width <= high - width:  # the worst arm leaves W, and its comparisons are forgotten
            inW[worst] = False
            info[_NW] -= 1
            for b in range(K):
                if inW[b]:
                    wb[b] -= BW[b, worst]
                    nb[b] -= BN[b, worst]
    if info[_NW] == 1 or (info[_T] > 0 and t[0] >= info[_T]):
        info[_BEST] = _best(inW, wb, nb)


@njit(cache=True)
def _recommend(st):
    W, t, params, info, inW, BW, BN, wb, nb, ties = st
    return info[_BEST] if info[_BEST] >= 0 else _best(inW, wb, nb)


@njit(cache=True)
def _absorbed(st):
    """True once an arm is committed: every later step is the duel (b, b)."""
    return st[3][_BEST] >= 0


class BTM(DuelingAlgorithm):
    """Beat the Mean: drop the arm that loses to the mean of the working set with confidence."""

    name = "BTM"
    description = "Beat the Mean: explore-then-exploit elimination of arms beaten by the working set's mean (needs the horizon)"
    reference = "Yue & Joachims ICML 2011, Algorithms 1-2 (BTM-Online); thesis (seed 002) 2.2.1"
    params = (
        Param("gamma", float, 1.0, "relaxed stochastic transitivity gamma >= 1 (1: strong transitivity)",
              lambda g: g >= 1, ">= 1"),
        Param("delta", float, None, "failure probability; None: 1 / (2 T K) for the horizon T",
              lambda d: 0 < d < 1, "in (0, 1)"),
    )

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)
    _absorbed = staticmethod(_absorbed)

    def _init_state(self, K, gamma, delta):
        delta = from_horizon(self.name, self.horizon, delta, lambda T: 1.0 / (2.0 * T * K))
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([3.0 * gamma * gamma, math.log(1.0 / delta)]),
            info=np.array([-1, K, self.horizon or 0], np.int64),
            inW=np.ones(K, np.bool_),  # the working set
            BW=np.zeros((K, K), np.int64),  # BW[b, o]: b's wins over o as the arm under test
            BN=np.zeros((K, K), np.int64),  # BN[b, o]: those comparisons
            wb=np.zeros(K, np.int64),
            nb=np.zeros(K, np.int64),
            ties=np.zeros(K, np.int64),
        )
