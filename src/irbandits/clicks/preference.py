"""Pairwise-preference multileaving (Oosterhuis & de Rijke, CIKM 2017), compiled.

The list: slot i (0-based) shows a result drawn uniformly from those ranked in the top i + 1 of any
ranker and not yet shown. Clicks give pairwise preferences: a clicked result is preferred to every
unclicked result shown at or above the position just below the last click. A pair counts only when
both results could have been shown in either order: the lower of the two slots is at least the
higher of the two results' top ranks (best rank over the rankers). Its weight is the inverse of the
probability that the sampler put the pair in this order, ``1 / prod_{t = lo}^{hi - 1} (1 - 1 / c_t)``
with ``lo < hi`` the two top ranks and ``c_t`` the number of candidates at slot t (a pair whose
order was forced, some ``c_t = 1``, carries no information and is left out). A ranker's credit is
the weighted number of preferences it agrees with (ranks the preferred result higher; a result
outside its list ranks below all of it) divided by the number of counted pairs.

``top[i]`` (the assign array) is the top rank of the result at slot i, ``size[i]`` the number of
candidates at slot i.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.clicks.positions import position
from irbandits.rng import randint


@njit(cache=True)
def fill(lists, lens, rng, shown, top, size):
    """Build the list into ``shown``; returns its length."""
    m, L = lists.shape[0], shown.shape[0]
    pool = np.empty(m * L, np.int64)   # candidates not yet shown
    rank = np.empty(m * L, np.int64)   # their top ranks
    k, n = 0, 0
    while n < L:
        for r in range(m):            # results at rank n join the candidates
            if n < lens[r]:
                d = lists[r, n]
                if position(pool, k, d) < 0 and position(shown, n, d) < 0:
                    pool[k], rank[k] = d, n
                    k += 1
        if k == 0:
            break
        j = randint(rng, k)
        shown[n], top[n], size[n] = pool[j], rank[j], k
        k -= 1
        pool[j], rank[j] = pool[k], rank[k]
        n += 1
    return n


@njit(cache=True)
def scores(lists, lens, shown, n, top, size, clicks, out):
    """Each ranker's credit for these clicks (see module) into ``out``."""
    out[:] = 0.0
    last = -1
    for i in range(n):
        if clicks[i]:
            last = i
    if last < 0:
        return
    pairs = 0
    for i in range(n):
        if not clicks[i]:
            continue
        for j in range(min(last + 2, n)):
            if clicks[j] or min(i, j) < max(top[i], top[j]):
                continue
            lo, hi = min(top[i], top[j]), max(top[i], top[j])
            p = 1.0
            for t in range(lo, hi):
                p *= 1.0 - 1.0 / size[t]
            if p <= 0.0:
                continue
            pairs += 1
            for r in range(lists.shape[0]):
                ri, rj = position(lists[r], lens[r], shown[i]), position(lists[r], lens[r], shown[j])
                ri = ri if ri >= 0 else lens[r]
                rj = rj if rj >= 0 else lens[r]
                if ri < rj:
                    out[r] += 1.0 / p
    if pairs:
        out /= pairs
