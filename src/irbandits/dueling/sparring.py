"""Sparring (Ailon, Karnin & Joachims, "Reducing dueling bandits to cardinal bandits", ICML 2014;
thesis, seed 002, section 2.2.4) with UCB, EXP3 and Thompson-sampling copies.

Two copies of a K-armed bandit algorithm: the *left* copy proposes c, the *right* copy d, the duel
(c, d) is played, and the copy whose arm won gets reward 1, the other reward 0 (a self-duel is
played and rewarded the same way: its fair coin is the copy's true chance against itself). The
copies:

* ``Sparring-UCB``: UCB1 (Auer, Cesa-Bianchi & Fischer 2002): each arm once (lowest index
  first), then ``argmax mean_i + sqrt(alpha ln n / n_i)`` with n the copy's pulls, ties at random;
  the listing's experiments (and the thesis) use UCB.
* ``Sparring-EXP3``: EXP3 (Auer, Cesa-Bianchi, Freund & Schapire 2002, Fig. 1):
  ``p_i = (1 - gamma) w_i / sum w + gamma / K``; the arm drawn with reward x gets
  ``w_i *= exp(gamma x / (p_i K))``; ``gamma = min(1, sqrt(K ln K / ((e - 1) T)))`` for the horizon T
  (their Corollary 3.2 with g = T), as in the adversarial analysis Sparring relies on. Log-weights
  are exact; ``exp(lw - shift)`` is cached per arm and refreshed only for the arm rewarded, the
  shift moving to the largest log-weight when a weight passes 1e100.
* ``Sparring-TS``: Beta(1, 1)-prior Thompson sampling per copy (argmax of Beta(S_i + 1, F_i + 1)
  draws), the Sparring baseline of the Self-Sparring paper (Sui et al. UAI 2017).

Recommendation (no rule in the source): the arm the two copies have played most, together.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(SparringUCB(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm, from_horizon
from irbandits.dueling.bounds import pick, record
from irbandits.dueling.selfsparring import thompson_draw
from irbandits.params import Param
from irbandits.rng import uniform


@njit(cache=True)
def ucb_arm(S, N, n, alpha, ties, rng):
    """UCB1: an unplayed arm first (the lowest index), else argmax S_i / N_i + sqrt(alpha ln n / N_i),
    ties at random (``S`` rewards, ``N`` pulls, ``n`` pulls in all)."""
    K = S.shape[0]
    for i in range(K):
        if N[i] == 0:
            return i
    log_n = math.log(n)
    best, k = -np.inf, 0
    for i in range(K):
        v = S[i] / N[i] + math.sqrt(alpha * log_n / N[i])
        if v > best:
            best, k = v, 0
        if v == best:
            ties[k] = i
            k += 1
    return pick(ties, k, rng)


@njit(cache=True)
def most_played(pulls):
    """The arm the two copies have played most, together (first in arm order)."""
    return np.argmax(pulls[0] + pulls[1])


@njit(cache=True)
def _recommend_most_played(st):
    """``_recommend`` of Sparring-UCB and Sparring-EXP3, which keep the copies' pulls in ``st[3]``."""
    return most_played(st[3])


# ----- Sparring-UCB ---------------------------------------------------------------------------
@njit(cache=True)
def _ucb_select(st, rng):
    W, t, params, pulls, reward, ties = st
    n = t[0] + 1
    return (ucb_arm(reward[0], pulls[0], n, params[0], ties, rng),
            ucb_arm(reward[1], pulls[1], n, params[0], ties, rng))


@njit(cache=True)
def _ucb_update(st, rng, c, d, c_won):
    W, t, params, pulls, reward, ties = st
    record(W, c, d, c_won)
    pulls[0, c] += 1
    pulls[1, d] += 1
    if c_won:  # the winner's copy gets 1, the other 0
        reward[0, c] += 1
    else:
        reward[1, d] += 1
    t[0] += 1


class SparringUCB(DuelingAlgorithm):
    """Sparring with two UCB1 copies."""

    name = "Sparring-UCB"
    description = "Sparring: two UCB1 bandits propose the two arms; the winner's copy is rewarded 1, the other 0"
    reference = "Ailon, Karnin & Joachims ICML 2014, Sparring; thesis (seed 002) 2.2.4"
    params = (Param("alpha", float, 2.0, "UCB1 exploration: mean + sqrt(alpha ln n / n_i)", lambda a: a > 0, "> 0"),)

    _select = staticmethod(_ucb_select)
    _update = staticmethod(_ucb_update)
    _recommend = staticmethod(_recommend_most_played)

    def _init_state(self, K, alpha):
        return dict(W=np.zeros((K, K), np.int64), t=np.zeros(1, np.int64), params=np.array([alpha]),
                    pulls=np.zeros((2, K), np.int64), reward=np.zeros((2, K), np.int64), ties=np.zeros(K, np.int64))


