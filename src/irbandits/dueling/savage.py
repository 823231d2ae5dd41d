"""SAVAGE, Sensitivity Analysis of VAriables for Generic Exploration (Urvoy, Clerot, Feraud & Naamane,
"Generic exploration and K-armed voting bandits", ICML 2013, Algorithm 1), in its Condorcet and
Copeland variants (thesis, seed 002, section 2.2.2).

Explore, then exploit. The variables are the K (K - 1) / 2 pairs; the exploration set starts with
all of them. Each step duels the pair of the exploration set compared least often (round robin;
ties at random: every sweep visits the pairs left in a fresh random order). A pair's Hoeffding
interval after n duels is ``mean +- sqrt(ln(2 N T / delta) / (2 n))``, N = K (K - 1) / 2, with
``delta = 1 / T`` (thesis ch. 4 and 7); the pair is *decided* once 1/2 is outside it. After each
duel the pairs whose value can no longer change the answer leave the exploration set (the
listing's ``Indep`` test):

* **Condorcet** (a Condorcet winner is assumed): an arm that lost a decided pair is out; a pair
  leaves when it is decided or both its arms are out; all leave when one candidate is left.
* **Copeland**: an arm is out when its optimistic Copeland score (K - 1 minus its decided
  losses) is lower than the largest pessimistic score (decided wins) of any arm; a pair leaves
  when it is decided or both its arms are out; all leave when one arm is left in.

Decided pairs never change again (they are not sampled), so an arm out stays out. When the
exploration set is empty, or the horizon T is used up, the recommended arm is committed and duels
itself ever after. Recommendation: among the arms still in, the one with the most empirical wins
(w_ij > w_ji), first in arm order.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(CondorcetSAVAGE(P.K, seed=1, horizon=20_000), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm, from_horizon
from irbandits.dueling.bounds import empirical_copeland_winner, record, shuffled
from irbandits.params import Param

# info slots: committed arm (-1 while exploring), pairs in the exploration set, length of this
# sweep's queue, position in it, arms still in, variant (0 Condorcet, 1 Copeland), horizon (0: none)
_BEST, _NACT, _QLEN, _QPOS, _NIN, _COPELAND, _T = range(7)


@njit(cache=True)
def _next_pair(info, active, queue, rng):
    """The next pair of the sweep (a code i * K + j, i < j), starting a new sweep when this one is done."""
    while True:
        while info[_QPOS] < info[_QLEN]:
            code = queue[info[_QPOS]]
            if active[code]:
                return code
            info[_QPOS] += 1
        info[_QLEN] = shuffled(active, queue, rng)  # a new sweep: the pairs left, in a random order
        info[_QPOS] = 0


@njit(cache=True)
def _select(st, rng):
    W, t, params, info, active, queue, wins, losses, out = st
    if info[_BEST] >= 0:
        return info[_BEST], info[_BEST]
    K = W.shape[0]
    code = _next_pair(info, active, queue, rng)
    return code // K, code % K


@njit(cache=True)
def _drop(info, active, K, i, j):
    code = min(i, j) * K + max(i, j)
    if active[code]:
        active[code] = False
        info[_NACT] -= 1


@njit(cache=True)
def _refresh(info, active, wins, losses, out, K):
    """Mark the arms out and drop the pairs of two arms out (both rules only ever grow)."""
    most = 0
    if info[_COPELAND]:
        most = wins.max()
    for i in range(K):
        if not out[i] and (losses[i] > 0 if not info[_COPELAND] else K - 1 - losses[i] < most):
            out[i] = True
            info[_NIN] -= 1
            for j in range(K):
                if j != i and out[j]:
                    _drop(info, active, K, i, j)


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, params, info, active, queue, wins, losses, out = st
    record(W, c, d, c_won)
    t[0] += 1
    if info[_BEST] >= 0:
        return
    K = W.shape[0]
    i, j = min(c, d), max(c, d)
    if c != d and active[i * K + j]:
        if info[_QPOS] < info[_QLEN] and queue[info[_QPOS]] == i * K + j:
            info[_QPOS] += 1
        n = W[i, j] + W[j, i]
        mean, width = W[i, j] / n, math.sqrt(params[0] / (2.0 * n))
        if mean - width > 0.5 or mean + width < 0.5:  # decided
            win, lose = (i, j) if mean > 0.5 else (j, i)
            wins[win] += 1
            losses[lose] += 1
            _drop(info, active, K, i, j)
            _refresh(info, active, wins, losses, out, K)
    if info[_NACT] == 0 or info[_NIN] <= 1 or (info[_T] > 0 and t[0] >= info[_T]):
        info[_BEST] = empirical_copeland_winner(W, out)


@njit(cache=True)
def _recommend(st):
    W, t, params, info, active, queue, wins, losses, out = st
    return info[_BEST] if info[_BEST] >= 0 else empirical_copeland_winner(W, out)


@njit(cache=True)
def _absorbed(st):
    """True once an arm is committed: every later step is the duel (b, b)."""
    return st[3][_BEST] >= 0


class CondorcetSAVAGE(DuelingAlgorithm):
    """Condorcet SAVAGE: round-robin duels until one arm has not lost a decided pair."""

    name = "Condorcet-SAVAGE"
    description = "SAVAGE for the Condorcet winner: round-robin exploration with Hoeffding elimination (needs the horizon)"
    reference = "Urvoy et al. ICML 2013, Algorithm 1 (Condorcet winner); thesis (seed 002) 2.2.2"
    params = (Param("delta", float, None, "failure probability; None: 1 / T for the horizon T",
                    lambda d: 0 < d < 1, "in (0, 1)"),)
    copeland = False

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)
    _absorbed = staticmethod(_absorbed)

    def _init_state(self, K, delta):
        delta = from_horizon(self.name, self.horizon, delta, lambda T: 1.0 / T)
        N = K * (K - 1) // 2
        T = self.horizon or 1.0 / delta  # the union bound's T when only delta is given
        active = np.zeros(K * K, np.bool_)
        for i in range(K):
            active[i * K + i + 1:(i + 1) * K] = True
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([math.log(2.0 * N * T / delta)]),
            info=np.array([-1, N, 0, 0, K, int(self.copeland), self.horizon or 0], np.int64),
            active=active,  # the exploration set, by pair code i * K + j (i < j)
            queue=np.zeros(N, np.int64),  # this sweep's pairs in random order
            wins=np.zeros(K, np.int64),  # decided pairs won
            losses=np.zeros(K, np.int64),  # decided pairs lost
            out=np.zeros(K, np.bool_),  # arms that cannot be the winner
        )


class CopelandSAVAGE(CondorcetSAVAGE):
    """Copeland SAVAGE: round-robin duels until the Copeland winner is certain."""

    name = "Copeland-SAVAGE"
    description = "SAVAGE for a Copeland winner: round-robin exploration, arms dropped by Copeland-score bounds (needs the horizon)"
    reference = "Urvoy et al. ICML 2013, Algorithm 1 (Copeland winner); thesis (seed 002) 2.2.2 and ch. 7"
    copeland = True
