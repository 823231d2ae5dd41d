"""The experiment's ``/admin`` pages in chromium: leaderboard, matrix, settled flag and live plots; the
creation form, a client token, and the Pause, Resume and Stop buttons, at 1366 px and 390 px (fixtures in
``conftest.py``, helpers in ``browsing.py``; screenshots in ``test-output/screenshots/``)."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, expect, needs_chromium, organiser  # noqa: E402
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


def fits(page) -> bool:
    """Whether the page needs no sideways scrolling."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def impression(site, token: str) -> httpx.Response:
    return httpx.post(f"{site.url}/api/experiments/1/impressions", json={},
                      headers={"Authorization": f"Bearer {token}"})


def test_organiser_creates_an_experiment_issues_a_token_and_pauses_resumes_and_stops_it(browser, site):
    context, page, confirmed, errors = organiser(browser, site, LAPTOP)
    page.locator(".topbar").get_by_role("link", name="Experiments").click()
    expect(page.locator("h1")).to_have_text("Experiments")
    expect(page.locator(".topbar [aria-current=page]")).to_have_text("Experiments")
    page.fill("#exp-name", "ranker arena")
    page.fill("#rankers", "bm25")                                   # one ranker: refused, values kept
    page.fill("#algorithm", "RUCB")
    page.select_option("#comparison", "balanced")
    page.fill("#seed", "4")
    page.click("text=Create experiment")
    expect(page.locator("#form-error")).to_have_text(
        "rankers: give at least 2 different non-empty names, got ['bm25']")
    expect(page.locator("#rankers")).to_be_focused()
    expect(page.locator("#exp-name")).to_have_value("ranker arena")
    expect(page.locator("#comparison")).to_have_value("balanced")
    site.shot(page, "admin-experiments-form-error-laptop")
    page.fill("#rankers", "bm25\nneural, hybrid\nrandom")      # as STRENGTH lists them
    page.click("text=Create experiment")
    expect(page.locator("h1")).to_have_text("ranker arena")
    expect(page.locator("#state")).to_have_text("running")
    expect(page.locator("#lifecycle button")).to_have_text(["Pause", "Stop"])
    expect(page.locator(".topbar [aria-current=page]")).to_have_text("Experiments")
    assert site.api.get("/api/experiments").json() == [dict(id=1, name="ranker arena", state="running",
                                                            algorithm="RUCB", rankers=4, learner=False)]

    page.fill("#client-name", "search-frontend-eu")
    page.click("text=Add and show token")
    token = page.locator("#new-token").input_value()
    expect(page.locator("#client-list tbody tr")).to_have_count(1)
    rng = np.random.default_rng(1)
    votes(site, 1, token, 60, rng)
    expect(page.locator("#outcomes")).to_have_text("60", timeout=30_000)   # the page refreshes itself

    page.locator("#lifecycle button", has_text="Pause").click()
    expect(page.locator("#state")).to_have_text("paused")
    expect(page.locator("#lifecycle button")).to_have_text(["Resume", "Stop"])
    expect(page.locator("#state-note")).to_contain_text("front ends get no new impression")
    r = impression(site, token)
    assert r.status_code == 409 and r.json()["detail"] == "experiment 1 is paused"
    site.shot(page, "admin-experiment-paused-laptop")

    phone_context, phone, _, phone_errors = organiser(browser, site, PHONE)
    for path, name in (("/admin/experiments", "admin-experiments-phone"),
                       ("/admin/experiments/1", "admin-experiment-paused-phone")):
        phone.goto(site.url + path)
        expect(phone.locator(".topbar [aria-current=page]")).to_have_text("Experiments")
        assert fits(phone), path
        site.shot(phone, name)
    expect(phone.locator("#lifecycle button")).to_have_text(["Resume", "Stop"])

    page.locator("#lifecycle button", has_text="Resume").click()
    expect(page.locator("#state")).to_have_text("running")
    assert impression(site, token).status_code == 201

    page.locator("#lifecycle button", has_text="Stop").click()
    expect(page.locator("#state")).to_have_text("stopped")
    assert confirmed == ["Stop the experiment ranker arena? Front ends get no new impression and their clicks and "
                         "votes are refused; a stopped experiment does not run again."]
    expect(page.locator("#lifecycle button")).to_have_count(0)
    expect(page.locator("#state-note")).to_contain_text("the leaderboard and the numbers stay readable")
    r = impression(site, token)
    assert r.status_code == 409 and r.json()["detail"] == "experiment 1 is stopped"
    site.shot(page, "admin-experiment-stopped-laptop")
    phone.reload()
    expect(phone.locator("#state")).to_have_text("stopped")
    assert fits(phone)
    site.shot(phone, "admin-experiment-stopped-phone")

    page.locator(".topbar").get_by_role("link", name="Experiments").click()
    expect(page.locator("tr[data-experiment='1'] .state-tag")).to_have_text("stopped")
    site.shot(page, "admin-experiments-laptop")
    assert errors == [] and phone_errors == []
    context.close()
    phone_context.close()
