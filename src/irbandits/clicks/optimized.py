"""Optimized interleaving and multileaving: a distribution over candidate lists found by a linear program.

Optimized interleaving (Radlinski & Craswell, WSDM 2013) and optimized multileaving (Schuth et al.,
CIKM 2014) show one list drawn from candidates that satisfy the prefix constraint (each result is
the best not-yet-shown result of some ranker); a click on result d credits ranker r with
``1 / rank_r(d)`` (1-based; a result outside r's list has rank ``len(list) + 1``). The candidate
probabilities p solve::

    minimize    sum_L p_L s(L)                       # s: insensitivity, the variance over rankers of
                                                     #    their credit for a user who clicks rank i w.p. 1/i
    subject to  sum_L p_L = 1, p >= 0,
                sum_L p_L (C_r,k(L) - C_r+1,k(L)) = 0   for every top-k and neighbouring rankers r, r+1

where ``C_r,k(L)`` is r's credit for clicks on all of L's top k: under clicks that ignore relevance
no ranker is favoured at any depth (the unbiasedness constraint).

``roughly-optimized`` (Manabe et al., SIGIR 2017) relaxes the constraint: it minimises
``sum_L p_L s(L) + sum_k lambda_k`` with ``lambda_k >= sum_L p_L (C_a,k - C_b,k)`` for every
ordered pair of rankers, so it always has a solution. It is solved in the equivalent form
``lambda_k = u_k - w_k``, ``u_k >= E[C_a,k]`` and ``w_k <= E[C_b,k]`` for every ranker (2 m rows
per depth instead of m (m - 1)).

Guards. The candidates are ``SAMPLES`` draws of the prefix-constrained sampler (distinct ones kept,
in lexicographic order): a fixed number of draws, never "draw until N distinct lists", which cannot
end when fewer exist (mpkato's ``sample_num`` loop). The draws come from a generator seeded by a
hash of the lists themselves, so the candidates, and the distribution, are a function of the
lists. When no distribution over the candidates is unbiased (the LP is infeasible), ``optimized``
falls back to the roughly-optimized solution, the least-biased distribution, and
:attr:`Distribution.unbiased` says so; :func:`distribution` with ``strict=True`` raises
:class:`~irbandits.errors.IrbanditsError` instead.

Everything runs compiled, the LP included: a dense two-phase simplex (:func:`simplex`; the LPs
have at most ``SAMPLES`` columns of candidates and ``1 + (m - 1) L`` or ``1 + 2 m L`` rows): for
lists of 10, about 30 times faster than ``scipy.optimize.linprog`` with HiGHS on the optimized LP
and 3 times on the larger roughly-optimized one, with the same optimum (the tests check it), and
free of the GIL, so comparisons run on all threads. The kernels reach it through a C function pointer (:func:`draw`), so that its code
is compiled once per process rather than again into every kernel that calls it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import carray, cfunc, njit, types
from numba.extending import overload

from irbandits.clicks.positions import position
from irbandits.errors import IrbanditsError
from irbandits.rng import randint

SAMPLES = 100     # prefix-constrained draws per set of lists (the candidates are the distinct ones)
TOL = 1e-9        # the simplex's optimality and feasibility tolerances
PIVOT = 1e-7      # its smallest pivot, and the largest sum of artificials that counts as feasible
_U = np.uint64


# ----- the LP -----------------------------------------------------------------------------------
# (scalar loops throughout: array expressions made the kernels compile several times slower)
@njit(cache=True)
def _pivot(T, basis, i, j):
    C, piv = T.shape[1], T[i, j]
    for c in range(C):
        T[i, c] /= piv
    for r in range(T.shape[0]):
        f = T[r, j]
        if r != i and f != 0.0:
            for c in range(C):
                T[r, c] -= f * T[i, c]
    basis[i] = j


@njit(cache=True)
def _reduced(T, basis, cost):
    """The last row of T: reduced costs of ``cost`` for the basis, and minus the objective."""
    R, N = T.shape[0] - 1, T.shape[1] - 1
    for c in range(N):
        T[R, c] = cost[c]
    T[R, N] = 0.0
    for i in range(R):
        f = cost[basis[i]]
        if f != 0.0:
            for c in range(N + 1):
                T[R, c] -= f * T[i, c]


@njit(cache=True)
def _iterate(T, basis, enter):
    """Simplex pivots until no column below ``enter`` has a negative reduced cost: the most negative
    enters (Dantzig), the leaving row by Harris' ratio test (of the rows that block within the
    feasibility tolerance, the largest pivot: small pivots blow rounding up). Should that take
    long (cycling on a degenerate vertex), Bland's rules, which cannot cycle, finish."""
    R, rhs = T.shape[0] - 1, T.shape[1] - 1
    limit = 20 * (R + enter)
    for it in range(2 * limit):
        bland = it >= limit
        j, most = -1, -TOL
        for c in range(enter):
            if T[R, c] < most:
                j, most = c, T[R, c]
                if bland:
                    break
        if j < 0:
            return
        bound = np.inf
        for r in range(R):
            if T[r, j] > PIVOT:
                bound = min(bound, (T[r, rhs] + (0.0 if bland else TOL)) / T[r, j])
        i = -1
        for r in range(R):
            if T[r, j] > PIVOT and T[r, rhs] / T[r, j] <= bound:
                if i < 0 or (basis[r] < basis[i] if bland else T[r, j] > T[i, j]):
                    i = r
        if i < 0:
            raise ValueError("simplex: the LP is unbounded")
        _pivot(T, basis, i, j)
        for r in range(R):               # within the tolerance below 0: rounding
            T[r, rhs] = max(T[r, rhs], 0.0)
    raise ValueError("simplex: no optimum after the pivot limit")


