"""Relative Minimum Empirical Divergence, RMED1 (Komiyama, Honda, Kashima & Nakagawa, COLT 2015).

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
``O_i``, here the exact integer test ``2 w_ij <= n_ij``. RMED2 is not implemented.

Speed: only the pair just played changes, so the per-pair terms ``n_ij KL(p_ij, 1/2)`` are cached
in a K x K array, ``|O_i|`` is kept per arm, and only ``I_c`` and ``I_d`` are re-summed after a
duel (summing the cached row in a fixed order, so no rounding drift builds up). ``J*`` and its
ties are refreshed, and the candidate test rerun over all arms, in O(K) passes only when some
``I`` changed or when ``log t`` has grown past the smallest ``I`` of the arms waiting outside
``L_R`` and ``L_N``; otherwise a step is O(1), as in the steady state where the winner duels itself.

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

from irbandits.dueling.base import DuelingAlgorithm, Param
from irbandits.dueling.bounds import empirical_copeland_winner, pick, record

# info slots
_PHASE, _CI, _CJ, _NLC, _POS, _ARGMIN, _NMIN, _NLN = range(8)


@njit(cache=True)
def divergence_term(W, i, j):
    """``n_ij KL(p_ij, 1/2)`` if ``j`` is in ``O_i`` (``p_ij <= 1/2``) and the pair was played, else 0."""
    n = W[i, j] + W[j, i]
    if n == 0 or 2 * W[i, j] > n:
        return 0.0
    p = W[i, j] / n
    kl = (1.0 - p) * math.log(2.0 * (1.0 - p))
    if p > 0.0:
        kl += p * math.log(2.0 * p)
    return n * kl


@njit(cache=True)
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


@njit(cache=True)
def _select(st, rng):
    W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params, ties = st
    if info[_PHASE] == 0:
        return info[_CI], info[_CJ]
    K = W.shape[0]
    l = lc[info[_POS]]
    if info[_NMIN] == 1:
        best = info[_ARGMIN]
    else:
        n = 0
        for i in range(K):
            if I[i] == mins[0]:
                ties[n] = i
                n += 1
        best = pick(ties, n, rng)
    if best != l and 2 * W[l, best] <= W[l, best] + W[best, l]:  # i* in O_l
        return l, best
    if nopp[l] == 0:
        return l, best
    low = 2.0
    n = 0
    for j in range(K):
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
    return l, pick(ties, n, rng)


@njit(cache=True)
def _add_candidates(I, in_r, in_n, ln, info, mins, slack):
    """L_N <- L_N + {j not in L_R, not in L_N : I_j - J* <= slack}; mins[1] = min I over the rest."""
    rest = np.inf
    n = info[_NLN]
    for j in range(I.shape[0]):
        if not in_r[j] and not in_n[j]:
            if I[j] - mins[0] <= slack:
                in_n[j] = True
                ln[n] = j
                n += 1
            elif I[j] < rest:
                rest = I[j]
    info[_NLN] = n
    mins[1] = rest


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, C, I, nopp, lc, ln, info, in_r, in_n, mins, params, ties = st
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
        C[c, d] = divergence_term(W, c, d)
        C[d, c] = divergence_term(W, d, c)
        for i in (c, d):
            s = 0.0
            for j in range(K):
                s += C[i, j]
            I[i] = s
        mins[0] = _refresh_min(I, info)
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
    l = lc[info[_POS]]
    in_r[l] = False
    info[_POS] += 1
    slack = math.log(t[0]) + params[0]
    # The arms outside L_R and L_N that failed the test last time have I >= mins[1]; unless some
    # I changed, only the arm l just released from L_R and a grown log t can add candidates.
    if not changed:
        if I[l] - mins[0] <= slack:
            in_n[l] = True
            ln[info[_NLN]] = l
            info[_NLN] += 1
        elif I[l] < mins[1]:
            mins[1] = I[l]
    if changed or mins[1] - mins[0] <= slack:
        _add_candidates(I, in_r, in_n, ln, info, mins, slack)
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
def _recommend(st):
    return empirical_copeland_winner(st[0])


class RMED1(DuelingAlgorithm):
    """Relative Minimum Empirical Divergence 1: asymptotically optimal O(K log T) regret."""

    name = "RMED1"
    description = "Relative Minimum Empirical Divergence (RMED1): play arms whose empirical divergence is plausible"
    reference = "Komiyama et al. COLT 2015, Algorithms 1-2; MergeDTS paper (seed 001) section 5.5"
    params = (
        Param("kweight", float, 0.3, "f(K) = kweight * K^1.01 in the candidate test I_i - J* <= log t + f(K)",
              lambda a: a >= 0, ">= 0"),
    )

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)

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
            mins=np.array([0.0, np.inf]),  # J*, min of I over the arms in neither L_R nor L_N
            params=np.array([kweight * K**1.01]),
            ties=np.zeros(K, np.int64),
        )
