"""Relative Upper Confidence Bound (thesis Algorithm 2; Zoghi et al., ICML 2014).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(RUCB(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import pick, recommend_copeland_winner, record, threshold, ucb
from irbandits.params import Param
from irbandits.rng import randint, uniform


@njit(cache=True)
def refresh_rows(W, thr, rowmax, c, d, alpha):
    """After duel (c, d): new thresholds for the pair and new row maxima of rows c and d."""
    thr[c, d] = threshold(W, c, d, alpha)
    thr[d, c] = threshold(W, d, c, alpha)
    for i in (c, d):
        m = -np.inf
        for j in range(W.shape[0]):
            if thr[i, j] > m:
                m = thr[i, j]
        rowmax[i] = m


@njit(cache=True)
def relative_ucb_opponent(W, c, log_t, alpha, vals, ties, rng):
    """d = argmax_j u_jc, ties at random, and d != c when c is among the tied."""
    K = W.shape[0]
    best = -np.inf
    for j in range(K):
        vals[j] = ucb(W, j, c, log_t, alpha)
        if vals[j] > best:
            best = vals[j]
    n = 0
    for j in range(K):
        if vals[j] == best and j != c:
            ties[n] = j
            n += 1
    if n == 0:
        return c
    return pick(ties, n, rng)


@njit(cache=True)
def _select(st, rng):
    W, t, thr, rowmax, hyp, params, cand, vals = st
    alpha = params[0]
    K = W.shape[0]
    log_t = math.log(t[0] + 1)
    n = 0
    for i in range(K):
        if rowmax[i] <= log_t:  # u_ij >= 0.5 for every j
            cand[n] = i
            n += 1
    if hyp[0] >= 0 and rowmax[hyp[0]] > log_t:  # B <- B intersect C
        hyp[0] = -1
    if n == 0:
        c = randint(rng, K)
    elif n == 1:
        hyp[0] = cand[0]
        c = cand[0]
    elif hyp[0] >= 0:
        if uniform(rng) < 0.5:
            c = hyp[0]
        else:
            m = 0
            for k in range(n):
                if cand[k] != hyp[0]:
                    cand[m] = cand[k]
                    m += 1
            c = pick(cand, m, rng)
    else:
        c = pick(cand, n, rng)
    d = relative_ucb_opponent(W, c, log_t, alpha, vals, cand, rng)
    return c, d


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, thr, rowmax, hyp, params, cand, vals = st
    record(W, c, d, c_won)
    if c != d:
        refresh_rows(W, thr, rowmax, c, d, params[0])
    t[0] += 1


class RUCB(DuelingAlgorithm):
    """Relative Upper Confidence Bound: an optimistic champion, then UCB relative to it."""

    name = "RUCB"
    description = "Relative Upper Confidence Bound, with the hypothesised-best-arm set B"
    reference = "Zoghi et al. ICML 2014; thesis (seed 002) Algorithm 2"
    params = (Param("alpha", float, 0.51, "exploration; theory needs > 0.5", lambda a: a > 0, "> 0"),)

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(recommend_copeland_winner)

    def _init_state(self, K, alpha):
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            thr=np.full((K, K), -np.inf),
            rowmax=np.full(K, -np.inf),
            hyp=np.full(1, -1, np.int64),
            params=np.array([alpha]),
            cand=np.zeros(K, np.int64),
            vals=np.zeros(K),
        )
