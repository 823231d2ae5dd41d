"""Relative Minimum Empirical Divergence: RMED1, RMED2, RMED2FH (Komiyama, Honda, Kashima & Nakagawa, COLT 2015).

The listing followed is Algorithm 1 of the paper (the loop lists L_C, L_R, L_N) with the RMED1
rule for the comparison arm (Algorithm 2), as implemented by the authors in
``jkomiyama/duelingbanditlib`` (``policy/policy_rmed.hpp``, MIT), which was read, not copied.
With ``p_ij = w_ij / n_ij`` (1/2 while ``n_ij = 0``) and ``O_i = {j != i : p_ij <= 1/2}``:

* empirical divergence ``I_i = sum_{j in O_i} n_ij KL(p_ij, 1/2)`` (Bernoulli KL, ``0 log 0 = 0``);
  ``J* = min_i I_i``, ``i* = argmin_i I_i`` (ties at random); arm ``j`` is a *candidate* when
  ``I_j - J* <= log t + f(K)`` with ``f(K) = kweight * K^1.01`` (the paper's experiments: 0.3);
* initial phase: every pair ``(i, j)``, ``i < j``, is compared once, in lexicographic order (the
  order of the authors' code); then ``L_C = L_R = [K]``, ``L_N = {}``;
* main phase, one step per ``l = l(t)`` taken from ``L_C`` in increasing arm order (the paper's
  "arbitrarily fixed order"; the authors' code iterates an ordered set):
  ``m = i*`` if ``i* in O_l``; otherwise ``m = argmin_{j in O_l} p_lj`` (ties at random) if
  ``O_l`` is not empty; otherwise ``m = i*`` (so the empirical winner with no empirical superior
  duels itself). After the duel (``t`` now counts it): ``L_R <- L_R - {l}``,
  ``L_N <- L_N + {candidates not in L_R}``; when ``L_C`` is used up, ``L_C = L_R = L_N``, ``L_N = {}``.

Sources: the paper's own text was not at hand; the listing above is the authors' C++ (read, not
copied), cross-checked against duelpy's ``Rmed1`` and the MergeDTS authors' Python, whose comments
cite the paper's line numbers. Differences from the C++: it marks the *comparison* arm ``m`` as done
in the current loop (``LRc.insert(j)``), while the paper's ``L_R <- L_R \\ {l(t)}`` (as duelpy and
the MergeDTS code have it) removes ``l(t)``, which is done here; it tests ``p_ij <= 0.50001`` for
``O_i``, here the exact integer test ``2 w_ij <= n_ij``.

RMED2 (the paper's Algorithm 3, as in the authors' code, mode 2) keeps the loop and changes two
things. Exploration: after the initial phase, while some pair has been drawn fewer than
``alpha log(log t + 0.01)`` times (``alpha = 3``, the authors' default and guard), the first such
pair in lexicographic order is drawn; these draws update the divergences and L_N but not L_C
or L_R. Comparison arm: ``b(l) = argmin_{j: p_lj < 1/2} max(p_{i* l} + p_{i* j} - 1, 0.01) /
KL(p_lj, 1/2)`` (``i*`` if none; the estimated regret-optimal arm to show that ``l`` loses),
and ``m = i*`` if ``i*`` is in ``O_l`` and ``n_{l i*} <= n_{l b(l)} / log(log t + 0.01)``, else
``m = b(l)`` if ``b(l)`` is in ``O_l``, else RMED1's rule. RMED2FH (mode 3) explores every pair to
``alpha log(log T + 0.01)`` with the known horizon ``T`` and fixes every ``b(l)`` at the first step
of the main phase.

Speed: only the pair just played changes, so the per-pair terms ``n_ij KL(p_ij, 1/2)`` are cached
in a K x K array, ``|O_i|`` is kept per arm, and only ``I_c`` and ``I_d`` are re-summed after a
duel, and only where their term changed (summing the cached row in a fixed order, so no rounding
drift builds up). ``J*`` and its ties are rescanned only when the minimum may have moved
(:func:`_update_min`), and the candidate test is rerun over all arms only when ``log t`` has grown
past a lower bound of the ``I`` of the arms waiting outside ``L_R`` and ``L_N``; otherwise only
the duel's two arms and the arm just released from ``L_R`` are tested
(:func:`_candidates_after_duel`). The helpers are inlined into the kernels (numba passes each
array to a called function with a reference count, which cost more than the work). The lists and
decisions are exactly those of the full passes (``tests/test_speed_identical.py``). At K = 136
(MSLR, after 10^6 steps, when almost every step is still a duel of two arms) a step costs about a
third of RUCB's; the work the listing needs (two KL terms and one row re-summed) is about a fifth
of it.

Recommendation: the seeds give no rule for RMED, so the spec's default, the empirical Copeland
winner (most ``w_ij > w_ji``), which is ``i*`` once the winner has beaten everyone empirically.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(RMED1(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import kl_bernoulli, pick, recommend_copeland_winner, record
from irbandits.errors import IrbanditsError
from irbandits.params import Param

# info slots
_PHASE, _CI, _CJ, _NLC, _POS, _ARGMIN, _NMIN, _NLN = range(8)


@njit(cache=True, inline="always")
def divergence_term(W, i, j):
    """``n_ij KL(p_ij, 1/2)`` if ``j`` is in ``O_i`` (``p_ij <= 1/2``) and the pair was played, else 0."""
    n = W[i, j] + W[j, i]
    if n == 0 or 2 * W[i, j] > n:
        return 0.0
    return n * kl_bernoulli(W[i, j] / n, 0.5)


@njit(cache=True, inline="always")
def _refresh_min(I, info):
    """J* = min I, its first arm and the number of arms attaining it."""
    best = np.inf
    first = 0
    count = 0
    for i in range(I.shape[0]):
        if I[i] < best:
            best = I[i]
            first = i
            count = 1
        elif I[i] == best:
            count += 1
    info[_ARGMIN] = first
    info[_NMIN] = count
    return best


@njit(cache=True, inline="always")
def best_arm(I, info, mins, ties, rng):
    """i* = argmin_i I_i, ties at random."""
    if info[_NMIN] == 1:
        return info[_ARGMIN]
    n = 0
    for i in range(I.shape[0]):
        if I[i] == mins[0]:
            ties[n] = i
            n += 1
    return pick(ties, n, rng)


@njit(cache=True, inline="always")
def rmed1_opponent(W, l, best, nopp, ties, rng):
    """Algorithm 2: i* if it is in O_l, else argmin_{j in O_l} p_lj (ties at random), else i*."""
    if best != l and 2 * W[l, best] <= W[l, best] + W[best, l]:  # i* in O_l
        return best
    if nopp[l] == 0:
        return best
    low = 2.0
    n = 0
    for j in range(W.shape[0]):
        if j == l:
            continue
        nn = W[l, j] + W[j, l]
        if 2 * W[l, j] > nn:
            continue
        p = W[l, j] / nn if nn > 0 else 0.5
        if p < low:
            low = p
            ties[0] = j
            n = 1
        elif p == low:
            ties[n] = j
            n += 1
    return pick(ties, n, rng)


@njit(cache=True)
def _select(st, rng):
    W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params, ties = st
    if info[_PHASE] == 0:
        return info[_CI], info[_CJ]
    l = lc[info[_POS]]
    return l, rmed1_opponent(W, l, best_arm(I, info, mins, ties, rng), nopp, ties, rng)


@njit(cache=True, inline="always")
def _test_candidate(I, in_n, ln, info, mins, slack, x):
    """Arm x (outside L_R and L_N) joins L_N if I_x - min I <= ``slack``; else it may lower mins[1],
    the bound on the I of the arms left out."""
    if I[x] - mins[0] <= slack:
        in_n[x] = True
        ln[info[_NLN]] = x
        info[_NLN] += 1
    elif I[x] < mins[1]:
        mins[1] = I[x]


@njit(cache=True, inline="always")
def _add_candidates(I, in_r, in_n, ln, info, mins, slack):
    """L_N <- L_N + {j not in L_R, not in L_N : I_j - J* <= slack}; mins[1] = min I over the rest."""
    mins[1] = np.inf
    for j in range(I.shape[0]):
        if not in_r[j] and not in_n[j]:
            _test_candidate(I, in_n, ln, info, mins, slack, j)


@njit(cache=True, inline="always")
def _update_min(I, info, mins, c, d, old_c, old_d):
    """J*, its first arm and its number of arms after I_c and I_d (c != d) changed from old_c and
    old_d: what :func:`_refresh_min` returns, rescanning only when the minimum may have moved."""
    star = mins[0]
    new_c, new_d = I[c], I[d]
    if (old_c == star and new_c > star) or (old_d == star and new_d > star) or new_c < star or new_d < star:
        mins[0] = _refresh_min(I, info)
        return
    # the minimum stays J*: c and d may join its ties, or stay in them (leaving them rescans above)
    count = info[_NMIN] - (old_c == star) - (old_d == star) + (new_c == star) + (new_d == star)
    info[_NMIN] = count
    if new_c == star and c < info[_ARGMIN]:
        info[_ARGMIN] = c
    if new_d == star and d < info[_ARGMIN]:
        info[_ARGMIN] = d


@njit(cache=True, inline="always")
def _candidates_after_duel(I, in_r, in_n, ln, info, mins, slack, c, d, l):
    """What :func:`_add_candidates` does after a duel that changed I_c and I_d, without its O(K)
    pass when it can be told from three arms. Every arm outside L_R and L_N but c, d and the arm l
    just released from L_R kept its I, so I >= mins[1]; if mins[1] fails the test, so do they all,
    and only c, d and l can enter L_N: they are tested here in increasing order, the order in
    which the pass would add them, and mins[1] becomes the least I of those that fail (with the
    old mins[1], a lower bound of the rest's I rather than its minimum; the next full pass makes
    it exact again). L_N, its order, and so every decision are what the full pass leaves."""
    if mins[1] - mins[0] <= slack:
        _add_candidates(I, in_r, in_n, ln, info, mins, slack)
        return
    lo, mid, hi = min(c, d, l), max(min(c, d), min(max(c, d), l)), max(c, d, l)
    for k in range(3):
        x = lo if k == 0 else (mid if k == 1 else hi)
        if (k == 1 and x == lo) or (k == 2 and (x == mid or x == lo)) or in_r[x] or in_n[x]:
            continue
        _test_candidate(I, in_n, ln, info, mins, slack, x)


@njit(cache=True, inline="always")
def rmed_update(W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, fk, c, d, c_won, in_loop):
    """Record a duel, refresh the divergences and the lists L_C, L_R, L_N (Algorithm 1); a duel
    outside the loop (``in_loop`` False: RMED2's exploration) leaves L_C and L_R as they are."""
    K = W.shape[0]
    changed = c != d
    if changed:
        n = W[c, d] + W[d, c]
        old_c = 1 if 2 * W[c, d] <= n else 0
        old_d = 1 if 2 * W[d, c] <= n else 0
        record(W, c, d, c_won)
        n += 1
        nopp[c] += (1 if 2 * W[c, d] <= n else 0) - old_c
        nopp[d] += (1 if 2 * W[d, c] <= n else 0) - old_d
        before_c, before_d = I[c], I[d]
        for i, j in ((c, d), (d, c)):
            term = divergence_term(W, i, j)
            if term != C[i, j]:  # an unchanged row sums to the same I_i: no need to re-sum it
                C[i, j] = term
                s = 0.0
                for k in range(K):
                    s += C[i, k]
                I[i] = s
        _update_min(I, info, mins, c, d, before_c, before_d)
    t[0] += 1
    if info[_PHASE] == 0:  # initial phase: the next pair in lexicographic order
        info[_CJ] += 1
        if info[_CJ] == K:
            info[_CI] += 1
            info[_CJ] = info[_CI] + 1
        if info[_CI] >= K - 1:  # main phase: L_C = L_R = [K], L_N = {}
            info[_PHASE] = 1
            for i in range(K):
                lc[i] = i
                in_r[i] = True
                in_n[i] = False
            info[_NLC] = K
            info[_POS] = 0
            info[_NLN] = 0
            mins[1] = np.inf
        return
    slack = math.log(t[0]) + fk
    if not in_loop:
        if changed:
            _candidates_after_duel(I, in_r, in_n, ln, info, mins, slack, c, d, c)
        return
    l = lc[info[_POS]]
    in_r[l] = False
    info[_POS] += 1
    # The arms outside L_R and L_N have I >= mins[1] (a lower bound: see _candidates_after_duel);
    # unless some I changed, only the arm l just released from L_R and a grown log t can add
    # candidates.
    if not changed:
        _test_candidate(I, in_n, ln, info, mins, slack, l)
        if mins[1] - mins[0] <= slack:
            _add_candidates(I, in_r, in_n, ln, info, mins, slack)
    else:
        _candidates_after_duel(I, in_r, in_n, ln, info, mins, slack, c, d, l)
    if info[_POS] == info[_NLC]:  # the loop is over: L_C = L_R = L_N (in increasing order), L_N = {}
        n = info[_NLN]
        for a in range(n):  # insertion sort; L_N is short except in the first loops
            x = ln[a]
            b = a
            while b > 0 and lc[b - 1] > x:
                lc[b] = lc[b - 1]
                b -= 1
            lc[b] = x
            in_r[x] = True
            in_n[x] = False
        info[_NLC] = n
        info[_POS] = 0
        info[_NLN] = 0


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params, ties = st
    rmed_update(W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params[0], c, d, c_won, True)


class RMED1(DuelingAlgorithm):
    """Relative Minimum Empirical Divergence 1: asymptotically optimal O(K log T) regret."""

    name = "RMED1"
    description = "Relative Minimum Empirical Divergence (RMED1): play arms whose empirical divergence is plausible"
    reference = "Komiyama et al. COLT 2015, Algorithms 1-2; MergeDTS paper (seed 001) section 5.5"
    params = (
        Param(
            "kweight",
            float,
            0.3,
            "f(K) = kweight * K^1.01 in the candidate test I_i - J* <= log t + f(K)",
            lambda a: a >= 0,
            ">= 0",
        ),
    )

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(recommend_copeland_winner)

    def _init_state(self, K, kweight):
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            C=np.zeros((K, K)),  # cached n_ij KL(p_ij, 1/2) for j in O_i
            I=np.zeros(K),  # empirical divergences
            nopp=np.full(K, K - 1, np.int64),  # |O_i|
            lc=np.arange(K, dtype=np.int64),  # L_C in play order
            ln=np.zeros(K, np.int64),  # L_N in order of entry
            # phase, initial pair, |L_C|, position in L_C, first argmin of I, #argmin, |L_N|
            info=np.array([0, 0, 1, K, 0, 0, K, 0], np.int64),
            in_r=np.ones(K, np.bool_),  # membership of L_R
            in_n=np.zeros(K, np.bool_),  # membership of L_N
            mins=np.array([0.0, np.inf]),  # J*, a lower bound of I over the arms in neither L_R nor L_N
            params=np.array([kweight * K**1.01]),
            ties=np.zeros(K, np.int64),
        )


