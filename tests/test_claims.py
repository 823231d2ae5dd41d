"""Machine-readable claims (issue 23): every study writes ``claims.csv``, ``irbandits reproduce --summary``
reads them back, the reports' claims tables are rendered from the same rows, and ``--dry-run`` estimates
a study's cost without running it."""

from __future__ import annotations

import csv

import pandas as pd
import pytest
from helpers import DATA

from irbandits.errors import IrbanditsError
from irbandits.studies import STUDIES, judging_study, rcs_vs_rucb
from irbandits.studies.claims import COLUMNS, Claim, collect, markdown, read_claims, scale, write_claims

MSLR = DATA / "preference-matrices" / "mslr-navigational.txt"
needs_data = pytest.mark.skipif(not MSLR.exists(), reason="needs ../shared/data")


def test_rows_round_trip_through_claims_csv_and_render_as_the_reports_table(tmp_path):
    rows = [Claim("x", "A beats B", "paper, 6.4", "ratio 0.5, | piped", scale(10**6, 10, "10^8 x 50"), "agrees"),
            Claim("x", "B is flat", "paper, 6.4", 'tail "2 %"', scale(1500, 3, "?"), "disagrees")]
    path = write_claims(rows, tmp_path / "new")
    with path.open() as f:
        assert next(csv.reader(f)) == list(COLUMNS) == ["study", "claim", "paper", "measured", "scale", "verdict"]
    assert read_claims(tmp_path / "new") == rows
    assert rows[0].scale == "10^6 steps x 10 runs (paper: 10^8 x 50)" and rows[1].scale == "1,500 steps x 3 runs (paper: ?)"
    assert markdown(rows, "paper (6.4)").splitlines() == [
        "| paper (6.4) | this run | |", "|---|---|---|", "| A beats B | ratio 0.5, | piped | **agrees** |",
        '| B is flat | tail "2 %" | **disagrees** |']
    with pytest.raises(IrbanditsError, match="verdict 'maybe' is not one of agrees, disagrees, not checked, not run"):
        Claim("x", "c", "p", "m", "s", "maybe")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two studies run small through the command line into one folder: rcs-vs-rucb and judging-study (SELECT)."""
    from helpers import run_cli

    root = tmp_path_factory.mktemp("claims")
    r = run_cli("reproduce", "rcs-vs-rucb", "--horizon", "2e3", "--runs", "2", "--jobs", "1", "--out", root / "rcs")
    assert r.exit_code == 0, r.output
    r = run_cli("reproduce", "judging-study", "--runs", "40", "-a", "SELECT", "--claims", root / "judging")
    assert r.exit_code == 0, r.output
    return root


@needs_data
def test_an_online_study_writes_its_claims_and_its_report_renders_the_same_rows(runs):
    rows = read_claims(runs / "rcs" / "claims.csv")
    table = pd.concat([pd.read_parquet(runs / "rcs" / k / "results.parquet").assign(problem=k)
                       for k in ("mslr10-seed0", "mslr10-seed1", "mslr10-seed2", "stability")], ignore_index=True)
    expected = rcs_vs_rucb.claims(table)[:5]  # the module's own (claim, measured, agrees) triples of Figs 5.2-5.3
    assert [(r.claim, r.measured, r.verdict == "agrees") for r in rows[:5]] == expected
    assert len(rows) == 5 + 4 + 5  # Figures 5.2-5.3, 5.1 and 5.4, each with its source
    assert [r.paper for r in rows] == [rcs_vs_rucb.PAPER] * 5 + [rcs_vs_rucb.PAPER_51] * 4 + [rcs_vs_rucb.PAPER_54] * 5
    assert {r.verdict for r in rows} <= {"agrees", "disagrees", "not checked"} and {r.study for r in rows} == {
        "rcs-vs-rucb"}
    assert rows[0].scale == "2,000 steps x 2 runs (paper: 50,000 x 90; stability test 30)"
    assert markdown(rows, "thesis (5.2)") in (runs / "rcs" / "rcs-vs-rucb.md").read_text()


def test_judging_study_checks_each_published_count(runs):
    rows = {r.claim: r for r in read_claims(runs / "judging")}
    assert set(rows) == {"SELECT: 715 of 1,000 runs find item 0 in Case A",
                         "SELECT: 905 of 1,000 runs find exactly one of items 0 and 1 in Case B",
                         "SELECT: 0 of 1,000 runs find both items 0 and 1 in Case B"}
    both = rows["SELECT: 0 of 1,000 runs find both items 0 and 1 in Case B"]
    assert both.measured == "0 of 40 (p = 1)" and both.verdict == "agrees"  # SELECT reports one item
    # a count far from the published one disagrees
    far = pd.DataFrame([dict(algorithm="SELECT", case="A", runs=1000, one=500, both=0)])
    assert [r.verdict for r in judging_study.claim_rows(far)] == ["disagrees"]


def test_summary_lists_every_study_with_its_verdicts_and_the_ones_not_run(runs, cli):
    table, files = collect(runs, list(STUDIES))
    assert set(files) == {"rcs-vs-rucb", "judging-study"}
    assert list(dict.fromkeys(table.study)) == list(STUDIES)  # registry order, one row per study not run
    not_run = table[table.verdict == "not run"]
    assert set(not_run.study) == set(STUDIES) - set(files) and len(not_run) == len(STUDIES) - 2
    r = cli("reproduce", "--summary", "--out", runs, "--markdown")
    assert r.exit_code == 0, r.output
    n = table.verdict.value_counts()
    text = " ".join(r.output.split())
    assert (f"{n.get('agrees', 0)} agree, {n.get('disagrees', 0)} disagree, {n.get('not checked', 0)} not checked; "
            f"2 of {len(STUDIES)} "
            f"studies run, {len(STUDIES) - 2} not run") in text
    assert "| paper's claim | this run | |" in r.output
    assert "| SELECT: 0 of 1,000 runs find both items 0 and 1 in Case B | 0 of 40 (p = 1) | **agrees** |" in r.output


@needs_data
def test_dry_run_estimates_the_full_scale_and_writes_nothing(tmp_path, cli, monkeypatch):
    calls = []
    real = rcs_vs_rucb.run_study
    monkeypatch.setattr(rcs_vs_rucb, "run_study", lambda *a, **k: calls.append(1) or real(*a, **k))
    r = cli("reproduce", "rcs-vs-rucb", "--full", "--dry-run", "--probe-seconds", "0.05", "--out", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert not calls and list(tmp_path.iterdir()) == []  # nothing run, nothing written
    # --full: 50,000 steps x 90 runs, 3 problems x 2 algorithms and the stability test's 4, SAVAGE rerun at
    # Figure 5.1's 10 horizons, and Figure 5.4's 3 problems x 2 algorithms at 40 x 50,000 steps
    works = rcs_vs_rucb.plan(**rcs_vs_rucb.FULL, matrix=MSLR)
    total = sum(w.steps * w.runs for w in works)
    assert total > 45_000_000 + 3 * 2 * 90 * 2_000_000
    text = " ".join(r.output.split())
    assert f"rcs-vs-rucb: {total:,} steps in all, about " in text and " core-hours; " in text
    assert ("stability", "RCS:alpha=0.501", 50_000, 90) in [(w.problem, w.algorithm, w.steps, w.runs) for w in works]


@needs_data
def test_the_plan_lists_exactly_the_runs_the_study_makes(runs):
    table = pd.read_parquet(runs / "rcs" / "stability" / "results.parquet")
    works = rcs_vs_rucb.plan(horizon=2000, runs=2, matrix=MSLR)
    assert [w.algorithm for w in works if w.problem == "stability"] == list(dict.fromkeys(table.algorithm))
    assert {w.problem for w in works} == {"mslr10-seed0", "mslr10-seed1", "mslr10-seed2", "stability", "mslr20",
                                          "mslr30", "mslr40"}