@njit(cache=True)
def simplex(T, basis, cost, n_real):
    """Minimise ``cost @ x`` subject to ``A x = b, x >= 0``, in place on the tableau ``T`` (rows
    ``[A | b]`` with ``b >= 0`` and a last row of workspace) whose columns ``basis`` form an
    identity; the columns from ``n_real`` on are artificial. Returns ``(x[:n_real], feasible)``."""
    R, N = T.shape[0] - 1, T.shape[1] - 1
    x, phase = np.zeros(n_real), np.zeros(N)
    for c in range(n_real, N):
        phase[c] = 1.0                  # phase 1: the sum of the artificials
    for step in range(2):               # phase 1, then phase 2 from its basis
        _reduced(T, basis, phase)
        _iterate(T, basis, N if step == 0 else n_real)
        if step == 1:
            break
        if -T[R, N] > PIVOT:
            return x, False
        for i in range(R):              # artificials left in the basis (at 0): swap in a real column
            if basis[i] >= n_real:
                j = 0
                for c in range(n_real):
                    if abs(T[i, c]) > abs(T[i, j]):
                        j = c
                if abs(T[i, j]) > PIVOT:
                    _pivot(T, basis, i, j)   # else the row is redundant: all zero on the real columns
        for c in range(N):
            phase[c] = cost[c] if c < n_real else 0.0
    for i in range(R):
        if basis[i] < n_real:
            x[basis[i]] = max(T[i, N], 0.0)
    return x, True