# ----- RMED2 and RMED2FH -------------------------------------------------------------------------
# ex slots: cursor pair (i, j) of the exploration scan, the level it scans for, last pair explored?
_EI, _EJ, _ELEVEL, _EXPLORING = range(4)


@njit(cache=True)
def exploration_level(alpha, log_t):
    """Pairs drawn fewer than alpha log(log t + 0.01) times are drawn first (the authors' guard 0.01)."""
    x = log_t + 0.01
    return math.ceil(alpha * math.log(x)) if x > 1.0 else 0


@njit(cache=True)
def smallest_regret_arm(W, best, l):
    """b(l) = argmin_{j: p_lj < 1/2} max(p_{i* l} + p_{i* j} - 1, 0.01) / KL(p_lj, 1/2); i* if none."""
    out, low = best, np.inf
    for j in range(W.shape[0]):
        n = W[l, j] + W[j, l]
        if j == l or n == 0 or 2 * W[l, j] >= n:
            continue
        v = max(_mean(W, best, l) + _mean(W, best, j) - 1.0, 0.01) / kl_bernoulli(W[l, j] / n, 0.5)
        if v < low:
            out, low = j, v
    return out


@njit(cache=True)
def _mean(W, i, j):
    n = W[i, j] + W[j, i]
    return 0.5 if i == j or n == 0 else W[i, j] / n


