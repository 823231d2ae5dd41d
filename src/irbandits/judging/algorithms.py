"""The other judging algorithms of the thesis's study, each under a budget of judgments.

Thesis (seed 000) sections 3.3 and 4.1-4.7, configured as in the study. Every function takes an
:class:`Oracle` (a preference matrix that answers judgments and counts them, stopping at the
budget) and a numpy ``Generator``, and returns the item(s) it would report as best when it stops.

- :func:`dts`, :func:`merge_dts`: the online :class:`~irbandits.dueling.DTS` / :class:`MergeDTS`
  objects (tuned settings: alpha = 0.8^7; alpha = 0.8^6, M = 16, C = 4e6) run by the compiled
  simulation loop for exactly the budget; reported: the empirical Copeland winners (arms beating
  the most others with w_ij > w_ji), ties kept, as the thesis's modified return statement does.
- :func:`round_efficient`: Lin & Lu's round-efficient elimination, as in the study's code
  (delta = 0.2; random disjoint pairs each round, scaled scores, elimination below
  best - t C_t); reported: the surviving arms with the top score.
- :func:`select`: Mohajer et al.'s SELECT, a single-elimination tournament, ``m`` judgments per
  match, majority advances (ties at random); :func:`top_k`: their TOP, SELECT in ``k`` groups and
  a heap of group winners, SELECT replayed in the extracted winner's group.
- :func:`active_ranking`: Heckel et al.'s active ranking in the LUCB form of their code (Borda
  estimates against uniformly random opponents, confidence sqrt(3 / (2 n)) as that code returns it).
- :func:`parwis`: Sheth & Rajkumar's PARWiS as in their code: a K - 1 judgment winner-stays
  chain, then the top item against the item whose judgment would most disrupt the Rank
  Centrality scores (L2, weighted by the estimated outcome probabilities), updated exactly.

>>> import numpy as np
>>> from irbandits.synthetic import case_a
>>> oracle = Oracle(case_a(16).p, budget=200, rng=np.random.default_rng(0))
>>> best = select(oracle, np.random.default_rng(0), m=9)
>>> oracle.judgments, len(best)
(135, 1)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


class BudgetExhausted(Exception):
    """Raised inside an algorithm when the oracle has no judgment left."""


class Oracle:
    """Answers judgments from a preference matrix, counts them per pair, enforces the budget.

    ``P[i, j]`` is the probability that ``i`` is preferred to ``j``; ``counts[i, j]`` (symmetric)
    the judgments of the pair so far.
    """

    def __init__(self, P: np.ndarray, budget: int, rng: np.random.Generator):
        self.P = np.asarray(P, dtype=np.float64)
        self.budget = int(budget)
        self.rng = rng
        self.counts = np.zeros(self.P.shape, np.int64)
        self.judgments = 0

    @property
    def left(self) -> int:
        return self.budget - self.judgments

    def duels(self, i: int, j: int, m: int = 1) -> int:
        """Judge the pair ``m`` times (all or none); return how often ``i`` won."""
        if m > self.left:
            raise BudgetExhausted
        self.judgments += m
        self.counts[i, j] += m
        self.counts[j, i] += m
        return int(self.rng.binomial(m, self.P[i, j]))

    @property
    def assessors(self) -> int:
        """The most judgments of one pair: independent assessors the run needed."""
        return int(self.counts.max())


def _argmax_set(x: np.ndarray) -> list[int]:
    return [int(i) for i in np.flatnonzero(x == x.max())]


# ----- DTS and MergeDTS: the online implementations ------------------------------------------------
def _online(algo, oracle: Oracle, rng: np.random.Generator) -> list[int]:
    from irbandits.problems import PreferenceMatrix
    from irbandits.simulate import run_one

    budget = oracle.left
    run_one(algo, PreferenceMatrix(oracle.P, name="oracle"), horizon=budget,
            seed=int(rng.integers(2**63)), steps=np.array([budget]))
    W = algo.wins
    oracle.judgments += budget
    oracle.counts += W + W.T
    np.fill_diagonal(oracle.counts, 0)
    return _argmax_set((W > W.T).sum(axis=1))


def dts(oracle: Oracle, rng: np.random.Generator, alpha: float = 0.8**7) -> list[int]:
    """Double Thompson Sampling for the whole budget; the empirical Copeland winners."""
    from irbandits.dueling import DTS

    return _online(DTS(len(oracle.P), seed=int(rng.integers(2**63)), alpha=alpha), oracle, rng)


def merge_dts(oracle: Oracle, rng: np.random.Generator, alpha: float = 0.8**6, M: int = 16,
              C: float = 4e6) -> list[int]:
    """MergeDTS for the whole budget; the empirical Copeland winners."""
    from irbandits.dueling import MergeDTS

    algo = MergeDTS(len(oracle.P), seed=int(rng.integers(2**63)), alpha=alpha, M=M, C=C)
    return _online(algo, oracle, rng)


# ----- Round-Efficient Dueling Bandits ---------------------------------------------------------------
def round_efficient(oracle: Oracle, rng: np.random.Generator, delta: float = 0.2) -> list[int]:
    """Lin & Lu's round-efficient best-arm elimination (the study's implementation).

    Each round pairs the remaining arms at random (one sits out when their number is odd); a win
    adds the scaled score r = 2 (n - 1) / n (n even) or 2 (n odd); after round t an arm is dropped
    when its total is below best - t C_t, C_t = sqrt(18 / t ln(2 K t^2 / delta)).
    """
    K = len(oracle.P)
    arms = np.arange(K)
    score = np.zeros(K)
    t = 0
    try:
        while len(arms) > 1:
            t += 1
            nt = len(arms)
            r = 2 * (nt - 1) / nt if nt % 2 == 0 else 2.0
            order = rng.permutation(arms)
            for a in range(0, nt - 1, 2):
                i, j = order[a], order[a + 1]
                score[i if oracle.duels(i, j) else j] += r
            ct = math.sqrt(18 / t * math.log(2 * K * t * t / delta))
            arms = arms[score[arms] >= score[arms].max() - t * ct]
    except BudgetExhausted:
        pass
    return [int(a) for a in arms[score[arms] == score[arms].max()]]


# ----- Mohajer et al.: SELECT and TOP ----------------------------------------------------------------
def _select(oracle: Oracle, rng: np.random.Generator, items, m: int) -> int:
    """Single elimination over ``items`` in random order; ``m`` judgments a match; bye for the odd one."""
    alive = list(rng.permutation(np.asarray(items)))
    while len(alive) > 1:
        nxt = []
        for a in range(0, len(alive) - 1, 2):
            i, j = alive[a], alive[a + 1]
            w = oracle.duels(i, j, m)
            nxt.append(i if 2 * w > m or (2 * w == m and rng.random() < 0.5) else j)
        if len(alive) % 2:
            nxt.append(alive[-1])
        alive = nxt
    return int(alive[0])


def select(oracle: Oracle, rng: np.random.Generator, m: int = 10) -> list[int]:
    """SELECT: the winner of a single-elimination tournament (or the best so far at the budget)."""
    try:
        return [_select(oracle, rng, np.arange(len(oracle.P)), m)]
    except BudgetExhausted:
        return []


def top_k(oracle: Oracle, rng: np.random.Generator, k: int = 2, m: int = 5) -> list[int]:
    """TOP: SELECT in ``k`` random groups, then repeatedly take the best group winner (a SELECT
    among the shortlist) and replace it by a SELECT over the rest of its group."""
    groups = [list(g) for g in np.array_split(rng.permutation(len(oracle.P)), k)]
    found: list[int] = []
    try:
        shortlist = {g: _select(oracle, rng, groups[g], m) for g in range(k)}
        while len(found) < k and shortlist:
            by_item = {v: g for g, v in shortlist.items()}
            top = _select(oracle, rng, list(by_item), m)
            found.append(top)
            g = by_item[top]
            groups[g].remove(top)
            del shortlist[g]
            if groups[g]:  # refilled after every extraction, the last too: the study's 980 judgments
                shortlist[g] = _select(oracle, rng, groups[g], m)
    except BudgetExhausted:
        pass
    return found


# ----- Active Ranking ------------------------------------------------------------------------------
def active_ranking(oracle: Oracle, rng: np.random.Generator, k: int = 1) -> list[int]:
    """Heckel et al.'s active ranking, LUCB form (``LUCB_ranking`` of their notebook, which the thesis
    ran): Borda estimates tau_i from judgments against uniformly random opponents, confidence
    sqrt(3 / (2 n)) after n judgments of the item (the code computes a LIL bound from delta but
    returns this, so the thesis's delta = 0.1 has no effect); each round judges the least certain of
    the top ``k`` and the most promising of the rest; stops when they separate or the budget ends.
    Returns the ``k`` highest estimates."""
    K = len(oracle.P)
    wins, n = np.zeros(K), np.zeros(K)

    def judge(i):
        j = rng.integers(K - 1)
        j += j >= i
        wins[i] += oracle.duels(i, j)
        n[i] += 1

    try:
        for i in range(K):
            judge(i)
        while True:
            tau = wins / n
            conf = np.sqrt(1.5 / n)
            top = np.lexsort((rng.random(K), -tau))[:k]
            rest = np.setdiff1d(np.arange(K), top)
            h = top[np.argmin((tau - conf)[top])]
            low = rest[np.argmax((tau + conf)[rest])]
            if tau[h] - conf[h] > tau[low] + conf[low]:
                break
            judge(h)
            judge(low)
    except BudgetExhausted:
        pass
    tau = wins / np.maximum(n, 1)
    return [int(i) for i in np.lexsort((rng.random(K), -tau))[:k]]


# ----- PARWiS --------------------------------------------------------------------------------------
# Rank Centrality over K items and a dummy item K that every item has beaten once and lost to once
# (the PARWiS code's regularization): M[i, j] = c_ji / n_ij / K for judged pairs, M[i, i] = 1 - the
# rest. The scores are the stationary distribution pi; with A = I - M + 1 1^T / (K + 1) and
# Z = A^-1, pi = 1^T Z / (K + 1). One judgment changes two rows of M; Sherman-Morrison updates Z
# and pi exactly in O(K^2), and the change a hypothetical judgment would make in O(K).
@njit(cache=True)
def _chain(C):
    """The chain M of the counts ``C`` (c_ij = times i beat j, dummy included)."""
    N = C.shape[0]
    K = N - 1
    M = np.zeros((N, N))
    for i in range(N):
        out = 0.0
        for j in range(N):
            if i != j and C[i, j] + C[j, i] > 0:
                M[i, j] = C[j, i] / (C[i, j] + C[j, i]) / K
                out += M[i, j]
        M[i, i] = 1.0 - out
    return M


@njit(cache=True)
def _inverse(A):
    """A^-1 by Gauss-Jordan elimination with partial pivoting (no BLAS threads per call)."""
    N = A.shape[0]
    A = A.copy()
    Z = np.eye(N)
    for c in range(N):
        p = c + np.argmax(np.abs(A[c:, c]))
        for x in range(N):
            A[c, x], A[p, x] = A[p, x], A[c, x]
            Z[c, x], Z[p, x] = Z[p, x], Z[c, x]
        f = A[c, c]
        A[c, :] /= f
        Z[c, :] /= f
        for r in range(N):
            if r != c and A[r, c] != 0.0:
                g = A[r, c]
                A[r, :] -= g * A[c, :]
                Z[r, :] -= g * Z[c, :]
    return Z


@njit(cache=True)
def _deltas(C, a, b):
    """Changes of M[a, b] and M[b, a] when ``a`` beats ``b`` once more."""
    K = C.shape[0] - 1
    n = C[a, b] + C[b, a]
    old_ab = C[b, a] / n / K if n > 0 else 0.0
    old_ba = C[a, b] / n / K if n > 0 else 0.0
    return C[b, a] / (n + 1) / K - old_ab, (C[a, b] + 1.0) / (n + 1) / K - old_ba


@njit(cache=True)
def _after(Z, pi, C, a, b):
    """pi after ``a`` beats ``b`` (exact, two Sherman-Morrison steps), and the two row vectors and
    denominators that update Z (see :func:`parwis_record`)."""
    da, db = _deltas(C, a, b)
    s1 = da * (Z[b, :] - Z[a, :])
    g1 = 1.0 - s1[a]
    pi1 = pi + pi[a] * s1 / g1
    s2 = db * ((Z[a, :] + Z[a, a] * s1 / g1) - (Z[b, :] + Z[b, a] * s1 / g1))
    g2 = 1.0 - s2[b]
    return pi1 + pi1[b] * s2 / g2, s1, g1, s2, g2


@njit(cache=True)
def parwis_pick(Z, pi, C, top):
    """The item to judge against ``top``: the largest expected disruption, the L2 change of the
    scores weighted by the BTL estimate of each outcome (the PARWiS code's default)."""
    K = C.shape[0] - 1
    best, arg = -1.0, -1
    for j in range(K):
        if j == top:
            continue
        m1 = np.sqrt(((_after(Z, pi, C, top, j)[0] - pi) ** 2).sum())
        m2 = np.sqrt(((_after(Z, pi, C, j, top)[0] - pi) ** 2).sum())
        m = (pi[top] * m1 + pi[j] * m2) / (pi[top] + pi[j])
        if m > best:
            best, arg = m, j
    return arg


@njit(cache=True)
def parwis_record(Z, pi, C, a, b):
    """Record that ``a`` beat ``b``: update Z and pi in place (exact), then the counts."""
    new_pi, s1, g1, s2, g2 = _after(Z, pi, C, a, b)
    Z += np.outer(Z[:, a], s1) / g1
    Z += np.outer(Z[:, b], s2) / g2
    pi[:] = new_pi / new_pi.sum()
    C[a, b] += 1.0


def parwis(oracle: Oracle, rng: np.random.Generator, k: int = 1, shuffle: bool = True) -> list[int]:
    """PARWiS: winner-stays chain over a random order (``shuffle``; else index order, as the
    original code runs it) for K - 1 judgments, then the current top item against the item whose
    judgment would most disrupt the Rank Centrality scores, until the budget ends. Returns the
    ``k`` highest scores."""
    K = len(oracle.P)
    C = np.zeros((K + 1, K + 1))
    C[:K, K] = C[K, :K] = 1.0
    order = rng.permutation(K) if shuffle else np.arange(K)
    for x in order[1:]:
        if oracle.left == 0:
            break
        if oracle.duels(order[0], x):
            C[order[0], x] += 1
        else:
            C[x, order[0]] += 1
            order[0] = x
    Z = _inverse(np.eye(K + 1) - _chain(C) + 1.0 / (K + 1))
    pi = Z.sum(axis=0) / (K + 1)
    while oracle.left > 0:
        top = int(np.argmax(pi[:K]))
        j = parwis_pick(Z, pi, C, top)
        a, b = (top, j) if oracle.duels(top, j) else (j, top)
        parwis_record(Z, pi, C, a, b)
    return [int(i) for i in np.argsort(-pi[:K], kind="stable")[:k]]