# ----- Sparring-EXP3 --------------------------------------------------------------------------
@njit(cache=True)
def exp3_draw(w, gamma, rng):
    """An arm drawn from p_i = (1 - gamma) w_i / sum w + gamma / K (also MultiSBM's EXP3 bandits)."""
    K = w.shape[0]
    total = 0.0
    for x in w:
        total += x
    u = uniform(rng)
    acc = 0.0
    for i in range(K - 1):
        acc += (1.0 - gamma) * w[i] / total + gamma / K
        if u < acc:
            return i
    return K - 1


@njit(cache=True)
def _exp3_select(st, rng):
    W, t, params, pulls, lw, w, shift = st
    return exp3_draw(w[0], params[0], rng), exp3_draw(w[1], params[0], rng)


@njit(cache=True)
def _exp3_update(st, rng, c, d, c_won):
    W, t, params, pulls, lw, w, shift = st
    record(W, c, d, c_won)
    pulls[0, c] += 1
    pulls[1, d] += 1
    side, arm = (0, c) if c_won else (1, d)  # reward 1 to the winner's copy; reward 0 changes no weight
    exp3_reward(lw, w, shift, side, arm, params[0])
    t[0] += 1


@njit(cache=True)
def exp3_reward(lw, w, shift, side, arm, gamma):
    """EXP3's update of bandit ``side`` (row ``side`` of the log-weights ``lw`` and the cached weights
    ``w = exp(lw - shift[side])``) after reward 1 to ``arm``; a reward 0 changes no weight. Also
    MultiSBM's EXP3 bandits (one row per left arm)."""
    K = w.shape[1]
    total = 0.0
    for x in w[side]:
        total += x
    p = (1.0 - gamma) * w[side, arm] / total + gamma / K
    lw[side, arm] += gamma / (p * K)
    w[side, arm] = math.exp(lw[side, arm] - shift[side])
    if w[side, arm] > 1e100:  # move the shift to the largest log-weight
        shift[side] = lw[side].max()
        for i in range(K):
            w[side, i] = math.exp(lw[side, i] - shift[side])


class SparringEXP3(DuelingAlgorithm):
    """Sparring with two EXP3 copies (the adversarial bandit Sparring's guarantee is about)."""

    name = "Sparring-EXP3"
    description = "Sparring with two EXP3 bandits (needs the horizon for gamma); the winner's copy is rewarded 1"
    reference = "Ailon, Karnin & Joachims ICML 2014, Sparring; EXP3: Auer et al. SIAM J. Comput. 2002, Fig. 1"
    params = (Param("gamma", float, None, "EXP3 exploration in (0, 1]; None: min(1, sqrt(K ln K / ((e - 1) T)))",
                    lambda g: 0 < g <= 1, "in (0, 1]"),)

    _select = staticmethod(_exp3_select)
    _update = staticmethod(_exp3_update)
    _recommend = staticmethod(_recommend_most_played)

    def _init_state(self, K, gamma):
        gamma = from_horizon(self.name, self.horizon, gamma,
                             lambda T: min(1.0, math.sqrt(K * math.log(K) / ((math.e - 1) * T))), what="gamma")
        return dict(W=np.zeros((K, K), np.int64), t=np.zeros(1, np.int64), params=np.array([gamma]),
                    pulls=np.zeros((2, K), np.int64), lw=np.zeros((2, K)),  # log-weights
                    w=np.ones((2, K)), shift=np.zeros(2))  # w = exp(lw - shift), kept per copy


# ----- Sparring-TS ----------------------------------------------------------------------------
@njit
def _ts_select(st, rng):
    W, t, S, F = st
    return thompson_draw(S[0], F[0], rng), thompson_draw(S[1], F[1], rng)


@njit(cache=True)
def _ts_update(st, rng, c, d, c_won):
    W, t, S, F = st
    record(W, c, d, c_won)
    if c_won:
        S[0, c] += 1
        F[1, d] += 1
    else:
        F[0, c] += 1
        S[1, d] += 1
    t[0] += 1


@njit(cache=True)
def _ts_recommend(st):
    W, t, S, F = st
    return most_played(S + F)


class SparringTS(DuelingAlgorithm):
    """Sparring with two Thompson-sampling copies."""

    name = "Sparring-TS"
    description = "Sparring with two Beta(1,1) Thompson-sampling bandits; the winner's copy is rewarded 1, the other 0"
    reference = "Ailon, Karnin & Joachims ICML 2014, Sparring; TS copies as in Sui et al. UAI 2017's Sparring baseline"

    _select = staticmethod(_ts_select)
    _update = staticmethod(_ts_update)
    _recommend = staticmethod(_ts_recommend)

    def _init_state(self, K):
        return dict(W=np.zeros((K, K), np.int64), t=np.zeros(1, np.int64), S=np.zeros((2, K), np.int64),
                    F=np.zeros((2, K), np.int64))