@njit(cache=True)
def _solve(credit, roughly):
    """The candidates' probabilities (see the module), and whether the LP was feasible (the
    roughly-optimized one always is)."""
    J, L, m = credit.shape
    if roughly:   # columns: p, u, w, a slack for each row but the first, an artificial for that one (sum p = 1)
        R, n_real = 1 + 2 * m * L, J + 2 * L + 2 * m * L
        T = np.zeros((R + 1, n_real + 2))
    else:         # columns: p, an artificial for each row
        R, n_real = 1 + L * (m - 1), J
        T = np.zeros((R + 1, J + R + 1))
    basis, cost = np.empty(R, np.int64), np.zeros(n_real)
    T[0, -1] = 1.0
    for i in range(R):
        col = (J + 2 * L + i - 1 if i else n_real) if roughly else J + i
        T[i, col], basis[i] = 1.0, col
    for r in range(m if roughly else 0):
        for k in range(L):                              # E[C_r,k] + slack = u_k; w_k + slack = E[C_r,k]
            T[1 + r * L + k, J + k], T[1 + m * L + r * L + k, J + L + k] = -1.0, 1.0
            cost[J + k], cost[J + L + k] = 1.0, -1.0
    cum, seen = np.empty(m), np.empty(m)
    for j in range(J):
        T[0, j] = 1.0
        for r in range(m):
            cum[r], seen[r] = 0.0, 0.0
        for k in range(L):
            for r in range(m):
                cum[r] += credit[j, k, r]               # C_r,k: r's credit for clicks on the top k
                seen[r] += credit[j, k, r] / (k + 1.0)  # ... for a user who clicks rank k w.p. 1/k
                if roughly:
                    T[1 + r * L + k, j], T[1 + m * L + r * L + k, j] = cum[r], -cum[r]
                elif r:
                    T[1 + k * (m - 1) + r - 1, j] = cum[r - 1] - cum[r]
        mean = seen.sum() / m
        for r in range(m):
            cost[j] += (seen[r] - mean) ** 2            # insensitivity: the variance over rankers
    x, ok = simplex(T, basis, cost, n_real)
    if roughly and not ok:
        raise ValueError("roughly-optimized LP found infeasible")   # cannot happen: p on any one list is feasible
    return x[:J].copy(), ok


# ----- the candidates ---------------------------------------------------------------------------
@njit(cache=True)
def _mix(h, v):
    """splitmix64's finaliser of ``h`` combined with ``v``."""
    z = (h ^ v) + _U(0x9E3779B97F4A7C15)
    z = (z ^ (z >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _U(27))) * _U(0x94D049BB133111EB)
    return z ^ (z >> _U(31))


@njit(cache=True)
def _rng_of(lists, lens, length):
    """A generator state seeded by the lists (their first ``lens`` entries) and the length."""
    h = _mix(_U(length), _U(lists.shape[0]))
    for r in range(lists.shape[0]):
        h = _mix(h, _U(lens[r]))
        for i in range(lens[r]):
            h = _mix(h, _U(lists[r, i]))
    state = np.empty(4, np.uint64)
    for k in range(4):
        h = _mix(h, _U(k))
        state[k] = h
    return state


@njit(cache=True)
def _before(rows, x, y):
    """Whether row x of ``rows`` sorts before row y (lexicographically)."""
    for i in range(rows.shape[1]):
        if rows[x, i] != rows[y, i]:
            return rows[x, i] < rows[y, i]
    return False


@njit(cache=True)
def _candidates(lists, lens, length, draws):
    """The distinct lists (rows, -1 padded, sorted) among ``draws`` prefix-constrained ones: each
    slot a uniformly random ranker that still has an unshown result adds its best one."""
    rng = _rng_of(lists, lens, length)
    m = lists.shape[0]
    rows = np.full((draws, length), -1, np.int64)
    order = np.empty(draws, np.int64)          # the distinct rows so far, sorted
    nxt, alive = np.empty(m, np.int64), np.empty(m, np.int64)
    J = 0
    for t in range(draws):
        for r in range(m):
            nxt[r] = 0
        n = 0
        while n < length:
            k = 0
            for r in range(m):
                while nxt[r] < lens[r] and position(rows[t], n, lists[r, nxt[r]]) >= 0:
                    nxt[r] += 1
                if nxt[r] < lens[r]:
                    alive[k] = r
                    k += 1
            if k == 0:
                break
            r = alive[randint(rng, k)]
            rows[t, n] = lists[r, nxt[r]]
            n += 1
        at = J                                  # insert in order, unless already there
        while at > 0 and _before(rows, t, order[at - 1]):
            at -= 1
        if at > 0 and not _before(rows, order[at - 1], t):
            continue
        for i in range(J, at, -1):
            order[i] = order[i - 1]
        order[at] = t
        J += 1
    out = np.empty((J, length), np.int64)
    for j in range(J):
        for i in range(length):
            out[j, i] = rows[order[j], i]
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


