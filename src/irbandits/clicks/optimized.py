"""Optimized interleaving and multileaving: a distribution over candidate lists found by a linear program.

Optimized interleaving (Radlinski & Craswell, WSDM 2013) and optimized multileaving (Schuth et al.,
CIKM 2014) show one list drawn from candidates that satisfy the prefix constraint (each result is
the best not-yet-shown result of some ranker); a click on result d credits ranker r with
``1 / rank_r(d)`` (1-based; a result outside r's list has rank ``len(list) + 1``). The candidate
probabilities p solve, with ``scipy.optimize.linprog``::

    minimize    sum_L p_L s(L)                       # s: insensitivity, the variance over rankers of
                                                     #    their credit for a user who clicks rank i w.p. 1/i
    subject to  sum_L p_L = 1, p >= 0,
                sum_L p_L (C_r,k(L) - C_r+1,k(L)) = 0   for every top-k and neighbouring rankers r, r+1

where ``C_r,k(L)`` is r's credit for clicks on all of L's top k: under clicks that ignore relevance
no ranker is favoured at any depth (the unbiasedness constraint).

``roughly-optimized`` (Manabe et al., SIGIR 2017) relaxes the constraint: it minimises
``sum_L p_L s(L) + sum_k lambda_k`` subject to ``sum_L p_L (C_a,k - C_b,k) <= lambda_k`` for every
ordered pair of rankers, so it always has a solution.

Guards. The candidates are ``SAMPLES`` draws of the prefix-constrained sampler (distinct ones kept):
a fixed number of draws, never "draw until N distinct lists", which cannot end when fewer exist
(mpkato's ``sample_num`` loop). The draws come from a generator seeded by the lists themselves, so
the candidates, and the cached solution, are a function of the lists. When no distribution over the
candidates is unbiased (the LP is infeasible), ``optimized`` falls back to the roughly-optimized
solution, the least-biased distribution, and :attr:`Distribution.unbiased` says so;
:func:`distribution` with ``strict=True`` raises :class:`~irbandits.errors.IrbanditsError` instead.

The LP runs in Python (HiGHS through ``linprog``), once per distinct set of lists: solutions are
cached (``CACHE`` lists sets, least recently used dropped). The compiled kernels call into Python
only to look up or solve the distribution (``numba.objmode``); drawing the list and all credit run
compiled.
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from dataclasses import dataclass

import numba
import numpy as np
from numba import njit

from irbandits.clicks.positions import position
from irbandits.errors import IrbanditsError

SAMPLES = 100     # prefix-constrained draws per set of lists (the candidates are the distinct ones)
CACHE = 100_000   # solved sets of lists kept


@njit(cache=True)
def _sample(lists, lens, length, draws, seed):
    """``draws`` prefix-constrained lists (rows, -1 padded): each slot a uniformly random ranker
    that still has an unshown result adds its best one."""
    np.random.seed(seed)
    m = lists.shape[0]
    out = np.full((draws, length), -1, np.int64)
    nxt = np.zeros(m, np.int64)
    alive = np.empty(m, np.int64)
    for t in range(draws):
        nxt[:] = 0
        n = 0
        while n < length:
            k = 0
            for r in range(m):
                while nxt[r] < lens[r] and position(out[t], n, lists[r, nxt[r]]) >= 0:
                    nxt[r] += 1
                if nxt[r] < lens[r]:
                    alive[k] = r
                    k += 1
            if k == 0:
                break
            r = alive[np.random.randint(k)]
            out[t, n] = lists[r, nxt[r]]
            n += 1
    return out


@njit(cache=True)
def _credits(cands, lists, lens):
    """``c[j, i, r]``: ranker r's credit 1 / rank for the result at slot i of candidate j."""
    J, L = cands.shape
    m = lists.shape[0]
    c = np.zeros((J, L, m))
    for j in range(J):
        for i in range(L):
            d = cands[j, i]
            if d < 0:
                break
            for r in range(m):
                pos = position(lists[r], lens[r], d)
                c[j, i, r] = 1.0 / (pos + 1.0 if pos >= 0 else lens[r] + 1.0)
    return c


@dataclass
class Distribution:
    """Candidate lists (rows, -1 padded), their probabilities, each slot's credit per ranker, and
    ``bias``: the largest expected credit difference of two rankers at any depth (about 0 when
    ``unbiased``)."""

    lists: np.ndarray
    p: np.ndarray
    credit: np.ndarray
    unbiased: bool
    bias: float
    cdf: np.ndarray


