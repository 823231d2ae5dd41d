"""Do partial qrels rank the runs right: tau, tau-ap and flips by hand, the scorer against ir-measures,
`pool simulate --rank-runs` on DL-2021."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from helpers import DATA, cli_error, shell
from scipy.stats import kendalltau, ttest_rel

from irbandits.io import read_qrels, read_runs
from irbandits.measures.agreement import RunScorer, agreement, flips, separated
from irbandits.measures.standard import standard
from irbandits.pooling import depth_pools
from irbandits.pooling.pools import judged_pools
from irbandits.pooling.ranking import measure_list, rank_runs
from irbandits.pooling.simulate import simulate_pools

DL21 = DATA / "trec-dl-2021-passage"


def _tau_by_pairs(x, y):
    """Kendall's tau of two rankings without ties: (concordant - discordant) / pairs."""
    s = [np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in itertools.combinations(range(len(x)), 2)]
    return sum(s) / len(s)


def test_tau_matches_scipy_and_the_pair_count():
    rng = np.random.default_rng(3)
    for _ in range(20):
        full = rng.random((12, 8))
        partial = full + rng.normal(0, 0.2, full.shape)
        a, b = full.mean(axis=1), partial.mean(axis=1)
        got = agreement(full, partial)["tau"]
        assert got == pytest.approx(kendalltau(a, b).statistic) and got == pytest.approx(_tau_by_pairs(a, b))
    tied = np.array([[1.0], [1.0], [2.0], [3.0]])  # ties: tau-b, as scipy counts them
    assert agreement(tied, tied[::-1])["tau"] == pytest.approx(kendalltau(tied[:, 0], tied[::-1, 0]).statistic)


def test_tau_ap_weighs_a_swap_at_the_top_more_than_at_the_bottom():
    full = np.array([[4.0], [3.0], [2.0], [1.0]])  # runs A > B > C > D
    bottom = agreement(full, np.array([[4.0], [3.0], [1.0], [2.0]]))  # C, D swapped
    top = agreement(full, np.array([[3.0], [4.0], [2.0], [1.0]]))  # A, B swapped
    # by hand: the share of the runs above each of B, C, D that stay above; tau_ap = 2 * mean - 1
    assert bottom["tau_ap"] == pytest.approx(2 * (1 + 1 + 2 / 3) / 3 - 1)  # 7/9
    assert top["tau_ap"] == pytest.approx(2 * (0 + 1 + 1) / 3 - 1)  # 1/3
    assert bottom["tau"] == top["tau"] == pytest.approx(4 / 6)


def test_flips_count_reversed_pairs_among_those_the_t_test_separates():
    full = np.array([[4, 3, 5, 4], [2, 2, 3, 1], [1, 0, 1, 0], [2, 2, 2, 2]], float)  # runs A, B, C, D
    # by hand with scipy's paired t-test: A-B, A-C, A-D, B-C, D-C are separated at 0.05; B-D is not
    p = {(i, j): ttest_rel(full[i], full[j]).pvalue for i, j in itertools.combinations(range(4), 2)}
    assert separated(full).sum() == 2 * sum(v < 0.05 for v in p.values()) == 10
    partial = full.copy()
    partial[0] = 0  # A drops below everyone: A-B, A-C, A-D flip
    partial[1] = [3, 3, 3, 3]  # B rises above D: not separated, no flip counted
    assert flips(full, partial) == (3, 5)
    assert flips(full, full) == (0, 5)
    tie = full.copy()
    tie[2] = tie[1]  # B and C tie under the partial qrels: no flip
    assert flips(full, tie) == (0, 5)
    assert flips(full, partial, alpha=1e-6) == (0, 0)


def _dl21(topics=8):
    runs, qrels = read_runs(DL21 / "runs"), read_qrels(DL21 / "qrels.txt")
    pools = judged_pools(depth_pools(runs, 10), qrels)
    pools = {t: pools[t] for t in sorted(pools)[:topics]}
    return runs[runs.topic.isin(pools)], qrels, pools


def test_the_scorer_gives_what_ir_measures_gives_on_dl21():
    runs, qrels, pools = _dl21(5)
    topics = sorted(pools)
    q = qrels[qrels.topic.isin(topics)]
    qd = {t: dict(zip(g.docno, g.grade.astype(int))) for t, g in q.groupby("topic")}
    got = RunScorer(runs, ["nDCG@10", "AP"], topics).score([qd, {}])
    want = standard(runs, q, ["nDCG@10", "AP"]).pivot_table(index=["measure", "run"], columns="topic", values="value")
    for m, name in enumerate(["nDCG@10", "AP"]):
        assert np.allclose(got[0, m], want.loc[name].reindex(columns=topics).fillna(0).to_numpy())
    assert not got[1].any()  # no judgments: every score 0


