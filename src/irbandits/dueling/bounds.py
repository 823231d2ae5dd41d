"""Compiled helpers shared by several algorithms: confidence bounds, win counts, tie-breaking.

Conventions (``../shared/spec/online.md``): ``u_ij = w_ij / n_ij + sqrt(alpha * log_t / n_ij)`` and
``l_ij = w_ij / n_ij - sqrt(alpha * log_t / n_ij)`` with ``n_ij = w_ij + w_ji``; the thesis's
``x / 0 := 1`` makes an unplayed pair ``u = 2`` and ``l = 0``; ``u_ii = l_ii = 0.5``.

Instead of recomputing all K^2 bounds each step, algorithms that only ask "is u_ij >= 0.5?" keep
the *threshold* of every pair: ``u_ij >= 0.5`` exactly when ``log_t >= thr_ij`` with
``thr_ij = n_ij (0.5 - w_ij / n_ij)^2 / alpha`` if ``w_ij / n_ij < 0.5`` and ``-inf`` otherwise.
Only the thresholds of the pair just played change, so a step costs O(K) instead of O(K^2).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.rng import randint

NEG_INF = -np.inf


@njit(cache=True)
def ucb(W, i, j, log_t, alpha):
    """Upper confidence bound u_ij."""
    if i == j:
        return 0.5
    n = W[i, j] + W[j, i]
    if n == 0:
        return 2.0
    return W[i, j] / n + math.sqrt(alpha * log_t / n)


@njit(cache=True)
def lcb(W, i, j, log_t, alpha):
    """Lower confidence bound l_ij."""
    if i == j:
        return 0.5
    n = W[i, j] + W[j, i]
    if n == 0:
        return 0.0
    return W[i, j] / n - math.sqrt(alpha * log_t / n)


@njit(cache=True)
def threshold(W, i, j, alpha):
    """The log-time from which u_ij >= 0.5 (see the module docstring)."""
    n = W[i, j] + W[j, i]
    if i == j or n == 0 or 2 * W[i, j] >= n:
        return NEG_INF
    gap = 0.5 - W[i, j] / n
    return n * gap * gap / alpha


@njit(cache=True)
def record(W, c, d, c_won):
    """Add one duel to the win counts; a self-duel carries no information and is not recorded."""
    if c == d:
        return
    if c_won:
        W[c, d] += 1
    else:
        W[d, c] += 1


@njit(cache=True)
def empirical_copeland_winner(W):
    """The arm beating the most others empirically (w_ij > w_ji); ties to the lowest index."""
    K = W.shape[0]
    best, best_score = 0, -1
    for i in range(K):
        score = 0
        for j in range(K):
            if W[i, j] > W[j, i]:
                score += 1
        if score > best_score:
            best, best_score = i, score
    return best


@njit(cache=True)
def pick(items, n, rng):
    """A uniformly random one of ``items[:n]``, drawing nothing when n == 1."""
    if n == 1:
        return items[0]
    return items[randint(rng, n)]
