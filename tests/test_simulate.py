"""The simulation engine: seeds, workers, resuming, regret bookkeeping, RUCB's logarithmic regret."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irbandits.dueling import RUCB
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import new_rng, uniform
from irbandits.simulate import checkpoints, run_one, simulate, summarize

ALGOS = ["RUCB", "RUCB:alpha=0.3"]


def test_checkpoints_are_log_spaced_and_end_at_the_horizon():
    steps = checkpoints(10**8)
    assert steps[0] == 1 and steps[-1] == 10**8
    assert (np.diff(steps) > 0).all() and len(steps) < 100


def test_same_seed_same_table_whatever_the_worker_count():
    P = get_problem("arxiv")
    a = simulate(P, ALGOS, horizon=3000, runs=3, seed=7, jobs=1, progress=False)
    b = simulate(P, ALGOS, horizon=3000, runs=3, seed=7, jobs=2, progress=False)
    cols = ["algorithm", "run", "step", "regret", "copeland_regret", "recommended", "correct"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    c = simulate(P, ALGOS, horizon=3000, runs=3, seed=8, progress=False)
    assert not np.array_equal(a.regret.to_numpy(), c.regret.to_numpy())


def test_regret_is_the_sum_of_per_step_regrets():
    """Replay the compiled run step by step through the interactive object and add up regret."""
    P = get_problem("arxiv")
    perm = np.array([3, 1, 0, 5, 2, 4])
    r = run_one(RUCB(6, seed=2), P, 500, seed=9, perm=perm, steps=np.array([100, 500]))
    algo, env, Q = RUCB(6, seed=2), new_rng(9), P.p[np.ix_(perm, perm)]
    total, ctotal, at = 0.0, 0.0, {}
    for t in range(1, 501):
        c, d = algo.select()
        algo.update(c, d, uniform(env) < Q[c, d])
        total += P.condorcet_regret(perm[c], perm[d])
        ctotal += P.copeland_regret(perm[c], perm[d])
        at[t] = (total, ctotal, perm[algo.recommend()])
    assert r.regret.tolist() == pytest.approx([at[100][0], at[500][0]])
    assert r.copeland_regret.tolist() == pytest.approx([at[100][1], at[500][1]])
    assert r.recommended.tolist() == [at[100][2], at[500][2]]


def test_runs_permute_arms_and_share_the_permutation_across_algorithms():
    P = get_problem("arithmetic")
    df = simulate(P, ALGOS, horizon=200, runs=4, seed=1, progress=False)
    first = df[df.step == 1]
    # at step 1 nothing has been learned, so the recommendation is the permutation's arm 0
    assert first.groupby("run").recommended.nunique().eq(1).all()
    assert first[first.algorithm == "RUCB"].recommended.nunique() > 1


def test_out_dir_resumes_and_refuses_another_experiment(tmp_path):
    P = get_problem("arxiv")
    a = simulate(P, ["RUCB"], horizon=2000, runs=2, seed=1, out=tmp_path, progress=False)
    assert len(list((tmp_path / "runs").glob("*.parquet"))) == 2
    assert pd.read_parquet(tmp_path / "results.parquet").shape == a.shape
    (tmp_path / "runs" / "RUCB--0.parquet").unlink()
    b = simulate(P, ["RUCB"], horizon=2000, runs=2, seed=1, out=tmp_path, progress=False)
    pd.testing.assert_frame_equal(a.drop(columns="run_seconds"), b.drop(columns="run_seconds"))
    with pytest.raises(IrbanditsError, match="different experiment"):
        simulate(P, ["RUCB"], horizon=3000, runs=2, seed=1, out=tmp_path, progress=False)


def test_summary_reports_mean_se_and_accuracy():
    df = simulate(get_problem("arithmetic"), ["RUCB"], horizon=20_000, runs=5, seed=0, progress=False)
    s = summarize(df).iloc[0]
    final = df[df.step == 20_000].regret
    assert s.regret_mean == pytest.approx(final.mean())
    assert s.regret_se == pytest.approx(final.std(ddof=1) / np.sqrt(5))
    assert s.accuracy == 1.0 and s.steps_per_s > 0


def test_rucb_regret_grows_logarithmically():
    """Thesis Theorem 4.x: O(K^2 log T). From 10^4 to 10^6 steps (x100) regret must grow far less
    than linearly; with a Condorcet winner found, roughly by log(10^6)/log(10^4) = 1.5."""
    P = get_problem("arithmetic")
    df = simulate(P, ["RUCB"], horizon=10**6, runs=5, seed=0, progress=False)
    mean = df.groupby("step").regret.mean()
    r4 = np.interp(1e4, mean.index, mean.values)
    r6 = mean.loc[10**6]
    assert r6 / r4 < 3.0, (r4, r6)


def test_problem_and_algorithm_size_must_agree():
    with pytest.raises(IrbanditsError, match="K=5"):
        run_one(RUCB(5), get_problem("arxiv"), 10)


def test_self_duels_are_free_on_a_two_arm_problem():
    P = PreferenceMatrix([[0.5, 0.9], [0.1, 0.5]])
    r = run_one(RUCB(2, seed=0), P, 20_000, seed=0)
    assert r.correct[-1] and r.regret[-1] < 200
