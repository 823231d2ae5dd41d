"""Compiled helpers shared by several algorithms: confidence bounds, Bernoulli KL, win counts, the
empirical Copeland winner, random tie-breaking and order.

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

from irbandits.rng import randint, shuffle

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


@njit(cache=True, inline="always")  # inlined: RMED2 calls it K times a step, with q = 1/2
def kl_bernoulli(p, q):
    """KL(p, q) of two Bernoulli laws, 0 log 0 = 0, for 0 < q < 1."""
    out = p * math.log(p / q) if p > 0.0 else 0.0
    if p < 1.0:
        out += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return out


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
def empirical_copeland_winner(W, out=None):
    """The arm beating the most others empirically (w_ij > w_ji); ties to the lowest index. With the
    mask ``out``, the best of the arms not out (of all arms when every arm is out)."""
    K = W.shape[0]
    every = out is None or out.all()
    best, best_score = 0, -1
    for i in range(K):
        if every or not out[i]:
            score = 0
            for j in range(K):
                if W[i, j] > W[j, i]:
                    score += 1
            if score > best_score:
                best, best_score = i, score
    return best


@njit(cache=True)
def recommend_copeland_winner(st):
    """The ``_recommend`` kernel of the algorithms that ship the empirical Copeland winner of their
    win counts (the first state array)."""
    return empirical_copeland_winner(st[0])


@njit(cache=True)
def pick(items, n, rng):
    """A uniformly random one of ``items[:n]``, drawing nothing when n == 1."""
    if n == 1:
        return items[0]
    return items[randint(rng, n)]


@njit(cache=True, inline="always")  # inlined: as a call it slows SAVAGE's pair loop by ~10%
def shuffled(mask, out, rng):
    """Write the indices where ``mask`` is True to ``out[:n]`` in a uniformly random order; returns n."""
    n = 0
    for i in range(mask.shape[0]):
        if mask[i]:
            out[n] = i
            n += 1
    shuffle(rng, out[:n])
    return n
