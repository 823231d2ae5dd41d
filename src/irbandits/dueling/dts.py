"""Double Thompson Sampling (Wu & Liu, NIPS 2016, Algorithm 1), as used in the MergeDTS paper.

Each step, with u and l the confidence bounds of :mod:`irbandits.dueling.bounds` at ln t:

1. candidates C = the arms with the highest upper Copeland score #{j != i: u_ij > 1/2};
2. first arm: sample theta_ij ~ Beta(w_ij + 1, w_ji + 1) (i < j, theta_ji = 1 - theta_ij) and take
   the arm of C beating the most arms by theta > 1/2, ties at random;
3. second arm: sample theta2_i ~ Beta(w_i,a1 + 1, w_a1,i + 1) for i != a1, theta2_a1 = 1/2, and take
   the argmax over {i : l_i,a1 <= 1/2}, ties at random.

Speed: "u_ij > 1/2" is the test ``ln t > thr_ij`` on thresholds updated only for the pair played;
row counts are kept incrementally and recounted only when ln t passes the next threshold. Only what
the decision needs is sampled, and exactly:

* the first arm depends on the Beta draws only through the indicators 1(theta_ij > 1/2), which are
  independent Bernoulli(q_ij), q_ij = 1 - I_1/2(w_ij + 1, w_ji + 1) (the regularised incomplete
  Beta, recomputed only for the pair played), so each is one uniform against q_ij, drawn lazily
  once per pair and only for the rows of C that can still reach the best score
  (:func:`sampled_copeland_winner`). A pair settled far from 1/2 is no special case: its indicator
  is still drawn, by a uniform against q_ij, exactly however close q_ij is to 0 or 1;
* the second arm is the argmax of independent draws, so each arm only needs to know whether its
  draw beats the running maximum, and its value only when it does (:func:`second_arm`, the lazy
  draw of :func:`irbandits.dueling.thompson.beta_draw_above`): most arms are rejected by one
  uniform against a sub-Gaussian tail bound, the rest by an exact test against the upper tail.

So the decisions have exactly the listing's distribution (``tests/test_dts_fast.py`` compares them
with full Beta draws by G-tests). The hot loops are written out rather than calling the shared
helpers: numba passes each 2-D array to a helper with a reference count, about 60 ns a call, which
made DTS 10-14x slower than RUCB at K = 136 (now 2-4x); the draws and their order are unchanged
(the same trajectories as the kernels before, in the tests).

Recommendation (no rule in the source): the arm with the most empirical wins.

D-TS+ (:class:`DTSPlus`, the paper's section 3.4) differs only in step 2's ties: see
:func:`least_regret_tie`. It costs an O(K^2) completion of the tournament on each tie step. On
Condorcet problems it pays about DTS's regret; on Copeland problems less (copeland-5 in the tests:
287 +- 13 against 318 +- 12 over 40 runs of 20,000 steps).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(DTS(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import pick, recommend_copeland_winner, record, threshold
from irbandits.dueling.thompson import (
    _NEGLIGIBLE,
    _PLAIN,
    _betaincc,
    _betainccinv,
    beta_draw_on_side,
    refresh_pair,
)
from irbandits.params import Param
from irbandits.rng import beta, uniform


@njit(cache=True)
def upper_copeland_candidates(thr, log_t, level, counts, cand):
    """Write the arms maximising #{j: u_ij > 1/2} (= #{j: thr_ij < ln t}) into ``cand``.

    ``counts`` holds the row counts at ``level[0]`` and ``level[1]`` the smallest threshold at or
    above it; the K^2 recount runs only when ln t passes that threshold.
    """
    K = thr.shape[0]
    if log_t > level[1]:
        nxt = np.inf
        for i in range(K):
            n = 0
            for j in range(K):
                if thr[i, j] < log_t:
                    n += 1
                elif thr[i, j] < nxt:
                    nxt = thr[i, j]
            counts[i] = n
        level[1] = nxt
    level[0] = log_t
    best = counts.max()
    k = 0
    for i in range(K):
        if counts[i] == best:
            cand[k] = i
            k += 1
    return k


@njit(cache=True)
def set_threshold(thr, level, counts, i, j, value):
    """Change thr_ij and keep the row count and the next crossing consistent with it."""
    counts[i] += (value < level[0]) - (thr[i, j] < level[0])
    if value >= level[0] and value < level[1]:
        level[1] = value
    thr[i, j] = value


@njit(cache=True)
def sampled_copeland_winner(q, stamp, low_won, cand, nc, last, step, ties, rng):
    """The argmax set over cand[:nc] of #{j: theta_ij > 1/2}: written to ``ties``, its size returned.

    Last step's first arm is scored first when it is a candidate; a row stops as soon as it can
    no longer reach the best score so far (its remaining indicators cannot change the argmax or
    the tie set). Each row first visits the columns of the rows scored before it: those
    indicators are already drawn, and the leader's loss to the champion ends most rows at once,
    so a late step costs O(K) draws instead of O(|C| K).

    The indicator of :func:`irbandits.dueling.thompson.indicator` is written out here, in one loop:
    a call per indicator made numba pass the three K x K arrays with a reference count each time
    (about 60 ns a call, ten times the draw). The draws and their order are unchanged.
    """
    K = q.shape[0]
    for k in range(nc):
        if cand[k] == last[0]:
            cand[0], cand[k] = cand[k], cand[0]
            break
    best, n = -1, 0
    for k in range(nc):
        i = cand[k]
        score, left = 0, K - 1
        # columns: the k rows scored before (cand[:k]), then every other j by index; after the
        # first k, the pairs of row i drawn in this step are exactly those with the rows already
        # scored, so the stamp tells which columns are done
        for m in range(k + K):
            if score + left < best:
                break
            if m < k:
                j = cand[m]
            else:
                j = m - k
                if j == i or stamp[min(i, j), max(i, j)] == step:
                    continue
            lo, hi = min(i, j), max(i, j)
            if stamp[lo, hi] != step:
                stamp[lo, hi] = step
                low_won[lo, hi] = uniform(rng) < q[lo, hi]
            score += low_won[lo, hi] == (i < j)
            left -= 1
        if score > best:
            best, n = score, 0
        if score == best:
            ties[n] = i
            n += 1
    if n > 1:  # the tie set in index order, whatever order the rows were scored in
        ties[:n].sort()
    return n


@njit
def _kl_half(x):
    """D(x || 1/2), the Bernoulli KL divergence from a fair coin."""
    d = 0.0
    if x > 0.0:
        d += x * math.log(2.0 * x)
    if x < 1.0:
        d += (1.0 - x) * math.log(2.0 * (1.0 - x))
    return d


@njit
def least_regret_tie(W, q, stamp, low_won, ties, n, step, rng):
    """DTS+'s first arm among the sampled Copeland ties (Wu & Liu 2016, section 3.4).

    The tournament is completed from the stream (the pairs not drawn yet, by (lo, hi)), giving
    every arm's sampled score zeta_j = #{k: theta_jk > 1/2}; then, for each tied arm i in index
    order and j != i, theta_ij is drawn from its Beta posterior on the side of 1/2 its indicator
    fell. The pick minimises
    R_i = sum_j (zeta* - (zeta_i + zeta_j) / 2) / D(theta_ij || 1/2), zeta* = max_j zeta_j.
    """
    K = W.shape[0]
    zeta = np.zeros(K)
    for lo in range(K):
        for hi in range(lo + 1, K):  # the lazy indicator, written out (see sampled_copeland_winner)
            if stamp[lo, hi] != step:
                stamp[lo, hi] = step
                low_won[lo, hi] = uniform(rng) < q[lo, hi]
            if low_won[lo, hi]:
                zeta[lo] += 1.0
            else:
                zeta[hi] += 1.0
    top = zeta.max()
    best, arg = np.inf, ties[0]
    for k in range(n):
        i = ties[k]
        r = 0.0
        for j in range(K):
            if j == i:
                continue
            lo, hi = min(i, j), max(i, j)
            d = _kl_half(beta_draw_on_side(rng, W[lo, hi] + 1.0, W[hi, lo] + 1.0, q[lo, hi], low_won[lo, hi]))
            if d > 0.0:
                r += (top - 0.5 * (zeta[i] + zeta[j])) / d
        if r < best:
            best, arg = r, i
    return arg


@njit
def _select(st, rng):
    W, t, params, thr, level, q, stamp, low_won, counts, cand, ties, last = st
    plus = params[1] > 0.0
    step = t[0] + 1
    log_t = math.log(step)
    nc = upper_copeland_candidates(thr, log_t, level, counts, cand)
    if nc == 1:
        a1 = cand[0]
    else:
        n = sampled_copeland_winner(q, stamp, low_won, cand, nc, last, step, ties, rng)
        if plus and n > 1:
            a1 = least_regret_tie(W, q, stamp, low_won, ties, n, step, rng)
        else:
            a1 = pick(ties, n, rng)
    last[0] = a1
    return a1, second_arm(W, thr, a1, log_t, rng)


@njit
def second_arm(W, thr, a1, log_t, rng):
    """argmax of theta2_i ~ Beta(w_i,a1 + 1, w_a1,i + 1) over {i: l_i,a1 <= 1/2}, theta2_a1 = 1/2.

    :func:`irbandits.dueling.thompson.beta_draw_above` written out for the loop (a call per arm cost
    a reference count on ``rng``), with its branches, draws and their order unchanged, and two exact
    shortcuts: l_i,a1 <= 1/2 is u_a1,i >= 1/2, i.e. ln t >= thr_a1,i (:mod:`irbandits.dueling.bounds`),
    one read of a row instead of a square root per arm; and the uniform u of the tail branch is
    rejected without ``exp`` when u >= 1 / (1 + x) (>= exp(-x), x >= 5), as it would be with it.
    """
    best, a2 = 0.5, a1  # continuous draws: no ties
    for i in range(W.shape[0]):
        if i == a1 or thr[a1, i] > log_t:
            continue
        a, b = W[i, a1] + 1.0, W[a1, i] + 1.0
        mean = a / (a + b)
        exponent = 2.0 * (a + b + 1.0) * (best - mean) ** 2
        if best < mean or exponent < _PLAIN:
            x = beta(rng, a, b)
        elif exponent > _NEGLIGIBLE:
            continue
        else:
            u = uniform(rng)
            if u * (1.0 + exponent) >= 1.0 or u >= math.exp(-exponent) or u >= _betaincc(a, b, best):
                continue
            x = _betainccinv(a, b, u)
        if x > best:
            best, a2 = x, i
    return a2


@njit
def _update(st, rng, c, d, c_won):
    W, t, params, thr, level, q, stamp, low_won, counts, cand, ties, last = st
    record(W, c, d, c_won)
    if c != d:
        set_threshold(thr, level, counts, c, d, threshold(W, c, d, params[0]))
        set_threshold(thr, level, counts, d, c, threshold(W, d, c, params[0]))
        refresh_pair(q, W, c, d)
    t[0] += 1


class DTS(DuelingAlgorithm):
    """Double Thompson Sampling: an optimistic Copeland candidate set, two Thompson samples."""

    name = "DTS"
    description = "Double Thompson Sampling: UCB-pruned Copeland candidates, Thompson-sampled pair"
    reference = "Wu & Liu NIPS 2016 Algorithm 1; MergeDTS paper (seed 001) section 5.5"
    params = (Param("alpha", float, 0.51, "exploration of the confidence bounds", lambda a: a > 0, "> 0"),)
    settings = {"tuned": {"alpha": 0.8**7}}
    plus = False  # DTS+'s tie-breaking of the first arm

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(recommend_copeland_winner)

    def _init_state(self, K, alpha):
        thr = np.full((K, K), -np.inf)
        np.fill_diagonal(thr, np.inf)  # an arm never counts itself
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha, float(self.plus)]),
            thr=thr,
            level=np.array([-np.inf, -np.inf]),  # ln t of the counts, next threshold crossing
            q=np.full((K, K), 0.5),
            stamp=np.zeros((K, K), np.int64),
            low_won=np.zeros((K, K), np.bool_),
            counts=np.zeros(K, np.int64),
            cand=np.zeros(K, np.int64),
            ties=np.zeros(K, np.int64),
            last=np.full(1, -1, np.int64),
        )


class DTSPlus(DTS):
    """D-TS+: DTS whose first arm, among the sampled Copeland ties, is the one of least estimated regret."""

    name = "DTS+"
    description = "D-TS+: DTS breaking first-arm ties by the least estimated regret per unit of information"
    reference = "Wu & Liu NIPS 2016 section 3.4 (D-TS+)"
    settings = {}  # the MergeDTS paper tuned alpha for DTS only
    plus = True
