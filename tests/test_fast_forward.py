"""Fast-forward of absorbed runs: the closed form gives the step-by-step results bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numba import njit

from irbandits.dueling import RUCB, DuelingAlgorithm, MergeDTS, MergeRUCB
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import uniform
from irbandits.simulate import ABSORB_EVERY, repeated_sum, run_one, simulate


def added_one_by_one(x: float, inc: float, n: int) -> float:
    for _ in range(n):
        x += inc
    return x


def test_repeated_sum_is_the_loop_bit_for_bit():
    rng = np.random.default_rng(0)
    cases = [(0.0, 0.15, 5000), (0.0, 0.0, 10), (1e6, 1e-12, 3000), (3.0, 0.1 + 0.2, 7000), (5.0, -0.4, 4000),
             (-2.0, 0.3, 3000), (-1e3, -1 / 3, 5000)]
    # ties: inc an odd number of half grid steps of x's binade (round half to even alternates)
    cases += [(1.0 + k * 2.0**-52, 1.5 * 2.0**-52, 999) for k in range(2)] + [(1.0, 0.5 * 2.0**-52, 10)]
    for _ in range(300):
        x = float(rng.random() * 10.0 ** rng.integers(-3, 5)) * rng.integers(-1, 2)
        inc = float(rng.random() * 10.0 ** rng.integers(-8, 1)) * rng.choice([-1, 1])
        cases.append((x, inc, int(rng.integers(0, 4000))))
    for x, inc, n in cases:
        assert repeated_sum(x, inc, n) == added_one_by_one(x, inc, n), (x, inc, n)


# A 3-cycle of Copeland winners and an arm all three beat: the merge algorithms end on one of the
# cycle, whose gap from the first winner's row (the "regret" column) is 0, +0.4 or -0.4.
CYCLE = PreferenceMatrix([[.5, .9, .1, .9], [.1, .5, .9, .9], [.9, .1, .5, .9], [.1, .1, .1, .5]], name="cycle-3+1")


@pytest.mark.parametrize("make", [
    lambda seed: MergeDTS(4, seed=seed, horizon=40_000, M=2),
    lambda seed: MergeRUCB(4, seed=seed, M=2),
    lambda seed: MergeRUCB(4, seed=seed, M=2, merge_single=1),
    lambda seed: MergeDTS(8, seed=seed, horizon=40_000),
], ids=["MergeDTS", "mergeRUCB", "mergeRUCB-merge", "MergeDTS-arithmetic"])
def test_merge_algorithms_fast_forward_to_identical_results(make):
    steps = np.array([1, 1000, 1500, 30_000, 30_001, 39_999, 40_000])  # absorption lands between checkpoints
    moved = 0
    for seed in range(3):
        fast, slow = make(seed), make(seed)
        problem = CYCLE if fast.K == 4 else get_problem("arithmetic")
        perm = np.random.default_rng(seed).permutation(problem.K)
        a = run_one(fast, problem, 40_000, seed=7, perm=perm, steps=steps, fast_forward=True)
        b = run_one(slow, problem, 40_000, seed=7, perm=perm, steps=steps)
        assert 0 < a.absorbed_at < 30_000 and a.absorbed_at % ABSORB_EVERY == 0 and b.absorbed_at == 0
        assert fast.t == a.absorbed_at and fast.absorbed and slow.absorbed  # the state stops where it was absorbed
        for field in ("regret", "copeland_regret", "recommended", "correct"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), field
        moved += a.regret[-1] != a.regret[3]
    if fast.K == 4:
        assert moved, "no run ended on an arm with a gap: the closed form was not exercised"


def test_simulate_table_is_the_same_without_fast_forward():
    problem = get_problem("arithmetic")
    args = dict(horizon=50_000, runs=3, seed=5, progress=False)
    algorithms = ["MergeDTS", "mergeRUCB:M=2", "RUCB"]
    fast = simulate(problem, algorithms, **args)
    slow = simulate(problem, algorithms, fast_forward=False, **args)
    cols = [c for c in fast.columns if c != "run_seconds"]
    pd.testing.assert_frame_equal(fast[cols], slow[cols], check_exact=True)


def test_an_algorithm_without_absorbing_test_runs_step_by_step():
    problem = get_problem("arxiv")
    a = run_one(RUCB(6, seed=3), problem, 20_000, seed=1, fast_forward=True)
    b = run_one(RUCB(6, seed=3), problem, 20_000, seed=1)
    assert a.absorbed_at == 0 and not RUCB(6).absorbed
    for field in ("regret", "copeland_regret", "recommended"):
        assert np.array_equal(getattr(a, field), getattr(b, field))


# A made-up multi-dueling algorithm (no name: not registered) that shows arms 0, 1, 2 until it has
# seen 3000 steps and then arms 3, 2, 3 for good, on a made-up environment whose credit is random.
@njit
def _steps(st, rng, arms):
    arms[:] = st[0][1] if st[0][0, 0] >= 3000 else st[0][2, :arms.shape[0]]


@njit
def _count(st, rng, arms, credit):
    st[0][0, 0] += 1


@njit
def _rec(st):
    return 3 if st[0][0, 0] >= 3000 else 0


@njit
def _settled(st):
    return st[0][0, 0] >= 3000


class Settling(DuelingAlgorithm):
    multi_dueling = True
    _select_many, _update_many = staticmethod(_steps), staticmethod(_count)
    _recommend, _absorbed = staticmethod(_rec), staticmethod(_settled)

    def _init_state(self, K):
        return dict(a=np.array([[0, 0, 0], [3, 2, 3], [0, 1, 2]], np.int64))


@njit
def _random_credit(world, env, arms, credit):
    for i in range(arms.shape[0]):
        credit[i] = uniform(env)


class RandomCredit:
    per_step = 3
    multiduel = staticmethod(_random_credit)

    def world(self, perm):
        return perm


def test_the_multi_dueling_loop_fast_forwards_too():
    problem = PreferenceMatrix([[.5, .6, .7, .8], [.4, .5, .6, .7], [.3, .4, .5, .6], [.2, .3, .4, .5]])
    perm = np.array([1, 0, 3, 2])
    fast = run_one(Settling(4), problem, 100_000, seed=1, perm=perm, environment=RandomCredit(), fast_forward=True)
    slow = run_one(Settling(4), problem, 100_000, seed=1, perm=perm, environment=RandomCredit())
    assert fast.absorbed_at == 3072 and slow.absorbed_at == 0
    for field in ("regret", "copeland_regret", "recommended"):
        assert np.array_equal(getattr(fast, field), getattr(slow, field)), field
    gaps = problem.gaps[perm]  # the algorithm's arm i is the problem's perm[i]
    assert fast.regret[-1] == pytest.approx(3000 * gaps[[0, 1, 2]].mean() + 97_000 * gaps[[3, 2, 3]].mean())
    assert list(fast.recommended[-3:]) == [perm[3]] * 3
