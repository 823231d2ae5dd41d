"""CCB with incremental Copeland bounds (issue 23) against the plain CCB it replaced.

The plain version below is the CCB of commit 7f76666 verbatim (kernels renamed): every step it
recounts the optimistic and pessimistic Copeland scores over all K^2 pairs and rescans every
``B_t^i``. The incremental CCB must take exactly the same decisions, draw for draw: the same seed
gives the same pairs, the same hypothesis sets and the same recommendations.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from irbandits.dueling import CCB
from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import lcb, pick, recommend_copeland_winner, record, threshold, ucb
from irbandits.dueling.ccb import heap_remove, heap_set
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import new_rng, randint, uniform
from irbandits.simulate import run_one

MSLR = Path("/work/shared/data/preference-matrices/mslr-navigational.txt")
if not MSLR.exists():
    MSLR = Path(__file__).resolve().parents[2] / "shared" / "data" / "preference-matrices" / "mslr-navigational.txt"

# Arms 0 and 1 are the Copeland winners (3 wins each); no Condorcet winner.
COPELAND_5 = np.array([
    [0.5, 0.4, 0.7, 0.65, 0.6],
    [0.6, 0.5, 0.35, 0.7, 0.65],
    [0.3, 0.65, 0.5, 0.4, 0.35],
    [0.35, 0.3, 0.6, 0.5, 0.6],
    [0.4, 0.35, 0.65, 0.4, 0.5],
])  # fmt: skip


# ----- the plain CCB (recomputes the Copeland bounds every step) ------------------------------------
@njit
def plain_lower_threshold(W, i, j, alpha):
    """The log-time up to which l_ij >= 0.5 (-inf when w_ij / n_ij <= 0.5)."""
    n = W[i, j] + W[j, i]
    if i == j or n == 0 or 2 * W[i, j] <= n:
        return -np.inf
    gap = W[i, j] / n - 0.5
    return n * gap * gap / alpha


@njit
def plain_reset(inB, Bi, nBi, lc):
    """Lines 2-4: B = all arms, every B^i empty, L_C = K."""
    inB[:] = True
    Bi[:, :] = False
    nBi[:] = 0
    lc[0] = inB.shape[0]


@njit
def plain_update_hypotheses(st, log_t, rng):
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
        plain_reset(inB, Bi, nBi, lc)
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
        plain_reset(inB, Bi, nBi, lc)
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


@njit
def plain_select(st, rng):
    W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf = st
    K = W.shape[0]
    alpha = params[0]
    log_t = math.log(t[0] + 1)
    nc = plain_update_hypotheses(st, log_t, rng)
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


@njit
def plain_update(st, rng, c, d, c_won):
    W, t, params, thr, lthr, inB, Bi, nBi, lc, up, low, cand, buf = st
    record(W, c, d, c_won)
    if c != d:
        for i, j in ((c, d), (d, c)):
            thr[i, j] = threshold(W, i, j, params[0])
            lthr[i, j] = plain_lower_threshold(W, i, j, params[0])
    t[0] += 1


class PlainCCB(DuelingAlgorithm):
    """The plain CCB, unregistered (its name is set after the class, so the registry never sees it)."""

    params = CCB.params
    _select = staticmethod(plain_select)
    _update = staticmethod(plain_update)
    _recommend = staticmethod(recommend_copeland_winner)

    def _init_state(self, K, alpha):
        thr = np.full((K, K), -np.inf)
        np.fill_diagonal(thr, np.inf)
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha]),
            thr=thr,
            lthr=np.full((K, K), -np.inf),
            inB=np.ones(K, np.bool_),
            Bi=np.zeros((K, K), np.bool_),
            nBi=np.zeros(K, np.int64),
            lc=np.full(1, K, np.int64),
            up=np.zeros(K, np.int64),
            low=np.zeros(K, np.int64),
            cand=np.zeros(K, np.int64),
            buf=np.zeros(K * K, np.int64),
        )


PlainCCB.name = "CCB (plain)"

SHARED = ("W", "t", "thr", "lthr", "inB", "Bi", "nBi", "lc")  # the state both versions keep alike


def problems():
    return {
        "arxiv": get_problem("arxiv"),
        "bt-10": get_problem("bt-10"),
        "copeland-5": PreferenceMatrix(COPELAND_5, name="copeland-5"),
        "case-b": get_problem("case-b"),  # Copeland winners 0 and 1, every other pair exactly 1/2
    }


def assert_same_state(fast, plain, where):
    a, b = fast.arrays, plain.arrays
    for name in SHARED:
        assert np.array_equal(a[name], b[name]), f"{where}: {name} differs"
    assert np.array_equal(fast._rng, plain._rng), f"{where}: the generators differ"


def incremental_invariants(algo):
    """What the incremental arrays must hold at the log-time of the last ``select``."""
    A = algo.arrays
    K = algo.K
    log_t = math.log(A["t"][0] + 1)
    up = (log_t >= A["thr"]).sum(1)
    low = (log_t <= A["lthr"]).sum(1)
    assert np.array_equal(A["up"], up) and np.array_equal(A["low"], low)
    assert A["mx"][0] == up.max() and A["mx"][1] == low.max()
    assert np.array_equal(A["hist"][0], np.bincount(up, minlength=K + 1))
    assert np.array_equal(A["nq"], (A["Bi"] & A["ucnt"]).sum(1))
    assert np.array_equal(A["nBi"], A["Bi"].sum(1))
    for h, items, keys, pos in ((0, "uitems", "ukeys", "upos"), (1, "litems", "lkeys", "lpos")):
        n = A["hsize"][h]
        it, ky, ps = A[items][:n], A[keys][:n], A[pos]
        assert np.array_equal(ps[it], np.arange(n)) and (ps >= 0).sum() == n
        assert all(ky[(s - 1) // 2] <= ky[s] for s in range(1, n)), "heap order"
    assert not (A["ucnt"] & (A["upos"] >= 0).reshape(K, K)).any(), "a counted pair waits in the thr heap"
    assert np.array_equal(A["lcnt"], (A["lpos"] >= 0).reshape(K, K))


@pytest.mark.parametrize(
    "name, steps, shift",
    [("arxiv", 12_000, 0), ("bt-10", 20_000, 4_000), ("copeland-5", 20_000, 4_000), ("case-b", 5_000, 0)],
)
def test_every_step_matches_the_plain_ccb(name, steps, shift):
    """Step by step from the start: the same pair, the same Copeland scores, B_t, B_t^i and L_C after
    every select, and the incremental arrays consistent. With ``shift``, the arms are relabelled
    every ``shift`` steps (the same outcomes go to both versions), so hypotheses are disproven: the
    run goes through resets (9A), rebuilt B^i (9B), subsampled B^i (9C) and line 10's direct tests."""
    P = problems()[name]
    K = P.K
    fast, plain = CCB(K, seed=11), PlainCCB(K, seed=11)
    env = new_rng(12)
    seen = dict(reset=0, rebuilt=0, subsampled=0, line10=0)
    lc, nBi = K, np.zeros(K, np.int64)
    for step in range(steps):
        if shift and step % shift == 0:
            perm = np.random.default_rng(step).permutation(K)
            p = P.p[np.ix_(perm, perm)]
        elif step == 0:
            p = P.p
        pair = fast.select()
        where = f"{name}, step {step}"
        assert pair == plain.select(), where
        assert np.array_equal(fast.arrays["up"], plain.arrays["up"]), f"{where}: up"
        assert np.array_equal(fast.arrays["low"], plain.arrays["low"]), f"{where}: low"
        assert_same_state(fast, plain, where)
        if step % 97 == 0:
            incremental_invariants(fast)
        A = fast.arrays
        seen["reset"] += A["lc"][0] == K and lc < K
        seen["rebuilt"] += (A["nBi"] > nBi).any()
        seen["subsampled"] += ((A["nBi"] < nBi) & (A["nBi"] > 0)).any()
        seen["line10"] += bool(A["Bi"][pair])
        lc, nBi = A["lc"][0], A["nBi"].copy()
        c, d = pair
        won = uniform(env) < p[c, d]
        fast.update(c, d, won)
        plain.update(c, d, won)
    assert fast.recommend() == plain.recommend()
    if shift:
        assert min(seen.values()) > 0, f"the comparison missed a branch of lines 9-10: {seen}"


