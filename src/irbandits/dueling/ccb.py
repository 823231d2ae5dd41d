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
line 13, then ``d`` among ties. Recommendation (none in the source): the arm with the most
empirical wins.

Speed (issue 23): a step is O(K) amortised, not O(K^2), with the same arithmetic and the same draws
as recomputing everything (``tests/test_ccb_incremental.py`` keeps that plain version and checks
bit-identical trajectories). Every test of lines 7-10 compares ln t with per-pair thresholds,
``u_ij >= 1/2`` iff ``ln t >= thr_ij`` and ``l_ij >= 1/2`` iff ``ln t <= lthr_ij``; only the pair
just played changes its thresholds, and ln t only grows. So

- ``up`` and ``low`` are counts kept up to date: a pair not counted in ``up`` waits in a min-heap
  keyed by ``thr`` and is counted once ln t reaches its key; a pair counted in ``low`` waits in a
  min-heap keyed by ``lthr`` and leaves once ln t passes it. A duel changes its pair's thresholds:
  it is counted or uncounted at once by the next step's ln t, and re-keyed in a heap only when a
  later step decides (O(log K)). ``max up`` and ``max low`` come from histograms of the counts;
- line 9A: a pair enters a ``B_t^i`` with ``u_ij < 1/2``, so ``l_ij < 1/2`` for every later t
  unless it is played; only the pairs played since the last step are tested;
- line 9C can only fire when ``max low = max up`` (``low_i <= up_i`` always);
- line 10: ``nq[i]`` counts the pairs of ``B_t^i`` with ``u_ij >= 1/2`` (after 9A none has
  ``l_ij > 1/2``), so the r-th pair in index order is found in O(K).

What remains is O(K) a step: C_t, line 13's bounds (one square root per arm) and the scans of
9B/9C; rebuilding a ``B_t^i`` in 9B and subsampling one in 9C cost O(K) per arm, as in the listing.
The state must only change through ``select`` and ``update`` (or be restored whole).

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
from irbandits.dueling.bounds import lcb, pick, recommend_copeland_winner, record, threshold
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


# ----- an indexed binary min-heap of pairs p = i * K + j: items[slot], keys[slot], pos[p] (-1: absent)
@njit(cache=True)
def _sift_up(items, keys, pos, s):
    item, key = items[s], keys[s]
    while s > 0:
        parent = (s - 1) >> 1
        if keys[parent] <= key:
            break
        items[s], keys[s] = items[parent], keys[parent]
        pos[items[s]] = s
        s = parent
    items[s], keys[s] = item, key
    pos[item] = s


@njit(cache=True)
def _sift_down(items, keys, pos, s, n):
    item, key = items[s], keys[s]
    while True:
        child = 2 * s + 1
        if child >= n:
            break
        if child + 1 < n and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        items[s], keys[s] = items[child], keys[child]
        pos[items[s]] = s
        s = child
    items[s], keys[s] = item, key
    pos[item] = s


@njit(cache=True)
def heap_set(items, keys, pos, size, h, item, key):
    """Insert ``item`` with ``key``, or move it to ``key`` if present (heap ``h``: its size is size[h])."""
    s = pos[item]
    if s < 0:
        s = size[h]
        size[h] += 1
        items[s], keys[s] = item, key
        _sift_up(items, keys, pos, s)
    else:
        keys[s] = key
        _sift_up(items, keys, pos, s)
        _sift_down(items, keys, pos, pos[item], size[h])


@njit(cache=True)
def heap_remove(items, keys, pos, size, h, item):
    """Remove ``item`` if present."""
    s = pos[item]
    if s < 0:
        return
    pos[item] = -1
    n = size[h] - 1
    size[h] = n
    if s == n:
        return
    moved = items[n]
    items[s], keys[s] = moved, keys[n]
    pos[moved] = s
    _sift_up(items, keys, pos, s)
    _sift_down(items, keys, pos, pos[moved], n)


@njit(cache=True)
def add_score(score, hist, mx, h, i, delta):
    """score[i] += delta (+-1), keeping the histogram hist[h] of the scores and their maximum mx[h]."""
    old = score[i]
    new = old + delta
    score[i] = new
    hist[h, old] -= 1
    hist[h, new] += 1
    if new > mx[h]:
        mx[h] = new
    elif old == mx[h] and hist[h, old] == 0:
        mx[h] = new


@njit(cache=True)
def refresh_scores(st, log_t):
    """Bring ``up`` and ``low`` to ln t: count the pairs whose ``thr`` ln t has reached, uncount those
    whose ``lthr`` it has passed (each pair leaves a heap at most once per duel that re-keys it)."""
    (W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf,
     ucnt, lcnt, uitems, ukeys, upos, litems, lkeys, lpos, hsize, hist, mx, nq, dirty, dlist, nd, bc) = st  # fmt: skip
    K = W.shape[0]
    while hsize[0] > 0 and ukeys[0] <= log_t:  # log_t >= thr_ij: u_ij >= 1/2
        p = uitems[0]
        heap_remove(uitems, ukeys, upos, hsize, 0, p)
        i, j = p // K, p % K
        ucnt[i, j] = True
        add_score(up, hist, mx, 0, i, 1)
        if Bi[i, j]:
            nq[i] += 1
    while hsize[1] > 0 and lkeys[0] < log_t:  # not log_t <= lthr_ij: l_ij < 1/2
        p = litems[0]
        heap_remove(litems, lkeys, lpos, hsize, 1, p)
        i, j = p // K, p % K
        lcnt[i, j] = False
        add_score(low, hist, mx, 1, i, -1)


