"""``irbandits judge plan`` against real campaigns (a CLI campaign run by a pluggable assessor, the
DL-2021 study's pools, the thesis's Case A) and ``irbandits judge run --assessor module:function``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import DATA, cli_error, cli_output

from irbandits.judging.plan import majority_accuracy
from irbandits.judging.replay import recorded_pools
from irbandits.judging.topk import TopKProcess

DL21 = DATA / "human-preferences-dl21"

ASSESSORS = '''
import random
import re

_rng = random.Random(0)


def _strength(text):
    return int(re.search(r"strength (\\d+)", text).group(1))


def _grade(text):
    return int(re.search(r"grade (\\d+)", text).group(1))


def noisy(topic, query, left, right):
    """Prefers the stronger passage 80 % of the time."""
    better = "left" if _strength(left) > _strength(right) else "right"
    return better if _rng.random() < 0.8 else {"left": "right", "right": "left"}[better]


def oracle(topic, query, left, right):
    """The higher grade wins; equal grades: the stronger passage."""
    key = lambda text: (_grade(text), _strength(text))
    return "left" if key(left) > key(right) else "right"


def broken(topic, query, left, right):
    return "equal"
'''


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    """40 topics with pools of 8-30 items (all grade 1 but one grade-3 item per topic) and their texts."""
    rng = np.random.default_rng(4)
    qrels, texts, queries = [], [], []
    for t in range(40):
        size = int(rng.integers(8, 31))
        queries.append(f"{t}\tquestion {t}\n")
        for i, s in enumerate(rng.permutation(1000)[:size]):
            grade = 3 if i == 0 else 1
            qrels.append(f"{t} 0 d{t}-{i} {grade}\n")
            texts.append(f"d{t}-{i}\tpassage of strength {s} and grade {grade}\n")
    for name, lines in (("qrels", qrels), ("texts", texts), ("queries", queries)):
        (tmp_path / name).write_text("".join(lines))
    (tmp_path / "my_assessors.py").write_text(ASSESSORS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("my_assessors", None)


def judge_run(tmp_path: Path, assessor: str, *extra) -> TopKProcess:
    state = tmp_path / f"{assessor}.json"
    cli_output("judge", "run", tmp_path / "qrels", "--assessor", f"my_assessors:{assessor}", "--queries",
               tmp_path / "queries", "--texts", tmp_path / "texts", "--state", state, "--minimum", 50, *extra)
    return TopKProcess.load(state)


def test_plan_mean_judgments_within_10_percent_of_a_cli_campaign(campaign):
    proc = judge_run(campaign, "noisy")
    actual = sum(len(t.log) for t in proc.topics.values())
    out = json.loads(cli_output("judge", "plan", campaign / "qrels", "--minimum", 50, "--accuracy", 0.8,
                                "--runs", 10, "--format", "json", "--cost-per-judgment", 0.36))
    assert set(out) >= {"judgments", "best_found", "assessors", "cost"}
    assert out["judgments"]["p5"] <= out["judgments"]["mean"] <= out["judgments"]["p95"]
    assert abs(out["judgments"]["mean"] - actual) / actual < 0.10, (out["judgments"], actual)
    assert out["cost"]["mean"] == pytest.approx(out["judgments"]["mean"] * 0.36, abs=0.01)
    assert len(out["best_found"]["topics"]) == 40 and 0.3 < out["best_found"]["mean"] < 1
    assert 2 <= out["assessors"]["max"] <= 8
    text = cli_output("judge", "plan", "--pool-sizes", "8,30", "--runs", 5)
    assert "best item found" in text and "assessors needed" in text


def test_plan_with_more_assessors_per_pair_and_a_fitted_accuracy(tmp_path):
    assert majority_accuracy(0.8, 1) == pytest.approx(0.8)
    assert majority_accuracy(0.8, 2) == pytest.approx(0.8)            # a tie goes to the first answer
    assert majority_accuracy(0.8, 3) == pytest.approx(0.8 ** 3 + 3 * 0.8 ** 2 * 0.2)
    (tmp_path / "quality.json").write_text(json.dumps({"accuracy": 0.9, "tests": 40}))
    one = json.loads(cli_output("judge", "plan", "--pool-sizes", "20,12", "--runs", 10, "--format", "json",
                                "--accuracy-from", tmp_path / "quality.json"))
    three = json.loads(cli_output("judge", "plan", "--pool-sizes", "20,12", "--runs", 10, "--format", "json",
                                  "--accuracy-from", tmp_path / "quality.json", "--assessors-per-pair", 3))
    assert one["accuracy"] == three["accuracy"] == 0.9
    assert 2.5 < three["judgments"]["mean"] / one["judgments"]["mean"] < 3.5
    assert three["assessors"]["max"] % 3 == 0 and three["best_found"]["mean"] >= one["best_found"]["mean"] - 0.1
    assert "--pool-sizes: whole numbers" in cli_error("judge", "plan", "--pool-sizes", "3,x")
    (tmp_path / "bad.json").write_text("{}")
    assert "not a campaign quality JSON" in cli_error("judge", "plan", "--pool-sizes", "3", "--accuracy-from",
                                                      tmp_path / "bad.json")


@pytest.mark.skipif(not DL21.exists(), reason="DL-2021 preference data not present")
def test_plan_reproduces_the_thesis_counts():
    """The study's 50 pools (1,570 items): 9,713 judgments by the process and 984 more for the extra
    phase (10,697 usable judgments in all, thesis 5.1); Case A (Figure 4.1): 599-759 judgments, 2-5
    assessors."""
    j = pd.read_csv(DL21 / "judgments.txt", sep=" ", header=None, names=["topic", "left", "right", "winner"],
                    dtype=str)
    sizes = ",".join(str(len(p)) for p in recorded_pools(j).values())
    plain = json.loads(cli_output("judge", "plan", "--pool-sizes", sizes, "--runs", 3, "--format", "json"))
    extra = json.loads(cli_output("judge", "plan", "--pool-sizes", sizes, "--runs", 3, "--format", "json",
                                  "--extra", 1))
    assert plain["items"] == 1570 and abs(plain["judgments"]["mean"] - 9713) / 9713 < 0.02
    assert abs(extra["judgments"]["mean"] - 10697) / 10697 < 0.02
    case_a = json.loads(cli_output("judge", "plan", "--pool-sizes", 100, "--runs", 40, "--format", "json"))
    assert 590 <= case_a["judgments"]["min"] and case_a["judgments"]["max"] <= 770
    assert 2 <= case_a["assessors"]["max"] <= 5 and 0.3 < case_a["best_found"]["mean"] < 0.7


def test_judge_run_with_a_grade_oracle_and_errors(campaign):
    proc = judge_run(campaign, "oracle")
    assert all(proc.best()[t] == [f"d{t}-0"] for t in proc.topics)   # the grade-3 item of every topic
    for spec, message in (("my_assessors:broken", "assessor my_assessors:broken answered 'equal'"),
                          ("nomodule_xyz:f", "cannot import nomodule_xyz"), ("my_assessors:nope", "has no nope"),
                          ("justaname", "no automatic assessor is registered as 'justaname'")):
        assert message in cli_error("judge", "run", campaign / "qrels", "--assessor", spec, "--queries",
                                    campaign / "queries", "--texts", campaign / "texts", "--state", campaign / "c.json")
