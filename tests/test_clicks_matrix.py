"""Preference matrices from clicks, the full online simulation, and the `matrix` command."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import DATA, shell

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.matrix import estimate_matrix
from irbandits.problems import PreferenceMatrix
from irbandits.rng import new_rng
from irbandits.simulate import simulate, summarize

NP2004 = DATA / "ltr" / "letor3-np2004-fold1" / "test.txt.gz"
LGBM = DATA / "ltr" / "lightgbm-lambdarank-sample" / "rank.train"


@pytest.fixture(scope="module")
def np2004():
    return read_ltr(NP2004)


@pytest.fixture(scope="module")
def lgbm():
    return read_ltr(LGBM)


def random_ranker(X):
    return np.zeros(len(X))  # every document tied: a fresh random list at every impression


def mean_ndcg(data, rankers, k=10):
    """Offline nDCG@10 of every ranker (one tie-breaking per query), the yardstick for winners."""
    out = np.zeros(rankers.K)
    for q in range(data.n_queries):
        labels = data.labels[data.bounds[q]:data.bounds[q + 1]]
        ideal = np.sort(labels)[::-1][:k]
        best = ((2.0**ideal - 1) / np.log2(np.arange(2, len(ideal) + 2))).sum()
        for r in range(rankers.K):
            top = rankers.ranking(r, q, seed=q)
            gain = ((2.0 ** data.labels[top] - 1) / np.log2(np.arange(2, len(top) + 2))).sum()
            out[r] += gain / best if best > 0 else 0.0
    return out / data.n_queries


def _winners(P):
    return [P.condorcet_winner] if P.condorcet_winner is not None else list(P.copeland_winners)


def test_np2004_matrix_has_the_best_feature_as_condorcet_winner(np2004):
    R = np2004.rankers()
    est = estimate_matrix(R, "navigational", "probabilistic", 500, seed=0, progress=False)
    P = est.matrix
    assert P.K == 64 and np.allclose(P.p + P.p.T, 1.0) and (est.se[P.p != 0.5] > 0).all()
    assert P.condorcet_winner == int(np.argmax(mean_ndcg(np2004, R)))  # feature 23, also the best offline


@pytest.mark.parametrize("method", ["team-draft", "probabilistic"])
def test_multileaving_finds_the_same_np2004_winner(np2004, method):
    from irbandits.clicks.multileaving import estimate_by_multileaving

    est = estimate_by_multileaving(np2004.rankers(), "navigational", method, 2000, per_step=8, seed=2)
    assert est.matrix.condorcet_winner == 22  # feature 23, as with interleaving
    assert (est.se[~np.eye(64, dtype=bool)] > 0).all()


def test_lightgbm_matrix_winner_is_a_top_feature_offline(lgbm):
    R = lgbm.rankers()
    P = estimate_matrix(R, "navigational", "probabilistic", 100, seed=0, progress=False).matrix
    assert P.K == 300
    ndcg_rank = (-mean_ndcg(lgbm, R)).argsort().argsort()
    assert all(ndcg_rank[w] < 30 for w in _winners(P))  # among the top 10% of 300 features offline


@pytest.mark.parametrize("method", ["team-draft", "probabilistic", "probabilistic-assignment"])
def test_random_clicks_give_one_half_and_perfect_clicks_find_the_strong_ranker(np2004, lgbm, method):
    for data, strong in [(np2004, 22), (lgbm, 99)]:
        R = data.rankers([strong, random_ranker, 10])
        rand = estimate_matrix(R, "random", method, 20_000, seed=3, progress=False)
        off = np.abs(rand.matrix.p - 0.5)[np.triu_indices(3, 1)]
        assert (off < 4 * rand.se[np.triu_indices(3, 1)]).all(), (method, off)  # unbiased
        perfect = estimate_matrix(R, "perfect", method, 20_000, seed=3, progress=False)
        assert perfect.matrix.p[0, 1] > 0.5 + 10 * perfect.se[0, 1]


def test_the_matrix_is_the_same_for_every_thread_count(lgbm):
    R = lgbm.rankers([0, 10, 99, 120, 163])
    one = estimate_matrix(R, "informational", "team-draft", 3000, seed=5, jobs=1, progress=False)
    two = estimate_matrix(R, "informational", "team-draft", 3000, seed=5, jobs=2, progress=False)
    np.testing.assert_array_equal(one.matrix.p, two.matrix.p)
    other = estimate_matrix(R, "informational", "team-draft", 3000, seed=6, jobs=2, progress=False)
    assert not np.array_equal(one.matrix.p, other.matrix.p)


def test_full_simulation_duels_win_as_often_as_the_matrix_says(lgbm):
    env = ClickEnvironment(lgbm.rankers([99, 0, 163]), "navigational", "probabilistic")
    est = env.estimate(20_000, seed=1)
    perm = np.array([2, 0, 1])  # algorithm arm i is ranker perm[i]
    world, rng, n = env.world(perm), new_rng(4), 20_000
    wins = sum(env.duel(world, rng, 1, 0) for _ in range(n))  # ranker 0 against ranker 2
    assert abs(wins / n - est.matrix.p[0, 2]) < 4 * np.sqrt(0.25 / n)
    assert abs(sum(env.duel(world, rng, 1, 1) for _ in range(4000)) / 4000 - 0.5) < 0.04  # self-duel: a coin


def test_proxy_and_full_simulation_order_rucb_mergerucb_mergedts_alike(np2004):
    """The thesis's claim that the Bernoulli proxy is faithful: 16 NP2004 features (the best and 15
    it beats by >= 0.05), 10^5 duels, 5 runs; both order the algorithms' cumulative regret alike
    wherever the difference is beyond noise (mergeRUCB and MergeDTS can be close at K = 16)."""
    features = [22, 31, 43, 26, 29, 36, 32, 20, 24, 21, 40, 41, 30, 46, 2, 39]
    env = ClickEnvironment(np2004.rankers(features), "navigational", "probabilistic")
    P = env.estimate(2000, seed=0).matrix
    assert P.condorcet_winner == 0
    algos = ["RUCB", "MergeRUCB", "MergeDTS"]
    z = []  # per environment: (mean_a - mean_b) / SE for every pair of algorithms
    for environment in (None, env):
        s = summarize(simulate(P, algos, horizon=100_000, runs=5, seed=1, progress=False,
                               environment=environment)).set_index("algorithm")
        z.append({(a, b): (s.regret_mean[a] - s.regret_mean[b]) / np.hypot(s.regret_se[a], s.regret_se[b])
                  for a, b in itertools.combinations(algos, 2)})
    clear = [pair for pair in z[0] if abs(z[0][pair]) > 2 and abs(z[1][pair]) > 2]
    assert len(clear) >= 2, z  # most of the order is beyond noise in both simulations ...
    assert all(np.sign(z[0][pair]) == np.sign(z[1][pair]) for pair in clear), z  # ... and it agrees
    assert z[0][("RUCB", "MergeRUCB")] < -2 and z[0][("RUCB", "MergeDTS")] < -2  # RUCB is best here


def test_matrix_command_writes_a_loadable_problem_and_reports_the_winner(tmp_path):
    out = tmp_path / "m.txt"
    r = shell("matrix", "--ltr", NP2004, "--rankers", "20-27", "--click-model", "navigational",
              "--interleaving", "team-draft", "--comparisons", "2000", "--out", str(out))
    assert r.returncode == 0, r.stderr
    P = PreferenceMatrix.load(out)
    assert P.K == 8 and np.loadtxt(tmp_path / "m.se.txt").shape == (8, 8)
    assert "winner" in r.stdout and "comparisons in" in r.stdout
    label = f"feature{20 + P.winners[0]}"
    assert label in r.stdout.split("winner")[1]
    sim = shell("simulate", "--ltr", NP2004, "--rankers", "20-27", "--matrix", str(out), "-a", "RUCB",
                "--horizon", "3000", "--runs", "2", "--out", str(tmp_path / "sim"))
    assert sim.returncode == 0, sim.stderr
    assert "full" in sim.stdout


@pytest.mark.parametrize("args, message", [
    (["--click-model", "navigation"], "unknown click model 'navigation'"),
    (["--interleaving", "teamdraft"], "unknown interleaving method 'teamdraft'"),
    (["--rankers", "1-x"], "--rankers: '1-x'"),
    (["--rankers", "1,70"], "feature 70 of the file) does not exist; the data has 64 features"),
    (["--query-file", "nonexistent.query"], "nonexistent.query: no such file"),
    (["--length", "0"], "--length must be a whole number >= 1 (results per list), got '0'"),
    (["--length=-3"], "--length must be a whole number >= 1 (results per list), got '-3'"),
    (["--length", "2.5"], "--length must be a whole number >= 1 (results per list), got '2.5'"),
])
def test_matrix_command_mistakes_are_one_line(tmp_path, args, message):
    r = shell("matrix", "--ltr", NP2004, "--comparisons", "10", "--out", str(tmp_path / "m.txt"), *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


LGBM_TEST = DATA / "ltr" / "lightgbm-lambdarank-sample" / "rank.test"


def test_length_option_of_matrix_and_simulate_ltr(tmp_path, cli):
    """--length sets the lists' length in `matrix` and `simulate --ltr` (in this process: compiled once)."""
    from irbandits.errors import IrbanditsError

    def run(command, *args):
        return cli(command, "--ltr", LGBM_TEST, "--rankers", "1-3", *args)

    matrices = {}
    for length in (5, 20):
        r = run("matrix", "--comparisons", "300", "--length", length, "--out", tmp_path / f"m{length}.txt",
                "--no-progress")
        assert r.exit_code == 0, r.output
        assert f"lists of {length};" in " ".join(r.output.split())  # rich wraps at 80 columns
        matrices[length] = PreferenceMatrix.load(tmp_path / f"m{length}.txt").p
    assert matrices[5].shape == (3, 3) and not np.array_equal(matrices[5], matrices[20])  # same seed, other lists
    r = run("simulate", "--length", "5", "--matrix", tmp_path / "m5.txt", "-a", "RUCB", "--horizon", "200",
            "--runs", "1", "--out", tmp_path / "sim", "--no-progress")
    assert r.exit_code == 0, r.output
    assert "length=5)" in (tmp_path / "sim" / "config.json").read_text()
    for bad in ("0", "-1", "abc"):
        r = run("simulate", "--length", bad, "-a", "RUCB", "--out", tmp_path / "bad")
        assert isinstance(r.exception, IrbanditsError) and str(r.exception) == \
            f"--length must be a whole number >= 1 (results per list), got '{bad}'"


