"""Relative Confidence Sampling (thesis Algorithm 3; Zoghi et al., WSDM 2014).

Each step a tournament is sampled from the posteriors, theta_ij ~ Beta(w_ij + 1, w_ji + 1) with
theta_ji = 1 - theta_ij; the champion c is the arm with theta_cj >= 0.5 for all j (at most one can
exist), else the arm chosen champion least often (ties at random); then, as in RUCB,
d = argmax_j u_jc.

Only the indicators theta_ij > 0.5 matter, so they are drawn as Bernoulli(q_ij) with q cached per
pair (:mod:`irbandits.dueling.thompson`), lazily: arms are tried in index order and an arm's row
stops at its first loss; a pair is drawn at most once per step, so theta_ji = 1 - theta_ij holds.
The result has exactly the distribution of the listing's full tournament. Recommendation: the
listing's "Ensure" rule of RUCB, the arm with the most empirical wins.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(RCS(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import pick, recommend_copeland_winner, record
from irbandits.dueling.rucb import relative_ucb_opponent
from irbandits.dueling.thompson import indicator, refresh_pair
from irbandits.params import Param


@njit(cache=True)
def sampled_champion(q, stamp, low_won, step, rng):
    """The arm beating every other arm in this step's sampled tournament, or -1."""
    K = q.shape[0]
    for i in range(K):
        champion = True
        for j in range(K):
            if j != i and not indicator(q, stamp, low_won, i, j, step, rng):
                champion = False
                break
        if champion:
            return i
    return -1


@njit(cache=True)
def _select(st, rng):
    W, t, params, q, stamp, low_won, champ, vals, ties = st
    step = t[0] + 1
    c = sampled_champion(q, stamp, low_won, step, rng)
    if c < 0:
        fewest, n = champ.min(), 0
        for i in range(W.shape[0]):
            if champ[i] == fewest:
                ties[n] = i
                n += 1
        c = pick(ties, n, rng)
    champ[c] += 1
    d = relative_ucb_opponent(W, c, math.log(step), params[0], vals, ties, rng)
    return c, d


@njit
def _update(st, rng, c, d, c_won):
    W, t, params, q, stamp, low_won, champ, vals, ties = st
    record(W, c, d, c_won)
    if c != d:
        refresh_pair(q, W, c, d)
    t[0] += 1


class RCS(DuelingAlgorithm):
    """Relative Confidence Sampling: a Thompson-sampled champion, then UCB relative to it."""

    name = "RCS"
    description = "Relative Confidence Sampling: sampled-tournament champion, RUCB-style opponent"
    reference = "Zoghi et al. WSDM 2014; thesis (seed 002) Algorithm 3"
    params = (Param("alpha", float, 0.501, "exploration of the opponent's UCB; > 0.5", lambda a: a > 0, "> 0"),)

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(recommend_copeland_winner)

    def _init_state(self, K, alpha):
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha]),
            q=np.full((K, K), 0.5),
            stamp=np.zeros((K, K), np.int64),
            low_won=np.zeros((K, K), np.bool_),
            champ=np.zeros(K, np.int64),
            vals=np.zeros(K),
            ties=np.zeros(K, np.int64),
        )
