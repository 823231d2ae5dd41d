"""MultiSBM, Winner Stays (WS-W, WS-S) and MDB: slow step-by-step references from the papers' listings,
and the behaviour the papers claim."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import DATA
from numba import njit

from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.multidueling import MultileaveEnvironment
from irbandits.dueling import MDB, RUCB, WSS, WSW, MultiSBM
from irbandits.errors import IrbanditsError
from irbandits.problems import get_problem
from irbandits.rng import new_rng, randint, uniform
from irbandits.simulate import run_one


def _tie(ties, rng):
    """One of ``ties`` uniformly, with the library's generator (no draw for a single one)."""
    return ties[0] if len(ties) == 1 else ties[randint(rng, len(ties))]


# ----- MultiSBM -------------------------------------------------------------------------------
class SlowMultiSBM:
    """Ailon et al. 2014's MultiSBM as listed, one SBM object per arm, in plain Python (UCB1 or EXP3)."""

    def __init__(self, K, seed, sbm="ucb", alpha=2.0, gamma=None):
        self.K, self.rng, self.left = K, new_rng(seed), None
        self.sbms = [self.UCB(K, alpha) if sbm == "ucb" else self.EXP3(K, gamma) for _ in range(K)]

    class UCB:
        def __init__(self, K, alpha):
            self.K, self.alpha, self.S, self.N = K, alpha, [0] * K, [0] * K

        def advance(self, rng):
            if 0 in self.N:
                return self.N.index(0)  # every arm once, lowest index first
            n = sum(self.N)
            v = [self.S[i] / self.N[i] + math.sqrt(self.alpha * math.log(n) / self.N[i]) for i in range(self.K)]
            return _tie([i for i in range(self.K) if v[i] == max(v)], rng)

        def feedback(self, arm, reward):
            self.N[arm] += 1
            self.S[arm] += reward

    class EXP3:
        def __init__(self, K, gamma):
            self.K, self.gamma, self.lw = K, gamma, [0.0] * K

        def p(self):
            w = [math.exp(x) for x in self.lw]
            return [(1.0 - self.gamma) * x / sum(w) + self.gamma / self.K for x in w]

        def advance(self, rng):
            u, acc, p = uniform(rng), 0.0, self.p()
            for i in range(self.K - 1):
                acc += p[i]
                if u < acc:
                    return i
            return self.K - 1

        def feedback(self, arm, reward):
            if reward:
                self.lw[arm] += self.gamma / (self.p()[arm] * self.K)

    def pair(self):
        if self.left is None:
            self.left = randint(self.rng, self.K)  # x_0: arbitrary (here uniform)
        return self.left, self.sbms[self.left].advance(self.rng)  # y_t <- advance(S_{x_{t-1}})

    def feedback(self, x, y, x_won):
        self.sbms[x].feedback(y, 0 if x_won else 1)  # S_{x_{t-1}} learns whether y_t won
        self.left = y  # x_t <- y_t


@pytest.mark.parametrize("sbm, params", [("ucb", {}), ("ucb", {"alpha": 0.5}), ("exp3", {"gamma": 0.2})])
@pytest.mark.parametrize("problem_name", ["arxiv", "bt-10"])
def test_multisbm_follows_the_slow_reference_step_by_step(sbm, params, problem_name):
    P = get_problem(problem_name).p
    K = len(P)
    algo, slow = MultiSBM(K, seed=7, sbm=sbm, **params), SlowMultiSBM(K, seed=7, sbm=sbm, **params)
    env = np.random.default_rng(3)
    for step in range(3000):
        pair = algo.select()
        assert pair == slow.pair(), f"step {step}"
        won = bool(env.random() < P[pair])
        algo.update(*pair, won)
        slow.feedback(*pair, won)
    assert algo.arrays["N"].sum() == 3000 and algo.t == 3000
    assert algo.recommend() == int(np.argmax(algo.arrays["N"].sum(axis=0)))  # the arm proposed most


