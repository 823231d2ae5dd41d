"""DTS and DTS+ after the speed-up (issue 23, item 3): the same decisions as before, and the law of the listing.

Two kinds of evidence:

* the kernels before the speed-up (``git show 7f76666:src/irbandits/dueling/dts.py``) are copied
  below as a slow reference; the new kernels draw the same numbers in the same order, so whole runs
  (regret, recommendations, win counts and the generator's final state) are identical, on MSLR
  (K = 136) and bt-10, for DTS and DTS+;
* from fixed states, many (c, d) decisions of the new kernel against the listing as written (a
  Beta draw for every pair and every eligible arm, NumPy's generator), by a G-test that passes here
  and fails for a sampler that uses the posterior mean instead of the second arm's draw.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from helpers import DATA
from numba import njit
from scipy.stats import chi2

from irbandits.dueling import DTS, DTSPlus
from irbandits.dueling.bounds import lcb, pick
from irbandits.dueling.dts import _kl_half, upper_copeland_candidates
from irbandits.dueling.thompson import beta_draw_above, beta_draw_on_side, indicator
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.simulate import run_one

MSLR = DATA / "preference-matrices" / "mslr-navigational.txt"


# ----- the kernels before the speed-up, verbatim but for the names -------------------------------
@njit
def old_sampled_copeland_winner(q, stamp, low_won, cand, nc, last, step, ties, rng):
    K = q.shape[0]
    for k in range(nc):
        if cand[k] == last[0]:
            cand[0], cand[k] = cand[k], cand[0]
            break
    best, n = -1, 0
    for k in range(nc):
        i = cand[k]
        score, left = 0, K - 1
        for m in range(k):
            if score + left < best:
                break
            score += indicator(q, stamp, low_won, i, cand[m], step, rng)
            left -= 1
        else:
            for j in range(K):
                if score + left < best:
                    break
                if j == i or stamp[min(i, j), max(i, j)] == step:
                    continue
                score += indicator(q, stamp, low_won, i, j, step, rng)
                left -= 1
        if score > best:
            best, n = score, 0
        if score == best:
            ties[n] = i
            n += 1
    if n > 1:
        ties[:n].sort()
    return n


@njit
def old_least_regret_tie(W, q, stamp, low_won, ties, n, step, rng):
    K = W.shape[0]
    zeta = np.zeros(K)
    for lo in range(K):
        for hi in range(lo + 1, K):
            if indicator(q, stamp, low_won, lo, hi, step, rng):
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
def old_select(st, rng):
    W, t, params, thr, level, q, stamp, low_won, counts, cand, ties, last = st
    alpha, plus = params[0], params[1] > 0.0
    K = W.shape[0]
    step = t[0] + 1
    log_t = math.log(step)
    nc = upper_copeland_candidates(thr, log_t, level, counts, cand)
    if nc == 1:
        a1 = cand[0]
    else:
        n = old_sampled_copeland_winner(q, stamp, low_won, cand, nc, last, step, ties, rng)
        if plus and n > 1:
            a1 = old_least_regret_tie(W, q, stamp, low_won, ties, n, step, rng)
        else:
            a1 = pick(ties, n, rng)
    last[0] = a1
    best, a2 = 0.5, a1
    for i in range(K):
        if i != a1 and lcb(W, i, a1, log_t, alpha) <= 0.5:
            x = beta_draw_above(rng, W[i, a1] + 1.0, W[a1, i] + 1.0, best)
            if x > best:
                best, a2 = x, i
    return a1, a2


class OldDTS(DTS):
    name = ""  # not registered
    _select = staticmethod(old_select)


class OldDTSPlus(DTSPlus):
    name = ""
    _select = staticmethod(old_select)


def _mslr():
    return PreferenceMatrix.load(MSLR, name="mslr-navigational")


@pytest.mark.parametrize("new, old", [(DTS, OldDTS), (DTSPlus, OldDTSPlus)], ids=["DTS", "DTS+"])
@pytest.mark.parametrize("problem, horizon, seeds", [("mslr", 15_000, (1,)), ("bt-10", 20_000, (1, 2, 3))])
def test_runs_are_those_of_the_kernels_before_the_speed_up(new, old, problem, horizon, seeds):
    """Same seed, same trajectory: regret, recommendations, win counts and the generator's state."""
    P = _mslr() if problem == "mslr" else get_problem(problem)
    for seed in seeds:
        a, b = new(P.K, seed=seed), old(P.K, seed=seed)
        ra, rb = run_one(a, P, horizon, seed=100 + seed), run_one(b, P, horizon, seed=100 + seed)
        assert np.array_equal(ra.regret, rb.regret) and np.array_equal(ra.recommended, rb.recommended)
        assert np.array_equal(a.wins, b.wins) and np.array_equal(a._rng, b._rng)
        assert a.t == b.t == horizon


# ----- the law of one step's decision against the listing as written -----------------------------
def _listing_bounds(W, log_t, alpha):
    N = W + W.T
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = W / np.maximum(N, 1)
        width = np.sqrt(alpha * log_t / np.maximum(N, 1))
    U, L = np.where(N > 0, mean + width, 2.0), np.where(N > 0, mean - width, 0.0)
    np.fill_diagonal(U, 0.5)
    np.fill_diagonal(L, 0.5)
    return U, L