def insensitivity(credit: np.ndarray) -> np.ndarray:
    """Per candidate: the variance over rankers of the credit for a user clicking rank i w.p. 1/i."""
    w = 1.0 / np.arange(1, credit.shape[1] + 1)
    s = np.einsum("i,jir->jr", w, credit)
    return ((s - s.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)


def expected_bias(credit: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``b[k, r] = E_p[C_r,k] - E_p[C_0,k]``: expected top-k credit of ranker r over ranker 0."""
    cum = np.einsum("j,jkr->kr", p, np.cumsum(credit, axis=1))
    return cum - cum[:, :1]


def _solve(credit: np.ndarray, roughly: bool):
    from scipy.optimize import linprog

    J, L, m = credit.shape
    cum = np.cumsum(credit, axis=1)                        # [J, L, m]
    s = insensitivity(credit)
    if not roughly:
        diff = (cum[:, :, :-1] - cum[:, :, 1:]).reshape(J, -1).T   # [(L (m-1)), J]
        A = np.vstack([np.ones(J), diff])
        res = linprog(s, A_eq=A, b_eq=np.r_[1.0, np.zeros(len(diff))], bounds=(0, None), method="highs")
        return res.x if res.status == 0 else None
    pairs = [(a, b) for a in range(m) for b in range(m) if a != b]
    rows = np.concatenate([(cum[:, :, a] - cum[:, :, b]).T for a, b in pairs])   # [(pairs L), J]
    lam = -np.tile(np.eye(L), (len(pairs), 1))
    res = linprog(np.r_[s, np.ones(L)], A_ub=np.hstack([rows, lam]), b_ub=np.zeros(len(rows)),
                  A_eq=np.r_[np.ones(J), np.zeros(L)][None, :], b_eq=[1.0], bounds=(0, None), method="highs")
    if res.status != 0:  # cannot happen for a feasible relaxation; kept as a clear error
        raise IrbanditsError(f"roughly-optimized LP failed: {res.message}")
    return res.x[:J]


_cache: OrderedDict = OrderedDict()


def distribution(lists: np.ndarray, lens: np.ndarray, length: int, roughly: bool = False,
                 strict: bool = False, samples: int = SAMPLES) -> Distribution:
    """The optimized (or ``roughly``-optimized) distribution over lists of at most ``length``
    results for rankings ``lists`` (int64 rows, -1 padded, ``lens`` long); cached."""
    lists = np.ascontiguousarray(lists, np.int64)
    lens = np.ascontiguousarray(lens, np.int64)
    key = (lists.tobytes(), lens.tobytes(), lists.shape, int(length), roughly, strict, int(samples))
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    seed = zlib.crc32(key[0] + key[1]) & 0x7FFFFFFF
    cands = np.unique(_sample(lists, lens, int(length), int(samples), seed), axis=0)
    credit = _credits(cands, lists, lens)
    p = _solve(credit, roughly)
    if p is None:
        if strict:
            raise IrbanditsError(f"optimized interleaving: no distribution over the {len(cands)} candidate "
                                 f"list{'s' if len(cands) > 1 else ''} is unbiased for these rankings; use "
                                 f"roughly-optimized, or strict=False to fall back to it")
        p = _solve(credit, True)
    p = np.clip(p, 0.0, None)
    p /= p.sum()
    bias = float(np.abs(expected_bias(credit, p)).max())
    out = Distribution(cands, p, credit, bias < 1e-7, bias, np.cumsum(p))
    _cache[key] = out
    if len(_cache) > CACHE:
        _cache.popitem(last=False)
    return out


def _draw(lists, lens, roughly, u, shown, credit) -> int:
    """Fill ``shown`` and ``credit[i, r]`` with a list drawn (by the uniform ``u``) from the
    distribution of ``lists``; the number of results."""
    clean = np.where(np.arange(lists.shape[1]) < lens[:, None], lists, -1)  # what lies past a list's end is not it
    dist = distribution(clean, lens, shown.shape[0], roughly)
    j = min(int(np.searchsorted(dist.cdf, u * dist.cdf[-1], side="right")), len(dist.p) - 1)
    row = dist.lists[j]
    n = int((row >= 0).sum())
    shown[:n] = row[:n]
    credit[:n, :lists.shape[0]] = dist.credit[j, :n]
    return n


@njit
def draw(lists, lens, roughly, u, shown, credit):
    """Compiled entry: the Python :func:`_draw` under ``objmode``."""
    with numba.objmode(n="int64"):
        n = _draw(lists, lens, roughly, u, shown, credit)
    return n
