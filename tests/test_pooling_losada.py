"""Losada et al. (SAC 2016) on the DL-2021 runs: the study's curves against a reference, its claim checks
on the paper's own numbers, and claims.csv from the command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import DATA, run_cli

from irbandits.errors import IrbanditsError
from irbandits.io import read_qrels, read_runs
from irbandits.pooling import depth_pools
from irbandits.pooling.pools import judged_pools
from irbandits.studies import pooling_losada as pl
from irbandits.studies.claims import AGREES, COLUMNS, DISAGREES, read_claims

DL21 = DATA / "trec-dl-2021-passage"
pytestmark = pytest.mark.skipif(not DL21.exists(), reason="needs ../shared/data")
TOPICS = 4


@pytest.fixture(scope="module")
def small():
    return pl.run_study(depths=(100, 10), topics=TOPICS, repetitions=3, seed=1, data=DL21)


def test_docid_curve_is_the_cumulated_relevance_in_docno_order(small):
    runs, qrels = read_runs(DL21 / "runs"), read_qrels(DL21 / "qrels.txt")
    for depth in (100, 10):
        pools = judged_pools(depth_pools(runs, depth), qrels)
        rels = [pools[t].relevance(qrels, 1) for t in sorted(pools)[:TOPICS]]
        top = max(len(r) for r in rels)
        # a topic past its pool keeps its total, as the paper's tables count it
        ref = np.mean([np.concatenate([np.cumsum(r), np.full(top - len(r), r.sum())]) for r in rels], axis=0)
        c = small.curves[(small.curves.depth == depth) & (small.curves.method == "DocID")]
        assert np.allclose(c.found.to_numpy(), ref)
        # every method ends with every relevant document of the pools
        assert np.allclose(pl.table(small, depth)["all"], ref[-1])
    stats = small.pools.set_index("depth")
    assert (stats.topics == TOPICS).all() and (stats.runs == 63).all()
    assert stats.loc[100, "unjudged"] > stats.loc[100, "pooled"] / 2 > stats.loc[10, "unjudged"]


def test_bandits_find_more_than_docid_on_these_topics(small):
    deep, shallow = small.found(100, [100, 300]), small.found(10, [10, 20, 50])
    # DocID's docno order knows nothing of the runs: on the judged depth-100 pools, where relevant documents
    # are a tenth of the pool and sit near the top ranks, every run-following method finds several times more
    assert (deep.loc["MM-NS"] >= deep.loc["DocID"]).all()
    assert (deep.drop(index="DocID")[100] > 3 * deep.loc["DocID", 100]).all()
    # MM-NS finds at least as many as DocID at every level of the depth-10 pools too
    assert (shallow.loc["MM-NS"] >= shallow.loc["DocID"]).all()


def test_claim_checks_agree_on_the_papers_own_trec8_numbers():
    # the paper's TREC8 rows of Tables 2 and 3, with the Figure 1 order for the baselines (DocID < Rank < A < B
    # < C < MTF) and rate 0.5 between MM and MM-NS: the claims the tables support there must agree
    levels = pl.LEVELS[100]
    values = {m: v[:6] for m, v in pl.TREC8.items()}
    mtf = np.array(values["MTF"])
    for k, m in enumerate(("DocID", "Rank", "MoffatA", "MoffatB", "MoffatC")):
        values[m] = mtf * (0.6 + 0.07 * k)
    values["MM-NS:rate=0.5"] = (np.array(values["MM"]) + values["MM-NS"]) / 2
    curves = pd.DataFrame(
        [dict(depth=100, method=m, judgments=n, found=f) for m, v in values.items() for n, f in zip(levels, v)]
    )
    result = pl.Result(curves, pd.DataFrame([dict(depth=100, topics=50, runs=71)]), 100)
    verdicts = {r.claim: r.verdict for r in pl.claim_rows(result)}
    assert len(verdicts) == len(pl.CLAIMS) == 15
    assert set(verdicts.values()) == {AGREES}, [c for c, v in verdicts.items() if v != AGREES]
    # and a table where MTF trails MoffatC at the first level makes "MTF consistently best" disagree
    curves.loc[(curves.method == "MoffatC") & (curves.judgments == 100), "found"] = 40
    assert pl.claim_rows(result)[0].verdict == DISAGREES


def test_command_writes_claims_csv(tmp_path):
    out = tmp_path / "losada"
    result = run_cli(
        "reproduce",
        "pooling-losada",
        "--topics",
        "3",
        "--repetitions",
        "2",
        "--depth",
        "10",
        "--data",
        DL21,
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    rows = read_claims(out)
    assert (out / "claims.csv").read_text().splitlines()[0] == ",".join(COLUMNS)
    assert len(rows) == 15 and {r.study for r in rows} == {"pooling-losada"}
    assert {r.verdict for r in rows} <= {AGREES, DISAGREES}
    assert all(r.scale.startswith("depth 10: 3 topics x 63 runs; 2 repetitions") for r in rows)
    assert (out / "pooling-losada.png").stat().st_size > 10_000 and (out / "table-10.csv").exists()


def test_judged_only_pools_drop_exactly_the_unjudged_documents():
    runs, qrels = read_runs(DL21 / "runs"), read_qrels(DL21 / "qrels.txt")
    full = pl.topic_pools(runs, qrels, 100, topics=TOPICS)
    judged = pl.topic_pools(runs, qrels, 100, topics=TOPICS, judged_only=True)
    for t, p in full.items():
        j = judged[t]
        assessed = set(qrels.docno[qrels.topic == t])
        assert set(j.docnos) == set(p.docnos) & assessed and j.unjudged(qrels) == 0 < p.unjudged(qrels)
        # every run keeps its judged documents in rank order, ranks closed up
        for r in range(len(p.runs)):
            kept = [d for d in p.docnos[p.ranked[r, : p.length[r]]] if d in assessed]
            assert j.docnos[j.ranked[r, : j.length[r]]].tolist() == kept
        # no relevant document is lost, at any grade
        for g in (1, 3):
            assert j.relevance(qrels, g).sum() == p.relevance(qrels, g).sum()


def test_command_passes_judged_only_and_relevant_grade(tmp_path):
    out = tmp_path / "judged"
    args = ["--topics", "2", "--repetitions", "1", "--depth", "100", "--data", DL21, "--out", out]
    result = run_cli("reproduce", "pooling-losada", "--judged-only", "--relevant-grade", "3", *args)
    assert result.exit_code == 0, result.output
    rows = read_claims(out)
    assert all(r.scale.startswith("depth 100: 2 topics x 63 runs, judged documents only, relevant: grade >= 3;")
               for r in rows)
    # the claims are checked at a tenth of the paper's levels, and the table reports them
    assert rows[0].measured.startswith("depth 100: ") and "(after 10: MTF " in rows[0].measured
    table = pd.read_csv(out / "table-100.csv", index_col=0)
    assert list(table.columns) == [*map(str, pl.JUDGED_LEVELS[100]), "all"]
    runs, qrels = read_runs(DL21 / "runs"), read_qrels(DL21 / "qrels.txt")
    pools = pl.topic_pools(runs, qrels, 100, topics=2, judged_only=True)
    assert np.isclose(table.loc["DocID", "all"], np.mean([p.relevance(qrels, 3).sum() for p in pools.values()]))


def test_per_topic_means_give_the_curves_and_the_paired_tests(small):
    runs, qrels = read_runs(DL21 / "runs"), read_qrels(DL21 / "qrels.txt")
    pools = judged_pools(depth_pools(runs, 10), qrels)
    t = small.per_topic[(small.per_topic.depth == 10) & (small.per_topic.method == "DocID")]
    for topic in sorted(pools)[:TOPICS]:
        # DocID's count after n judgments is the cumulated relevance in docno order (the total past the pool)
        rel = np.cumsum(pools[topic].relevance(qrels, 1))
        row = t[t.topic == topic]
        assert row.judgments.tolist() == list(pl.LEVELS[10])
        assert row.found.tolist() == [rel[min(n, len(rel)) - 1] for n in pl.LEVELS[10]]
    tests = pl.paired(small, 100)
    assert list(tests.columns) == ["depth", "a", "b", "level", "mean_a", "mean_b", "p"]
    assert list(dict.fromkeys(zip(tests.a, tests.b))) == list(pl.PAIRS) and len(tests) == 6 * 6
    # the per-topic means average to the study's curves
    found = small.found(100, list(pl.LEVELS[100]))
    for _, r in tests.iterrows():
        assert np.isclose(r.mean_a, found.loc[r.a, r.level]) and np.isclose(r.mean_b, found.loc[r.b, r.level])
    assert ((tests.p > 0) & (tests.p <= 1)).all()


def test_paired_wilcoxon_on_known_differences():
    # MoffatC ahead of MM on all 10 topics after 10 judgments: the exact two-sided p is 2 / 2**10;
    # equal everywhere after 20 and more: p = 1. Pairs without both methods are left out.
    rows = [dict(depth=10, method=m, topic=f"t{k}", judgments=n, found=k + (m == "MoffatC" and n == 10) * (1 + k))
            for m in ("MoffatC", "MM") for k in range(10) for n in pl.LEVELS[10]]
    result = pl.Result(pd.DataFrame(), pd.DataFrame(), 1, per_topic=pd.DataFrame(rows))
    tests = pl.paired(result, 10)
    assert set(zip(tests.a, tests.b)) == {("MoffatC", "MM")} and tests.level.tolist() == list(pl.LEVELS[10])
    assert np.isclose(tests.p[0], 2 / 2**10) and (tests.p[1:] == 1).all()
    assert tests.mean_a[0] == 4.5 + 5.5 and tests.mean_b[0] == 4.5


def test_run_subsets_by_team_and_at_random():
    names = read_runs(DL21 / "runs").run.unique()
    teams = {pl.team(n) for n in names}
    assert len(names) == 63 and len(teams) == 17 and pl.team("uogTrPC") == "uog" and pl.team("ielab-TILDEv2") == "ielab"
    per_team = pl.select_runs(names, one_per_team=True, seed=0)
    assert len(per_team) == 17 and {pl.team(n) for n in per_team} == teams
    assert pl.select_runs(names, one_per_team=True, seed=0) == per_team != pl.select_runs(names, one_per_team=True, seed=1)
    drawn = pl.select_runs(names, 17, seed=0)
    assert len(set(drawn)) == 17 and set(drawn) <= set(names) and drawn == sorted(drawn)
    assert len(pl.select_runs(names, 5, one_per_team=True)) == 5 and pl.select_runs(names) == sorted(names)
    with pytest.raises(IrbanditsError, match="cannot draw 18 of 17 runs"):
        pl.select_runs(names, 18, one_per_team=True)


def test_command_pools_a_subset_and_writes_the_paired_tests(tmp_path):
    out = tmp_path / "subset"
    args = ["--topics", "2", "--repetitions", "1", "--depth", "10", "--data", DL21, "--out", out]
    result = run_cli("reproduce", "pooling-losada", "--one-per-team", "--runs-seed", "2", "--also",
                     "MM-NS:propagate=0", *args)
    assert result.exit_code == 0, result.output
    rows = read_claims(out)
    assert all(r.scale.startswith("depth 10: 2 topics x 17 runs, 17 of the 63 runs (one per team) drawn with seed 2;")
               for r in rows)
    # the extra method is tabulated beside the study's, and the claims are the study's 15
    assert pd.read_csv(out / "table-10.csv", index_col=0).index[-1] == "MM-NS:propagate=0" and len(rows) == 15
    tests = pd.read_csv(out / "paired-10.csv")
    assert len(tests) == len(pl.PAIRS) * len(pl.LEVELS[10]) and "paired Wilcoxon tests" in result.output
