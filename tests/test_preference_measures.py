"""Preference-based measures (ppref, wpref, rpref, pref_ndcg): hand-computed cases, preferences from
judgments and graded qrels, the CLI on the DL-2021 data, and the preference-measures study."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from helpers import DATA, cli_error

from irbandits.errors import IrbanditsError
from irbandits.io import read_judgments
from irbandits.measures import evaluate, mean_over_topics
from irbandits.measures.preference import (
    graded_preferences,
    judged_preferences,
    pair_counts,
    ppref,
    pref_ndcg,
    preference_gains,
    rpref,
    wpref,
)

RUNS = DATA / "trec-dl-2021-passage" / "runs"
QRELS = DATA / "trec-dl-2021-passage" / "qrels.txt"
JUDGMENTS = DATA / "human-preferences-dl21" / "judgments.txt"
needs_data = pytest.mark.skipif(not JUDGMENTS.exists(), reason="needs ../shared/data")

# One run ranks a, b, c, d (ranks 1-4). The judgments state, by majority, b > a (two votes to one),
# a > c, c > d, e > a (e not retrieved) and f > g (neither retrieved); x and y got one vote each: a tie,
# no preference. At k = 3 the top is a(1), b(2), c(3):
#   b > a  both in the top, a above b          explicit, wrong,   weight 1/(log2 1 + 1) = 1
#   a > c  both in the top, a above c          explicit, correct, weight 1
#   c > d  c in the top, d at 4 below it       implicit, correct, weight 1/(log2 3 + 1) = 0.386853
#   e > a  a in the top, e not retrieved       implicit, wrong,   weight 1
#   f > g  neither in the top                  not ordered
RUN = pd.DataFrame({"run": "r", "topic": "1", "docno": list("abcd"), "rank": [1, 2, 3, 4]})
JUDGED = pd.DataFrame([("1", "a", "b", "b"), ("1", "b", "a", "b"), ("1", "a", "b", "a"), ("1", "a", "c", "a"),
                       ("1", "d", "c", "c"), ("1", "a", "e", "e"), ("1", "g", "f", "f"), ("1", "x", "y", "x"),
                       ("1", "y", "x", "y")], columns=["topic", "left", "right", "winner"])
W3 = 1 / (math.log2(3) + 1)


def score(measure, **params):
    return float(measure(RUN, JUDGED, k=3, **params).value.iat[0])


def test_majority_per_pair_and_ties_left_out():
    prefs = judged_preferences(JUDGED)
    assert sorted(zip(prefs.better, prefs.worse)) == [("a", "c"), ("b", "a"), ("c", "d"), ("e", "a"), ("f", "g")]
    assert prefs.set_index("better").loc["b", ["votes", "against"]].tolist() == [2, 1]


def test_ppref_by_hand():
    # ordered pairs: b>a, a>c, c>d, e>a; correct: a>c, c>d -> 2 / 4
    assert score(ppref) == pytest.approx(0.5)
    # explicit (both in the top 3): b>a wrong, a>c right -> 1/2; implicit: c>d right, e>a wrong -> 1/2
    assert score(ppref, pairs="explicit") == pytest.approx(0.5)
    assert score(ppref, pairs="implicit") == pytest.approx(0.5)
    # at k = 1 only a is in the top: b>a wrong, a>c right, e>a wrong -> 1/3
    assert float(ppref(RUN, JUDGED, k=1).value.iat[0]) == pytest.approx(1 / 3)


def test_wpref_by_hand():
    # weights 1 (b>a), 1 (a>c), W3 (c>d), 1 (e>a); correct a>c and c>d: (1 + W3) / (3 + W3) = 0.409481
    assert score(wpref) == pytest.approx((1 + W3) / (3 + W3))
    assert score(wpref) == pytest.approx(0.409481, abs=1e-6)
    # implicit pairs only: c>d (W3, right), e>a (1, wrong) -> W3 / (1 + W3) = 0.278943
    assert score(wpref, pairs="implicit") == pytest.approx(0.278943, abs=1e-6)


def test_rpref_by_hand():
    # correct pairs a>c, c>d out of all five preference pairs (f>g counts, though unordered) -> 2 / 5
    assert score(rpref) == pytest.approx(0.4)
    assert score(rpref, pairs="explicit") == pytest.approx(0.2)
    counts = pair_counts(RUN, judged_preferences(JUDGED), k=3).iloc[0]
    assert (counts.ordered, counts.correct, counts.total) == (4, 2, 5)


def test_pref_ndcg_by_hand():
    # gains = share of pairs won: a 1/3 (beats c, loses to b and e), b 1, c 1/2, d 0, e 1, f 1, g 0
    gains = preference_gains(judged_preferences(JUDGED)).set_index("docno").gain
    assert gains.to_dict() == pytest.approx({"a": 1 / 3, "b": 1, "c": 0.5, "d": 0, "e": 1, "f": 1, "g": 0})
    # DCG@3 = 1/3 / log2 2 + 1 / log2 3 + 0.5 / log2 4 = 1.214263; ideal 1, 1, 1: 1 + 1/log2 3 + 1/2 = 2.130930 -> 0.569828
    dcg = 1 / 3 + 1 / math.log2(3) + 0.5 / 2
    assert score(pref_ndcg) == pytest.approx(dcg / (1.5 + 1 / math.log2(3)))
    assert score(pref_ndcg) == pytest.approx(0.569828, abs=1e-6)


def test_preferences_from_graded_qrels():
    qrels = pd.DataFrame({"topic": "1", "docno": list("abcd"), "grade": [2, 1, 1, 0]})
    prefs = graded_preferences(qrels)
    # b and c share grade 1: no preference between them
    assert list(zip(prefs.better, prefs.worse)) == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "d"), ("c", "d")]
    # the run d, a, b at k = 2 (top: d, a): a>b right, a>c right (c unranked), a>d wrong, b>d wrong,
    # c>d wrong -> ppref 2 / 5
    run = pd.DataFrame({"run": "r", "topic": "1", "docno": list("dab"), "rank": [1, 2, 3]})
    assert float(ppref(run, qrels, k=2, source="qrels").value.iat[0]) == pytest.approx(0.4)
    table = evaluate(run, ["ppref:k=2,source=qrels", "rpref:k=2,source=qrels"], qrels=qrels)
    assert table.value.tolist() == pytest.approx([0.4, 0.4])


def test_a_perfect_ranking_scores_one_and_its_reverse_zero():
    qrels = pd.DataFrame({"topic": "1", "docno": list("abcde"), "grade": [4, 3, 2, 1, 0]})
    best = pd.DataFrame({"run": "r", "topic": "1", "docno": list("abcde"), "rank": range(1, 6)})
    worst = best.assign(run="w", docno=list("edcba"))
    table = evaluate(pd.concat([best, worst]), ["ppref:k=5,source=qrels", "wpref:k=5,source=qrels",
                                                "rpref:k=5,source=qrels", "pref_ndcg:k=5,source=qrels"], qrels=qrels)
    assert table[table.run == "r"].value.tolist() == pytest.approx([1, 1, 1, 1])
    assert table[table.run == "w"].value.tolist()[:3] == pytest.approx([0, 0, 0])


def test_parameters_and_missing_labels_are_one_clear_error():
    with pytest.raises(IrbanditsError, match="pairs=.?'some'.? is invalid"):
        evaluate(RUN, ["ppref:pairs=some"], judgments=JUDGED)
    with pytest.raises(IrbanditsError, match="k=0"):
        evaluate(RUN, ["wpref:k=0"], judgments=JUDGED)
    with pytest.raises(IrbanditsError, match="ppref:source=qrels needs qrels"):
        evaluate(RUN, ["ppref:source=qrels"], judgments=JUDGED)
    with pytest.raises(IrbanditsError, match="unknown parameter|not param=value"):
        evaluate(RUN, ["rpref:depth=3"], judgments=JUDGED)


# --- the CLI and the study on the DL-2021 data ---------------------------------------------

@needs_data
def test_cli_scores_the_63_runs_like_the_library(cli):
    r = cli("evaluate", "--runs", RUNS, "--prefs", JUDGMENTS, "--qrels", QRELS, "-m", "ppref", "-m", "wpref",
            "-m", "rpref", "-m", "pref_ndcg", "-m", "ppref:pairs=implicit", "-m", "ppref:source=qrels",
            "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = pd.read_csv(pd.io.common.StringIO(r.output[r.output.index("run,topic"):]))
    means = rows[rows.topic == "all"].pivot(index="run", columns="measure", values="value")
    assert means.shape == (63, 6)
    assert ((means >= 0) & (means <= 1)).all().all()
    from irbandits.io import read_runs
    runs = read_runs(RUNS)
    one = runs[runs.run == "NLE_P_v1"]
    direct = mean_over_topics(evaluate(one, ["ppref"], judgments=read_judgments(JUDGMENTS)))
    assert means.loc["NLE_P_v1", "ppref"] == pytest.approx(direct.value.iat[0], abs=1e-6)
    # preferences from the official qrels order the runs' pairs better than the crowd's: a real difference
    assert means["ppref:source=qrels"].mean() > means["ppref"].mean()


@needs_data
def test_cli_errors_name_the_measure_or_the_file_and_line(tmp_path):
    bad = tmp_path / "prefs.txt"
    bad.write_text("23287 a b a\n23287 a b\n")
    assert cli_error("evaluate", "--runs", RUNS, "--prefs", bad, "-m", "ppref") == (
        f"{bad}, line 2: a judgment line has 4 columns (topic left right winner), found 3")
    wrong = tmp_path / "winner.txt"
    wrong.write_text("23287 a b c\n")
    assert f"{wrong}, line 1, column 4" in cli_error("evaluate", "--runs", RUNS, "--prefs", wrong, "-m", "wpref")
    assert "unknown measure 'ppfer'" in cli_error("evaluate", "--runs", RUNS, "--prefs", JUDGMENTS, "-m", "ppfer")
    assert cli_error("evaluate", "--runs", RUNS, "-m", "rpref") == "measure rpref needs --judgments (or --prefs)"
    assert cli_error("evaluate", "--runs", RUNS, "--prefs", JUDGMENTS, "-m", "ppref:source=qrels") == (
        "measure ppref:source=qrels needs --qrels")


@needs_data
def test_study_at_a_small_scale(tmp_path):
    from irbandits.studies.preference_measures import run_study, write_report

    study = run_study(DATA, samples=200, seed=1)  # with fewer samples BCa can fail (every tau below)
    comp = study["comparisons"]
    assert len(comp) == 20 and comp.tau.between(-1, 1).all()
    assert (comp.tau_low <= comp.tau_high).all() and (comp.pct_low <= comp.pct_high).all()
    # the observed tau lies within the bootstrap's reach: above the percentile interval's lower end and
    # below the BCa interval's upper end (the two intervals are shifted against each other: see the report)
    assert ((comp.pct_low <= comp.tau) & (comp.tau <= comp.tau_high)).all()
    tau = comp.set_index(["measure", "reference"]).tau
    # ppref on the crowd judgments ranks the runs like nDCG@10, and PGC (same judgments) more so
    assert 0.6 < tau[("ppref@10", "nDCG@10")] < tau[("ppref@10", "PGC")]
    # on preferences derived from the graded qrels ppref and nDCG@10 nearly coincide
    assert tau[("ppref@10 (qrels)", "nDCG@10")] > 0.9 > tau[("ppref@10", "nDCG@10")]
    assert study["ndcg_pgc"]["tau"] == pytest.approx(0.8455, abs=1e-4)
    assert study["pairs"] == 8360 and study["ties"] == 325
    doc = write_report(study, tmp_path, tmp_path / "report.md")
    text = doc.read_text()
    assert text.count("<!-- preference-measures:begin -->") == 1 and "| ppref@10 | judgments |" in text
    assert (tmp_path / "preference-measures-tau.png").stat().st_size > 0
    write_report(study, tmp_path, doc)  # a second run replaces its section
    assert doc.read_text().count("<!-- preference-measures:begin -->") == 1
