"""Linear rankers over learning-to-rank features: scores, top-k lists, NDCG, random directions.

A ranker is a weight vector ``w`` (float64[F]); a document's score is ``x . w``. Lists are the
top ``k`` documents by score, ties ordered at random (every tied document gets a random 64-bit key
from the learner's generator, drawn only when the tie matters, so the order of a tie is uniform).
Several rankers of one query (DBGD's current and candidate, MGD's candidates) are scored in one pass
over the query's documents. Gains are ``2^grade - 1`` at discount ``1 / log2(rank + 2)``.

>>> from irbandits.rng import new_rng
>>> X = np.array([[0.1, 1.0], [0.9, 0.0], [0.5, 0.5]])
>>> lists, lens = np.empty((2, 2), np.int64), np.empty(2, np.int64)
>>> top_lists(X, np.array([[1.0, 0.0], [0.0, 1.0]]), new_rng(0), lists, lens)
>>> lists.tolist()
[[1, 2], [0, 2]]
>>> float(dcg(np.array([1, 0, 1]), 3)) == 1.0 + 1.0 / 2.0
True
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.rng import next_u64, normal


@njit(cache=True, fastmath=True)
def scores(X, W, S):
    """``S[i, r] = X[i] . W[r]`` for the documents of one query (rows of ``X``) and rankers ``W``."""
    n, F = X.shape
    for i in range(n):
        for r in range(W.shape[0]):
            s = 0.0
            for f in range(F):
                s += X[i, f] * W[r, f]
            S[i, r] = s


@njit(cache=True)
def top_from_scores(S, rng, lists, lens):
    """Each ranker's (column of ``S``) top ``lists.shape[1]`` documents into ``lists[r, :lens[r]]``,
    best first, ties in a uniformly random order."""
    m, k = lists.shape
    n = S.shape[0]
    top = np.empty((m, k))
    keys = np.empty((m, k), np.uint64)
    for r in range(m):
        lens[r] = 0
    for i in range(n):
        for r in range(m):
            s = S[i, r]
            c = lens[r]
            if c == k:
                if s < top[r, k - 1]:
                    continue
                key = next_u64(rng)
                if s == top[r, k - 1] and key < keys[r, k - 1]:
                    continue
                p = k - 1
            else:
                key = next_u64(rng)
                p = c
                lens[r] = c + 1
            while p > 0 and (top[r, p - 1] < s or (top[r, p - 1] == s and keys[r, p - 1] < key)):
                top[r, p], keys[r, p], lists[r, p] = top[r, p - 1], keys[r, p - 1], lists[r, p - 1]
                p -= 1
            top[r, p], keys[r, p], lists[r, p] = s, key, i


@njit(cache=True)
def top_lists(X, W, rng, lists, lens):
    """The top lists of rankers ``W`` (float64[m, F]) for query documents ``X`` (float64[n, F])."""
    S = np.empty((X.shape[0], W.shape[0]))
    scores(X, W, S)
    top_from_scores(S, rng, lists, lens)


@njit(cache=True)
def unit_direction(rng, u):
    """A direction drawn uniformly from the unit sphere, written to ``u``."""
    norm = 0.0
    while norm == 0.0:
        for f in range(u.shape[0]):
            u[f] = normal(rng)
            norm += u[f] * u[f]
    norm = math.sqrt(norm)
    for f in range(u.shape[0]):
        u[f] /= norm


@njit(cache=True)
def dcg(grades, n):
    """DCG of the first ``n`` grades: sum of ``(2^g - 1) / log2(i + 2)``."""
    total = 0.0
    for i in range(n):
        if grades[i] > 0:
            total += (2.0 ** grades[i] - 1.0) / math.log2(i + 2.0)
    return total


@njit(cache=True)
def ideal_dcgs(labels, bounds, k):
    """The ideal DCG@k of every query (0 for a query without a relevant document)."""
    Q = len(bounds) - 1
    out = np.zeros(Q)
    for q in range(Q):
        g = -np.sort(-labels[bounds[q]:bounds[q + 1]])
        out[q] = dcg(g, min(k, len(g)))
    return out


@njit(cache=True)
def linear_score(st, X, S):
    """``S[i, 0]``: the score of document ``i`` by a learner's current ranker, row 0 of ``st[0]`` (the
    scorer of every linear learner; :mod:`irbandits.oltr.neural` has another)."""
    scores(X, st[0][:1], S)


@njit
def mean_ndcg(score_k, st, features, bounds, labels, idcg, k, rng):
    """NDCG@k of the ranker that ``score_k(st, X, S)`` scores with, averaged over the queries with a
    relevant document (ties at random)."""
    lists, lens = np.empty((1, k), np.int64), np.empty(1, np.int64)
    grades = np.empty(k, np.int64)
    total, counted = 0.0, 0
    for q in range(len(bounds) - 1):
        if idcg[q] <= 0.0:
            continue
        lo = bounds[q]
        X = features[lo:bounds[q + 1]]
        S = np.empty((X.shape[0], 1))
        score_k(st, X, S)
        top_from_scores(S, rng, lists, lens)
        for i in range(lens[0]):
            grades[i] = labels[lo + lists[0, i]]
        total += dcg(grades, lens[0]) / idcg[q]
        counted += 1
    return total / counted if counted else 0.0