@njit(cache=True)
def clear_row(Bi, nBi, nq, i):
    """B^i = {}."""
    if nBi[i] > 0:
        Bi[i, :] = False
        nBi[i] = 0
    nq[i] = 0


@njit(cache=True)
def reset_hypotheses(inB, Bi, nBi, lc, nq):
    """Lines 2-4: B = all arms, every B^i empty, L_C = K."""
    inB[:] = True
    for i in range(inB.shape[0]):
        clear_row(Bi, nBi, nq, i)
    lc[0] = inB.shape[0]


@njit(cache=True)
def update_hypotheses(st, log_t, rng):
    """Lines 7-9: the Copeland scores, C_t (written to ``cand``, its size returned), and B, B^i, L_C."""
    (W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf,
     ucnt, lcnt, uitems, ukeys, upos, litems, lkeys, lpos, hsize, hist, mx, nq, dirty, dlist, nd, bc) = st  # fmt: skip
    K = W.shape[0]
    refresh_scores(st, log_t)
    maxup, maxlow = mx[0], mx[1]
    nc = 0
    for i in range(K):
        if up[i] == maxup:
            cand[nc] = i
            nc += 1
    # A. a disproven hypothesis a_j in B^i (l_ij > 1/2) resets everything; only a pair played since
    # the last step can have become one (it entered B^i with l_ij = -inf, and ln t only grows)
    disproven = False
    for a in range(nd[0]):
        i, j = dlist[a] // K, dlist[a] % K
        dirty[i, j] = False
        if nBi[i] > 0 and Bi[i, j] and log_t < lthr[i, j]:
            disproven = True
    nd[0] = 0
    if disproven:
        reset_hypotheses(inB, Bi, nBi, lc, nq)
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
                nq[i] = 0  # every new member has u_ik < 1/2
    if not inB.any():
        reset_hypotheses(inB, Bi, nBi, lc, nq)
    # C. add arms whose Copeland score is known exactly (low_i <= up_i, so only if max low = max up)
    if maxlow != maxup:
        return nc
    for m in range(nc):
        i = cand[m]
        if up[i] != low[i]:
            continue
        inB[i] = True
        clear_row(Bi, nBi, nq, i)
        lc[0] = K - 1 - up[i]
        keep = lc[0] + 1
        for j in range(K):
            if j == i or nBi[j] == keep or nBi[j] == 0:
                continue
            if nBi[j] < keep:
                clear_row(Bi, nBi, nq, j)
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
                if ucnt[j, buf[a]]:
                    nq[j] -= 1
            nBi[j] = keep
    return nc


