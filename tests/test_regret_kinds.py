"""Every kind of regret of the simulation runner (``simulate --regret KIND``): by hand on scripted duels,
today's numbers kept for the default, fast-forward exact for every kind, the CLI option, and
Sparring-EXP3 converging to the von Neumann winner of a problem without a Condorcet winner."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from numba import njit
from scipy.optimize import linprog

from irbandits.dueling import DuelingAlgorithm, MergeDTS, MergeRUCB, parse_spec
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import uniform
from irbandits.simulate import ABSORB_EVERY, REGRET_KINDS, regret_kind, run_one, simulate

KINDS = [k for k in REGRET_KINDS if k != "auto"]

# A Condorcet winner (arm 0) that is not the Borda winner (arm 1):
#   Condorcet gaps p_0i - 1/2:        0, 0.1, 0.2, 0.3
#   Borda scores sum_j p_ij / 3:      0.7, 0.75, 0.4, 0.15  ->  Borda gaps 0.05, 0, 0.35, 0.6
#   Copeland scores (wins / 3):       1, 2/3, 1/3, 0        ->  Copeland gaps 0, 1/3, 2/3, 1
#   von Neumann winner: arm 0 alone   ->  von Neumann gaps = Condorcet gaps
M4 = PreferenceMatrix(
    [[0.5, 0.6, 0.7, 0.8], [0.4, 0.5, 0.9, 0.95], [0.3, 0.1, 0.5, 0.8], [0.2, 0.05, 0.2, 0.5]], name="m4"
)
# Rock-paper-scissors on arms 0-2 (margin 0.3) and two arms all three beat: no Condorcet winner, the
# von Neumann winner is (1/3, 1/3, 1/3, 0, 0), and the von Neumann gaps are 0, 0, 0, 0.2, 0.3.
RPS2 = PreferenceMatrix(
    [
        [0.5, 0.8, 0.2, 0.7, 0.8],
        [0.2, 0.5, 0.8, 0.7, 0.8],
        [0.8, 0.2, 0.5, 0.7, 0.8],
        [0.3, 0.3, 0.3, 0.5, 0.6],
        [0.2, 0.2, 0.2, 0.4, 0.5],
    ],
    name="rps+2",
)


# ----- a scripted algorithm: plays a fixed list of duels (or multi-duels) in turn ----------------------
@njit
def _script_select(st, rng):
    seq, t, last = st
    i = min(t[0], seq.shape[0] - 1) if last[0] else t[0] % seq.shape[0]
    return seq[i, 0], seq[i, 1]


@njit
def _script_update(st, rng, c, d, c_won):
    st[1][0] += 1


@njit
def _script_select_many(st, rng, arms):
    seq, t, last = st
    arms[:] = seq[min(t[0], seq.shape[0] - 1) if last[0] else t[0] % seq.shape[0]]


@njit
def _script_update_many(st, rng, arms, credit):
    st[1][0] += 1


@njit
def _script_recommend(st):
    return 0


@njit
def _script_settled(st):
    seq, t, last = st
    return last[0] == 1 and t[0] >= seq.shape[0] - 1


class Scripted(DuelingAlgorithm):
    """Plays the rows of ``script`` in turn, from the top again after the last (no name: not registered);
    with ``stay``, the last row for good once there (and then it says it is absorbed)."""

    multi_dueling = True
    script: np.ndarray = np.zeros((1, 2), np.int64)
    stay = False
    _select, _update = staticmethod(_script_select), staticmethod(_script_update)
    _select_many, _update_many = staticmethod(_script_select_many), staticmethod(_script_update_many)
    _recommend = staticmethod(_script_recommend)

    def _init_state(self, K):
        return dict(
            seq=np.array(self.script, np.int64), t=np.zeros(1, np.int64), last=np.array([int(self.stay)], np.int64)
        )


def scripted(rows, stay: bool = False) -> type[Scripted]:
    extra = {"_absorbed": staticmethod(_script_settled)} if stay else {}
    return type("Script", (Scripted,), dict(script=np.array(rows, np.int64), stay=stay, **extra))


@njit
def _random_credit(world, env, arms, credit):
    for i in range(arms.shape[0]):
        credit[i] = uniform(env)


class RandomCredit:
    """A multi-duel of ``per_step`` arms whose credit is a coin: the regret does not depend on it."""

    multiduel = staticmethod(_random_credit)

    def __init__(self, per_step: int):
        self.per_step = per_step

    def world(self, perm):
        return perm


# ----- by hand --------------------------------------------------------------------------------
DUELS = [(0, 0), (0, 1), (1, 2), (2, 3), (3, 3), (1, 1)]
# one step's regret of each duel above, from the gaps in M4's comment
BY_HAND = {
    "condorcet": [0, (0 + 0.1) / 2, (0.1 + 0.2) / 2, (0.2 + 0.3) / 2, 0.3, 0.1],
    "weak": [0, 0, 0.1, 0.2, 0.3, 0.1],  # the lesser gap: showing the winner costs nothing
    "strong": [0, 0.1, 0.2, 0.3, 0.3, 0.1],  # the larger gap
    "borda": [0.05, (0.05 + 0) / 2, (0 + 0.35) / 2, (0.35 + 0.6) / 2, 0.6, 0],
    "von-neumann": [0, 0.05, 0.15, 0.25, 0.3, 0.1],  # the Condorcet winner is the von Neumann winner
    "copeland": [0, 1 / 6, 1 / 2, 5 / 6, 1, 1 / 3],
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_by_hand_on_scripted_duels(kind):
    steps = np.array([1, 2, 3, 4, 5, 6, 600])
    r = run_one(scripted(DUELS)(4), M4, 600, steps=steps, regret=kind)
    per_step = BY_HAND[kind]
    expected = [*np.cumsum(per_step), 100 * sum(per_step)]
    column = r.copeland_regret if kind == "copeland" else r.regret
    assert column.tolist() == pytest.approx(expected, abs=1e-9)
    assert r.copeland_regret.tolist() == pytest.approx(
        [*np.cumsum(BY_HAND["copeland"]), 100 * sum(BY_HAND["copeland"])], abs=1e-9
    )
    assert r.regret_kind == kind
    if kind == "copeland":  # its numbers are the copeland_regret column; `regret` keeps the Condorcet regret
        assert r.regret.tolist() == pytest.approx([*np.cumsum(BY_HAND["condorcet"]), 100 * sum(BY_HAND["condorcet"])])


def test_multi_duels_take_the_least_the_largest_or_the_mean_of_the_arms_shown():
    triples = [(0, 1, 2), (1, 2, 3), (3, 3, 2)]
    by_hand = {  # the gaps of M4's comment, three arms a step
        "condorcet": [(0 + 0.1 + 0.2) / 3, (0.1 + 0.2 + 0.3) / 3, (0.3 + 0.3 + 0.2) / 3],
        "weak": [0, 0.1, 0.2],
        "strong": [0.2, 0.3, 0.3],
        "borda": [(0.05 + 0 + 0.35) / 3, (0 + 0.35 + 0.6) / 3, (0.6 + 0.6 + 0.35) / 3],
        "von-neumann": [0.1, 0.2, 0.8 / 3],
    }
    for kind, per_step in by_hand.items():
        r = run_one(
            scripted(triples)(4), M4, 300, steps=np.array([1, 2, 3, 300]), regret=kind, environment=RandomCredit(3)
        )
        assert r.regret.tolist() == pytest.approx([*np.cumsum(per_step), 100 * sum(per_step)], abs=1e-9), kind


@pytest.mark.parametrize("kind", KINDS)
def test_a_two_arm_multi_duel_pays_what_the_duel_does(kind):
    pairs = [(0, 1), (2, 3), (1, 3), (3, 3), (0, 2)]
    duel = run_one(scripted(pairs)(4), M4, 10_000, regret=kind)
    multi = run_one(scripted(pairs)(4), M4, 10_000, regret=kind, environment=RandomCredit(2))
    assert np.array_equal(duel.regret, multi.regret) and np.array_equal(duel.copeland_regret, multi.copeland_regret)


def test_auto_follows_the_winner_type_and_the_gaps_of_a_problem_without_condorcet_winner():
    assert regret_kind("auto", M4).name == "condorcet" and regret_kind("auto", RPS2).name == "copeland"
    assert regret_kind("Von_Neumann", M4).name == "von-neumann"
    # RPS2: Copeland scores 3/4, 3/4, 3/4, 1/4, 0; the Condorcet gaps come from the first Copeland
    # winner's row (arm 0: 0, 0.3, -0.3, 0.2, 0.3), and may be negative; the von Neumann gaps never are
    assert RPS2.copeland_gaps.tolist() == pytest.approx([0, 0, 0, 0.5, 0.75])
    assert RPS2.von_neumann_gaps.tolist() == pytest.approx([0, 0, 0, 0.2, 0.3], abs=1e-9)
    assert RPS2.borda_gaps.tolist() == pytest.approx([0, 0, 0, 0.625 - 0.375, 0.625 - 0.25])  # scores / 4
    r = run_one(scripted([(1, 2), (3, 4), (0, 0)])(5), RPS2, 3, steps=np.array([1, 2, 3]))
    assert r.regret_kind == "copeland"
    assert r.copeland_regret.tolist() == pytest.approx([0, 0.625, 0.625])
    assert r.regret.tolist() == pytest.approx([0, 0.25, 0.25])  # (0.3 - 0.3) / 2, then (0.2 + 0.3) / 2
    vn = run_one(scripted([(1, 2), (3, 4), (0, 0)])(5), RPS2, 3, steps=np.array([1, 2, 3]), regret="von-neumann")
    assert vn.regret.tolist() == pytest.approx([0, 0.25, 0.25], abs=1e-9)  # arms of the cycle cost nothing


def test_unknown_kind_is_one_clear_error_listing_the_kinds():
    with pytest.raises(IrbanditsError) as err:
        run_one(scripted(DUELS)(4), M4, 10, regret="regal")
    assert "'regal'" in str(err.value) and all(k in str(err.value) for k in REGRET_KINDS)
    with pytest.raises(IrbanditsError, match="regret must be one of"):
        simulate(M4, ["RUCB"], horizon=10, runs=1, progress=False, regret="max")


# ----- the default is today's table ---------------------------------------------------------------
def test_default_regret_is_bit_for_bit_what_it_was():
    """Numbers recorded from the runner before kinds of regret existed (commit a3bfe3a)."""
    arxiv = get_problem("arxiv")
    r = run_one(parse_spec("RUCB").make(6, seed=1, horizon=20_000), arxiv, 20_000, seed=1)
    assert (r.regret[-1], r.copeland_regret[-1]) == (721.1399999998172, 7508.099999999187)
    df = simulate(arxiv, ["RUCB"], horizon=20_000, runs=2, seed=1, progress=False)
    assert df[df.step == 20_000].regret.tolist() == [459.56499999997203, 447.2449999999866]
    assert df.attrs == {"regret_kind": "condorcet", "regret_column": "regret"}
    rps = PreferenceMatrix([[0.5, 0.7, 0.2], [0.3, 0.5, 0.8], [0.8, 0.2, 0.5]])  # no Condorcet winner: auto is Copeland
    df = simulate(rps, ["mergeRUCB:M=2"], horizon=20_000, runs=2, seed=1, progress=False)
    last = df[df.step == 20_000]
    assert last.regret.tolist() == [3930.949999998616, -5.750000000000059] and last.copeland_regret.tolist() == [0, 0]
    assert df.attrs == {"regret_kind": "copeland", "regret_column": "copeland_regret"}


def test_weak_condorcet_strong_are_ordered():
    arxiv = get_problem("arxiv")
    runs = {
        k: simulate(arxiv, ["RUCB", "Sparring-UCB"], horizon=30_000, runs=2, seed=4, progress=False, regret=k)
        for k in ("condorcet", "weak", "strong", "von-neumann")
    }
    assert (runs["weak"].regret <= runs["condorcet"].regret).all() and (runs["weak"].regret.iloc[-1] > 0)
    assert (runs["condorcet"].regret <= runs["strong"].regret).all()
    assert (runs["strong"].regret.iloc[-1] < 2 * runs["condorcet"].regret.iloc[-1])  # the max, not the sum
    assert np.allclose(runs["von-neumann"].regret, runs["condorcet"].regret, rtol=1e-9)
    for k, df in runs.items():
        assert df.attrs["regret_kind"] == k
        pd.testing.assert_series_equal(df.copeland_regret, runs["condorcet"].copeland_regret)


# ----- fast-forward ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_fast_forward_is_the_step_by_step_loop_for_every_kind(kind):
    rng = np.random.default_rng(0)
    script = [*map(tuple, rng.integers(0, 4, (3000, 2))), (2, 3)]  # then (2, 3) for good: every gap > 0
    steps = np.array([1, 1000, 3000, 3071, 3072, 3073, 500_000, 1_000_000])
    fast = run_one(scripted(script, stay=True)(4), M4, 10**6, steps=steps, regret=kind, fast_forward=True)
    slow = run_one(scripted(script, stay=True)(4), M4, 10**6, steps=steps, regret=kind)
    assert fast.absorbed_at == 3 * ABSORB_EVERY and slow.absorbed_at == 0
    assert np.array_equal(fast.regret, slow.regret) and np.array_equal(fast.copeland_regret, slow.copeland_regret)
    assert fast.regret[-1] > fast.regret[-3] > fast.regret[2]
    for make in (lambda s: MergeDTS(4, seed=s, horizon=100_000, M=2), lambda s: MergeRUCB(4, seed=s, M=2)):
        for seed in range(2):  # the merge algorithms settle on arm 0, which costs Borda regret
            perm = np.random.default_rng(seed).permutation(4)
            a = run_one(make(seed), M4, 100_000, seed=7, perm=perm, regret=kind, fast_forward=True)
            b = run_one(make(seed), M4, 100_000, seed=7, perm=perm, regret=kind)
            assert 0 < a.absorbed_at < 50_000 and b.absorbed_at == 0
            for field in ("regret", "copeland_regret", "recommended"):
                assert np.array_equal(getattr(a, field), getattr(b, field)), (kind, seed, field)
            if kind == "borda":
                assert a.regret[-1] - a.regret[-5] > 0.04 * (a.steps[-1] - a.steps[-5])


def test_the_multi_dueling_fast_forward_is_exact_for_every_kind():
    script = [(0, 1, 2), (3, 1, 0), (2, 3, 3)]
    for kind in KINDS:
        fast = run_one(
            scripted(script, stay=True)(4), M4, 200_000, regret=kind, environment=RandomCredit(3), fast_forward=True
        )
        slow = run_one(scripted(script, stay=True)(4), M4, 200_000, regret=kind, environment=RandomCredit(3))
        assert fast.absorbed_at == ABSORB_EVERY and np.array_equal(fast.regret, slow.regret), kind


# ----- the command line ----------------------------------------------------------------------------
def test_cli_regret_option_records_plots_and_refuses(tmp_path, cli):
    matrix = tmp_path / "m4.txt"
    M4.save(matrix)
    common = [
        "simulate",
        "--matrix",
        matrix,
        "-a",
        "RUCB",
        "-a",
        "MergeDTS",
        "--horizon",
        "2e4",
        "--runs",
        "2",
        "--seed",
        "3",
        "--no-progress",
    ]
    r = cli(*common, "--regret", "weak", "--out", tmp_path / "w")
    assert r.exit_code == 0, r.output
    assert "weak regret (mean ± SE)" in r.output and "Copeland regret (mean)" in r.output
    table = pd.read_parquet(tmp_path / "w" / "results.parquet")
    same = simulate(M4, ["RUCB", "MergeDTS"], horizon=20_000, runs=2, seed=3, progress=False, regret="weak")
    assert table.regret.tolist() == same.regret.tolist()
    assert json.loads((tmp_path / "w" / "config.json").read_text())["regret"] == "weak"
    assert (tmp_path / "w" / "regret.png").stat().st_size > 10_000
    again = cli(*common, "--regret", "strong", "--out", tmp_path / "w")  # other numbers: refused, named
    assert isinstance(again.exception, IrbanditsError) and "--regret weak, not strong" in str(again.exception)
    bad = cli(*common, "--regret", "regal", "--out", tmp_path / "x")
    assert isinstance(bad.exception, IrbanditsError)
    assert str(bad.exception).startswith(
        "--regret must be one of condorcet, copeland, borda, von-neumann, weak, strong, auto"
    )
    vn = cli(*common, "--regret", "von-neumann", "--out", tmp_path / "v")
    assert vn.exit_code == 0 and "von Neumann regret (mean ± SE)" in vn.output


def test_problems_describe_shows_the_von_neumann_winner(cli):
    out = cli("problems", "--describe", "cyclic").output
    assert "von Neumann winner" in out and "row 0: 1" in out


def test_sweep_spec_passes_the_kind_through(tmp_path):
    from irbandits.sweeps.run import run_sweep
    from irbandits.sweeps.spec import load_spec

    spec = tmp_path / "s.toml"
    spec.write_text(
        '[sweep]\nproblems = ["arxiv"]\nhorizon = 3000\nruns = 2\nseed = 3\nregret = "strong"\n'
        '[[algorithms]]\nname = "RUCB"\n'
    )
    rows = run_sweep(load_spec(spec), tmp_path / "out", progress=False)
    same = simulate(get_problem("arxiv"), ["RUCB"], horizon=3000, runs=2, seed=3, progress=False, regret="strong")
    assert rows.regret.tolist() == same.regret.tolist()
    spec.write_text(spec.read_text().replace('"strong"', '"weak"'))
    with pytest.raises(IrbanditsError, match="regret strong, not weak on arxiv"):
        run_sweep(load_spec(spec), tmp_path / "out", progress=False)
    spec.write_text(spec.read_text().replace('"weak"', '"most"'))
    with pytest.raises(IrbanditsError, match=r"sweep\.regret must be one of"):
        load_spec(spec)


# ----- Sparring-EXP3 finds the von Neumann winner ----------------------------------------------------
@njit
def _counting_duel(world, env, c, d):
    P, counts = world
    counts[c] += 1
    counts[d] += 1
    return uniform(env) < P[c, d]


class Counting:
    """Bernoulli duels on ``problem`` that count how often each arm is shown, per window of
    ``max_chunk`` steps (``run_one`` drains an environment after every chunk of at most that many)."""

    max_chunk = 10_000

    def __init__(self, problem: PreferenceMatrix):
        self.problem, self.windows = problem, []
        self.duel = _counting_duel

    def world(self, perm):
        return np.ascontiguousarray(self.problem.p[np.ix_(perm, perm)]), np.zeros(len(perm), np.int64)

    def drain(self, world, write: bool = True):
        if write:
            self.windows.append(world[1].copy())
        world[1][:] = 0


def sharpness(problem: PreferenceMatrix, w: np.ndarray) -> float:
    """The largest c with e(y) >= c ||y - w||_1 for every mixed strategy y, where e(y) = max_i ((P - 1/2) y)_i
    is how much the best arm beats y (e(w) = 0: w is the von Neumann winner). e is convex, so c is the
    least slope of e leaving w: min over directions d (sum 0, ||d||_1 = 1, d_j >= 0 off w's support) of
    max_i (A d)_i over the rows with (A w)_i = 0; one linear program per sign pattern of d."""
    A, K = problem.p - 0.5, problem.K
    rows = A[A @ w > -1e-9]
    best = math.inf
    for signs in itertools.product((1, -1), repeat=K):
        if len(set(signs)) == 1 or any(s < 0 and w[j] < 1e-12 for j, s in enumerate(signs)):
            continue
        plus, minus = [float(s > 0) for s in signs], [float(s < 0) for s in signs]
        res = linprog(
            np.r_[np.zeros(K), 1.0],
            A_ub=np.hstack([rows, -np.ones((len(rows), 1))]),
            b_ub=np.zeros(len(rows)),
            A_eq=[plus + [0.0], minus + [0.0]],
            b_eq=[0.5, -0.5],
            bounds=[(0, None) if s > 0 else (None, 0) for s in signs] + [(None, None)],
            method="highs",
        )
        best = min(best, res.fun)
    return best


def test_sparring_exp3_converges_to_the_von_neumann_winner_without_a_condorcet_winner():
    """RPS2 has no Condorcet winner; its von Neumann winner mixes the three arms of the cycle. (On plain
    rock-paper-scissors every arm is in the mixture and has gap 0, so the regret could not fall.)

    The bound on the total variation: each EXP3 copy with gamma = sqrt(K ln K / ((e - 1) T)) has expected
    regret at most 2 sqrt(e - 1) sqrt(T K ln K) (Auer et al. 2002, Cor. 3.2, g = T). In Sparring the two
    regrets add up to T (e(x) + e(y)), x and y the copies' play frequencies (the duel is zero-sum), so the
    frequencies f = (x + y) / 2 of the arms shown have e(f) <= 2 sqrt(e - 1) sqrt(K ln K / T), and
    TV(f, w) = ||f - w||_1 / 2 <= e(f) / (2 c) with c = :func:`sharpness` (0.1 here: moving mass from the
    cycle to arm 3). For T = 10^6 and K = 5 that is 0.037; a run lands near 0.006."""
    assert RPS2.condorcet_winner is None
    w = RPS2.von_neumann_winner
    assert w.tolist() == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0, 0], abs=1e-9)
    T, K = 10**6, RPS2.K
    c = sharpness(RPS2, w)
    assert c == pytest.approx(0.1)
    bound = 2 * math.sqrt(math.e - 1) * math.sqrt(K * math.log(K) / T) / (2 * c)
    assert 0.03 < bound < 0.04
    window = Counting.max_chunk
    for seed in range(3):
        env = Counting(RPS2)
        r = run_one(
            parse_spec("Sparring-EXP3").make(K, seed=seed, horizon=T),
            RPS2,
            T,
            seed=seed,
            steps=np.arange(window, T + 1, window),
            environment=env,
            regret="von-neumann",
        )
        shown = np.array(env.windows)  # arms shown per window of 10^4 steps
        assert len(shown) == T // window and (shown.sum(axis=1) == 2 * window).all()
        per_step = np.diff(r.regret, prepend=0.0) / window  # von Neumann regret per step, per window
        n = len(per_step)
        assert per_step[n // 2 :].mean() < per_step[: n // 10].mean() / 10  # it falls
        tv = [0.5 * np.abs(s.sum(axis=0) / s.sum() - w).sum() for s in (shown[: n // 10], shown)]
        assert tv[1] < bound and tv[1] < tv[0]  # the play approaches the mixture