def test_condensed_lists_skip_unjudged_documents():
    runs = pd.DataFrame(dict(run="x", topic="1", docno=["u", "a"], rank=[1, 2]))
    scorer = RunScorer(runs, ["P@1"], ["1"])
    qrels = [{"1": {"a": 1}}]  # u unjudged
    assert scorer.score(qrels)[0, 0, 0, 0] == 0 and scorer.score(qrels, condensed=True)[0, 0, 0, 0] == 1


def test_partial_qrels_rank_runs_right_at_the_whole_pool_and_worse_before():
    runs, qrels, pools = _dl21()
    orders = {}
    simulate_pools(pools, {t: p.relevance(qrels) for t, p in pools.items()}, ["DocID", "Random"], repetitions=3,
                   orders=orders, keep_orders=2)
    assert orders[("Random", sorted(pools)[0])].shape == (2, pools[sorted(pools)[0]].size)
    size = max(p.size for p in pools.values())
    table = rank_runs(pools, orders, runs, qrels, ["nDCG@10", "bpref"], [5, size])
    assert list(table.columns) == ["method", "budget", "measure", "tau", "tau_ap", "flips", "pairs", "repetitions"]
    whole = table[table.budget == size]
    assert (whole.tau == 1).all() and (whole.tau_ap == 1).all() and (whole.flips == 0).all()
    early = table[table.budget == 5]
    assert (early.tau < 1).all() and set(table.repetitions[table.method == "Random"]) == {2}


def test_measure_list_and_its_errors():
    assert measure_list(["default"]) == ["nDCG@10", "P@10", "AP"]
    assert measure_list(["ndcg_cut_10,P@5", "P@5"]) == ["ndcg_cut_10", "P@5"]
    assert RunScorer.depth(["ndcg_cut_10", "P@20"]) == 20 and RunScorer.depth(["nDCG@10", "AP"]) is None
    with pytest.raises(Exception, match="--rank-runs 'nDCG@x'"):
        measure_list(["nDCG@x"])


def test_cli_rank_runs_on_dl21(tmp_path):
    out = tmp_path / "out"
    r = shell("pool", "simulate", "--runs", DL21 / "runs", "--qrels", DL21 / "qrels.txt", "--depth", "10",
              "-m", "DocID", "-m", "MM-NS", "--rank-runs", "ndcg_cut_10", "--rank-budget", "20",
              "--rank-budget", "1000", "--out", out)
    assert r.returncode == 0, r.stderr
    table = pd.read_csv(out / "table.csv")
    assert {"method", "budget", "measure", "tau", "tau_ap", "flips", "relevant_found"} <= set(table.columns)
    assert set(table.budget) == {20, 1000} and set(table.measure) == {"ndcg_cut_10"}
    assert (table[table.budget == 1000].tau == 1.0).all() and (table[table.budget == 20].tau < 0.95).all()
    assert (out / "tau.png").stat().st_size > 10_000 and "alpha 0.05" in r.stdout


def test_cli_rank_runs_errors(tmp_path):
    args = ("pool", "simulate", "--runs", str(DL21 / "runs"), "--qrels", str(DL21 / "qrels.txt"), "--out", str(tmp_path / "o"))
    assert "not one measure" in cli_error(*args, "--rank-runs", "nosuch")
    assert "needs --pool-size" in cli_error(*args, "--pool", "rrf")
    assert "--pool 'top'" in cli_error(*args, "--pool", "top")


def test_the_losada_study_ranks_the_runs_per_topic_and_over_topics():
    from irbandits.studies import pooling_losada as pl

    r = pl.run_study(depths=(10,), topics=5, repetitions=2, methods=("DocID", "Random"), rank_budgets=(10, 1000),
                     rank_measures=("nDCG@10",), data=DL21)
    t = r.ranking
    assert set(t.split) == {"per-topic", "global"} and set(t.method) == {"DocID", "Random"}
    assert (t[t.budget == 1000].tau == 1).all()  # the whole pool, however it is split
    wide = pl.tau_table(r, 10, "nDCG@10")
    assert list(wide.index) == ["DocID", "DocID + global", "Random", "Random + global"] and list(wide.columns) == [10, 1000]
    # at 10 a topic, the global split's first 10 per topic (min=10) are the per-topic split's
    assert wide.loc["DocID", 10] == wide.loc["DocID + global", 10]
    assert pl.run_study(depths=(10,), topics=2, repetitions=1, methods=("DocID",), data=DL21).ranking is None
