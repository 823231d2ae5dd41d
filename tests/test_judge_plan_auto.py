"""``irbandits judge plan --auto-accuracy ...``: the plan with an automatic assessor in front (the hybrid rule
of judging/hybrid.py), printed beside the all-human plan (issue 25, item 3)."""

from __future__ import annotations

import json

import pytest
from helpers import cli_error, cli_output

SIZES = ["--pool-sizes", "20,12,5", "--runs", "20", "--seed", "3"]


def plan(*args) -> dict:
    return json.loads(cli_output("judge", "plan", *SIZES, "--format", "json", *args))


def test_an_assessor_unsure_of_every_pair_leaves_everything_to_people():
    out = plan("--auto-accuracy", "0.9", "--auto-unsure", "1", "--auto-price", "0.01", "--human-price", "0.5")
    auto = out["auto"]
    assert auto["judgments"] == out["judgments"] and auto["best_found"] == out["best_found"]
    assert auto["automatic"] == out["judgments"] and auto["cutoff"] == 0  # asked every pair, answered none
    assert auto["cost"]["mean"] == pytest.approx(out["cost"]["mean"] + 0.01 * out["judgments"]["mean"], abs=0.01)


def test_a_perfect_assessor_without_audits_needs_no_people_and_costs_its_pairs_only():
    out = plan("--auto-accuracy", "1", "--audit", "0", "--auto-price", "0.02", "--human-price", "0.5")
    auto = out["auto"]
    assert auto["judgments"] == dict(mean=0, p5=0, p95=0, min=0, max=0)
    assert auto["best_found"]["mean"] == 1.0 and auto["cutoff"] == 0
    assert auto["cost"]["mean"] == pytest.approx(0.02 * auto["automatic"]["mean"], abs=0.01)
    assert auto["cost"]["max"] == pytest.approx(0.02 * auto["automatic"]["max"])


def test_a_coin_is_cut_off_and_people_answer_the_rest():
    out = plan("--auto-accuracy", "0.5", "--audit", "0.5")
    auto = out["auto"]
    assert auto["cutoff"] == 1.0
    assert 0 < auto["judgments"]["mean"] < out["judgments"]["mean"]
    assert auto["automatic"]["max"] < out["judgments"]["min"]  # no longer asked once cut off


def test_the_table_shows_both_plans_side_by_side():
    text = " ".join(cli_output("judge", "plan", *SIZES, "--auto-accuracy", "1", "--audit", "0",
                               "--auto-price", "0.02", "--human-price", "0.5").split())
    assert "all human" in text and "automatic assessor in front" in text
    assert "people's judgments (mean, 5-95 %)" in text and "cost (mean, 5-95 %)" in text
    assert "│ 0 (0 - 0) │" in text  # people's judgments with the perfect assessor


@pytest.mark.parametrize("args, message", [
    (["--audit", "0.2"], "give --auto-accuracy too"),
    (["--auto-price", "0.1"], "give --auto-accuracy too"),
    (["--auto-accuracy", "1.5"], "--auto-accuracy must be in [0, 1], got 1.5"),
    (["--auto-accuracy", "0.9", "--auto-unsure", "-0.1"], "--auto-unsure must be in [0, 1], got -0.1"),
    (["--auto-accuracy", "0.9", "--audit", "2"], "--audit must be in [0, 1], got 2.0"),
    (["--auto-accuracy", "0.9", "--auto-price", "-1"], "--auto-price must be at least 0, got -1.0"),
    (["--auto-accuracy", "0.9", "--human-price", "nan"], "--human-price must be at least 0, got nan"),
])
def test_mistakes_are_named(args, message):
    assert message in cli_error("judge", "plan", *SIZES, *args)
