"""The simulation engine: seeds, workers, resuming, regret bookkeeping, RUCB's logarithmic regret."""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd
import pytest

from irbandits.dueling import RUCB, get_algorithm
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.rng import new_rng, uniform
from irbandits.simulate import checkpoints, run_one, simulate, summarize
from irbandits.tasks import Interrupted

ALGOS = ["RUCB", "RUCB:alpha=0.3"]
engine = importlib.import_module("irbandits.simulate")  # the module: the package exports the function by its name


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
    with pytest.raises(IrbanditsError, match="were made with --horizon 2000, not 3000; use --force"):
        simulate(P, ["RUCB"], horizon=3000, runs=2, seed=1, out=tmp_path, progress=False)


def test_other_runs_or_algorithms_do_not_replace_results_unless_forced(tmp_path):
    P = get_problem("arxiv")
    simulate(P, ["RUCB"], horizon=500, runs=2, seed=1, out=tmp_path, progress=False)
    saved = [(tmp_path / name).read_bytes() for name in ("results.parquet", "config.json")]
    with pytest.raises(IrbanditsError) as refused:
        simulate(P, ALGOS, horizon=500, runs=3, seed=1, out=tmp_path, progress=False)
    assert str(refused.value) == (f"results in {tmp_path} were made with --runs 2, not 3; -a RUCB, not -a RUCB "
                                  "-a RUCB:alpha=0.3; use --force to replace them, or another --out")
    assert saved == [(tmp_path / name).read_bytes() for name in ("results.parquet", "config.json")]
    table = simulate(P, ALGOS, horizon=500, runs=3, seed=1, out=tmp_path, progress=False, force=True)
    assert table.groupby("algorithm").run.nunique().to_dict() == {"RUCB": 3, "RUCB:alpha=0.3": 3}
    assert len(list((tmp_path / "runs").glob("*.parquet"))) == 6
    assert pd.read_parquet(tmp_path / "results.parquet").shape == table.shape


def test_interrupted_simulation_keeps_finished_runs_and_resumes(tmp_path):
    """Ctrl-C (here raised by the progress function) in the third run: two runs are kept, the same
    call finishes the rest, identically to an uninterrupted simulation."""
    P = get_problem("arxiv")
    seen = []

    def interrupt(steps):
        seen.append(steps)
        if sum(seen) > 2.5 * 300_000:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as stop:
        simulate(P, ["RUCB"], horizon=300_000, runs=4, seed=2, out=tmp_path, progress=interrupt)
    assert (stop.value.kept, stop.value.total) == (2, 4)
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["RUCB--0.parquet", "RUCB--1.parquet"]
    resumed = simulate(P, ["RUCB"], horizon=300_000, runs=4, seed=2, out=tmp_path, progress=False)
    whole = simulate(P, ["RUCB"], horizon=300_000, runs=4, seed=2, progress=False)
    pd.testing.assert_frame_equal(resumed.drop(columns="run_seconds"), whole.drop(columns="run_seconds"))


@pytest.mark.parametrize("name", ["RUCB", "DTS"])
def test_a_run_in_chunks_equals_a_run_in_one_piece(monkeypatch, name):
    P = get_problem("arxiv")
    steps = checkpoints(5000)
    runs = {}
    for chunk in (7, 10**9):
        monkeypatch.setattr(engine, "CHUNK_STEPS", chunk)
        monkeypatch.setattr(engine, "CHUNK_SECONDS", 0.0)  # no growing: chunks of exactly 7 steps
        algo = get_algorithm(name)(P.K, seed=4)
        reports = []
        runs[chunk] = run_one(algo, P, 5000, seed=5, perm=np.array([2, 0, 1, 5, 4, 3]), on_steps=reports.append), algo
        assert sum(reports) == 5000 and len(reports) == (715 if chunk == 7 else 1)
    (a, algo_a), (b, algo_b) = runs.values()
    assert a.regret.tolist() == b.regret.tolist() and a.copeland_regret.tolist() == b.copeland_regret.tolist()
    assert a.recommended.tolist() == b.recommended.tolist() and np.array_equal(a.steps, steps)
    assert np.array_equal(algo_a._rng, algo_b._rng)
    for x, y in zip(algo_a._st, algo_b._st):
        assert np.array_equal(x, y)


def test_progress_counts_steps_within_runs_also_from_worker_processes():
    """One long run reports progress before it ends; workers report their steps back."""
    P = get_problem("arxiv")
    for jobs in (1, 2):
        reports = []
        simulate(P, ["RUCB"], horizon=1_000_000, runs=2, seed=0, jobs=jobs, progress=reports.append)
        assert sum(reports) == 2_000_000
        assert len(reports) > 2 and min(reports) < 1_000_000, (jobs, reports)


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