def _first_proposals(algo, P, steps, env):
    """For every left arm x, the right arms its SBM proposed, in order."""
    out = {x: [] for x in range(algo.K)}
    for _ in range(steps):
        c, d = algo.select()
        out[c].append(d)
        algo.update(c, d, uniform(env) < P[c, d])
    return out


def test_multisbm_singleton_bandit_parameter_changes_the_algorithm():
    problem = get_problem("arithmetic")
    P, K = problem.p, problem.K
    # UCB1 plays every arm once, lowest index first: each SBM's first K proposals are 0, 1, ..., K-1
    ucb = _first_proposals(MultiSBM(K, seed=1), P, 3000, new_rng(2))
    assert all(v[:K] == list(range(K)) for v in ucb.values() if len(v) >= K)
    assert sum(len(v) >= K for v in ucb.values()) >= 3
    # Thompson sampling and EXP3 draw their first proposals at random: not that order
    for sbm in ("ts", "exp3"):
        other = _first_proposals(MultiSBM(K, seed=1, sbm=sbm, gamma=0.3), P, 3000, new_rng(2))
        assert any(v[:K] != list(range(K)) for v in other.values() if len(v) >= K), sbm
    # each one still finds the winner (arm 0), along its own trajectory
    paths = {}
    for sbm in ("ucb", "exp3", "ts"):
        algo = MultiSBM(K, seed=4, horizon=30_000, sbm=sbm)
        r = run_one(algo, problem, 30_000, seed=5)
        assert r.recommended[-1] == 0, sbm
        paths[sbm] = algo.arrays["N"]
    assert not np.array_equal(paths["ucb"], paths["exp3"]) and not np.array_equal(paths["ucb"], paths["ts"])
    # the setting travels with the state
    algo = MultiSBM(K, seed=4, sbm="ts")
    assert type(algo).from_state(algo.state).param_values["sbm"] == "ts"


def test_multisbm_parameter_mistakes_are_clear():
    with pytest.raises(IrbanditsError, match="sbm='eps' is invalid; sbm must be one of ucb, exp3, ts"):
        MultiSBM(4, sbm="eps")
    with pytest.raises(IrbanditsError, match="needs the horizon T .* gamma"):
        MultiSBM(4, sbm="exp3")
    MultiSBM(4, sbm="exp3", gamma=0.1)  # an explicit gamma needs no horizon
    MultiSBM(4)  # nor does UCB


# ----- Winner Stays ---------------------------------------------------------------------------
class SlowWSW:
    """Chen & Frazier's WS-W (Algorithm 1) as listed: C_i = wins - losses."""

    def __init__(self, K, seed):
        self.C, self.prev, self.rng = [0] * K, (), new_rng(seed)

    def best(self, exclude):
        arms = [i for i in range(len(self.C)) if i != exclude]
        top = max(self.C[i] for i in arms)
        for a in self.prev:  # x_{t-1}, then y_{t-1}, if it has the largest C
            if a != exclude and self.C[a] == top:
                return a
        return _tie([i for i in arms if self.C[i] == top], self.rng)

    def pair(self):
        x = self.best(None)
        return x, self.best(x)

    def feedback(self, x, y, x_won):
        win, lose = (x, y) if x_won else (y, x)
        self.C[win] += 1
        self.C[lose] -= 1
        self.prev = (x, y)


@pytest.mark.parametrize("problem_name", ["arxiv", "bt-10", "cycle"])
def test_ws_w_follows_the_slow_reference_and_the_round_structure(problem_name):
    P = get_problem(problem_name).p
    K = len(P)
    algo, slow, env = WSW(K, seed=3), SlowWSW(K, seed=3), np.random.default_rng(0)
    rounds_seen = 0
    for step in range(5000):
        pair = algo.select()
        assert pair == slow.pair(), f"step {step}"
        won = bool(env.random() < P[pair])
        algo.update(*pair, won)
        slow.feedback(*pair, won)
        C = algo.arrays["C"]
        assert C.tolist() == slow.C and C.sum() == 0
        # the paper's rounds: in round r the waiting arms are at -(r - 1) or -r; it ends with all but one at -r
        r = math.ceil(-C.min()) if C.min() < 0 else 1
        assert all(c in (-r, -(r - 1)) for i, c in enumerate(C) if i not in pair), (step, C)
        rounds_seen += int(C.max() == (K - 1) * r)
    assert rounds_seen > 0