def test_full_simulation_is_the_same_for_every_worker_count(lgbm):
    import pandas as pd

    env = ClickEnvironment(lgbm.rankers([0, 10, 99, 120]), "navigational", "team-draft")
    P = env.estimate(500, seed=0).matrix
    runs = [simulate(P, ["RUCB", "MergeDTS"], horizon=3000, runs=2, seed=1, progress=False, environment=env, jobs=j)
            for j in (1, 2)]
    cols = ["algorithm", "run", "step", "regret", "recommended"]
    pd.testing.assert_frame_equal(runs[0][cols], runs[1][cols])
    proxy = simulate(P, ["RUCB"], horizon=3000, runs=2, seed=1, progress=False)
    assert not np.array_equal(proxy.regret, runs[0][runs[0].algorithm == "RUCB"].regret)  # it really interleaved


def test_full_and_proxy_results_never_share_an_output_directory(lgbm, tmp_path):
    from irbandits.errors import IrbanditsError

    env = ClickEnvironment(lgbm.rankers([0, 99]), "perfect", "team-draft")
    P = env.estimate(200, seed=0).matrix
    simulate(P, ["RUCB"], horizon=100, runs=1, progress=False, out=tmp_path)
    with pytest.raises(IrbanditsError, match=r"made with Bernoulli duels on the matrix \(no --ltr\), not ClickEnv"):
        simulate(P, ["RUCB"], horizon=100, runs=1, progress=False, out=tmp_path, environment=env)
