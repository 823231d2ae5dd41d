"""The experiment's ``/admin`` page in chromium: leaderboard, matrix, settled flag and live plots
(fixtures in ``conftest.py``, helpers in ``browsing.py``)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import expect, needs_chromium  # noqa: E402
from .conftest import ADMIN  # noqa: E402

pytestmark = needs_chromium

STRENGTH = {"bm25": 1.0, "neural": 4.0, "hybrid": 2.0, "random": 0.3}


def votes(site, eid: int, token: str, n: int, rng) -> None:
    head = {"Authorization": f"Bearer {token}"}
    for _ in range(n):
        imp = site.api.post(f"/api/experiments/{eid}/impressions", json={}, headers=head).json()
        a, b = imp["rankers"]
        winner = "tie" if a == b else a if rng.random() < STRENGTH[a] / (STRENGTH[a] + STRENGTH[b]) else b
        assert site.api.post(f"/api/impressions/{imp['impression']}/vote", json={"winner": winner},
                             headers=head).status_code == 200


def test_experiment_page_shows_the_leaderboard_matrix_and_plots(site, watched):
    r = site.api.post("/api/experiments", json=dict(name="ranker arena", rankers=list(STRENGTH), algorithm="RUCB",
                                                    comparison="team-draft", seed=1))
    eid = r.json()["id"]
    token = site.api.post(f"/api/experiments/{eid}/clients", json={"name": "web"}).json()["token"]
    rng = np.random.default_rng(0)
    votes(site, eid, token, 400, rng)
    page = watched().page
    page.goto(site.url + "/admin/login")
    page.fill("#token", ADMIN)
    page.click("button[type=submit]")
    page.click("text=experiments")
    page.click("text=ranker arena")
    expect(page.locator("h1")).to_have_text("ranker arena")
    expect(page.locator("#recommended")).to_have_text("neural")
    expect(page.locator("#settled")).to_have_text("settled")
    board = page.locator("#leaderboard tbody tr")
    expect(board).to_have_count(4)
    expect(board.nth(0).locator("td").nth(1)).to_have_text("neural")
    expect(board.nth(3).locator("td").nth(1)).to_have_text("random")
    state = site.api.get(f"/api/experiments/{eid}").json()
    i, j = list(STRENGTH).index("neural"), list(STRENGTH).index("bm25")
    cell = page.locator("#matrix tbody tr").nth(i).locator("td").nth(j)
    expect(cell).to_have_text(f"{state['matrix']['wins'][i][j]} / {state['matrix']['comparisons'][i][j]}")
    expect(page.locator("#outcomes-plot path.line")).to_have_count(1)
    expect(page.locator("#recommended-plot path.line")).to_have_count(1)
    site.shot(page, "admin-experiment")
    votes(site, eid, token, 20, rng)                  # the page refreshes itself
    expect(page.locator("#outcomes")).to_have_text("420", timeout=30_000)