@njit(cache=True)
def _select(st, rng):
    (W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf,
     ucnt, lcnt, uitems, ukeys, upos, litems, lkeys, lpos, hsize, hist, mx, nq, dirty, dlist, nd, bc) = st  # fmt: skip
    K = W.shape[0]
    alpha = params[0]
    log_t = math.log(t[0] + 1)
    nc = update_hypotheses(st, log_t, rng)
    if uniform(rng) < 0.25:  # line 10: test a hypothesis a_j in B^i (l_ij <= 1/2 <= u_ij) directly
        n = 0
        for i in range(K):
            n += nq[i]
        if n > 0:
            r = 0 if n == 1 else randint(rng, n)  # the r-th such pair in index order
            for i in range(K):
                if r >= nq[i]:
                    r -= nq[i]
                    continue
                for j in range(K):
                    if Bi[i, j] and ucnt[i, j]:
                        if r == 0:
                            return i, j
                        r -= 1
    nb = 0  # line 11: B_t & C_t, in index order
    for m in range(nc):
        if inB[cand[m]]:
            bc[nb] = cand[m]
            nb += 1
    if nb > 0 and uniform(rng) < 2.0 / 3.0:
        c = pick(bc, nb, rng)
    else:
        c = pick(cand, nc, rng)
    use_bc = uniform(rng) < 0.5  # line 13
    if use_bc:
        use_bc = False
        if nBi[c] > 0:
            for j in range(K):
                if Bi[c, j] and lcb(W, j, c, log_t, alpha) <= 0.5:
                    use_bc = True
                    break
    a = alpha * log_t
    best = -1.0
    n = 0
    for j in range(K):
        if use_bc and not Bi[c, j]:
            continue
        if j == c:
            lo = hi = 0.5
        else:
            nj = W[j, c] + W[c, j]
            if nj == 0:
                lo, hi = 0.0, 2.0
            else:  # l_jc and u_jc exactly as bounds.lcb / bounds.ucb compute them
                mean, rad = W[j, c] / nj, math.sqrt(a / nj)
                lo, hi = mean - rad, mean + rad
        if lo > 0.5:
            continue
        if hi > best:
            best, n = hi, 0
        if hi == best:
            buf[n] = j
            n += 1
    if n > 1:  # d != c in a tie
        m = 0
        for k in range(n):
            if buf[k] != c:
                buf[m] = buf[k]
                m += 1
        n = m
    return c, pick(buf, n, rng)


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    (W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf,
     ucnt, lcnt, uitems, ukeys, upos, litems, lkeys, lpos, hsize, hist, mx, nq, dirty, dlist, nd, bc) = st  # fmt: skip
    record(W, c, d, c_won)
    t[0] += 1
    if c == d:
        return
    K = W.shape[0]
    log_next = math.log(t[0] + 1)  # the next step's ln t; later steps only have larger ones
    for i, j in ((c, d), (d, c)):
        p = i * K + j
        v = threshold(W, i, j, params[0])
        if v != thr[i, j]:
            thr[i, j] = v
            if v <= log_next:  # counted from the next step on: out of the heap
                if not ucnt[i, j]:
                    heap_remove(uitems, ukeys, upos, hsize, 0, p)
                    ucnt[i, j] = True
                    add_score(up, hist, mx, 0, i, 1)
                    nq[i] += Bi[i, j]
            else:  # uncounted until ln t reaches v
                if ucnt[i, j]:
                    ucnt[i, j] = False
                    add_score(up, hist, mx, 0, i, -1)
                    nq[i] -= Bi[i, j]
                heap_set(uitems, ukeys, upos, hsize, 0, p, v)
        v = lower_threshold(W, i, j, params[0])
        if v != lthr[i, j]:
            lthr[i, j] = v
            if v < log_next:  # not counted from the next step on
                if lcnt[i, j]:
                    lcnt[i, j] = False
                    add_score(low, hist, mx, 1, i, -1)
                    heap_remove(litems, lkeys, lpos, hsize, 1, p)
            else:  # counted until ln t passes v
                if not lcnt[i, j]:
                    lcnt[i, j] = True
                    add_score(low, hist, mx, 1, i, 1)
                heap_set(litems, lkeys, lpos, hsize, 1, p, v)
        if not dirty[i, j]:  # to test for line 9A at the next step
            dirty[i, j] = True
            dlist[nd[0]] = p
            nd[0] += 1


class CCB(DuelingAlgorithm):
    """Copeland Confidence Bound: an optimistic Copeland winner against its most formidable rival."""

    name = "CCB"
    description = "Copeland Confidence Bound: optimistic Copeland winner, pessimistic opponent, hypothesis sets B, B^i"
    reference = "Zoghi et al. NIPS 2015 (Copeland dueling bandits); thesis (seed 002) Algorithm 5"
    params = (
        Param("alpha", float, 0.51, "exploration of the confidence bounds; theory needs > 0.5", lambda a: a > 0, "> 0"),
    )

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(recommend_copeland_winner)

    def _init_state(self, K, alpha):
        thr = np.full((K, K), -np.inf)
        np.fill_diagonal(thr, np.inf)  # an arm never counts itself
        off = ~np.eye(K, dtype=np.bool_)
        hist = np.zeros((2, K + 1), np.int64)
        hist[0, K - 1] = hist[1, 0] = K  # every up_i = K - 1 (thr = -inf), every low_i = 0
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
            up=np.full(K, K - 1, np.int64),  # #{j: (i, j) counted in ucnt}, up_i once brought to ln t
            low=np.zeros(K, np.int64),  # #{j: (i, j) counted in lcnt}
            cand=np.zeros(K, np.int64),  # C_t
            buf=np.zeros(K * K, np.int64),
            ucnt=off,  # (i, j) counted in up_i; otherwise it waits in the thr heap
            lcnt=np.zeros((K, K), np.bool_),  # (i, j) counted in low_i; then it waits in the lthr heap
            uitems=np.zeros(K * K, np.int64),  # the heap of uncounted pairs, keyed by thr
            ukeys=np.zeros(K * K),
            upos=np.full(K * K, -1, np.int64),
            litems=np.zeros(K * K, np.int64),  # the heap of low-counted pairs, keyed by lthr
            lkeys=np.zeros(K * K),
            lpos=np.full(K * K, -1, np.int64),
            hsize=np.zeros(2, np.int64),  # the two heaps' sizes
            hist=hist,  # hist[0, v] = #{i: up_i = v}, hist[1, v] = #{i: low_i = v}
            mx=np.array([K - 1, 0], np.int64),  # max up, max low
            nq=np.zeros(K, np.int64),  # #{j in B^i: u_ij >= 1/2}, line 10's candidates in row i
            dirty=np.zeros((K, K), np.bool_),  # played since the last step
            dlist=np.zeros(K * K, np.int64),
            nd=np.zeros(1, np.int64),
            bc=np.zeros(K, np.int64),  # B_t & C_t
        )
