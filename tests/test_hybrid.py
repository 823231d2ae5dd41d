"""Automatic assessors in front of people, simulated (judging/hybrid.py) and replayed on the DL-2021 crowd
judgments, and the hybrid-assessors study (issue 25, item 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import DATA

from irbandits.errors import IrbanditsError
from irbandits.io import read_judgments
from irbandits.judging.hybrid import MIN_AUDITS, Hybrid, SimulatedJudge, Truth, hybrid_replay, wilson
from irbandits.judging.replay import recorded_pools, replay
from irbandits.judging.topk import pair_key

DL21 = DATA / "human-preferences-dl21"
needs_data = pytest.mark.skipif(not DL21.exists(), reason="needs ../shared/data")


@pytest.fixture(scope="module")
def crowd():
    judgments = read_judgments(DL21 / "judgments.txt")
    return recorded_pools(judgments), judgments, Truth(judgments)


def test_the_simulated_judge_has_its_accuracy_bias_and_unsure_rate():
    judge, rng, n = SimulatedJudge(0.8, bias=0.2, unsure=0.1), np.random.default_rng(0), 40_000
    better_left = rng.random(n) < 0.5
    said = [judge.answer("l", "r", "l" if b else "r", rng) for b in better_left]
    sure = np.array([s is not None for s in said])
    left = np.array([s == "l" for s in said])
    correct = left == better_left

    def near(x, p):  # within 4 standard errors
        return abs(x.mean() - p) < 4 * np.sqrt(p * (1 - p) / len(x))

    assert near(~sure, 0.1)
    assert near(correct[sure], 0.2 / 2 + 0.8 * 0.8)  # bias answers "left": right half the time
    assert near(left[sure & ~better_left], 0.2 + 0.8 * 0.2)  # the worse item is on the left: bias or a mistake
    assert near(left[sure & better_left], 0.2 + 0.8 * 0.8)


def test_the_simulated_judge_refuses_shares_outside_0_1():
    with pytest.raises(IrbanditsError, match="the judge's bias must be in \\[0, 1\\], got 1.5"):
        SimulatedJudge(0.9, bias=1.5)


def test_the_rule_audits_its_share_and_cuts_off_once_the_interval_is_below_the_threshold():
    rule = Hybrid(SimulatedJudge(1.0), np.random.default_rng(1), audit=0.3, threshold=0.7)
    for _ in range(2000):  # a perfect judge, people who always say "r": it disagrees on every audit
        rule.answer("l", "r", "l", lambda: "r")
    assert rule.cutoff is not None and rule.audited == MIN_AUDITS  # the first moment the rule allows
    assert wilson(0, MIN_AUDITS)[1] < 0.7 <= wilson(1, MIN_AUDITS)[1]
    assert rule.humans == 2000 - rule.counted and rule.automatic == rule.cutoff
    assert abs(rule.counted / rule.automatic - 0.7) < 0.3  # a handful of requests before the cut-off
    rule = Hybrid(SimulatedJudge(1.0), np.random.default_rng(1), audit=0.3, threshold=0.7)
    for _ in range(2000):  # people who agree: it keeps counting, about 30 % audited
        rule.answer("l", "r", "l", lambda: "l")
    assert rule.cutoff is None and rule.agreed == rule.audited == rule.humans
    assert abs(rule.humans / 2000 - 0.3) < 4 * np.sqrt(0.21 / 2000)


def test_unscored_audits_do_not_measure_the_judge():
    rule = Hybrid(SimulatedJudge(1.0), np.random.default_rng(1), audit=1.0)
    for _ in range(100):
        rule.answer("l", "r", "l", lambda: "r", scored=False)
    assert rule.humans == 100 and rule.audited == 0 and rule.cutoff is None


def test_truth_is_the_majority_then_the_win_rate_with_coins_kept_per_run():
    j = pd.DataFrame({"topic": ["1"] * 6, "left": ["a", "a", "b", "a", "c", "c"],
                      "right": ["b", "b", "a", "c", "d", "d"], "winner": ["a", "b", "b", "a", "c", "d"]})
    truth, rng, coins = Truth(j), np.random.default_rng(0), {}
    assert truth.better("1", "a", "b", rng, coins) == "b"  # 2 of 3
    assert truth.better("1", "c", "a", rng, coins) == "a"
    assert truth.better("1", "b", "d", rng, coins) == "b"  # never judged: b 2/3 of its judgments, d 1/2
    tied = {truth.better("1", "c", "d", rng, coins) for _ in range(20)}  # 1 : 1, a coin once
    assert len(tied) == 1 and set(coins) == {("1", ("c", "d"))}


@needs_data
def test_a_perfect_judge_without_audits_needs_no_people_and_finds_the_truths_best_items(crowd):
    pools, judgments, truth = crowd
    proc, rule = hybrid_replay(pools, judgments, SimulatedJudge(1.0), seed=5, audit=0, truth=truth, extra=1)
    coin, coins = np.random.default_rng([5, 2]), {}
    oracle = replay(pools, judgments, seed=5, extra=1,
                    answer=lambda topic, left, right, human: truth.better(topic, left, right, coin, coins))
    assert rule.humans == 0 and rule.counted == rule.automatic == sum(len(t.log) for t in oracle.topics.values())
    assert proc.best() == oracle.best()
    assert proc.to_json() == oracle.to_json()


@needs_data
def test_a_judge_unsure_of_every_pair_leaves_the_all_human_replay(crowd):
    pools, judgments, truth = crowd
    proc, rule = hybrid_replay(pools, judgments, SimulatedJudge(0.9, 0.3, unsure=1.0), seed=7, truth=truth, extra=1)
    human = replay(pools, judgments, seed=7, extra=1)
    assert proc.to_json() == human.to_json()
    assert rule.humans == rule.automatic == sum(len(t.log) for t in human.topics.values()) and rule.counted == 0


@needs_data
def test_the_cutoff_fires_for_a_coin_and_not_for_a_095_judge(crowd):
    pools, judgments, truth = crowd
    _, coin = hybrid_replay(pools, judgments, SimulatedJudge(0.5), seed=0, truth=truth, extra=1)
    _, good = hybrid_replay(pools, judgments, SimulatedJudge(0.95), seed=0, truth=truth, extra=1)
    assert coin.cutoff is not None and coin.cutoff < coin.requests / 2
    assert wilson(coin.agreed, coin.audited)[1] < 0.7
    assert good.cutoff is None and good.audited > 200
    assert wilson(good.agreed, good.audited)[0] > 0.75  # the whole 99 % interval clear of the threshold
    assert good.humans < good.requests / 5
    scored = {(t, pair_key(a, b)) for t, a, b in zip(judgments.topic.astype(str), judgments.left, judgments.right)}
    assert scored == set(truth.majority)


@needs_data
def test_the_study_writes_its_table_figure_and_claims(cli, tmp_path):
    out = tmp_path / "hy"
    r = cli("reproduce", "hybrid-assessors", "--data", DL21, "--runs", "2", "--out", out)
    assert r.exit_code == 0, r.output
    table = pd.read_csv(out / "table.csv")
    assert len(table) == 1 + 5 * 3 and table.a.isna().iloc[0] and (table.runs == 2).all()
    assert table.saved.iloc[0] == 0 and table.saved.iloc[1:].between(0, 1).all()
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 2 * 16 and (runs[runs.a.isna()].automatic == 0).all()
    claims = pd.read_csv(out / "claims.csv")
    assert len(claims) == 4 and set(claims.study) == {"hybrid-assessors"}
    assert set(claims.verdict) <= {"agrees", "disagrees"} and claims.paper.str.contains("beyond the seeds").all()
    assert (out / "hybrid-assessors.png").stat().st_size > 10_000
    assert "2 replays per judge (first row: all human)" in " ".join(r.output.split())
