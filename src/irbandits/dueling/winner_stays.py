"""Winner Stays (Chen & Frazier, "Dueling bandits with weak regret", ICML 2017): WS-W for weak
regret and WS-S for strong regret.

**WS-W** (their Algorithm 1) keeps one count per arm, C_i = wins - losses so far, and at step t:

1. x_t: the previous left arm x_{t-1} if it has the largest C, else the previous right arm y_{t-1}
   if it has, else an arm with the largest C drawn uniformly;
2. y_t: among the arms other than x_t, x_{t-1} if it has the largest C, else y_{t-1} if it has,
   else one with the largest C drawn uniformly;
3. play (x_t, y_t); the winner's C grows by one and the loser's shrinks by one.

So the winner stays and meets the challenger with the best record; the two keep dueling until one
of them falls behind the arms waiting. The paper analyses this as rounds: in round r every arm
still waiting has C = -(r - 1), each duel series ends when one of its two arms reaches -r, and the
round ends when every arm but one (the round's winner, then at C = (K - 1) r) is at -r. Weak
regret (0 whenever either arm shown is the Condorcet winner) is O(K^2) in expectation whatever the
horizon, O(K log K) under a total order: once the Condorcet winner stays, it stays for good.

**WS-S** (their Algorithm 2) alternates WS-W with exploitation: after WS-W's round r it plays the
round's winner against itself floor(beta^r) times (``beta > 1``), then resumes WS-W with round r + 1,
for strong regret O(K^2 + K log T). An exploitation step records nothing in C.

Both recommend the arm with the largest C (first in arm order).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(WSW(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
>>> int(run_one(WSS(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import pick, record
from irbandits.params import Param

_ROUND, _EXPLOIT, _BEST = range(3)  # WS-S's info slots: WS-W's round, exploitation steps left, its arm
_MAX_PHASE = 2.0**62  # floor(beta^r) is capped here (a phase longer than any run)


@njit(cache=True)
def _kept(C, x, prev, value):
    """Steps 1-2's preference: x_{t-1}, else y_{t-1}, if it is not ``x`` and has C = ``value``; else -1."""
    for a in (prev[0], prev[1]):
        if a >= 0 and a != x and C[a] == value:
            return a
    return -1


@njit(cache=True)
def _best_other(C, x, prev, ties, rng):
    """The arm with the largest C other than ``x`` (-1: none excluded), by steps 1-2's rule."""
    top = np.iinfo(np.int64).min
    for i in range(C.shape[0]):
        if i != x and C[i] > top:
            top = C[i]
    a = _kept(C, x, prev, top)
    if a >= 0:
        return a
    n = 0
    for i in range(C.shape[0]):
        if i != x and C[i] == top:
            ties[n] = i
            n += 1
    return pick(ties, n, rng)


@njit(cache=True)
def ws_pair(C, prev, ties, rng):
    """WS-W's steps 1-2: (x_t, y_t)."""
    x = _best_other(C, -1, prev, ties, rng)
    return x, _best_other(C, x, prev, ties, rng)


@njit(cache=True)
def ws_record(C, prev, c, d, c_won):
    """WS-W's step 3: the winner's C + 1, the loser's C - 1; (c, d) is the next step's previous pair.
    Returns the winner."""
    win, lose = (c, d) if c_won else (d, c)
    C[win] += 1
    C[lose] -= 1
    prev[0], prev[1] = c, d
    return win


@njit(cache=True)
def _recommend(st):
    return np.argmax(st[2])  # the largest C


# ----- WS-W -----------------------------------------------------------------------------------
@njit(cache=True)
def _wsw_select(st, rng):
    W, t, C, prev, ties = st
    return ws_pair(C, prev, ties, rng)


@njit(cache=True)
def _wsw_update(st, rng, c, d, c_won):
    W, t, C, prev, ties = st
    record(W, c, d, c_won)
    ws_record(C, prev, c, d, c_won)
    t[0] += 1


class WSW(DuelingAlgorithm):
    """Winner Stays for weak regret: the winner stays and meets the challenger with the best record."""

    name = "WS-W"
    description = "Winner Stays (weak regret): the winner stays; the challenger has the best wins-minus-losses"
    reference = "Chen & Frazier ICML 2017, Algorithm 1 (WS-W)"

    _select = staticmethod(_wsw_select)
    _update = staticmethod(_wsw_update)
    _recommend = staticmethod(_recommend)

    def _init_state(self, K):
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            C=np.zeros(K, np.int64),
            prev=np.full(2, -1, np.int64),
            ties=np.zeros(K, np.int64),
        )


# ----- WS-S -----------------------------------------------------------------------------------
@njit(cache=True)
def _wss_select(st, rng):
    W, t, C, prev, ties, info, params = st
    if info[_EXPLOIT] > 0:  # exploitation: the last round's winner against itself
        return info[_BEST], info[_BEST]
    return ws_pair(C, prev, ties, rng)


@njit(cache=True)
def _wss_update(st, rng, c, d, c_won):
    W, t, C, prev, ties, info, params = st
    record(W, c, d, c_won)
    if info[_EXPLOIT] > 0:
        info[_EXPLOIT] -= 1
    else:
        win = ws_record(C, prev, c, d, c_won)
        r = info[_ROUND]
        if C[win] >= (C.shape[0] - 1) * r:  # every other arm is at -r: WS-W's round r is over
            info[_BEST] = win
            info[_EXPLOIT] = np.int64(min(np.floor(params[0] ** r), _MAX_PHASE))
            info[_ROUND] = r + 1
    t[0] += 1


class WSS(DuelingAlgorithm):
    """Winner Stays for strong regret: WS-W's rounds, each followed by floor(beta^r) exploitation steps."""

    name = "WS-S"
    description = "Winner Stays (strong regret): WS-W's round r, then its winner against itself floor(beta^r) times"
    reference = "Chen & Frazier ICML 2017, Algorithm 2 (WS-S)"
    params = (
        Param("beta", float, 1.05, "exploitation after round r lasts floor(beta^r) steps", lambda b: b > 1, "> 1"),
    )

    _select = staticmethod(_wss_select)
    _update = staticmethod(_wss_update)
    _recommend = staticmethod(_recommend)

    def _init_state(self, K, beta):
        info = np.zeros(3, np.int64)
        info[_ROUND] = 1
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            C=np.zeros(K, np.int64),
            prev=np.full(2, -1, np.int64),
            ties=np.zeros(K, np.int64),
            info=info,
            params=np.array([beta]),
        )
