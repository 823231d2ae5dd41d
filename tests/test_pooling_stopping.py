"""Stopping rules: the window estimator against its reference, topics whose relevant documents are known,
judgments saved and relevant documents lost in simulation (synthetic and DL-2021), and the live campaign."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irbandits.errors import IrbanditsError
from irbandits.io import read_qrels, read_runs
from irbandits.pooling import Rank, depth_pools
from irbandits.pooling.budget import budget_table, walk_global
from irbandits.pooling.pools import judged_pools
from irbandits.pooling.simulate import simulate_pools, walk
from irbandits.pooling.state import Campaign
from irbandits.pooling.stopping import WindowStop, parse_stop

DL21 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl-2021-passage"


def reference_window(judgments: list[int], unjudged: int, w: int) -> float:
    """Slow reference of the window estimate from the 0/1 judgments in order."""
    if unjudged <= 0:
        return 0.0
    if len(judgments) < 2 * w:
        return float("inf")
    r1, r2 = sum(judgments[-2 * w:-w]), sum(judgments[-w:])
    if r2 == 0:
        return 0.0
    ceiling = unjudged * r2 / w
    if r2 >= r1:
        return ceiling
    q = r2 / r1
    return min(r2 * q / (1 - q), ceiling)


def test_the_window_estimate_matches_its_reference():
    rng = np.random.default_rng(3)
    for _ in range(500):
        w = int(rng.integers(1, 6))
        judgments = rng.integers(0, 2, int(rng.integers(0, 30))).tolist()
        unjudged = int(rng.integers(0, 20))
        rule = WindowStop(w=w)
        assert rule.estimate(np.cumsum(judgments), unjudged) == pytest.approx(reference_window(judgments, unjudged, w))


def test_parsing_rules():
    assert parse_stop(None) is None and parse_stop("none") is None
    assert parse_stop("window").label == "window:w=20,t=0.5"
    assert parse_stop("WINDOW:w=5,t=1/4").label == "window:w=5,t=0.25"
    for bad, message in [("knee", "unknown stopping rule 'knee'"), ("window:w=0", "window: parameter w=0 is invalid"),
                         ("window:t=0", "window: parameter t=0.0 is invalid"), ("window:w", "expected param=value")]:
        with pytest.raises(IrbanditsError, match=message):
            parse_stop(bad)


def known_topic(relevant: list[int], size: int = 200):
    """One topic, one run that ranks its documents d000, d001, ... in order; ``relevant``: their indices."""
    docs = [f"d{i:03d}" for i in range(size)]
    pools = depth_pools(pd.DataFrame(dict(run="x", topic="1", docno=docs, rank=range(1, size + 1))), size)
    rel = np.zeros(size, np.int64)
    rel[relevant] = 1
    return pools, {"1": rel}


def test_a_topic_whose_relevant_documents_all_come_first_stops_soon_after_them():
    pools, rel = known_topic(list(range(30)))
    found = walk(Rank(pools["1"]), rel["1"])
    rule = parse_stop("window:w=10,t=0.5")
    n = rule.stop_point(found, 200)
    assert n == 39 and found[n - 1] == 30          # the rate fell from 10 to 1 in 10: nothing lost, 161 saved


def test_a_topic_with_a_steady_rate_is_judged_to_the_end_and_the_estimate_is_the_truth():
    pools, rel = known_topic(list(range(0, 200, 5)))       # every fifth document: a rate of 0.2 that never falls
    found = np.cumsum(rel["1"])
    rule = parse_stop("window:w=10,t=0.5")
    assert rule.stop_point(found, 200) == 198              # stops only when fewer than 0.5 are left to find
    for n in (40, 100, 150):
        left = int(rel["1"][n:].sum())
        assert rule.estimate(found[:n], 200 - n) == pytest.approx(left, abs=1)


def test_a_falling_rate_stops_where_the_geometric_tail_is_small():
    # relevant documents thinning out: 8, 4, 2, 1, 0 in windows of 10
    relevant = [*range(0, 8), *range(10, 14), *range(20, 22), 30]
    pools, rel = known_topic(relevant, 100)
    found = np.cumsum(rel["1"])
    rule = parse_stop("window:w=10,t=0.5")
    assert rule.estimate(found[:30], 70) == pytest.approx(2.0)     # r1=4, r2=2: q=1/2, tail 2
    assert rule.estimate(found[:40], 60) == pytest.approx(1.0)     # r1=2, r2=1: tail 1 (the truth: 0)
    assert rule.stop_point(found, 100) == 32 and found[31] == len(relevant)   # windows slide: 4, then 1


def test_simulated_savings_and_losses_are_the_curves_cut_at_the_stopping_points():
    rng = np.random.default_rng(0)
    rows, rels = [], {}
    for t in range(3):
        docs = [f"t{t}-{i:03d}" for i in range(80)]
        for r in range(2):
            rows += [(f"r{r}", str(t), d, k) for k, d in enumerate(rng.permutation(docs)[:60], 1)]
        rels[str(t)] = dict(zip(docs, (rng.random(80) < np.linspace(0.7, 0.0, 80)).astype(int)))
    pools = depth_pools(pd.DataFrame(rows, columns=["run", "topic", "docno", "rank"]), 60)
    rel = {t: np.array([rels[t][d] for d in p.docnos], np.int64) for t, p in pools.items()}
    curves = simulate_pools(pools, rel, ["MoffatA"])
    rule = parse_stop("window:w=5,t=0.5")
    table = budget_table(pools, rel, curves, None, ["per-topic", "global:w=3,min=3"], rule, ["MoffatA"])
    saved = lost = judged = 0
    for t, c in curves.groupby("topic"):
        f = c.relevant_found.to_numpy()
        n = rule.stop_point(f, len(f))
        judged, saved, lost = judged + n, saved + len(f) - n, lost + f[-1] - f[n - 1]
    per_topic = table[table.split == "per-topic"].iloc[0]
    assert (per_topic.judged, per_topic.saved, per_topic.lost) == (judged, saved, lost) and saved > 0
    g = table[table.split != "per-topic"].iloc[0]           # the whole pool: each topic stops at the same point
    assert (g.judged, g.saved, g.lost) == (judged, saved, lost)
    topics, found = walk_global("MoffatA", pools, rel, None, "global:w=3,min=3", rule)
    assert len(topics) == judged and found[-1] == per_topic.relevant_found


def test_dl2021_the_window_rule_saves_judgments_and_loses_few_relevant_documents():
    runs, qrels = read_runs(DL21 / "runs"), read_qrels(DL21 / "qrels.txt")
    pools = judged_pools(depth_pools(runs, 10), qrels)
    rel = {t: p.relevance(qrels, 1) for t, p in pools.items()}
    methods = ["MoffatC", "MTF"]
    curves = simulate_pools(pools, rel, methods)
    table = budget_table(pools, rel, curves, None, ["per-topic"], "window:w=20,t=0.5", methods).set_index("method")
    pooled, relevant = sum(p.size for p in pools.values()), sum(int(r.sum()) for r in rel.values())
    assert (pooled, relevant) == (7447, 4025)
    assert (table.judged + table.saved == pooled).all() and (table.relevant_found + table.lost == relevant).all()
    assert table.loc["MoffatC", "saved"] == 820 and table.loc["MoffatC", "lost"] == 39    # 11% saved, 1% lost
    assert table.loc["MTF", "saved"] == 962 and table.loc["MTF", "lost"] == 67            # 13% saved, 1.7% lost


def test_a_live_campaign_stops_a_topic_and_its_global_share_goes_to_the_others(tmp_path):
    docs = {"1": [f"a{i:02d}" for i in range(40)], "2": [f"b{i:02d}" for i in range(60)]}
    runs = pd.DataFrame([("x", t, d, k) for t, ds in docs.items() for k, d in enumerate(ds, 1)],
                        columns=["run", "topic", "docno", "rank"])
    relevant = {"a00", "a01"} | {f"b{i:02d}" for i in range(0, 60, 2)}   # topic 1 runs dry after two
    c = Campaign(depth_pools(runs, 60), "Rank", budget=50, split="global:w=4,min=8", stop="window:w=4,t=0.5")
    judged = []
    while not (offered := c.next()).empty:
        topic, docno = offered.topic.iloc[0], offered.docno.iloc[0]
        c.add(pd.DataFrame(dict(topic=[topic], docno=[docno], grade=[int(docno in relevant)])))
        judged.append(topic)
    assert c.stopped("1") and not c.stopped("2") and c.done("1") and c.done("2")
    # topic 1 stops as soon as it can (after its 2 w = 8 warm-up judgments: two relevant, then an empty window)
    assert judged.count("1") == 8 and judged.count("2") == 42 and len(judged) == 50
    saved = Campaign.load(c.save(tmp_path / "s.json"))
    assert saved.stopped("1") and saved.progress().to_dict("list") == c.progress().to_dict("list")
    assert saved.stop == "window:w=4,t=0.5" and saved.split == "global:w=4,min=8" and saved.budget == 50
