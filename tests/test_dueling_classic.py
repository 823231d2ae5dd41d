"""IF, BTM, SAVAGE, Doubler and Sparring: slow step-by-step references, each one's special behaviour,
Copeland winners, and the commitment of the explore-then-exploit algorithms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from irbandits.dueling import BTM, IF, CondorcetSAVAGE, CopelandSAVAGE, Doubler, SparringEXP3, SparringTS, SparringUCB
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import randint
from irbandits.simulate import run_one


def _pick(items, rng):
    return items[0] if len(items) == 1 else items[randint(rng, len(items))]


def _shuffled(items, rng):
    items = list(items)
    for k in range(len(items) - 1, 0, -1):
        r = randint(rng, k + 1)
        items[k], items[r] = items[r], items[k]
    return items


def _follow(algo, ref, P, steps, env_seed):
    env = np.random.default_rng(env_seed)
    for step in range(1, steps + 1):
        pair = algo.select()
        assert pair == ref.select(), f"step {step}: kernel {pair}"
        c_won = bool(env.random() < P.p[pair])
        algo.update(*pair, c_won)
        ref.update(*pair, c_won)
    assert np.array_equal(algo.wins, ref.W)
    assert np.array_equal(algo._rng, ref.rng)  # the same number of draws, to the last one


# ----- Interleaved Filter ------------------------------------------------------------------------
class IFReference:
    """Yue et al. 2012 Algorithm 1 in plain Python. The incumbent's tallies since the last reset are
    rebuilt each round from the win counts, as W minus the snapshot taken at the reset."""

    def __init__(self, K, delta, rng):
        self.K, self.c2, self.rng = K, 4 * math.log(1 / delta), rng
        self.W = np.zeros((K, K), np.int64)
        self.best, self.queue, self.done = None, [], False
        self.events = dict(confident=0, switches=0, pruned=0)

    def new_round(self):
        self.queue = _shuffled(sorted(self.cands), self.rng)
        self.done = not self.queue

    def select(self):
        if self.best is None:
            self.best = randint(self.rng, self.K)
            self.cands = set(range(self.K)) - {self.best}
            self.snapshot = self.W.copy()
            self.new_round()
        return (self.best, self.best) if self.done else (self.best, self.queue[0])

    def update(self, c, d, c_won):
        if c != d:
            self.W[(c, d) if c_won else (d, c)] += 1
        if self.done:
            return
        self.queue.pop(0)
        if self.queue:
            return
        b, D = self.best, self.W - self.snapshot  # duels since the reset
        t = D[b, next(iter(self.cands))] + D[next(iter(self.cands)), b]
        P = {j: D[b, j] / t for j in self.cands}
        assert all(D[b, j] + D[j, b] == t for j in self.cands)  # one duel per arm per round
        width = math.sqrt(self.c2 / t)
        beaten = {j for j in self.cands if P[j] - width > 0.5}
        self.events["confident"] += len(beaten)
        self.cands -= beaten
        better = [j for j in sorted(self.cands) if P[j] + width < 0.5]
        if better:
            low = min(P[j] for j in better)
            new = _pick([j for j in better if P[j] == low], self.rng)
            pruned = {j for j in self.cands if P[j] > 0.5}
            self.events["switches"] += 1
            self.events["pruned"] += len(pruned)
            self.cands -= pruned | {new}
            self.best, self.snapshot = new, self.W.copy()
        self.new_round()


@pytest.mark.parametrize("problem, seed", [("arithmetic", 0), ("bt-10", 3)])
def test_if_follows_a_slow_reference(problem, seed):
    """Every step's (c, d) equal for 3000 steps, through confident removals, two switches of the
    incumbent with IF pruning, and the committed phase (delta = 0.5 makes all happen early)."""
    P = get_problem(problem)
    algo = IF(P.K, seed=seed, delta=0.5)
    ref = IFReference(P.K, 0.5, algo._rng.copy())
    _follow(algo, ref, P, 3000, env_seed=seed + 1)
    ev = ref.events
    assert ev["confident"] and ev["switches"] >= 2 and ev["pruned"] and ref.done, ev
    assert algo.recommend() == P.condorcet_winner


def test_if_prunes_when_a_new_incumbent_takes_over():
    """Arm x beats the incumbent with confidence after 74 rounds (c_t = sqrt(4 ln 100 / t) < 1/2):
    at that round's end v (beaten with confidence) leaves W, then y, beaten 60 % of the time
    without confidence, is pruned, x takes over, and z (which beat the incumbent 60 % of the time)
    is all that is left, with fresh tallies."""
    algo = IF(5, seed=0, horizon=10**6, delta=0.01)
    b, _ = algo.select()
    x, y, z, v = (j for j in range(5) if j != b)
    incumbent_wins = {x: lambda r: False, y: lambda r: r % 5 < 3, z: lambda r: r % 5 < 2, v: lambda r: True}
    rounds = {j: 0 for j in incumbent_wins}
    while min(rounds.values()) < 74:
        c, d = algo.select()
        assert c == b and d in incumbent_wins
        algo.update(c, d, incumbent_wins[d](rounds[d]))
        rounds[d] += 1
        st = dict(zip(algo._names, algo._st))
        if min(rounds.values()) < 74:
            assert st["info"][0] == b and st["inW"].sum() == 4
    st = dict(zip(algo._names, algo._st))
    assert algo.recommend() == x and st["info"][0] == x
    assert np.flatnonzero(st["inW"]).tolist() == [z]
    assert st["iwins"].sum() == 0 and st["info"][3] == 0
    assert algo.select() == (x, z)


# ----- Beat the Mean -----------------------------------------------------------------------------
class BTMReference:
    """Yue & Joachims 2011 Algorithm 1 in plain Python: every n_b, w_b and P_b recomputed each step
    from the tallies of duels between arms still in the working set (the arm under test first)."""

    def __init__(self, K, gamma, delta, rng):
        self.K, self.rng = K, rng
        self.c = lambda n: 1.0 if n == 0 else 3 * gamma**2 * math.sqrt(math.log(1 / delta) / n)
        self.W = np.zeros((K, K), np.int64)
        self.BN, self.BW = np.zeros((K, K), np.int64), np.zeros((K, K), np.int64)
        self.work, self.best, self.removed = set(range(K)), None, 0

    def tallies(self):
        cols = sorted(self.work)
        n = {b: self.BN[b, cols].sum() for b in self.work}
        w = {b: self.BW[b, cols].sum() for b in self.work}
        return n, w, {b: w[b] / n[b] if n[b] else 0.5 for b in self.work}

    def select(self):
        if self.best is not None:
            return self.best, self.best
        n, _, _ = self.tallies()
        fewest = min(n.values())
        b = _pick([a for a in sorted(self.work) if n[a] == fewest], self.rng)
        others = [a for a in sorted(self.work) if a != b]
        return b, others[randint(self.rng, len(others))]

    def update(self, c, d, c_won):
        if c != d:
            self.W[(c, d) if c_won else (d, c)] += 1
        if self.best is not None:
            return
        self.BN[c, d] += 1
        self.BW[c, d] += c_won
        n, _, P = self.tallies()
        width = self.c(min(n.values()))
        if min(P.values()) + width <= max(P.values()) - width:
            self.work.remove(min(sorted(self.work), key=P.get))
            self.removed += 1
        if len(self.work) == 1:
            _, _, P = self.tallies()
            self.best = max(sorted(self.work), key=P.get)


def test_btm_follows_a_slow_reference():
    """Every step's (c, d) equal for 6000 steps, through removals (their comparisons forgotten) down
    to the committed arm."""
    P = get_problem("bt-10")
    algo = BTM(P.K, seed=5, delta=0.5)
    ref = BTMReference(P.K, 1.0, 0.5, algo._rng.copy())
    _follow(algo, ref, P, 6000, env_seed=6)
    assert ref.removed == P.K - 1 and ref.best == algo.recommend() == P.condorcet_winner


# ----- SAVAGE -------------------------------------------------------------------------------------
def copeland_5():
    """No Condorcet winner: arm 0 beats 1, 2, 3 and loses to 4; 1 -> 2 -> 3 -> 1 cycle and all
    beat 4. Copeland scores 3, 2, 2, 2, 1: arm 0 is the unique Copeland winner."""
    P = np.full((5, 5), 0.5)
    for i, j in [(0, 1), (0, 2), (0, 3), (4, 0), (1, 2), (2, 3), (3, 1), (1, 4), (2, 4), (3, 4)]:
        P[i, j], P[j, i] = 0.65, 0.35
    return PreferenceMatrix(P, name="copeland-5")


def _found(cls, problem, horizon, runs=20):
    found = 0
    for run in range(runs):
        perm = np.random.default_rng(run).permutation(problem.K)
        algo = cls(problem.K, seed=run, horizon=horizon)
        found += bool(run_one(algo, problem, horizon, seed=100 + run, perm=perm).correct[-1])
    return found


def test_copeland_savage_finds_the_copeland_winner_without_a_condorcet_winner():
    problem = copeland_5()
    assert problem.condorcet_winner is None and problem.copeland_winners.tolist() == [0]
    assert _found(CopelandSAVAGE, problem, 20_000) >= 19


def test_condorcet_savage_finds_a_winner_hidden_by_a_cycle():
    """thesis 2.1.2: a thin Condorcet winner (0.51) over a 3-cycle whose arm 1 is the Borda winner."""
    assert _found(CondorcetSAVAGE, get_problem("thesis-4arm"), 20_000) >= 19


@pytest.mark.parametrize("cls", [IF, BTM, CondorcetSAVAGE, CopelandSAVAGE])
def test_explore_then_exploit_commits_and_is_absorbed(cls):
    """Past its horizon (or once exploration ends) an algorithm duels its committed arm with itself,
    whatever the outcomes, and declares the state absorbed; before that it does not."""
    P = get_problem("arxiv")
    algo = cls(P.K, seed=1, horizon=300)
    run_one(algo, P, 100, seed=1)
    assert not cls._absorbed(algo._st)
    run_one(algo, P, 200, seed=2)
    assert cls._absorbed(algo._st)
    arm = algo.recommend()
    for won in [True, False, True]:
        assert algo.select() == (arm, arm)
        algo.update(arm, arm, won)
        assert algo.recommend() == arm and cls._absorbed(algo._st)


@pytest.mark.parametrize("cls", [IF, BTM, CondorcetSAVAGE, CopelandSAVAGE, SparringEXP3])
def test_horizon_dependent_algorithms_need_the_horizon(cls):
    with pytest.raises(IrbanditsError, match="needs the horizon T"):
        cls(5)


# ----- Doubler ------------------------------------------------------------------------------------
def test_doubler_epochs_double_and_play_last_epochs_right_arms_on_the_left():
    P = get_problem("bt-10")
    algo, env = Doubler(P.K, seed=2), np.random.default_rng(3)
    epochs, pairs = [], []
    for _ in range(2 + 4 + 8 + 16 + 32 + 64):
        c, d = algo.select()
        epochs.append(int(algo.state["arrays"]["info"][0]))
        pairs.append((c, d))
        algo.update(c, d, bool(env.random() < P.p[c, d]))
    lengths = [epochs.count(i) for i in range(1, 7)]
    assert lengths == [2, 4, 8, 16, 32, 64]
    start = np.cumsum([0] + lengths)
    for i in range(1, 6):  # epoch i + 1's left arms come from epoch i's right arms
        right = {d for _, d in pairs[start[i - 1]:start[i]]}
        left = {c for c, _ in pairs[start[i]:start[i + 1]]}
        assert left <= right, (i, left, right)
    L = algo.state["arrays"]["L"]
    assert np.array_equal(L, np.bincount([d for _, d in pairs[start[5]:]], minlength=P.K))


# ----- Sparring -----------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [SparringUCB, SparringEXP3, SparringTS])
def test_sparring_rewards_the_winners_copy_1_and_the_other_0(cls):
    algo = cls(4, seed=0, horizon=1000)
    a = algo.state["arrays"]
    algo.update(1, 2, True)  # left copy played 1 and won, right copy played 2 and lost
    algo.update(3, 0, False)  # left copy played 3 and lost, right copy played 0 and won
    s = algo.state["arrays"]
    if cls is SparringUCB:
        assert s["pulls"].tolist() == [[0, 1, 0, 1], [1, 0, 1, 0]]
        assert s["reward"].tolist() == [[0, 1, 0, 0], [1, 0, 0, 0]]
    elif cls is SparringTS:
        assert s["S"].tolist() == [[0, 1, 0, 0], [1, 0, 0, 0]]
        assert s["F"].tolist() == [[0, 0, 0, 1], [0, 0, 1, 0]]
    else:  # EXP3: only a reward of 1 moves a weight, by gamma / (p K) with p = 1/K at the start
        gamma = a["params"][0]
        assert np.allclose(s["lw"], [[0, gamma, 0, 0], [gamma, 0, 0, 0]])
    assert algo.wins[1, 2] == 1 and algo.wins[0, 3] == 1
