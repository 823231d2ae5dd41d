"""Measures on the 63 TREC 2021 DL runs: speed, equality with the references, the thesis's numbers, the CLI."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from helpers import DATA, shell
from measure_references import ref_compatibility, ref_pgc

from irbandits.io import read_judgments, read_qrels, read_runs
from irbandits.measures import compatibility, evaluate, mean_over_topics
from irbandits.measures.correlation import tau
from irbandits.studies.best_item_study import random_label_baseline, run_study

RUNS = DATA / "trec-dl-2021-passage" / "runs"
QRELS = DATA / "trec-dl-2021-passage" / "qrels.txt"
JUDGMENTS = DATA / "human-preferences-dl21" / "judgments.txt"
COMBINED = DATA / "human-preferences-dl21" / "Combined-I+II.qrels"


@pytest.fixture(scope="module")
def tables():
    """The DL-2021 runs, qrels and preference judgments, read once."""
    return read_runs(RUNS), read_qrels(QRELS), read_judgments(JUDGMENTS)


def test_all_runs_all_measures_in_seconds_and_equal_to_the_references(tables):
    runs, qrels, judgments = tables
    start = time.perf_counter()
    table = evaluate(runs, ["ndcg_cut_10", "compatibility", "pgc", "best_rr"], qrels=qrels, judgments=judgments)
    seconds = time.perf_counter() - start
    print(f"63 runs x 4 measures: {seconds:.2f} s")
    assert seconds < 60
    assert table.groupby("measure").topic.nunique().to_dict() == {
        "best_rr": 53, "compatibility": 53, "ndcg_cut_10": 53, "pgc": 46}
    got = table.set_index(["run", "topic", "measure"])["value"]
    run = runs[runs.run == "NLE_P_v1"]
    for topic, group in list(run.groupby("topic"))[:12]:
        grades = dict(zip(qrels.docno[qrels.topic == topic], qrels.grade[qrels.topic == topic]))
        assert got[("NLE_P_v1", topic, "compatibility")] == pytest.approx(
            ref_compatibility(list(group.docno), grades), rel=1e-9)
    small = judgments.groupby("topic").filter(lambda g: len(g) <= 60)
    assert small.topic.nunique() >= 3
    for topic, group in small.groupby("topic"):
        if topic in set(run.topic):
            edges = list(zip(group.winner, np.where(group.winner == group.left, group.right, group.left)))
            assert got[("NLE_P_v1", topic, "pgc")] == pytest.approx(
                ref_pgc(list(run.docno[run.topic == topic]), edges), rel=1e-9)


def test_random_labels_with_one_candidate_per_topic_are_best_item_mrr(tables):
    runs, qrels, _ = tables
    one = qrels[qrels.grade == 3].groupby("topic").head(1)       # a single top-grade passage per topic
    table = evaluate(runs, ["best_rr", "ndcg_cut_10"], qrels=qrels, best=one)
    means = mean_over_topics(table).pivot(index="run", columns="measure", values="value")
    base = random_label_baseline(runs, one.assign(grade=3), means["ndcg_cut_10"], draws=3, seed=1)
    assert base.tau.tolist() == pytest.approx([tau(means["best_rr"], means["ndcg_cut_10"])] * 3)
    assert base.best_mrr.tolist() == pytest.approx([means["best_rr"].max()] * 3)


def test_best_item_study_reproduces_the_thesis():
    study = run_study(DATA, samples=200, draws=300, seed=0)
    comp = study["comparisons"].set_index(["a", "b"])
    ndcg_pgc = comp.loc[("nDCG@10", "PGC")]
    assert abs(ndcg_pgc.tau - 0.8150) < 0.05                       # published 0.8150
    assert comp.loc[("MRR (Combined I+II+III)", "PGC")].tau_high > 0.8  # published "over 0.8"
    assert comp.loc[("MRR (Combined I+II)", "PGC")].tau_high > 0.8
    low, high = np.quantile(study["baseline"].tau, [0.025, 0.975])
    assert abs(low - 0.485) < 0.05 and abs(high - 0.735) < 0.05    # published 0.485-0.735
    mlo, mhi = np.quantile(study["baseline"].best_mrr, [0.025, 0.975])
    assert abs(mlo - 0.120) < 0.02 and abs(mhi - 0.219) < 0.02     # published 0.120-0.219
    assert study["means"].loc["NLE_P_v1", "MRR (Combined I+II)"] == pytest.approx(0.3946, abs=0.01)


def test_cli_evaluate_csv_parquet_and_compare_measures(tmp_path):
    runs = [RUNS / "NLE_P_v1.gz", RUNS / "watpfd.gz", RUNS / "yorku21_a.gz"]
    args = [a for r in runs for a in ("--runs", r)]
    r = shell("evaluate", *args, "--qrels", QRELS, "--judgments", JUDGMENTS, "-m", "ndcg_cut_10", "-m", "pgc",
              "--format", "csv", "--per-topic", "--out", str(tmp_path / "e.parquet"))
    assert r.returncode == 0, r.stderr
    rows = pd.read_csv(pd.io.common.StringIO(r.stdout), dtype={"topic": str})
    assert list(rows.columns) == ["run", "topic", "measure", "value"]
    assert len(rows) == 3 * (53 + 1) + 3 * (46 + 1)
    assert rows[rows.topic == "all"].set_index(["run", "measure"]).value[("NLE_P_v1", "pgc")] == pytest.approx(0.4337, abs=1e-3)
    assert "evaluated 3 runs x 2 measures in" in r.stderr
    assert len(pd.read_parquet(tmp_path / "e.parquet")) == len(rows)
    plot = tmp_path / "c.png"
    r = shell("compare-measures", "--runs", RUNS, "--qrels", QRELS, "--best", COMBINED, "-m", "ndcg_cut_10",
              "-m", "best_rr", "--samples", "50", "--plot", str(plot))
    assert r.returncode == 0, r.stderr
    assert "0.658" in r.stdout and plot.stat().st_size > 10_000


@pytest.mark.parametrize("args, message", [
    (["-m", "pgc", "--qrels", QRELS], "error: measure pgc needs --judgments"),
    (["-m", "nDCG@10", "--qrels", "nope.txt"], "error: --qrels nope.txt: no such file"),
    (["-m", "ndcg_cut_10"], "error: measure ndcg_cut_10 needs --qrels"),
    (["-m", "P", "--qrels", QRELS], "error: measure 'P': invalid param cutoff=not given"),
    (["-m", "ndcg_cut", "--qrels", QRELS], "error: 'ndcg_cut' names 9 measures (nDCG@5, nDCG@10, nDCG@15, ...)"),
])
def test_cli_mistakes_are_one_line(args, message):
    r = shell("evaluate", "--runs", RUNS / "watpfd.gz", *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_compatibility_equals_ir_measures_compat_at_its_depth(tables):
    """ir-measures' Compat evaluates RBO to the longer of run and ideal, not to 1000; at that depth they agree."""
    import ir_measures

    runs, qrels, _ = tables
    run = runs[runs.run == "watpfd"]
    compat = ir_measures.parse_measure("Compat(p=0.95)")
    frame = pd.DataFrame({"query_id": run.topic, "doc_id": run.docno, "score": 1.0 / run["rank"]})
    ref = {m.query_id: m.value for m in ir_measures.iter_calc(
        [compat], qrels.rename(columns={"topic": "query_id", "docno": "doc_id", "grade": "relevance"}), frame)}
    for topic in sorted(ref)[:10]:
        depth = max(int((run.topic == topic).sum()), int(((qrels.topic == topic) & (qrels.grade > 0)).sum()))
        ours = compatibility(run[run.topic == topic], qrels, depth=depth)
        assert float(ours.value.iat[0]) == pytest.approx(ref[topic], rel=1e-9)
