"""PBR and RankEl: slow step-by-step references (PBR: Busa-Fekete et al. ICML 2013 Algorithm 1 with SSCO;
RankEl: Busa-Fekete et al. AAAI 2014 Algorithm 1, Copeland ranking, discordant pairs), and the behaviour
the papers promise: PBR discards every arm that is not a Copeland winner, RankEl settles a whole ranking,
both explore then exploit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from irbandits.dueling import PBR, CopelandSAVAGE, RankEl
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import randint
from irbandits.simulate import run_one
from irbandits.synthetic import bradley_terry


def _shuffled(items, rng):
    items = list(items)
    for k in range(len(items) - 1, 0, -1):
        r = randint(rng, k + 1)
        items[k], items[r] = items[r], items[k]
    return items


def copeland_unique():
    """No Condorcet winner: arm 0 beats 1, 2, 3 and loses to 4; 1 -> 2 -> 3 -> 1 and all beat 4.
    Copeland scores 3, 2, 2, 2, 1: arm 0 is the unique Copeland winner."""
    P = np.full((5, 5), 0.5)
    for i, j in [(0, 1), (0, 2), (0, 3), (4, 0), (1, 2), (2, 3), (3, 1), (1, 4), (2, 4), (3, 4)]:
        P[i, j], P[j, i] = 0.7, 0.3
    return PreferenceMatrix(P, name="copeland-unique")


def copeland_two():
    """Arms 0 and 1 are the Copeland winners (3 wins each; 0 loses to 1, 1 loses to 2)."""
    return PreferenceMatrix([[0.5, 0.35, 0.7, 0.7, 0.7], [0.65, 0.5, 0.3, 0.7, 0.7], [0.3, 0.7, 0.5, 0.3, 0.3],
                             [0.3, 0.3, 0.7, 0.5, 0.7], [0.3, 0.3, 0.7, 0.3, 0.5]], name="copeland-two")


# ----- a slow rebuild of both listings --------------------------------------------------------------
class RacingReference:
    """Algorithm 1 of PBR (``rank=False``, SSCO with k = 1) or of RankEl (``rank=True``) in plain Python:
    A is a set of unordered pairs, each round visits A in a shuffled order, the bounds, the decided
    pairs and the Copeland-score intervals are recomputed from the win counts after each round."""

    def __init__(self, K, T, rng, rank=False, delta=None, n_max=None, eps=0.0, rho=0):
        self.K, self.T, self.rng, self.rank, self.eps, self.rho = K, T, rng, rank, eps, rho
        delta = 1.0 / T if delta is None else delta
        self.n_max = T if n_max is None else n_max
        self.log_term = math.log(2.0 * K * K * self.n_max / delta)
        self.W = np.zeros((K, K), np.int64)
        self.t, self.best = 0, None
        self.A = {(i, j) for i in range(K) for j in range(i + 1, K)}
        self.decided = {}  # (i, j) -> the arm that won it, or None for a tie (eps > 0 only)
        self.D = set()  # PBR's discarded arms
        self.round, self.pos = [], 0
        self.rounds = 0

    def select(self):
        if self.best is not None:
            return self.best, self.best
        if self.pos == len(self.round):
            self.round, self.pos = _shuffled(sorted(self.A), self.rng), 0
        return self.round[self.pos]

    def update(self, c, d, c_won):
        if c != d:
            self.W[(c, d) if c_won else (d, c)] += 1
        self.t += 1
        if self.best is not None:
            return
        if self.pos < len(self.round) and (min(c, d), max(c, d)) == self.round[self.pos]:
            self.pos += 1
            if self.pos == len(self.round):
                self.end_round()
        if self.best is None and self.t >= self.T:
            self.best = self.answer()

    def bounds(self):
        lo, hi = [0] * self.K, [self.K - 1] * self.K
        for (i, j), winner in self.decided.items():
            for a in (i, j):
                if winner == a:
                    lo[a] += 1
                else:
                    hi[a] -= 1
        return lo, hi

    def end_round(self):
        self.rounds += 1
        capped = False
        for i, j in self.round:  # the round's pairs are A at its start
            n = self.W[i, j] + self.W[j, i]
            mean, c = self.W[i, j] / n, math.sqrt(self.log_term / (2.0 * n))
            if mean - c > 0.5 - self.eps or mean + c < 0.5 + self.eps:
                self.decided[i, j] = i if mean > 0.5 else j if mean < 0.5 else None
                self.A.discard((i, j))
            elif n >= self.n_max:
                capped = True
        lo, hi = self.bounds()
        K = self.K
        if not self.rank:
            self.D |= {i for i in range(K) if any(lo[j] > hi[i] for j in range(K))}
            S = {i for i in range(K) if all(lo[i] > hi[j] for j in range(K) if j != i)}
            self.A = {(i, j) for i, j in self.A if not ({i, j} <= self.D | S)}
            stop = len(S) == 1 or len(self.D) == K - 1
            if len(S) == 1:
                assert self.answer() in S
        else:
            unsettled = [(i, j) for i in range(K) for j in range(i + 1, K)
                         if not (lo[i] > hi[j] or lo[j] > hi[i] or (lo[i] == hi[i] and lo[j] == hi[j]))]
            open_ = {a for pair in unsettled for a in pair}
            self.A = {(i, j) for i, j in self.A if i in open_ or j in open_}
            stop = len(unsettled) <= self.rho
        if stop or capped or not self.A:
            self.best = self.answer()

    def ranking(self):
        score = [(self.W[i] > self.W[:, i]).sum() for i in range(self.K)]
        return sorted(range(self.K), key=lambda i: -score[i])

    def answer(self):
        if self.rank:
            return self.ranking()[0]
        return [i for i in self.ranking() if i not in self.D][0]

    def recommend(self):
        return self.best if self.best is not None else self.answer()


CASES = [  # problem, horizon, steps followed, RankEl's extra parameters
    (copeland_unique(), 4_000, 6_000, {}),  # both stop on their own before the end
    (get_problem("bt-10"), 3_000, 4_000, {}),  # the horizon ends the exploration
    (get_problem("arxiv"), 100_000, 3_000, {"eps": 0.2, "n_max": 150}),  # a tie decided by eps; n_max stops PBR
    (get_problem("arithmetic"), 100_000, 50_000, {"rho": 10, "delta": 0.05}),
]


@pytest.mark.parametrize("rank", [False, True], ids=["PBR", "RankEl"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_follows_the_slow_reference(rank, case):
    problem, T, steps, extra = CASES[case]
    cls = RankEl if rank else PBR
    params = extra if rank else {k: v for k, v in extra.items() if k in ("delta", "n_max")}
    algo = cls(problem.K, seed=case, horizon=T, **params)
    ref = RacingReference(problem.K, T, algo._rng.copy(), rank=rank, **params)
    env = np.random.default_rng(case)
    for step in range(1, steps + 1):
        pair = algo.select()
        assert pair == ref.select(), f"step {step}: kernel {pair}"
        c_won = bool(env.random() < problem.p[pair])
        algo.update(*pair, c_won)
        ref.update(*pair, c_won)
        assert algo.recommend() == ref.recommend(), f"step {step}"
    assert np.array_equal(algo.wins, ref.W)
    assert np.array_equal(algo._rng, ref.rng)  # the same draws, to the last one
    assert ref.rounds >= 3 and ref.best is not None, "the case should reach several rounds and the stop"
    assert algo.absorbed
    if rank:
        assert algo.ranking().tolist() == ref.ranking()


def test_pbr_discards_every_arm_but_the_copeland_winner():
    """SSCO: on a problem without a Condorcet winner PBR discards the four other arms, stops well before
    its horizon and then only duels the Copeland winner with itself."""
    problem = copeland_unique()
    for run in range(10):
        perm = np.random.default_rng(run).permutation(problem.K)
        algo = PBR(problem.K, seed=run, horizon=50_000)
        r = run_one(algo, problem, 50_000, seed=100 + run, perm=perm, fast_forward=True)
        out = algo.arrays["out"]
        winner = int(np.flatnonzero(perm == 0)[0])  # the algorithm's index of the problem's arm 0
        assert 0 < r.absorbed_at < 25_000
        assert np.flatnonzero(~out).tolist() == [winner] and algo.recommend() == winner
        assert algo.select() == (winner, winner)


def test_pbr_with_two_copeland_winners_stops_when_no_pair_is_left():
    """Two Copeland winners never discard each other: PBR stops once A is empty, keeping both, and commits
    to one of them."""
    problem = copeland_two()
    assert problem.copeland_winners.tolist() == [0, 1]
    algo = PBR(problem.K, seed=3, horizon=50_000)
    r = run_one(algo, problem, 50_000, seed=3, fast_forward=True)
    info = algo.arrays["info"]
    assert 0 < r.absorbed_at < 50_000 and info[1] == 0, "stopped with A empty"
    assert np.flatnonzero(~algo.arrays["out"]).tolist() == [0, 1]
    assert algo.recommend() in (0, 1)


def test_rankel_recovers_a_bradley_terry_ranking_and_pays_more_than_pbr():
    """RankEl settles the order of every pair of arms: on a Bradley-Terry problem with clear gaps it stops
    with the true ranking; ranking all arms costs it more duels, and more regret, than PBR's search for the top."""
    problem = bradley_terry(1.6 ** -np.arange(6.0), name="bt-6")
    truth = list(range(6))
    stops, regret = {"PBR": [], "RankEl": []}, {"PBR": [], "RankEl": []}
    for run in range(10):
        perm = np.random.default_rng(run).permutation(problem.K)
        for cls in (PBR, RankEl):
            algo = cls(problem.K, seed=run, horizon=100_000)
            r = run_one(algo, problem, 100_000, seed=200 + run, perm=perm, fast_forward=True)
            assert 0 < r.absorbed_at < 100_000, f"{cls.name} did not stop on its own"
            stops[cls.name].append(r.absorbed_at)
            regret[cls.name].append(r.regret[-1])
            if cls is RankEl:
                assert perm[algo.ranking()].tolist() == truth
                assert algo.arrays["info"][6] == 0, "no pair of arms left unsettled"
    assert np.mean(stops["RankEl"]) > 1.1 * np.mean(stops["PBR"])  # absorbed_at: to the 1,024-step chunk
    assert np.mean(regret["RankEl"]) > 1.5 * np.mean(regret["PBR"])


