"""Measures on hand-computed cases, and against literal transcriptions of the reference definitions."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from measure_references import ref_compatibility, ref_fas, ref_pgc

from irbandits.errors import IrbanditsError
from irbandits.measures import best_items, compatibility, evaluate, fas_ranking, mean_over_topics, parse_measure, pgc
from irbandits.measures.correlation import compare, tau, tau_ap

# --- helpers -------------------------------------------------------------------------------

def runs_table(rankings: dict) -> pd.DataFrame:
    """``{(run, topic): [docno, ...]}`` -> a ranked run table."""
    rows = [(r, t, d, k + 1) for (r, t), docs in rankings.items() for k, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["run", "topic", "docno", "rank"])


def qrels_table(labels: dict) -> pd.DataFrame:
    rows = [(t, d, g) for t, grades in labels.items() for d, g in grades.items()]
    return pd.DataFrame(rows, columns=["topic", "docno", "grade"])


def judgments_table(topic, edges) -> pd.DataFrame:
    """Edges winner -> loser as judgments, the winner shown left and right in turn."""
    rows = [(topic, w, l, w) if k % 2 else (topic, l, w, w) for k, (w, l) in enumerate(edges)]
    return pd.DataFrame(rows, columns=["topic", "left", "right", "winner"])


def value(table, run="r", topic="1"):
    return float(table.set_index(["run", "topic"])["value"][(run, topic)])


# --- compatibility -------------------------------------------------------------------------

def test_rbo_by_hand_swapped_pair_scores_one_third():
    # ideal a, b; run b, a; p = 0.5, depth 2: overlap 0 at depth 1, 2/2 at depth 2 (weight 0.5),
    # so RBO = 0.5 / 1.5 and the ideal's own RBO = (1 + 0.5) / 1.5 = 1: normalised 1/3.
    runs = runs_table({("r", "1"): ["b", "a"]})
    qrels = qrels_table({"1": {"a": 2, "b": 1}})
    assert value(compatibility(runs, qrels, p=0.5, depth=2)) == pytest.approx(1 / 3)


def test_perfect_run_scores_one_reversed_low_and_ties_follow_the_run():
    qrels = qrels_table({"1": {"a": 3, "b": 2, "c": 1, "d": 1, "x": 0}})
    runs = runs_table({("perfect", "1"): ["a", "b", "d", "c", "x"], ("reversed", "1"): ["x", "c", "d", "b", "a"],
                       ("tied", "1"): ["a", "b", "c", "d"]})
    out = compatibility(runs, qrels)
    assert value(out, "perfect") == pytest.approx(1.0) and value(out, "tied") == pytest.approx(1.0)
    assert value(out, "reversed") == pytest.approx(ref_compatibility(["x", "c", "d", "b", "a"], {"a": 3, "b": 2, "c": 1, "d": 1}))
    assert value(out, "reversed") < 0.75


def test_missing_topic_and_no_judged_item_score_zero():
    runs = runs_table({("r", "1"): ["a", "b"], ("s", "1"): ["y", "z"], ("s", "2"): ["c"], ("s", "4"): ["z"]})
    qrels = qrels_table({"1": {"a": 1}, "2": {"c": 1}, "3": {"q": 1}, "4": {"z": 0}})
    table = evaluate(runs, ["compatibility", "best_rr"], qrels=qrels)
    # topic 3 is answered by no run and topic 4 has no positive label: skipped; topic 2 is missing from run r: 0
    assert sorted(set(table.topic)) == ["1", "2"]
    got = table.set_index(["run", "topic", "measure"])["value"]
    assert got[("r", "2", "compatibility")] == 0.0 and got[("s", "1", "compatibility")] == 0.0
    assert got[("r", "1", "best_rr")] == 1.0 and got[("s", "2", "best_rr")] == 1.0
    means = mean_over_topics(table).set_index(["run", "measure"])["value"]
    assert means[("r", "compatibility")] == pytest.approx(0.5)


@pytest.mark.parametrize("seed", range(6))
def test_compatibility_equals_reference_on_random_graded_and_preference_qrels(seed):
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(40)]
    grades = {d: float(rng.choice([0, 1, 1, 2, 3, 2.5])) for d in rng.choice(docs, 25, replace=False)}
    run = list(rng.choice(docs, int(rng.integers(1, 40)), replace=False))
    p, depth = [(0.95, 1000), (0.8, 10), (0.5, 3)][seed % 3]
    got = value(compatibility(runs_table({("r", "1"): run}), qrels_table({"1": grades}), p=p, depth=depth))
    assert got == pytest.approx(ref_compatibility(run, grades, p, depth), rel=1e-12)


# --- PGC -------------------------------------------------------------------------------------

def test_fas_cycle_ties_follow_the_run_and_transitive_graphs_keep_their_order():
    cycle = [("a", "b"), ("b", "c"), ("c", "a")]
    for run in itertools.permutations("abc"):
        order = fas_ranking(judgments_table("1", cycle), list(run))
        assert order[0] == run[0] and order == ref_fas(cycle, list(run))
    chain = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "c"), ("a", "d")] * 2
    assert fas_ranking(judgments_table("1", chain), ["d", "c", "b", "a"]) == ["a", "b", "c", "d"]


def test_pgc_perfect_reversed_and_unjudged_runs():
    edges = [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d"), ("b", "d"), ("a", "d"), ("d", "a")]
    runs = runs_table({("perfect", "1"): ["a", "b", "c", "d"], ("reversed", "1"): ["d", "c", "b", "a"],
                       ("none", "1"): ["x", "y"]})
    out = pgc(runs, judgments_table("1", edges))
    assert value(out, "perfect") == pytest.approx(1.0)
    assert value(out, "reversed") == pytest.approx(ref_pgc(["d", "c", "b", "a"], edges)) and value(out, "reversed") < 0.75
    assert value(out, "none") == 0.0


@pytest.mark.parametrize("seed", range(8))
def test_pgc_equals_reference_on_random_multigraphs(seed):
    rng = np.random.default_rng(100 + seed)
    nodes = [f"n{i}" for i in range(int(rng.integers(3, 14)))]
    edges = []
    for _ in range(int(rng.integers(2, 40))):
        a, b = rng.choice(len(nodes), 2, replace=False)
        edges.append((nodes[a], nodes[b]) if rng.random() < 0.7 or a < b else (nodes[b], nodes[a]))
    run = list(rng.choice(nodes + ["x", "y"], int(rng.integers(1, len(nodes) + 2)), replace=False))
    p, depth = [(0.95, 1000), (0.8, 5)][seed % 2]
    got = value(pgc(runs_table({("r", "1"): run}), judgments_table("1", edges), p=p, depth=depth))
    assert fas_ranking(judgments_table("1", edges), run) == ref_fas(edges, run)
    assert got == pytest.approx(ref_pgc(run, edges, p, depth), rel=1e-12)


def test_tied_scores_follow_trec_eval_order_in_every_measure(tmp_path):
    from irbandits.io import read_runs

    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 5.0 x\n1 Q0 b 2 5.0 x\n1 Q0 c 3 4.0 x\n")   # trec_eval: b, a, c
    qrels = qrels_table({"1": {"a": 2, "c": 1}})
    table = evaluate(read_runs([path]), ["RR", "best_rr", "compatibility"], qrels=qrels).set_index("measure")["value"]
    assert table["RR"] == 0.5 and table["best_rr"] == 0.5
    assert table["compatibility"] == pytest.approx(ref_compatibility(["b", "a", "c"], {"a": 2, "c": 1}))


# --- best items and standard measures ------------------------------------------------------------

def test_best_rr_uses_only_the_top_grade_and_ndcg_comes_from_ir_measures():
    runs = runs_table({("r", "1"): ["b", "a", "c"], ("r", "2"): ["x", "y"]})
    qrels = qrels_table({"1": {"a": 2, "b": 1, "c": 2}, "2": {"y": 1}})
    table = evaluate(runs, ["best_rr", "RR", "ndcg_cut_10"], qrels=qrels).set_index(["topic", "measure"])["value"]
    assert table[("1", "best_rr")] == 0.5 and table[("1", "RR")] == 1.0 and table[("2", "best_rr")] == 0.5
    assert table[("2", "ndcg_cut_10")] == pytest.approx(1 / math.log2(3))
    best = qrels_table({"1": {"c": 1}})
    assert evaluate(runs, ["best_rr"], qrels=qrels, best=best).value.tolist() == [pytest.approx(1 / 3)]
    assert best_items(qrels).sort_values("docno").docno.tolist() == ["a", "c", "y"]


@pytest.mark.parametrize("spec, message", [
    ("compat", "unknown measure 'compat'"),
    ("compatibility:q=1", "'q=1' is not param=value with a parameter of p, depth"),
    ("compatibility:p=1.5", "parameter p=1.5 is invalid; p must be in (0, 1)"),
    ("pgc", "measure pgc needs judgments"),
])
def test_bad_measure_specs_name_the_problem(spec, message):
    runs = runs_table({("r", "1"): ["a"]})
    with pytest.raises(IrbanditsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        evaluate(runs, [spec], qrels=qrels_table({"1": {"a": 1}}))


def test_parameters_parse_and_preference_qrels_need_whole_grades_for_ir_measures():
    assert parse_measure("pgc:p=0.8,depth=50").params == {"p": 0.8, "depth": 50}
    with pytest.raises(IrbanditsError, match="whole-number qrels grades"):
        evaluate(runs_table({("r", "1"): ["a"]}), ["nDCG@10"], qrels=qrels_table({"1": {"a": 0.5}}))


# --- correlations ----------------------------------------------------------------------------

def test_tau_ap_equals_the_published_formula_without_ties():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(3, 30))
        x, y = rng.permutation(n).astype(float), rng.permutation(n).astype(float)
        order = np.argsort(-x)                       # reference ranking, best first
        formula = 2 / (n - 1) * sum(sum(y[order[j]] > y[order[i]] for j in range(i)) / i for i in range(1, n)) - 1
        assert tau_ap(x, y) == pytest.approx(formula)
    assert tau_ap([3, 2, 1], [3, 2, 1]) == 1.0 and tau_ap([3, 2, 1], [1, 2, 3]) == -1.0
    assert tau([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(2 / 3)


def test_bootstrap_interval_brackets_tau_and_shrinks_with_agreement():
    rng = np.random.default_rng(0)
    skill = np.linspace(0, 1, 20)
    rows = []
    for r, s in enumerate(skill):
        for t in range(30):
            base = s + rng.normal(0, 0.3)
            rows += [(f"r{r}", str(t), "a", base), (f"r{r}", str(t), "close", base + rng.normal(0, 0.05)),
                     (f"r{r}", str(t), "far", s + rng.normal(0, 1.5))]
    table = pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])
    close, far = compare(table, "a", "close", samples=300), compare(table, "a", "far", samples=300)
    for c in (close, far):
        assert c["tau_low"] <= c["tau"] <= c["tau_high"]
    assert close["tau"] > 0.9 and far["tau"] < close["tau_low"]
    assert far["tau_high"] - far["tau_low"] > close["tau_high"] - close["tau_low"]