@njit
def _weak_and_strong(select, update, st, rng, P, gaps, env, steps, weak, strong):
    """Cumulative weak (the smaller gap of the pair) and strong (their mean) regret at each checkpoint."""
    w, s, k = 0.0, 0.0, 0
    for t in range(1, steps[-1] + 1):
        c, d = select(st, rng)
        w += min(gaps[c], gaps[d])
        s += 0.5 * (gaps[c] + gaps[d])
        update(st, rng, c, d, uniform(env) < P[c, d])
        if t == steps[k]:
            weak[k], strong[k] = w, s
            k += 1


def _regret(cls, problem, runs, steps, **params):
    weak, strong = np.zeros((runs, len(steps))), np.zeros((runs, len(steps)))
    for run in range(runs):
        perm = np.random.default_rng(run).permutation(problem.K)
        P = np.ascontiguousarray(problem.p[np.ix_(perm, perm)])
        algo = cls(problem.K, seed=run, **params)
        _weak_and_strong(
            cls._select,
            cls._update,
            *algo.kernel_state,
            P,
            problem.gaps[perm],
            new_rng(100 + run),
            np.asarray(steps),
            weak[run],
            strong[run],
        )
    return weak, strong


def test_ws_w_weak_regret_stays_flat_under_a_total_order():
    """Chen & Frazier: WS-W's expected weak regret is bounded whatever the horizon (O(K log K) under a
    total order): once the Condorcet winner holds the largest C it stays in every duel, so the weak
    regret stops growing, while the strong regret (the challengers) grows linearly."""
    problem = get_problem("arithmetic")  # 8 arms in a total order, p_ij = 0.5 + 0.05 (j - i)
    steps = [2_000, 10_000, 100_000]
    weak, strong = _regret(WSW, problem, 20, steps)
    assert (weak[:, 2] == weak[:, 0]).sum() >= 19  # nothing added after step 2,000 (one late run allowed)
    assert weak[:, 2].mean() < 30  # (about 7)
    assert strong[:, 2].mean() > 8 * strong[:, 1].mean()  # linear: x10 from 10^4 to 10^5
    # not so for an algorithm that keeps exploring with its champion: RUCB's weak regret still grows
    weak_rucb, _ = _regret(RUCB, problem, 20, steps)
    assert (weak_rucb[:, 2] > weak_rucb[:, 1]).sum() >= 15 and weak_rucb[:, 2].mean() > 2 * weak[:, 2].mean()
    # WS-S trades weak regret for strong: its strong regret grows only with its rounds (O(K log T))
    _, strong_s = _regret(WSS, problem, 20, steps)
    assert strong_s[:, 2].mean() < strong[:, 2].mean() / 10
    late, early = strong_s[:, 2].mean() - strong_s[:, 1].mean(), strong_s[:, 1].mean()
    assert late < early  # the last 90% of the steps add less than the first 10%


def test_ws_s_alternates_ws_w_rounds_and_exploitation_phases():
    """Algorithm 2: after WS-W's round r (every arm but one at C = -r), the round's winner against
    itself floor(beta^r) times; C does not change meanwhile."""
    P = get_problem("arxiv").p
    K, beta = len(P), 2.0
    algo, env = WSS(K, seed=2, beta=beta), np.random.default_rng(1)
    phases, run_arm, run_len, C_before = [], None, 0, None
    for _ in range(4000):
        c, d = algo.select()
        if c == d:
            if run_len == 0:
                C_before = algo.arrays["C"].copy()
                r = len(phases) + 1
                assert sorted(C_before.tolist()) == [-r] * (K - 1) + [(K - 1) * r]
                assert c == int(np.argmax(C_before)) == algo.recommend()
            run_arm, run_len = c, run_len + 1
            assert c == run_arm
        elif run_len:
            phases.append(run_len)
            assert np.array_equal(algo.arrays["C"], C_before)
            run_len = 0
        algo.update(c, d, bool(env.random() < P[c, d]))
    assert phases[:6] == [math.floor(beta**r) for r in range(1, 7)]
    with pytest.raises(IrbanditsError, match="beta must be > 1"):
        WSS(4, beta=1)


