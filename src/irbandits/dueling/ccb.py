"""Copeland Confidence Bound, CCB (thesis Algorithm 5; Zoghi et al., NIPS 2015 "Copeland dueling bandits").

Each step t, with U and L the confidence bounds at ln t (:mod:`irbandits.dueling.bounds`):

7. optimistic and pessimistic Copeland scores ``up_i = #{k != i: u_ik >= 1/2}``,
   ``low_i = #{k != i: l_ik >= 1/2}``; 8. ``C_t`` = the arms with the highest ``up``;
9. the hypotheses: ``B_t`` (potential best arms), ``B_t^i`` (arms thought to beat ``a_i``) and
   ``L_C`` (estimated losses of a Copeland winner), in the listing's order:
   A. if some ``a_j`` in ``B_t^i`` has ``l_ij > 1/2``, reset ``B_t`` = all arms, ``L_C = K``,
   every ``B_t^k`` empty; B. every ``a_i`` in ``B_t`` with ``up_i < max_j low_j`` leaves ``B_t``
   and, unless ``|B_t^i| = L_C + 1``, gets ``B_t^i = {k: u_ik < 1/2}``; an empty ``B_t`` resets
   everything; C. every ``a_i`` in ``C_t`` (in index order) with ``up_i = low_i`` joins ``B_t``
   with ``B_t^i`` emptied and sets ``L_C = K - 1 - up_i``; every other ``B_t^j`` smaller than
   ``L_C + 1`` is emptied and a larger one keeps ``L_C + 1`` of its arms drawn at random;
10. with probability 1/4, a pair (i, j) drawn uniformly from ``{j in B_t^i, l_ij <= 1/2 <= u_ij}``
    when that set is not empty;
11-12. otherwise ``c`` uniform over ``B_t & C_t`` with probability 2/3 (when not empty), else over
    ``C_t``; 13. with probability 1/2 the opponent set is ``B_t^c``, else all arms, and
    ``d = argmax u_jc`` over its arms with ``l_jc <= 1/2``, ties at random and ``d != c`` in a tie.
    When ``B_t^c`` has no such arm (the listing leaves this open) all arms are used; ``c``
    itself always qualifies (``l_cc = u_cc = 1/2``), so ``d = c`` once every rival is beaten.

Draws, in order: one uniform for line 10 (always), the random subsets of 9C, the pair of line 10
or else one uniform for line 11 (only when ``B_t & C_t`` is not empty), ``c``, one uniform for
line 13, then ``d`` among ties. Speed: the Copeland scores and the tests of lines 9-10 compare
ln t with per-pair thresholds (``u_ij >= 1/2`` iff ``ln t >= thr_ij``, ``l_ij >= 1/2`` iff
``ln t <= lthr_ij``) kept for the pair just played, so a step is O(K^2) comparisons and no
square roots. Recommendation (none in the source): the arm with the most empirical wins.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(CCB(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import lcb, pick, recommend_copeland_winner, record, threshold, ucb
from irbandits.params import Param
from irbandits.rng import randint, uniform


@njit(cache=True)
def lower_threshold(W, i, j, alpha):
    """The log-time up to which l_ij >= 0.5 (-inf when w_ij / n_ij <= 0.5)."""
    n = W[i, j] + W[j, i]
    if i == j or n == 0 or 2 * W[i, j] <= n:
        return -np.inf
    gap = W[i, j] / n - 0.5
    return n * gap * gap / alpha


@njit(cache=True)
def reset_hypotheses(inB, Bi, nBi, lc):
    """Lines 2-4: B = all arms, every B^i empty, L_C = K."""
    inB[:] = True
    Bi[:, :] = False
    nBi[:] = 0
    lc[0] = inB.shape[0]


@njit(cache=True)
def update_hypotheses(st, log_t, rng):
    """Lines 7-9: the Copeland scores, C_t (written to ``cand``, its size returned), and B, B^i, L_C."""
    W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf = st
    K = W.shape[0]
    maxup, maxlow = 0, 0
    for i in range(K):
        u, l = 0, 0
        for k in range(K):
            if log_t >= thr[i, k]:
                u += 1
            if log_t <= lthr[i, k]:
                l += 1
        up[i], low[i] = u, l
        maxup, maxlow = max(maxup, u), max(maxlow, l)
    nc = 0
    for i in range(K):
        if up[i] == maxup:
            cand[nc] = i
            nc += 1
    # A. a disproven hypothesis a_j in B^i (l_ij > 1/2) resets everything
    disproven = False
    for i in range(K):
        if nBi[i] > 0:
            for j in range(K):
                if Bi[i, j] and log_t < lthr[i, j]:
                    disproven = True
    if disproven:
        reset_hypotheses(inB, Bi, nBi, lc)
    # B. remove arms whose optimistic score is below someone's pessimistic score
    for i in range(K):
        if inB[i] and up[i] < maxlow:
            inB[i] = False
            if nBi[i] != lc[0] + 1:
                n = 0
                for k in range(K):
                    Bi[i, k] = k != i and log_t < thr[i, k]
                    n += Bi[i, k]
                nBi[i] = n
    if not inB.any():
        reset_hypotheses(inB, Bi, nBi, lc)
    # C. add arms whose Copeland score is known exactly
    for m in range(nc):
        i = cand[m]
        if up[i] != low[i]:
            continue
        inB[i] = True
        Bi[i, :] = False
        nBi[i] = 0
        lc[0] = K - 1 - up[i]
        keep = lc[0] + 1
        for j in range(K):
            if j == i or nBi[j] == keep:
                continue
            if nBi[j] < keep:
                Bi[j, :] = False
                nBi[j] = 0
                continue
            n = 0
            for k in range(K):
                if Bi[j, k]:
                    buf[n] = k
                    n += 1
            for a in range(keep):  # a uniformly random subset of size keep: partial Fisher-Yates
                b = a + randint(rng, n - a)
                buf[a], buf[b] = buf[b], buf[a]
            for a in range(keep, n):
                Bi[j, buf[a]] = False
            nBi[j] = keep
    return nc


@njit(cache=True)
def _select(st, rng):
    W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf = st
    K = W.shape[0]
    alpha = params[0]
    log_t = math.log(t[0] + 1)
    nc = update_hypotheses(st, log_t, rng)
    if uniform(rng) < 0.25:  # line 10: test a hypothesis a_j in B^i directly
        n = 0
        for i in range(K):
            if nBi[i] > 0:
                for j in range(K):
                    if Bi[i, j] and log_t >= lthr[i, j] and log_t >= thr[i, j]:
                        buf[n] = i * K + j
                        n += 1
        if n > 0:
            p = pick(buf, n, rng)
            return p // K, p % K
    nb = 0  # line 11: B_t & C_t, moved to the front of cand
    for m in range(nc):
        if inB[cand[m]]:
            cand[nb], cand[m] = cand[m], cand[nb]
            nb += 1
    if nb > 0 and uniform(rng) < 2.0 / 3.0:
        if nb > 1:
            cand[:nb].sort()
        c = pick(cand, nb, rng)
    else:
        if nc > 1:
            cand[:nc].sort()
        c = pick(cand, nc, rng)
    use_bc = uniform(rng) < 0.5  # line 13
    if use_bc:
        use_bc = False
        for j in range(K):
            if Bi[c, j] and lcb(W, j, c, log_t, alpha) <= 0.5:
                use_bc = True
                break
    best = -1.0
    n = 0
    for j in range(K):
        if (use_bc and not Bi[c, j]) or lcb(W, j, c, log_t, alpha) > 0.5:
            continue
        v = ucb(W, j, c, log_t, alpha)
        if v > best:
            best, n = v, 0
        if v == best:
            buf[n] = j
            n += 1
    if n > 1:  # d != c in a tie
        m = 0
        for a in range(n):
            if buf[a] != c:
                buf[m] = buf[a]
                m += 1
        n = m
    return c, pick(buf, n, rng)


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf = st
    record(W, c, d, c_won)
    if c != d:
        for i, j in ((c, d), (d, c)):
            thr[i, j] = threshold(W, i, j, params[0])
            lthr[i, j] = lower_threshold(W, i, j, params[0])
    t[0] += 1


class CCB(DuelingAlgorithm):
    """Copeland Confidence Bound: an optimistic Copeland winner against its most formidable rival."""

    name = "CCB"
    description = "Copeland Confidence Bound: optimistic Copeland winner, pessimistic opponent, hypothesis sets B, B^i"
    reference = "Zoghi et al. NIPS 2015 (Copeland dueling bandits); thesis (seed 002) Algorithm 5"
    params = (Param("alpha", float, 0.51, "exploration of the confidence bounds; theory needs > 0.5", lambda a: a > 0, "> 0"),)

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(recommend_copeland_winner)

    def _init_state(self, K, alpha):
        thr = np.full((K, K), -np.inf)
        np.fill_diagonal(thr, np.inf)  # an arm never counts itself
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha]),
            thr=thr,  # u_ij >= 1/2 iff ln t >= thr_ij
            lthr=np.full((K, K), -np.inf),  # l_ij >= 1/2 iff ln t <= lthr_ij
            inB=np.ones(K, np.bool_),  # B_t
            Bi=np.zeros((K, K), np.bool_),  # Bi[i, j]: a_j in B_t^i
            nBi=np.zeros(K, np.int64),  # |B_t^i|
            lc=np.full(1, K, np.int64),  # the estimate of L_C
            up=np.zeros(K, np.int64),
            low=np.zeros(K, np.int64),
            cand=np.zeros(K, np.int64),
            buf=np.zeros(K * K, np.int64),
        )
