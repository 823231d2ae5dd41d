"""Document orderings: DocID, Rank and Moffat et al.'s methods A, B and C (seed 003, section 3.1).

DocID and Rank follow a fixed order; Moffat A, B and C weight every unjudged document by its
rank-biased contributions ``c_sd = (1 - p) p^(rank - 1)`` over the runs ``s`` that retrieved it::

    A: w_d = sum_s c_sd
    B: w_d = sum_s c_sd * res_s
    C: w_d = sum_s c_sd * res_s * (base_s + res_s / 2)^3

``base_s`` is the RBP of run ``s`` over its documents judged relevant so far and ``res_s`` its
residual: the RBP weight of its unjudged pooled documents plus ``p^length`` for the ranks below the
pool depth (1 before any judgment). All three are one kernel, ``w = c * res^a (base + res/2)^b``
with ``(a, b)`` = (0, 0), (1, 0), (1, 3), recomputed from the judgments before every choice (no
running sums that drift); the largest weight is judged next, ties to the smaller docno.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> runs = pd.DataFrame(dict(run=list("xxyy"), topic="1", docno=list("bcca"), rank=[1, 2, 1, 2]))
>>> pool = depth_pools(runs, depth=2)["1"]
>>> m = MoffatA(pool)
>>> [m.next(), m.judge("c", True).next(), m.judge("b", False).next()]
['c', 'b', 'a']
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.params import Param
from irbandits.pooling.base import PoolingMethod, judge, offer

# ----- fixed orders ---------------------------------------------------------------------------------


@njit(cache=True)
def _select_fixed(ps, own, rng):
    judged = ps[5]
    order, cursor = own
    c = cursor[0]
    while c < order.shape[0] and judged[order[c]]:
        c += 1
    cursor[0] = c
    return -1 if c == order.shape[0] else offer(ps, order[c])


@njit(cache=True)
def _update_fixed(ps, own, rng, doc, rel):
    judge(ps, doc)


class DocID(PoolingMethod):
    """The pool sorted by document id, as TREC assessors traditionally saw it."""

    name = "DocID"
    description = "pool in docno order"
    reference = "seed 003 section 3.1 (Voorhees 2002)"
    _select = staticmethod(_select_fixed)
    _update = staticmethod(_update_fixed)

    def _init_own(self, pool):
        return dict(order=np.arange(pool.size, dtype=np.int64), cursor=np.zeros(1, np.int64))


class Rank(PoolingMethod):
    """All rank-1 documents (runs in name order), then all rank-2 documents, and so on."""

    name = "Rank"
    description = "rank 1 of every run, then rank 2, ...; runs in name order within a rank"
    reference = "seed 003 section 3.1"
    _select = staticmethod(_select_fixed)
    _update = staticmethod(_update_fixed)

    def _init_own(self, pool):
        by_rank = pool.ranked.T.ravel()
        docs = by_rank[by_rank >= 0]
        _, first = np.unique(docs, return_index=True)
        return dict(order=docs[np.sort(first)].astype(np.int64), cursor=np.zeros(1, np.int64))


# ----- Moffat et al. ---------------------------------------------------------------------------------


@njit(cache=True)
def _select_moffat(ps, own, rng):
    ranked, length, judged = ps[0], ps[1], ps[5]
    contrib, tail, expo, relevant, weight = own
    weight[:] = 0.0
    for r in range(ranked.shape[0]):
        res, base = tail[r], 0.0
        for i in range(length[r]):
            d = ranked[r, i]
            if not judged[d]:
                res += contrib[i]
            elif relevant[d]:
                base += contrib[i]
        f = res ** expo[0] * (base + res / 2.0) ** expo[1]
        for i in range(length[r]):
            d = ranked[r, i]
            if not judged[d]:
                weight[d] += contrib[i] * f
    best, arg = -np.inf, -1
    for d in range(weight.shape[0]):
        if not judged[d] and weight[d] > best:
            best, arg = weight[d], d
    return -1 if arg < 0 else offer(ps, arg)


@njit(cache=True)
def _update_moffat(ps, own, rng, doc, rel):
    judge(ps, doc)
    own[3][doc] = rel


class MoffatA(PoolingMethod):
    """Moffat et al.'s method A: documents by their summed RBP contributions (a static order)."""

    name = "MoffatA"
    description = "summed rank-biased contributions (Moffat et al. 2007, method A)"
    reference = "Moffat, Webber & Zobel SIGIR 2007; seed 003 eq. 3-4"
    params = (Param("p", float, 0.8, "RBP persistence", lambda p: 0 < p < 1, "in (0, 1)"),)
    exponents = (0.0, 0.0)
    _select = staticmethod(_select_moffat)
    _update = staticmethod(_update_moffat)

    def _init_own(self, pool, p):
        return dict(contrib=(1 - p) * p ** np.arange(pool.depth, dtype=np.float64), tail=p ** pool.length.astype(np.float64),
                    expo=np.array(self.exponents), relevant=np.zeros(pool.size, np.int8), weight=np.zeros(pool.size))


class MoffatB(MoffatA):
    """Moffat et al.'s method B: contributions weighted by the run's residual RBP."""

    name = "MoffatB"
    description = "contributions times the run's residual RBP (method B)"
    reference = "Moffat, Webber & Zobel SIGIR 2007; seed 003 eq. 5"
    exponents = (1.0, 0.0)


class MoffatC(MoffatA):
    """Moffat et al.'s method C: contributions times residual times (base + residual / 2)^3."""

    name = "MoffatC"
    description = "contributions times residual times predicted RBP cubed (method C)"
    reference = "Moffat, Webber & Zobel SIGIR 2007; seed 003 eq. 6"
    exponents = (1.0, 3.0)