# ----- MDB ------------------------------------------------------------------------------------
def _mdb_sets(W, t, alpha, beta):
    """E (tight bound) and F (loose bound) at step t + 1, from the bounds as written."""
    K, log_t = len(W), math.log(t + 1)

    def unbeaten(a):
        out = []
        for i in range(K):
            u = []
            for j in range(K):
                n = W[i, j] + W[j, i]
                if i == j:
                    u.append(0.5)
                else:  # x / 0 := 1
                    u.append(1.0 if n == 0 else W[i, j] / n + math.sqrt(a * log_t / n))
            if min(u) >= 0.5:
                out.append(i)
        return out

    return unbeaten(alpha), unbeaten(alpha * beta)


def test_mdb_compares_what_its_two_bounds_leave():
    """Steps 1-3: E's lone arm alone, else every arm of F (all arms when F is empty)."""
    P = get_problem("arithmetic").p  # 8 arms in a total order, gaps >= 0.05
    lone = several = 0
    for alpha, beta in [(0.51, 1.5), (0.51, 4.0), (1.0, 1.0)]:
        algo, env = MDB(8, seed=1, alpha=alpha, beta=beta), np.random.default_rng(2)
        for step in range(6000):
            E, F = _mdb_sets(algo.wins, algo.t, alpha, beta)
            expected = E if len(E) == 1 else (F or list(range(8)))
            assert sorted(algo.compared().tolist()) == expected, step
            shown = algo.select_many(8)
            assert sorted(set(shown.tolist())) == expected
            lone += len(expected) == 1
            several += len(expected) > 1
            c, d = algo.select()
            assert {c, d} <= set(expected) and (c != d) == (len(expected) > 1)
            algo.update(c, d, bool(env.random() < P[c, d]))
    assert lone > 500 and several > 5000, (lone, several)  # both branches were taken


NP2004 = DATA / "ltr" / "letor3-np2004-fold1" / "test.txt.gz"
FEATURES = [22, 31, 43, 26, 29, 36, 32, 20, 24, 21, 40, 41, 30, 46, 2, 39]  # feature 23 (index 0) beats the rest


@pytest.mark.skipif(not NP2004.exists(), reason="needs ../shared/data")
def test_mdb_finds_the_condorcet_winner_by_multileaving():
    """16 NP2004 features on the click pipeline, team-draft multileaving of up to 16 rankers per list:
    MDB narrows what it multileaves to the best feature (feature 23) and then mostly shows it alone."""
    rankers = read_ltr(NP2004).rankers(FEATURES)
    env = MultileaveEnvironment(rankers, "navigational", "team-draft", per_step=16)
    P = env.estimate(40, seed=0).matrix  # the compiled loop's regret column only: not asserted on
    for run in range(3):
        perm = np.random.default_rng(run).permutation(16)
        winner = int(np.nonzero(perm == 0)[0][0])  # the algorithm's arm that is feature 23
        algo = MDB(16, seed=run)
        run_one(algo, P, 20_000, seed=10 + run, perm=perm, environment=env)  # compiled, multileaved
        W = algo.wins
        assert algo.recommend() == winner and algo.t == 20_000
        assert all(W[winner, j] > W[j, winner] for j in range(16) if j != winner)  # it beat every other, in W
        world, rng, credit, alone = env.world(perm), new_rng(50 + run), np.empty(16), 0
        for _ in range(2000):  # then interactively: the lists it shows
            arms = algo.select_many(16)
            alone += bool((arms == winner).all())
            env.multiduel(world, rng, arms, credit)
            algo.update_many(arms, credit)
        assert alone >= 1900 and algo.recommend() == winner