def test_rankel_top_of_the_ranking_of_bt10_at_the_horizon():
    """bt-10 has a pair 0.005 from one half (arms 0 and 3), which 10^5 duels cannot settle: RankEl is still
    exploring at its horizon, and commits to the top of its empirical ranking, whose first three arms are
    the true top three."""
    problem = get_problem("bt-10")
    truth = np.argsort(-problem.copeland_scores, kind="stable")[:3].tolist()
    for run in range(5):
        algo = RankEl(problem.K, seed=run, horizon=100_000)
        run_one(algo, problem, 99_999, seed=run)
        assert not algo.absorbed
        algo.update(*algo.select(), True)
        assert algo.absorbed and algo.ranking()[:3].tolist() == truth
        assert algo.select() == (truth[0], truth[0])


def test_rho_and_eps_end_rankel_sooner():
    """Tolerating unsettled pairs (rho) or indifference (eps) stops RankEl earlier; with eps the exactly tied
    pair of arxiv is decided, without it RankEl runs to its horizon there."""
    def stop(problem, **params):
        algo = RankEl(problem.K, seed=1, horizon=400_000, **params)
        return run_one(algo, problem, 400_000, seed=1, fast_forward=True).absorbed_at

    arith = get_problem("arithmetic")
    assert 0 < stop(arith, rho=10) < stop(arith)
    arxiv = get_problem("arxiv")
    assert stop(arxiv) == 0 and 0 < stop(arxiv, eps=0.03)


def test_pbr_stops_like_copeland_savage_and_both_need_the_horizon():
    """PBR with k = 1 and Copeland SAVAGE race the same Copeland bounds (PBR once per round): their stopping
    times on arithmetic are within a factor of two of each other."""
    problem = get_problem("arithmetic")
    pbr = run_one(PBR(problem.K, seed=2, horizon=200_000), problem, 200_000, seed=2, fast_forward=True).absorbed_at
    sav = run_one(CopelandSAVAGE(problem.K, seed=2, horizon=200_000), problem, 200_000, seed=2,
                  fast_forward=True).absorbed_at
    assert 0 < pbr < 2 * sav and 0 < sav < 2 * pbr
    for cls in (PBR, RankEl):
        with pytest.raises(IrbanditsError, match="needs the horizon T"):
            cls(5)
        assert cls(5, delta=0.01).arrays["info"][5] == 100  # n_max = 1 / delta without a horizon
