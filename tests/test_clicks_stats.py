"""Interleaving statistics (issue 16, item 4): per-pair counts and tests, power analysis, the
comparison log, ``simulate --log-comparisons`` and ``interleaving-report`` against ``matrix``."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from helpers import DATA
from scipy import stats as sps

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.stats import (
    ab_impressions_needed,
    ab_test,
    detectable_effect,
    impressions_needed,
    leaderboard,
    pair_stats,
    read_comparison_log,
    win_share_interval,
)
from irbandits.errors import IrbanditsError
from irbandits.simulate import simulate

LGBM = DATA / "ltr" / "lightgbm-lambdarank-sample" / "rank.test"


def test_pair_counts_win_share_sign_test_and_bootstrap():
    W = np.array([[0, 60], [30, 0]])
    T = np.array([[0, 10], [10, 0]])
    row = pair_stats(["a", "b"], W, T, samples=4000).iloc[0]
    assert (row.a, row.b, row.comparisons, row.wins, row.losses, row.ties) == ("a", "b", 100, 60, 30, 10)
    assert row.win_share == pytest.approx(0.65)
    x = np.r_[np.ones(60), np.zeros(30), np.full(10, 0.5)]
    assert row.se == pytest.approx(x.std() / 10)
    assert row.p_value == pytest.approx(sps.binomtest(60, 90).pvalue)
    # the percentile interval of a share of 100 draws: about share -+ 1.96 se
    assert row.low == pytest.approx(0.65 - 1.96 * row.se, abs=0.015) and row.high == pytest.approx(0.65 + 1.96 * row.se, abs=0.015)
    assert win_share_interval(0, 0, 0) == (0.5, 0.5)
    assert pair_stats(["a", "b"], np.zeros((2, 2), int), np.zeros((2, 2), int)).empty   # never compared: no row


@pytest.mark.parametrize("effect, ties", [(0.02, 0.0), (0.05, 0.0), (0.03, 0.3)])
def test_power_analysis_matches_the_exact_sign_test(effect, ties):
    n = impressions_needed(effect, tie_rate=ties)
    # exact power of the two-sided sign test at n impressions, ties drawn binomially
    p = 0.5 + effect / (1 - ties)
    decisive = np.arange(n + 1)
    weight = sps.binom.pmf(decisive, n, 1 - ties)
    keep = weight > 1e-12
    power = 0.0
    for m, w in zip(decisive[keep], weight[keep]):
        lo = sps.binom.ppf(0.025, m, 0.5)            # reject when wins fall outside the central 95 %
        hi = sps.binom.isf(0.025, m, 0.5)
        power += w * (sps.binom.cdf(lo - 1, m, p) + sps.binom.sf(hi, m, p))
    assert 0.76 < power < 0.84, power
    assert detectable_effect(n, tie_rate=ties) == pytest.approx(effect, rel=0.01)
    assert detectable_effect(4 * n, tie_rate=ties) < effect / 1.9               # four times the data: half the effect
    with pytest.raises(IrbanditsError, match="effect"):
        impressions_needed(0.6)


def test_ab_power_analysis_detects_the_difference_as_often_as_promised():
    # abandonment 0.30 against 0.25: each impression's variance p (1 - p); half the impressions per arm
    a, b = 0.30, 0.25
    n = ab_impressions_needed(a - b, 2 * (a * (1 - a) + b * (1 - b)))
    assert n == pytest.approx(2 * (1.959964 + 0.841621) ** 2 * (a * (1 - a) + b * (1 - b)) / 0.05**2, abs=1)
    rng = np.random.default_rng(0)
    x, y = rng.binomial(n // 2, a, 4000) / (n // 2), rng.binomial(n // 2, b, 4000) / (n // 2)
    p = ab_test(x, x * (1 - x), n // 2, y, y * (1 - y), n // 2)
    assert 0.77 < np.mean((p < 0.05) & (x > y)) < 0.83          # power 0.8, in the right direction
    assert np.mean(ab_test(x, x * (1 - x), n // 2, x, x * (1 - x), n // 2) < 0.05) == 0   # equal means: never
    assert ab_test(0.5, 0.25, 0, 0.4, 0.24, 10) == 1.0 and ab_test(1.0, 0.0, 5, 0.0, 0.0, 5) == 1.0
    with pytest.raises(IrbanditsError, match="non-zero effect and a positive variance"):
        ab_impressions_needed(0.0, 1.0)


def test_leaderboard_orders_by_strength():
    W = np.array([[0, 80, 90], [20, 0, 70], [10, 30, 0]])
    rows = leaderboard(["x", "y", "z"], W, np.zeros((3, 3), int), samples=30)
    assert [r["name"] for r in rows] == ["x", "y", "z"] and rows[0]["low"] > rows[2]["high"]
    assert [r["comparisons"] for r in rows] == [200, 200, 200]


def test_the_log_format(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join([
        "# a comment",
        '{"rankers": ["a", "b"], "teams": [0, 1, 1, 0], "clicks": [0]}',                # a wins
        '{"rankers": ["a", "b"], "teams": [0, 1, 1, 0], "clicks": [1, 3]}',             # 1 - 1: tie
        "",
        '{"rankers": ["b", "a"], "teams": [0, 1], "clicks": [], "query": 3}',           # no click: tie
        '{"rankers": ["a", "b", "c"], "teams": [2, 1, 0, 2], "clicks": [0, 2, 3]}',     # c 2, a 1, b 0
        '{"rankers": ["b", "a"], "teams": [-1, -1], "clicks": [1], "outcome": 1}',      # b wins (no teams)
        '{"rankers": ["c", "b", "a"], "teams": [-1, -1], "clicks": [1], "credit": [0.25, 0.5, 0.25]}',  # b; a = c
    ]) + "\n")
    c = read_comparison_log(log)
    assert c.names == ["a", "b", "c"] and c.lines == 6
    i = c.index
    assert c.wins[i["a"], i["b"]] == 2 and c.wins[i["b"], i["a"]] == 2 and c.ties[i["a"], i["b"]] == 2
    assert c.wins[i["c"], i["a"]] == 1 and c.wins[i["c"], i["b"]] == 1 and c.wins[i["b"], i["c"]] == 1
    assert c.ties[i["a"], i["c"]] == 1 and (c.ties == c.ties.T).all()
    assert c.impressions.tolist() == [6, 6, 2] and c.clicks.tolist() == [3, 1, 2]
    for line, message in [('{"rankers": ["a"], "teams": [], "clicks": []}', "'rankers' must name at least two"),
                          ('{"rankers": ["a", "b"], "teams": [0, 2], "clicks": []}', "'teams' must be ranker indices"),
                          ('{"rankers": ["a", "b"], "teams": [0, 1], "clicks": [2]}', "'clicks' must be distinct"),
                          ('{"rankers": ["a", "b"], "clicks": []}', "'teams' must be a list, and is missing"),
                          ('{"rankers": ["a", "b", "c"], "teams": [], "clicks": [], "credit": [1, 2]}',
                           r"'credit' must be one number per ranker \(3\)"),
                          ('["a"]', "expected a JSON object"), ("{nope", "not JSON")]:
        log.write_text('{"rankers": ["a", "b"], "teams": [0, 1], "clicks": [0]}\n' + line + "\n")
        with pytest.raises(IrbanditsError, match=f"log.jsonl, line 2: {message}"):
            read_comparison_log(log)
    log.write_text("# nothing\n")
    with pytest.raises(IrbanditsError, match="no comparisons"):
        read_comparison_log(log)


@pytest.mark.slow
def test_logged_simulation_agrees_with_the_matrix(tmp_path):
    """The log that a full simulation writes gives win shares that agree with the matrix that
    ``estimate_matrix`` (``irbandits matrix``) estimates for the same rankers, and logging does not
    change the run."""
    rankers = read_ltr(LGBM).rankers([0, 10, 99, 120])
    plain = ClickEnvironment(rankers, "navigational", "team-draft")
    est = plain.estimate(10000, seed=5)
    log = tmp_path / "log.jsonl"
    logged = ClickEnvironment(rankers, "navigational", "team-draft", log=log)
    args = dict(horizon=4000, runs=2, seed=1, progress=False)
    a = simulate(est.matrix, ["REX3"], environment=plain, **args)
    b = simulate(est.matrix, ["REX3"], environment=logged, **args)
    pd.testing.assert_frame_equal(a.drop(columns="run_seconds"), b.drop(columns="run_seconds"))
    counts = read_comparison_log(log)
    assert counts.lines <= 8000                                     # every duel but the self-duels
    first = json.loads(log.read_text().splitlines()[0])
    assert set(first) == {"rankers", "teams", "clicks", "query"} and len(first["teams"]) == 10
    pairs = pair_stats(counts.names, counts.wins, counts.ties, samples=100)
    col = {n: i for i, n in enumerate(est.names)}
    z = [(r.win_share - est.matrix.p[col[r.a], col[r.b]]) / np.hypot(r.se, est.se[col[r.a], col[r.b]])
         for r in pairs.itertuples()]
    assert len(z) == 6 and pairs.comparisons.min() >= 50 and np.abs(z).max() < 3.5, (z, pairs)


@pytest.mark.parametrize("method, m", [("team-draft", 3), ("probabilistic", 3),
                                       ("pairwise-preference", 2)])
def test_multileaved_simulation_logs_every_comparison(tmp_path, method, m):
    """A multileaving run with a log runs as without one and logs a line per multileaved list: the
    rankers compared, their teams (team-draft) or each one's credit (the others; a probabilistic
    multileave spreads every click's credit over the rankers, so the credit sums to the clicks).
    Two per step are interleaved comparisons: without teams their outcome decides."""
    from irbandits.clicks.multidueling import MultileaveEnvironment

    rankers = read_ltr(LGBM).rankers([0, 10, 99, 120, 163])
    P = ClickEnvironment(rankers, "navigational", "team-draft").estimate(100, seed=0).matrix
    log = tmp_path / "log.jsonl"
    runs = [simulate(P, ["Self-Sparring"], horizon=300, runs=1, seed=1, progress=False,
                     environment=MultileaveEnvironment(rankers, "navigational", method, per_step=m, log=path))
            for path in (None, log)]
    pd.testing.assert_frame_equal(*(r.drop(columns="run_seconds") for r in runs))
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert 20 < len(lines) <= 300 and read_comparison_log(log).lines == len(lines)   # a list of one ranker: none
    for rec in lines:
        assert len(rec["rankers"]) in (2, 3) and len(set(rec["rankers"])) == len(rec["rankers"])
        if method == "team-draft":
            assert "credit" not in rec and set(rec["teams"]) <= set(range(len(rec["rankers"])))
        else:
            assert set(rec["teams"]) == {-1} and (len(rec["credit"]) == len(rec["rankers"]) if m > 2 else rec["outcome"] in (-1, 0, 1))
    if method == "probabilistic":
        assert all(sum(r["credit"]) == pytest.approx(len(r["clicks"])) for r in lines)


def test_interleaving_report_cli(tmp_path, cli):
    log = tmp_path / "log.jsonl"
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(400):
        a_first = rng.random() < 0.5
        clicks = [p for p in range(4) if rng.random() < (0.5 if p % 2 == (0 if a_first else 1) else 0.3)]
        lines.append(json.dumps(dict(rankers=["x", "y"], teams=[0, 1, 0, 1] if a_first else [1, 0, 1, 0],
                                     clicks=clicks)))
    log.write_text("\n".join(lines))
    r = cli("interleaving-report", log, "--format", "csv")
    assert r.exit_code == 0, r.output
    pairs_text, rankers_text = r.output.split("# rankers\n")
    pairs = pd.read_csv(io.StringIO(pairs_text.removeprefix("# pairs\n")))
    rankers = pd.read_csv(io.StringIO(rankers_text))
    assert pairs.comparisons.tolist() == [400] and pairs.win_share[0] > 0.55 and pairs.p_value[0] < 0.01
    assert rankers.ranker.tolist() == ["x", "y"] and rankers.clicks.sum() == sum(len(json.loads(x)["clicks"]) for x in lines)
    r = cli("interleaving-report", log)
    assert r.exit_code == 0 and "needs" in r.output and "impressions per pair" in r.output
    r = cli("interleaving-report", log, "--format", "xml")
    assert isinstance(r.exception, IrbanditsError) and "--format" in str(r.exception)


def test_simulate_log_comparisons_needs_ltr(tmp_path, cli):
    r = cli("simulate", "--problem", "arxiv", "--log-comparisons", tmp_path / "x.jsonl", "--out", tmp_path / "o")
    assert isinstance(r.exception, IrbanditsError) and "--log-comparisons needs --ltr" in str(r.exception)
