"""Doubler (Ailon, Karnin & Joachims, "Reducing dueling bandits to cardinal bandits", ICML 2014,
Algorithm 1; thesis, seed 002, section 2.2.3), with UCB1 as the K-armed bandit.

Epochs i = 1, 2, ... of 2^i steps. The multiset L starts as one arm (drawn at random at the first
step). In every step of epoch i the left arm x is drawn uniformly from L, the right arm y is
proposed by a UCB1 bandit (:func:`irbandits.dueling.sparring.ucb_arm`, reset at the start of every
epoch), the duel is (x, y), and the bandit is rewarded 1 when y wins, else 0 (a self-duel is
played and rewarded the same way, as the listing does). At the end of the epoch L becomes the
multiset of the right arms played in it. So each epoch the bandit learns to beat the arms it
played the epoch before.

Recommendation (no rule in the source): the arm most frequent in L, i.e. most played on the right
in the last finished epoch (first in arm order).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(Doubler(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import empirical_copeland_winner, record
from irbandits.dueling.sparring import ucb_arm
from irbandits.params import Param
from irbandits.rng import randint

# info slots: epoch (0 before the first step), steps left in it, |L|
_EPOCH, _LEFT, _SIZE = range(3)


@njit(cache=True)
def _new_epoch(info, L, cum, cur, S, N):
    """L <- this epoch's right arms; the bandit starts afresh; the next epoch is twice as long."""
    total = 0
    for i in range(L.shape[0]):
        L[i] = cur[i]
        total += cur[i]
        cum[i] = total
    info[_SIZE] = total
    cur[:] = 0
    S[:] = 0
    N[:] = 0
    info[_EPOCH] += 1
    info[_LEFT] = 2 ** info[_EPOCH]


@njit(cache=True)
def _select(st, rng):
    W, t, params, info, L, cum, cur, S, N, ties = st
    if info[_EPOCH] == 0:  # L = {one random arm}
        cur[randint(rng, L.shape[0])] = 1
        _new_epoch(info, L, cum, cur, S, N)
    r = randint(rng, info[_SIZE])  # x uniform from the multiset L: the first arm with cum > r
    lo, hi = 0, cum.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] > r:
            hi = mid
        else:
            lo = mid + 1
    n = 2 ** info[_EPOCH] - info[_LEFT] + 1
    return lo, ucb_arm(S, N, n, params[0], ties, rng)


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, params, info, L, cum, cur, S, N, ties = st
    record(W, c, d, c_won)
    t[0] += 1
    if info[_EPOCH] == 0:
        return
    N[d] += 1
    if not c_won:  # the right arm won: reward 1
        S[d] += 1
    cur[d] += 1
    info[_LEFT] -= 1
    if info[_LEFT] == 0:
        _new_epoch(info, L, cum, cur, S, N)


@njit(cache=True)
def _recommend(st):
    W, t, params, info, L, cum, cur, S, N, ties = st
    return np.argmax(L) if info[_EPOCH] > 0 else empirical_copeland_winner(W)


class Doubler(DuelingAlgorithm):
    """Doubler: a bandit learns to beat the arms it played in the previous, half as long, epoch."""

    name = "Doubler"
    description = "Doubler: epochs of doubling length; UCB1 proposes the right arm against last epoch's right arms"
    reference = "Ailon, Karnin & Joachims ICML 2014, Algorithm 1; thesis (seed 002) 2.2.3"
    params = (Param("alpha", float, 2.0, "UCB1 exploration: mean + sqrt(alpha ln n / n_i)", lambda a: a > 0, "> 0"),)

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)

    def _init_state(self, K, alpha):
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha]),
            info=np.zeros(3, np.int64),
            L=np.zeros(K, np.int64),  # the multiset L as counts
            cum=np.zeros(K, np.int64),  # cumulative counts of L
            cur=np.zeros(K, np.int64),  # this epoch's right arms as counts
            S=np.zeros(K, np.int64),  # the bandit's rewards this epoch
            N=np.zeros(K, np.int64),  # its pulls this epoch
            ties=np.zeros(K, np.int64),
        )