@njit(cache=True)
def _select2(st, rng):
    W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params, ties, ex, bfix = st
    ex[_EXPLORING] = 0
    if info[_PHASE] == 0:
        return info[_CI], info[_CJ]
    K = W.shape[0]
    step = t[0] + 1
    log_t = math.log(step)
    level = exploration_level(params[1], math.log(params[3]) if params[2] else log_t)
    if level > ex[_ELEVEL]:  # every pair below the new level is drawn again, in lexicographic order
        ex[_ELEVEL], ex[_EI], ex[_EJ] = level, 0, 1
    while ex[_EI] < K - 1:
        i, j = ex[_EI], ex[_EJ]
        if W[i, j] + W[j, i] < ex[_ELEVEL]:
            ex[_EXPLORING] = 1
            return i, j
        ex[_EJ] += 1
        if ex[_EJ] == K:
            ex[_EI] += 1
            ex[_EJ] = ex[_EI] + 1
    l = lc[info[_POS]]
    best = best_arm(I, info, mins, ties, rng)
    if params[2]:  # RMED2FH: b(i) fixed at the first step of the main phase
        if bfix[0] < 0:
            for i in range(K):
                bfix[i] = smallest_regret_arm(W, best, i)
        b = bfix[l]
    else:
        b = smallest_regret_arm(W, best, l)
    n_b = W[l, b] + W[b, l]
    if best != l and 2 * W[l, best] <= W[l, best] + W[best, l]:  # i* in O_l
        if W[l, best] + W[best, l] <= n_b / math.log(log_t + 0.01):
            return l, best
    if b != l and 2 * W[l, b] <= n_b:  # b(l) in O_l
        return l, b
    return l, rmed1_opponent(W, l, best, nopp, ties, rng)


