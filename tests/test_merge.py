"""mergeRUCB and MergeDTS: a from-scratch reference, the indicator trick, the batch machinery,
and the behaviour the papers report on MSLR-Navigational."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import DATA
from scipy.special import betainc
from scipy.stats import chi2_contingency

from irbandits.dueling import MergeDTS, MergeRUCB
from irbandits.dueling import batches as bt
from irbandits.dueling.bounds import pick, threshold
from irbandits.dueling.mergedts import sample_tournament
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import beta, new_rng, uniform
from irbandits.simulate import run_one
from irbandits.synthetic import random_bradley_terry

MSLR = DATA / "preference-matrices" / "mslr-navigational.txt"


# ----- a slow reference that recomputes everything from scratch every step ---------------------
class Reference:
    """Algorithm 4 (mergeRUCB) or Algorithms 1-3 (MergeDTS) in plain Python, with the spec's
    decisions, drawing from ``irbandits.rng`` in the same order as the kernels.

    Only MergeDTS merges a one-arm batch into the next (Algorithm 1, lines 14-15); Algorithm 4
    has no such step, so in mergeRUCB the lone arm duels itself until the stage ends, which it
    also does when stalled (a lone arm, and K / 2^s out of reach unless every batch of two or
    more arms sheds some); mergeRUCB's new batches have at least two arms (line 13)."""

    def __init__(self, kind: str, K: int, M: int, alpha: float, C: float, seed: int):
        self.kind, self.K, self.M, self.alpha, self.C = kind, K, M, alpha, C
        nb = -(-K // M) if kind == "MergeDTS" else max(1, K // M)
        self.batches = [list(range(b * M, (b + 1) * M)) for b in range(nb - 1)]
        self.batches.append(list(range((nb - 1) * M, K)))
        self.W = np.zeros((K, K), np.int64)
        self.t, self.stage = 0, 1
        self.rng = new_rng(seed)
        self.events = dict(pruned=0, merged=0, stages=0, lone=0, stalled=0)

    def U(self, log_t: float) -> np.ndarray:
        N = self.W + self.W.T
        with np.errstate(divide="ignore", invalid="ignore"):
            U = np.where(N > 0, self.W / np.maximum(N, 1) + np.sqrt(self.alpha * log_t / np.maximum(N, 1)), 2.0)
        np.fill_diagonal(U, 0.5)
        return U

    def q(self, i: int, j: int) -> float:
        """P(Beta(w_ij + 1, w_ji + 1) > 0.5), computed afresh."""
        if self.W[i, j] == self.W[j, i]:
            return 0.5
        return 1.0 - betainc(self.W[i, j] + 1.0, self.W[j, i] + 1.0, 0.5)

    def select(self) -> tuple[int, int]:
        step = self.t + 1
        log_t = math.log(step + self.C)
        U = self.U(log_t)
        if len(self.batches) == 1 and len(self.batches[0]) == 1:
            a = self.batches[0][0]
            return a, a
        m = step % len(self.batches)
        B = self.batches[m]
        p = 0
        while p < len(B):  # naive pruning, one arm at a time, in batch order
            if any(U[B[p], j] < 0.5 for j in B if j != B[p]):
                del B[p]
                self.events["pruned"] += 1
            else:
                p += 1
        if self.kind == "MergeDTS" and len(self.batches) > 1 and len(B) == 1:
            nxt = (m + 1) % len(self.batches)
            self.batches[nxt] = B + self.batches[nxt]
            del self.batches[m]
            m = m if m < len(self.batches) else 0
            self.events["merged"] += 1
        B = self.batches[m]
        if len(B) == 1:
            self.events["lone"] += len(self.batches) > 1  # a lone arm while other batches remain
            return B[0], B[0]
        return self.choose_mergedts(B) if self.kind == "MergeDTS" else self.choose_mergerucb(B, U)

    def choose_mergerucb(self, B, U):
        c = int(pick(np.array(B), len(B), self.rng))
        vals = [U[j, c] for j in B if j != c]
        others = [j for j in B if j != c]
        ties = [j for j, v in zip(others, vals) if v == max(vals)]
        return c, int(pick(np.array(ties), len(ties), self.rng))

    def choose_mergedts(self, B):
        n = len(B)
        kappa = [0] * n
        for a in range(n):
            for b in range(a + 1, n):
                i, j = B[a], B[b]
                low_wins = uniform(self.rng) < self.q(min(i, j), max(i, j))
                if low_wins == (i < j):
                    kappa[a] += 1
                else:
                    kappa[b] += 1
        ties = [B[a] for a in range(n) if kappa[a] == max(kappa)]
        c = int(pick(np.array(ties), len(ties), self.rng))
        phi = [1.0 if j == c else beta(self.rng, self.W[j, c] + 1.0, self.W[c, j] + 1.0) for j in B]
        ties = [j for j, v in zip(B, phi) if v == min(phi)]
        return c, int(pick(np.array(ties), len(ties), self.rng))

    def update(self, c: int, d: int, c_won: bool) -> None:
        if c != d:
            self.W[(c, d) if c_won else (d, c)] += 1
        self.t += 1
        n = sum(map(len, self.batches))
        sizes = [len(b) for b in self.batches]
        stalled = False
        if self.kind == "mergeRUCB" and len(sizes) > 1 and 1 in sizes:
            spare = [size - 1 for size in sizes if size > 1]
            # every batch down to one arm, or K / 2^s needs even the batch with the fewest spare arms
            stalled = not spare or len(sizes) + min(spare) > self.K / 2**self.stage
            self.events["stalled"] += stalled and n > self.K / 2**self.stage
        if stalled or n <= self.K / 2**self.stage:
            order = sorted(range(len(self.batches)), key=lambda b: len(self.batches[b]))
            listed, lo, hi = [], 0, len(order) - 1
            while lo <= hi:  # largest, smallest, second largest, second smallest, ...
                listed.append(order[hi])
                hi -= 1
                if lo <= hi:
                    listed.append(order[lo])
                    lo += 1
            arms = [a for b in listed for a in self.batches[b]]
            k = max(1, math.floor(n / self.M + 0.5))
            if self.kind == "mergeRUCB":
                k = max(1, min(k, n // 2))  # no one-arm batch
            sizes = [n // k + (1 if b < n % k else 0) for b in range(k)]
            cuts = np.cumsum([0] + sizes)
            self.batches = [arms[cuts[b]:cuts[b + 1]] for b in range(k)]
            self.stage += 1
            self.events["stages"] += 1


def batches_of(algo) -> list[list[int]]:
    st = dict(zip(algo._names, algo._st))
    return [bt.batch_members(st["arms"], st["bstart"], b).tolist() for b in range(st["info"][0])]


@pytest.mark.parametrize("kind", ["mergeRUCB", "MergeDTS"])
@pytest.mark.parametrize("problem", ["bt-10", "bt-40"])
def test_kernels_match_the_reference(kind, problem):
    P = get_problem("bt-10") if problem == "bt-10" else random_bradley_terry(40, seed=3)
    M, alpha, C = 3, 0.3, 1.0  # small batches and bounds so that pruning, merging and stages happen
    cls = MergeDTS if kind == "MergeDTS" else MergeRUCB
    algo = cls(P.K, seed=7, horizon=5000, alpha=alpha, M=M, C=C)
    ref = Reference(kind, P.K, M, alpha, C, seed=7)
    env = np.random.default_rng(1)
    for step in range(5000):
        pair = algo.select()
        assert pair == ref.select(), f"step {step + 1}"
        c_won = bool(env.random() < P.p[pair])
        algo.update(*pair, c_won)
        ref.update(*pair, c_won)
        assert batches_of(algo) == ref.batches, f"step {step + 1}"
        assert algo._st[algo._names.index("info")][2] == ref.stage
    assert np.array_equal(algo.wins, ref.W)
    assert np.array_equal(algo._rng, ref.rng)
    assert ref.events["pruned"] and ref.events["stages"] >= 2, ref.events
    if kind == "MergeDTS":
        assert ref.events["merged"] and not ref.events["lone"], ref.events
    else:  # a one-arm batch was played (a self-duel) before its stage ended, never merged
        assert ref.events["lone"] and ref.events["stalled"] and not ref.events["merged"], ref.events


# ----- the indicator trick -----------------------------------------------------------------------
def test_indicator_trick_matches_beta_sampling():
    """First-arm frequencies with one uniform per pair equal those of sampling the Betas."""
    K = 7
    W = np.random.default_rng(5).integers(0, 8, size=(K, K))
    np.fill_diagonal(W, 0)
    batch = np.array([4, 0, 6, 2, 5], np.int64)
    q = np.full((K, K), 0.5)
    for i in range(K):
        for j in range(i + 1, K):
            q[i, j] = 0.5 if W[i, j] == W[j, i] else 1 - betainc(W[i, j] + 1.0, W[j, i] + 1.0, 0.5)
    draws = 20_000
    rng, kappa, ties = new_rng(3), np.zeros(K, np.int64), np.zeros(K, np.int64)
    trick = [int(sample_tournament(q, batch, 0, len(batch), kappa, ties, rng)) for _ in range(draws)]
    gen = np.random.default_rng(4)
    naive = []
    for _ in range(draws):
        score = np.zeros(len(batch))
        for a in range(len(batch)):
            for b in range(a + 1, len(batch)):
                i, j = batch[a], batch[b]
                theta = gen.beta(W[i, j] + 1, W[j, i] + 1)
                score[a if theta > 0.5 else b] += 1
        best = np.flatnonzero(score == score.max())
        naive.append(int(batch[gen.choice(best)]))
    table = np.array([[trick.count(a) for a in batch], [naive.count(a) for a in batch]])
    assert (table[0] > 100).sum() >= 3, table  # a test with several plausible winners
    assert chi2_contingency(table)[1] > 1e-3, table


# ----- batch machinery on hand-made cases ------------------------------------------------------
def layout(K: int, batches: list[list[int]], M: int, W: np.ndarray | None = None, alpha: float = 1.0):
    arms, bstart, where, info, thr, rowmax, work = bt.new_batches(K, M)
    alive = [a for b in batches for a in b]
    arms[:] = alive + [a for a in range(K) if a not in alive]
    bstart[:] = 0
    bstart[1:len(batches) + 1] = np.cumsum([len(b) for b in batches])
    where[:] = -1
    for b, members in enumerate(batches):
        where[members] = b
    info[:] = [len(batches), len(alive), 1, M]
    if W is not None:
        for i in range(K):
            for j in range(K):
                thr[i, j] = threshold(W, i, j, alpha)
    for b in range(len(batches)):
        bt.refresh_batch(thr, rowmax, arms, bstart, where, b)
    return arms, bstart, where, info, thr, rowmax, work


def members(arms, bstart, info):
    return [bt.batch_members(arms, bstart, b).tolist() for b in range(info[0])]


@pytest.mark.parametrize("M", [4, 8, 16])
def test_repartition_keeps_sizes_in_range(M):
    gen = np.random.default_rng(M)
    for _ in range(50):
        sizes = gen.integers(1, int(1.5 * M) + 2, size=gen.integers(1, 12))
        if sizes.sum() < M // 2:
            continue
        K = int(sizes.sum()) + 5
        perm = gen.permutation(K)
        cuts = np.cumsum([0, *sizes])
        before = [perm[cuts[b]:cuts[b + 1]].tolist() for b in range(len(sizes))]
        arms, bstart, where, info, thr, rowmax, work = layout(K, before, M)
        bt.repartition(thr, rowmax, arms, bstart, where, info, work)
        after = members(arms, bstart, info)
        assert sorted(a for b in after for a in b) == sorted(a for b in before for a in b)
        assert all(0.5 * M <= len(b) <= 1.5 * M for b in after), (before, after)
        largest = max(range(len(before)), key=lambda b: (len(before[b]), b))
        assert after[0][: len(before[largest])] == before[largest][: len(after[0])]
        for b, arms_b in enumerate(after):
            assert all(where[a] == b for a in arms_b)


def test_repartition_pairs_smallest_with_largest():
    arms, bstart, where, info, thr, rowmax, work = layout(20, [[0], [1, 2, 3, 4], [5, 6], [7, 8, 9]], 5)
    bt.repartition(thr, rowmax, arms, bstart, where, info, work)
    assert members(arms, bstart, info) == [[1, 2, 3, 4, 0], [7, 8, 9, 5, 6]]


def test_a_one_arm_batch_merges_into_the_next():
    arms, bstart, where, info, thr, rowmax, work = layout(6, [[0, 1, 2], [3], [4, 5]], 3)
    assert bt.merge_into_next(thr, rowmax, arms, bstart, where, info, 1) == 1
    assert members(arms, bstart, info) == [[0, 1, 2], [3, 4, 5]]
    assert where.tolist() == [0, 0, 0, 1, 1, 1]
    arms, bstart, where, info, thr, rowmax, work = layout(5, [[0, 1], [2, 3], [4]], 2)
    assert bt.merge_into_next(thr, rowmax, arms, bstart, where, info, 2) == 0
    assert members(arms, bstart, info) == [[4, 0, 1], [2, 3]]


def test_current_batch_merges_a_pruned_batch():
    W = np.zeros((4, 4), np.int64)
    W[0, 1] = 50  # arm 0 beats arm 1 confidently
    arms, bstart, where, info, thr, rowmax, work = layout(4, [[0, 1], [2, 3]], 2, W)
    assert bt.current_batch(2, 1.0, thr, rowmax, arms, bstart, where, info) == 0  # step 2 -> batch 0
    assert members(arms, bstart, info) == [[0, 2, 3]] and where.tolist() == [0, -1, 0, 0]


def test_current_batch_without_merging_keeps_a_one_arm_batch():
    """mergeRUCB (Algorithm 4 has no merge step): the pruned batch stays, with its one arm."""
    W = np.zeros((4, 4), np.int64)
    W[0, 1] = 50
    arms, bstart, where, info, thr, rowmax, work = layout(4, [[0, 1], [2, 3]], 2, W)
    assert bt.current_batch(2, 1.0, thr, rowmax, arms, bstart, where, info, False) == 0
    assert members(arms, bstart, info) == [[0], [2, 3]] and where.tolist() == [0, -1, 1, 1]


def test_mergerucb_lone_arm_duels_itself_until_the_stage_ends():
    """Algorithm 4: a batch pruned to one arm is not merged; on its turns (t mod b_s) its arm is
    compared with itself, and batches are recombined only once n_alive <= K / 2^s. Here the other
    two batches can reach K / 2 = 6 without each other, so the stage is not stalled."""
    algo = MergeRUCB(12, seed=0, M=4, C=1.0, alpha=1.0)  # batches [0..3], [4..7], [8..11]
    for j in (1, 2, 3):
        for _ in range(60):
            algo.update(0, j, True)  # arm 0 beats the rest of its batch with confidence; t = 180

    def play(steps: int) -> list[int]:
        """``steps`` steps (c always wins), each pair from batch t mod b_s; returns the self-duels."""
        duels = []
        for _ in range(steps):
            m = (int(algo._st[algo._names.index("t")][0]) + 1) % len(batches_of(algo))
            batch = batches_of(algo)[m]
            c, d = algo.select()
            assert c in batch and d in batch
            if c == d:
                duels.append(c)
            algo.update(c, d, True)
        return duels

    assert play(9) == [0, 0, 0]  # steps 181-189: batches 1, 2, 0, 1, 2, 0, ...: arm 0 on its turns
    assert batches_of(algo) == [[0], [4, 5, 6, 7], [8, 9, 10, 11]]  # still one arm, not merged
    assert algo._st[algo._names.index("info")][2] == 1
    for j in (5, 6, 7):
        for _ in range(60):
            algo.update(4, j, True)  # t = 369; batch 1's next turn prunes it to [4]: 6 arms = K / 2
    assert play(1) == [4]  # step 370 works on batch 1, pruned to [4]: 6 arms = K / 2 ...
    assert batches_of(algo) == [[8, 9, 10], [11, 0, 4]]  # ... a new stage: largest, smallest, ...
    assert algo._st[algo._names.index("info")][2] == 2


def test_mergerucb_recombines_lone_arms_at_once_when_stalled():
    """K = 6, M = 2, the lower-numbered arm always wins. Each time a batch is pruned to one arm the
    stage is stalled (K / 2^s cannot be reached unless every other batch sheds an arm), so it ends
    at the end of that step; new batches never hold one arm (Algorithm 4, line 13). Before the
    stall rule [[4, 0], [2]] was cut at stage 1 and its lone arm 2 dueled itself."""
    algo = MergeRUCB(6, seed=0, M=2, C=1.0, alpha=0.5)
    seen = []
    for _ in range(2000):
        c, d = algo.select()
        algo.update(c, d, c < d)
        if not seen or batches_of(algo) != seen[-1]:
            seen.append(batches_of(algo))
    assert seen == [
        [[0, 1], [2, 3], [4, 5]],
        [[4, 5, 2], [0, 1]],  # [2] alone: stage 2, the 5 arms in 2 batches, not 3
        [[4, 5], [2, 0]],  # [0] alone beside [4, 5, 2]: stage 3
        [[2, 0, 4]],  # [4] alone beside [2, 0]: stage 4, one batch of 3
        [[0, 4]],
        [[0]],
    ]


@pytest.mark.parametrize("cls", [MergeRUCB, MergeDTS])
def test_the_last_arm_duels_itself(cls):
    algo = cls(8, seed=1, C=1.0, alpha=0.5, M=2)
    env = np.random.default_rng(0)
    P = get_problem("arithmetic").p
    for _ in range(20_000):
        c, d = algo.select()
        algo.update(c, d, env.random() < P[c, d])
    assert batches_of(algo) == [[0]]  # the Condorcet winner
    rng = algo._rng.copy()
    assert algo.select() == (0, 0) and np.array_equal(rng, algo._rng)  # no random draws
    assert algo.recommend() == 0


def test_pruning_removes_exactly_the_beaten_arms():
    K, alpha, log_t = 6, 1.0, math.log(10.0)
    W = np.zeros((K, K), np.int64)
    W[0, 1], W[1, 0] = 40, 2  # 0 beats 1 with confidence
    W[3, 4], W[4, 3] = 30, 1  # 3 beats 4 with confidence
    W[2, 5], W[5, 2] = 6, 4  # too close to call
    W[0, 2], W[2, 0] = 3, 2
    arms, bstart, where, info, thr, rowmax, work = layout(K, [[0, 1, 2, 3, 4, 5]], 4, W, alpha)
    N = W + W.T
    U = np.where(N > 0, W / np.maximum(N, 1) + np.sqrt(alpha * log_t / np.maximum(N, 1)), 2.0)
    beaten = {i for i in range(K) for j in range(K) if i != j and U[i, j] < 0.5}
    assert beaten == {1, 4}
    assert bt.prune(thr, rowmax, arms, bstart, where, info, 0, log_t) == 2
    assert members(arms, bstart, info) == [[0, 2, 3, 5]]
    assert info[1] == 4 and where[1] == where[4] == -1


def test_pruning_is_one_arm_at_a_time_in_batch_order():
    """a is beaten only by b, b only by c: order [b, a, c] keeps a, order [a, b, c] does not."""
    a, b, c = 0, 1, 2
    W = np.zeros((3, 3), np.int64)
    W[b, a], W[c, b] = 40, 40
    for order, left in (([b, a, c], [a, c]), ([a, b, c], [c])):
        arms, bstart, where, info, thr, rowmax, work = layout(3, [order], 4, W)
        bt.prune(thr, rowmax, arms, bstart, where, info, 0, 1.0)
        assert members(arms, bstart, info) == [left]


def test_mergedts_needs_a_horizon_epsilon_or_c():
    with pytest.raises(IrbanditsError, match="horizon"):
        MergeDTS(10)
    assert MergeDTS(10, epsilon=1e-6)._st[2][1] == MergeDTS(10, horizon=10**6)._st[2][1]
    assert MergeDTS(10, C=5.0)._st[2][1] == 5.0


def test_initial_batches_follow_each_listing():
    assert batches_of(MergeDTS(10, C=1.0, M=4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]  # ceil(K/M)
    assert batches_of(MergeRUCB(10, M=4)) == [[0, 1, 2, 3], [4, 5, 6, 7, 8, 9]]  # floor(K/M)


# ----- behaviour from the paper ----------------------------------------------------------------
@pytest.mark.skipif(not MSLR.exists(), reason="needs ../shared/data")
@pytest.mark.parametrize("cls", [MergeDTS, MergeRUCB])
def test_tuned_finds_the_mslr_condorcet_winner(cls):
    P = PreferenceMatrix.load(MSLR)
    assert P.condorcet_winner == 109
    found = 0
    for run in range(3):
        perm = np.random.default_rng(run).permutation(P.K)
        algo = cls.tuned(P.K, seed=run, horizon=10**6)
        found += bool(run_one(algo, P, 10**6, seed=100 + run, perm=perm).correct[-1])
    assert found >= 2, f"{cls.name} found MSLR's Condorcet winner in {found} of 3 runs"
