"""The mergerucb-scaling study (Zoghi thesis, section 6.4) at tiny scale: its subsets, its claims computed from
the runs, its --dry-run estimate and its command."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from helpers import DATA

from irbandits.studies import mergerucb_scaling as mrs
from irbandits.studies.claims import AGREES, DISAGREES, NOT_CHECKED, read_claims

MSLR = DATA / "preference-matrices" / "mslr-navigational.txt"
PERFECT = DATA / "preference-matrices" / "mslr-perfect.txt"
NP2004 = DATA / "ltr" / "letor3-np2004-fold1" / "test.txt.gz"
pytestmark = pytest.mark.skipif(not (MSLR.exists() and NP2004.exists()), reason="needs ../shared/data")
TINY = dict(sizes=(10, 70), subsets=1, curve_runs=1)


def test_every_subset_has_a_condorcet_winner_and_the_draws_are_fixed():
    probs = mrs.problems((10, 70), 2, MSLR, PERFECT)
    again = mrs.problems((10, 70), 2, MSLR, PERFECT)
    assert set(probs) == {f"{m}-K{K}-s{s}" for m in ("navigational", "perfect", "grid") for K in (10, 70)
                          for s in (0, 1)} | {"navigational-K136"}
    for key, v in probs.items():
        assert v["problem"].condorcet_winner is not None and v["problem"].K == v["K"] == len(v["arms"])
        assert np.array_equal(v["arms"], again[key]["arms"])
    nav, perf = probs["navigational-K70-s1"], probs["perfect-K70-s1"]
    assert np.array_equal(nav["arms"], perf["arms"]) and not np.array_equal(nav["problem"].p, perf["problem"].p)
    assert not np.array_equal(nav["arms"], probs["navigational-K70-s0"]["arms"])
    assert probs["grid-K10-s0"]["algorithms"] == mrs.GRID and len(mrs.GRID) == 24 and mrs.GRID_DEFAULT in mrs.GRID


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The study at 2,000 steps on K = 10 and 70 (one subset, one run), the NP2004 matrix from 30 comparisons
    per pair: its folder and table."""
    out = tmp_path_factory.mktemp("mrs")
    table = mrs.run_study(horizon=2000, runs=1, out=out, matrix=MSLR, perfect=PERFECT, data=NP2004, comparisons=30,
                          **TINY)
    return out, table


def test_a_tiny_run_computes_every_verdict_from_its_numbers(tiny):
    _, table = tiny
    assert set(table.part) == {"scaling", "grid", "all", "np2004"} and table.step.max() == 2000
    assert table[table.part == "grid"].groupby("K").algorithm.nunique().to_dict() == {10: 24, 70: 24}
    s = mrs.scaling(table)
    assert list(s.index) == [10, 70] and list(s.columns) == mrs.ALGORITHMS
    rows = {r.claim: r for r in mrs.claim_rows(table)}
    first = rows["for K >= 70 mergeRUCB outperforms all other dueling bandit algorithms (regret at the horizon)"]
    wins = s.loc[70, mrs.MRUCB] < s.loc[70].drop(mrs.MRUCB).min()
    assert first.verdict == (AGREES if wins else DISAGREES) and f"mergeRUCB {s.loc[70, mrs.MRUCB]:,.0f}" in first.measured
    g = mrs.grid(table)
    close = rows["the default (p, alpha) = (4, 1.01) is consistently close, if not equal, to the best choice"]
    assert (g.low <= g.default).all() and (g.default <= g.high).all()
    assert close.verdict == (AGREES if (g.default / g.low <= mrs.CLOSE).all() else DISAGREES)
    assert [r.verdict for r in rows.values() if r.claim.startswith("the informational")] == [NOT_CHECKED]
    assert all(r.verdict in (AGREES, DISAGREES) for r in rows.values() if "not reproduced" not in r.measured
               and "Spearman" not in r.measured)
    assert "| K = 136: the regret at the horizon is a good indication" in mrs.report(table)


def test_a_rerun_reads_the_kept_runs(tiny, monkeypatch):
    out, table = tiny
    monkeypatch.setattr(mrs, "_run", lambda *a: pytest.fail("a kept run was simulated again"))
    again = mrs.run_study(horizon=2000, runs=1, out=out, matrix=MSLR, perfect=PERFECT, data=NP2004, **TINY)
    assert again.equals(table)


def test_the_command_writes_the_report_claims_and_figures(tiny, tmp_path, cli, monkeypatch):
    out, table = tiny
    shutil.copytree(out, tmp_path / "o")  # the runs and the NP2004 matrix kept: the command reads them back
    for key, value in TINY.items():
        monkeypatch.setitem(mrs.DEFAULT, key, value)
    r = cli("reproduce", "mergerucb-scaling", "--horizon", "2000", "--runs", "1", "--jobs", "1", "--out", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert read_claims(tmp_path / "o") == mrs.claim_rows(table)
    for name in ("fig6.2", "fig6.3", "fig6.4", "fig6.5", "fig6.6", "np2004-clicks", "np2004-proxy"):
        assert (tmp_path / "o" / f"mergerucb-scaling-{name}.png").stat().st_size > 10_000
    assert "![mergerucb-scaling-fig6.3](mergerucb-scaling-fig6.3.png)" in (tmp_path / "o" / "mergerucb-scaling.md").read_text()


def test_full_dry_run_estimates_every_run_and_writes_nothing(tmp_path, cli, monkeypatch):
    monkeypatch.setattr(mrs, "run_study", lambda *a, **k: pytest.fail("--dry-run ran the study"))
    r = cli("reproduce", "mergerucb-scaling", "--full", "--dry-run", "--probe-seconds", "0.01", "--out", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert list(tmp_path.iterdir()) == []
    works = mrs.plan(**mrs.FULL, matrix=MSLR, perfect=PERFECT, data=NP2004, probe_comparisons=10)
    # 13 K x 10 subsets x (5 algorithms x 2 click models + 24 grid settings), 5 on all 136, 3 x 2 on NP2004
    assert len(works) == 13 * 10 * (5 * 2 + 24) + 5 + 6
    assert {(w.steps, w.runs) for w in works if w.problem.startswith(("grid", "perfect"))} == {(10**7, 1)}
    total = sum(w.steps * w.runs for w in works)
    assert f"mergerucb-scaling: {total:,} steps in all, about " in " ".join(r.output.split())