@njit(cache=True)
def _update2(st, rng, c, d, c_won):
    W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params, ties, ex, bfix = st
    rmed_update(W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params[0], c, d, c_won, ex[_EXPLORING] == 0)


class RMED2(RMED1):
    """RMED2: RMED with forced exploration and the regret-optimal comparison arm b(l)."""

    name = "RMED2"
    description = "RMED2: RMED1's candidate loop, comparing l with the estimated regret-optimal arm b(l)"
    reference = "Komiyama et al. COLT 2015, Algorithms 1 and 3; MergeDTS paper (seed 001) section 5.5"
    params = RMED1.params + (
        Param(
            "alpha",
            float,
            3.0,
            "every pair is drawn at least alpha log log t times (the authors' 3)",
            lambda a: a >= 0,
            ">= 0",
        ),
    )

    _select = staticmethod(_select2)
    _update = staticmethod(_update2)

    def _init_state(self, K, kweight, alpha):
        return self._rmed2_state(K, kweight, alpha, 0.0, 1.0)

    def _rmed2_state(self, K, kweight, alpha, fixed, horizon):
        st = super()._init_state(K, kweight)
        st["params"] = np.array([kweight * K**1.01, alpha, fixed, horizon])  # f(K), alpha, FH?, T
        st["ex"] = np.array([0, 1, 0, 0], np.int64)
        st["bfix"] = np.full(K, -1, np.int64)
        return st


class RMED2FH(RMED2):
    """RMED2FH: RMED2 for a known horizon T (exploration to alpha log log T, b(l) fixed once)."""

    name = "RMED2FH"
    description = "RMED2 with a known horizon: explore every pair alpha log log T times, then fix each b(l)"
    reference = "Komiyama et al. COLT 2015, Algorithm 3 (fixed-horizon RMED2)"

    def _init_state(self, K, kweight, alpha):
        if self.horizon is None:
            raise IrbanditsError("RMED2FH needs the horizon T (pass horizon=...)")
        return self._rmed2_state(K, kweight, alpha, 1.0, float(self.horizon))