@njit(cache=True)
def _distribution(lists, lens, length, roughly, samples):
    """``(candidates, p, credit, fell_back)`` for the lists: ``fell_back`` when the optimized LP was
    infeasible and ``p`` is the roughly-optimized solution."""
    cands = _candidates(lists, lens, length, samples)
    credit = _credits(cands, lists, lens)
    fell_back = False
    while True:
        p, ok = _solve(credit, roughly or fell_back)
        if ok:
            break
        fell_back = True
    total = 0.0
    for j in range(len(p)):
        total += p[j]
    for j in range(len(p)):
        p[j] /= total
    return cands, p, credit, fell_back


# ----- public -----------------------------------------------------------------------------------
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


def expected_bias(credit: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``b[k, r] = E_p[C_r,k] - E_p[C_0,k]``: expected top-k credit of ranker r over ranker 0."""
    cum = np.einsum("j,jkr->kr", p, np.cumsum(credit, axis=1))
    return cum - cum[:, :1]


def distribution(lists: np.ndarray, lens: np.ndarray, length: int, roughly: bool = False,
                 strict: bool = False, samples: int = SAMPLES) -> Distribution:
    """The optimized (or ``roughly``-optimized) distribution over lists of at most ``length``
    results for rankings ``lists`` (int64 rows, ``lens`` long; what lies past a row's length is
    ignored)."""
    lists = np.ascontiguousarray(lists, np.int64)
    lens = np.ascontiguousarray(lens, np.int64)
    cands, p, credit, fell_back = _distribution(lists, lens, int(length), bool(roughly), int(samples))
    if fell_back and strict:
        raise IrbanditsError(f"optimized interleaving: no distribution over the {len(cands)} candidate "
                             f"list{'s' if len(cands) > 1 else ''} is unbiased for these rankings; use "
                             f"roughly-optimized, or strict=False to fall back to it")
    bias = float(np.abs(expected_bias(credit, p)).max())
    return Distribution(cands, p, credit, bias < 1e-7, bias)


@njit(cache=True)
def _draw(lists, lens, roughly, u, shown, credit):
    cands, p, cr, _ = _distribution(lists, lens, shown.shape[0], roughly, SAMPLES)
    j, acc = 0, p[0]
    while j < len(p) - 1 and acc <= u:
        j += 1
        acc += p[j]
    n = 0
    while n < cands.shape[1] and cands[j, n] >= 0:
        shown[n] = cands[j, n]
        for r in range(lists.shape[0]):
            credit[n, r] = cr[j, n, r]
        n += 1
    return n


@lru_cache(maxsize=None)
def _draw_c():
    """:func:`_draw` behind a C function pointer (compiled, or loaded from numba's cache, on first
    use): its code is compiled once per process, not linked into (and optimised again with) every
    kernel that calls it. It returns -1 when the LP fails."""
    I64, F64 = types.CPointer(types.int64), types.CPointer(types.float64)

    @cfunc(types.int64(I64, types.int64, types.int64, I64, types.boolean, types.float64, I64, types.int64, F64,
                       types.int64), cache=True)
    def draw_c(lists, m, width, lens, roughly, u, shown, length, credit, columns):
        try:
            return _draw(carray(lists, (m, width)), carray(lens, (m,)), roughly, u, carray(shown, (length,)),
                         carray(credit, (length, columns)))
        except Exception:
            return -1

    return draw_c


def draw(lists, lens, roughly, u, shown, credit) -> int:
    """Fill ``shown`` and ``credit[i, r]`` (both C-contiguous) with a list drawn (by the uniform
    ``u``) from the distribution of ``lists``; the number of results. Kernels call it compiled."""
    return _draw(np.ascontiguousarray(lists, np.int64), np.ascontiguousarray(lens, np.int64), bool(roughly),
                 float(u), shown, credit)


@overload(draw)
def _draw_kernel(lists, lens, roughly, u, shown, credit):
    draw_c = _draw_c()

    def impl(lists, lens, roughly, u, shown, credit):
        lists, lens = np.ascontiguousarray(lists), np.ascontiguousarray(lens)
        n = draw_c(lists.ctypes, lists.shape[0], lists.shape[1], lens.ctypes, roughly, u, shown.ctypes,
                   shown.shape[0], credit.ctypes, credit.shape[1])
        if n < 0:
            raise ValueError("optimized interleaving: the linear program failed")
        return n

    return impl