@pytest.mark.parametrize(
    "name, horizon, chunk, shift",
    [("arxiv", 300_000, 50_000, False), ("bt-10", 300_000, 50_000, False), ("copeland-5", 300_000, 50_000, False),
     ("copeland-5", 100_000, 5_000, True), ("bt-10", 100_000, 5_000, True), ("case-b", 100_000, 25_000, False),
     ("mslr", 60_000, 10_000, False), ("copeland-500", 20_000, 10_000, False)],
)  # fmt: skip
def test_long_runs_match_the_plain_ccb(name, horizon, chunk, shift):
    """Compiled runs, compared chunk by chunk: the recommendations and regret at every checkpoint, the
    win counts, the hypothesis sets and the generator (any different pair would show in W). With
    ``shift``, each chunk relabels the arms anew."""
    P = PreferenceMatrix.load(MSLR, name="mslr") if name == "mslr" else problems().get(name) or get_problem(name)
    fast, plain = CCB(P.K, seed=5), PlainCCB(P.K, seed=5)
    perm = np.random.default_rng(5).permutation(P.K)
    for k in range(horizon // chunk):
        if shift:
            perm = np.random.default_rng(k).permutation(P.K)
        rf = run_one(fast, P, chunk, seed=100 + k, perm=perm)
        rp = run_one(plain, P, chunk, seed=100 + k, perm=perm)
        where = f"{name}, steps {k * chunk}-{(k + 1) * chunk}"
        assert np.array_equal(rf.recommended, rp.recommended), where
        assert np.array_equal(rf.regret, rp.regret), where
        assert_same_state(fast, plain, where)
    fast.select()  # bring the incremental counts to the current log-time
    incremental_invariants(fast)


def test_irregular_calls_match_the_plain_ccb():
    """The interactive object may be driven freely (e.g. replaying logged outcomes): several updates
    without a select, several selects without an update, duels it did not propose, self-duels."""
    P = problems()["copeland-5"]
    K = P.K
    fast, plain = CCB(K, seed=4), PlainCCB(K, seed=4)
    rng = np.random.default_rng(4)
    with_hypotheses = 0
    for step in range(30_000):
        for _ in range(rng.choice(3, p=[0.3, 0.6, 0.1])):  # 0, 1 or 2 selects
            assert fast.select() == plain.select(), f"step {step}"
        assert_same_state(fast, plain, f"step {step}")
        with_hypotheses += fast.arrays["nBi"].sum() > 0
        if rng.random() < 0.7:
            c, d = fast.select()
            assert plain.select() == (c, d), f"step {step}"
        else:
            c, d = (int(x) for x in rng.integers(K, size=2))
        won = rng.random() < P.p[c, d]
        fast.update(c, d, won)
        plain.update(c, d, won)
    fast.select()
    plain.select()
    assert_same_state(fast, plain, "the end")
    incremental_invariants(fast)
    assert with_hypotheses > 20_000, "most steps ran with B^i sets to test"


def test_a_saved_run_continues_identically():
    """The new arrays (heaps, counts, the played-pair list) travel with the state."""
    P = PreferenceMatrix(COPELAND_5, name="copeland-5")
    a = CCB(P.K, seed=3)
    run_one(a, P, 30_000, seed=1)
    b = CCB.from_state(a.state)
    ra, rb = run_one(a, P, 30_000, seed=2), run_one(b, P, 30_000, seed=2)
    assert np.array_equal(ra.recommended, rb.recommended) and np.array_equal(a.wins, b.wins)


def test_the_indexed_heap_keeps_the_smallest_key_on_top():
    rng = np.random.default_rng(0)
    n = 64
    items, keys, pos, size = np.zeros(n, np.int64), np.zeros(n), np.full(n, -1, np.int64), np.zeros(2, np.int64)
    live = {}
    for _ in range(3000):
        item = int(rng.integers(n))
        if rng.random() < 0.3:
            heap_remove(items, keys, pos, size, 1, item)
            live.pop(item, None)
        else:
            key = -np.inf if rng.random() < 0.1 else float(rng.integers(20))
            heap_set(items, keys, pos, size, 1, item, key)
            live[item] = key
        assert size[1] == len(live)
        if live:
            assert keys[0] == min(live.values()) and live[int(items[0])] == keys[0]
        assert sorted(int(x) for x in items[: size[1]]) == sorted(live)