def listing_decisions(W, t, alpha, plus, draws, seed, second_by_mean=False):
    """(c, d) of Wu & Liu 2016 Algorithm 1 (D-TS+ by section 3.4) at the state W after t duels, drawn
    ``draws`` times with every Beta sampled; ``second_by_mean`` replaces the second arm's Beta draws
    by their means (a plausible shortcut that is not the listing)."""
    K, gen = len(W), np.random.default_rng(seed)
    U, L = _listing_bounds(W, math.log(t + 1), alpha)
    upper = ((U > 0.5) & ~np.eye(K, dtype=bool)).sum(axis=1)
    C = np.flatnonzero(upper == upper.max())
    lo, hi = np.triu_indices(K, 1)
    out, ties_seen = Counter(), 0
    for _ in range(draws):
        theta = np.full((K, K), 0.5)
        theta[lo, hi] = gen.beta(W[lo, hi] + 1, W[hi, lo] + 1)
        theta[hi, lo] = 1 - theta[lo, hi]
        zeta = (theta > 0.5).sum(axis=1)
        ties = C[zeta[C] == zeta[C].max()]
        ties_seen += len(ties) > 1
        if len(ties) == 1:
            a1 = int(ties[0])
        elif not plus:
            a1 = int(gen.choice(ties))
        else:
            off = np.arange(K)
            regret = []
            for i in ties:
                x = theta[i, off != i]
                d = x * np.log(2 * x) + (1 - x) * np.log(2 * (1 - x))
                regret.append(((zeta.max() - (zeta[i] + zeta[off != i]) / 2) / d).sum())
            a1 = int(ties[int(np.argmin(regret))])
        eligible = np.flatnonzero((L[:, a1] <= 0.5) & (np.arange(K) != a1))
        a, b = W[eligible, a1] + 1.0, W[a1, eligible] + 1.0
        theta2 = a / (a + b) if second_by_mean else gen.beta(a, b)
        a2 = int(eligible[np.argmax(theta2)]) if len(eligible) and theta2.max() > 0.5 else a1
        out[a1, a2] += 1
    return out, ties_seen / draws


def kernel_decisions(algo, draws):
    """``draws`` independent (c, d) of the algorithm's ``_select`` from its current state (the
    step's lazy draws and last step's first arm reset before each)."""
    st, rng = algo.kernel_state
    stamp, last = algo.arrays["stamp"], algo.arrays["last"]
    stamp0, last0 = stamp.copy(), last.copy()
    out = Counter()
    for _ in range(draws):
        stamp[...], last[...] = stamp0, last0
        c, d = algo._select(st, rng)
        out[int(c), int(d)] += 1
    return out


def g_test(x: Counter, y: Counter, min_count=10):
    """p-value of the G-test that two samples of (c, d) come from one law; pairs seen fewer than
    ``min_count`` times in both together are pooled into one cell."""
    keys = sorted(set(x) | set(y))
    big = [k for k in keys if x[k] + y[k] >= min_count]
    table = np.array(
        [
            [x[k] for k in big] + [sum(x[k] for k in keys if k not in big)],
            [y[k] for k in big] + [sum(y[k] for k in keys if k not in big)],
        ],
        float,
    )
    table = table[:, table.sum(axis=0) > 0]
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0) / table.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        g = 2 * np.nansum(np.where(table > 0, table * np.log(table / expected), 0.0))
    return float(chi2.sf(g, table.shape[1] - 1))


def _warm(cls, P, steps, seed):
    algo = cls(P.K, seed=seed)
    run_one(algo, P, steps, seed=seed)
    return algo


def _marginal(x: Counter, k: int) -> Counter:
    out = Counter()
    for pair, n in x.items():
        out[pair[k]] += n
    return out


@pytest.mark.parametrize(
    "cls, problem, steps, draws",
    [(DTS, "bt-10", 300, 40_000), (DTSPlus, "cycle", 400, 20_000), (DTS, "mslr", 2000, 4000)],
    ids=["DTS-bt10", "DTS+-cycle", "DTS-mslr"],
)
def test_decisions_have_the_law_of_the_listing(cls, problem, steps, draws):
    """The joint law of (c, d) and both marginals, each by a G-test at a fixed seed."""
    P = _mslr() if problem == "mslr" else get_problem(problem)
    algo = _warm(cls, P, steps, seed=5)
    W, t, alpha = algo.wins, algo.t, algo.param_values["alpha"]
    fast = kernel_decisions(algo, draws)
    plain, ties = listing_decisions(W, t, alpha, cls.plus, draws, seed=6)
    for k, least in ((0, 2), (1, 3)):  # the state is one where both arms are random
        assert sum(n >= 0.01 * draws for n in _marginal(fast, k).values()) >= least, _marginal(fast, k)
    if cls.plus:
        assert ties > 0.2, ties  # D-TS+'s tie rule decides often
    p = [
        g_test(fast, plain),
        g_test(_marginal(fast, 0), _marginal(plain, 0)),
        g_test(_marginal(fast, 1), _marginal(plain, 1)),
    ]
    assert min(p) > 1e-3, (p, fast.most_common(8), plain.most_common(8))


def test_the_g_test_rejects_a_realistic_shortcut():
    """The test above has the power to see a realistic bias at its states and sample sizes: the
    listing with the second arm's Beta draws replaced by their means differs from the kernel (DTS
    on bt-10, D-TS+ on cycle)."""
    for cls, problem, steps, draws in [(DTS, "bt-10", 300, 40_000), (DTSPlus, "cycle", 400, 20_000)]:
        algo = _warm(cls, get_problem(problem), steps, seed=5)
        fast = kernel_decisions(algo, draws)
        biased, _ = listing_decisions(
            algo.wins, algo.t, algo.param_values["alpha"], cls.plus, draws, seed=6, second_by_mean=True
        )
        assert g_test(fast, biased) < 1e-6, problem
