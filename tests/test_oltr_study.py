"""`irbandits reproduce oltr` at a tiny scale: every cell runs, the table, claims and report are whole,
and a rerun resumes from the folder."""

from __future__ import annotations

import pytest
from helpers import DATA

from irbandits.studies import get_study

pytestmark = pytest.mark.skipif(not (DATA / "ltr").exists(), reason="needs ../shared/data")


def test_tiny_study_gives_every_cell_claims_report_and_resumes(tmp_path):
    module = get_study("oltr").load()
    scale = dict(horizon=100, runs=2, data=DATA / "ltr")
    table = module.run_study(out=tmp_path, **scale)
    s = module.summary(table)
    expected = sum(len(c[4]) for c in module.cells(100, 2))
    assert len(s) == expected
    assert set(s.grid) == {"headline", "top100", "candidates", "preselection", "scale"}
    assert (s.impressions == 100).all() and (s.runs == 2).all()
    assert s.offline_ndcg_mean.between(0, 1).all() and (s.online_ndcg_mean > 0).all()
    rows = module.claim_rows(table)
    assert len(rows) == 6 and all(r.verdict in ("agrees", "disagrees") for r in rows)
    assert "6 cells" in rows[0].measured and "n=19" in rows[4].measured
    text = module.report(table)
    assert "| headline | LightGBM | informational | PDGD |" in text and "paper" in text
    assert len(module.figures(table, tmp_path)) == len(module.cells(100, 2)) + 1

    # every (learner, run) is kept: a rerun reads them back and gives the same table
    again = module.run_study(out=tmp_path, **scale)
    assert again.equals(table)


def test_plan_lists_every_learner_of_every_cell():
    module = get_study("oltr").load()
    works = module.plan(horizon=100, runs=2, data=DATA / "ltr")
    assert len(works) == sum(len(c[4]) for c in module.cells(100, 2))
    assert {w.algorithm for w in works} >= {"DBGD", "DBGD-CPS", "MGD:n=19", "PDGD"}
