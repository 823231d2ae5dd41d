"""The ``/admin`` pages of an experiment that holds a learner, in chromium: the creation form's Learner
choice, the list's row, and the dashboard's numbers, plots and weights, refreshed live, at 1366 px and
390 px (fixtures in ``conftest.py``, helpers in ``browsing.py``; screenshots in ``test-output/screenshots/``)."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import PHONE, expect, needs_chromium  # noqa: E402
from .conftest import ADMIN  # noqa: E402

pytestmark = needs_chromium

W = np.array([1.0, 0.5, 0.0, -0.5, -1.0])   # the users' hidden ranker


def users(site, eid: int, token: str, n: int, rng) -> None:
    """``n`` impressions of 20 random documents; the user clicks the hidden ranker's best one where it is shown."""
    head = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=site.url, headers=head) as http:
        for _ in range(n):
            documents, X = [f"d{j}" for j in range(20)], rng.normal(size=(20, len(W)))
            r = http.post(f"/api/experiments/{eid}/impressions", json={"documents": documents, "features": X.tolist()})
            assert r.status_code == 201, r.text
            best = documents[int(np.argmax(X @ W))]
            clicks = [p for p, d in enumerate(r.json()["list"]) if d == best]
            assert http.post(f"/api/impressions/{r.json()['impression']}/clicks",
                             json={"clicks": clicks}).status_code == 200


def fits(page) -> bool:
    """Whether the page needs no sideways scrolling."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_organiser_creates_a_learner_experiment_and_watches_it_learn(site, watched):
    page = watched().page
    page.goto(site.url + "/admin/login")
    page.fill("#token", ADMIN)
    page.click("button[type=submit]")
    page.goto(site.url + "/admin/experiments")
    expect(page.locator("#learner")).to_be_hidden()                  # the rankers' fields until Learner is chosen
    page.check("input[name=kind][value=learner]")
    expect(page.locator("#rankers")).to_be_hidden()
    page.fill("#exp-name", "learning ranker")
    page.fill("#learner", "PDGD")
    page.fill("#features", "5")
    site.shot(page, "admin-experiments-learner-form-laptop")
    page.click("text=Create experiment")
    expect(page.locator("h1")).to_have_text("learning ranker")
    expect(page.locator(".heading .tag")).to_have_text(["running", "PDGD", "5 features"])
    expect(page.locator("#lifecycle button")).to_have_text(["Pause", "Stop"])
    expect(page.locator("#clicks-per-impression")).to_have_text("–")
    page.fill("#client-name", "search-frontend")
    page.click("text=Add and show token")
    token = page.locator("#new-token").input_value()
    eid = site.api.get("/api/experiments").json()[0]["id"]

    rng = np.random.default_rng(0)
    users(site, eid, token, 200, rng)
    page.goto(site.url + f"/admin/experiments/{eid}")
    expect(page.locator("#outcomes")).to_have_text("200")
    expect(page.locator("#impressions")).to_have_text("200")
    state = site.api.get(f"/api/experiments/{eid}").json()
    expect(page.locator("#updates")).to_have_text(str(state["updates"]))
    expect(page.locator("#clicks-per-impression")).to_have_text(f"{state['clicks_per_impression']:.2f}")
    rows = page.locator("#weights tbody tr")
    expect(rows).to_have_count(5)
    expect(page.locator("#weights svg.weight-bar rect")).to_have_count(5)
    assert float(rows.nth(0).locator("td").nth(1).inner_text()) > 0
    assert float(rows.nth(4).locator("td").nth(1).inner_text()) < 0
    expect(rows.nth(0).locator("rect")).to_have_class("pos")
    expect(rows.nth(4).locator("rect")).to_have_class("neg")
    expect(page.locator("#outcomes-plot path.line")).to_have_count(1)
    expect(page.locator("#clicks-plot path.line")).to_have_count(1)
    expect(page.locator("#leaderboard, #matrix, #recommended")).to_have_count(0)
    site.shot(page, "admin-learner-laptop")

    phone = watched(PHONE).page
    phone.goto(site.url + "/admin/login")
    phone.fill("#token", ADMIN)
    phone.click("button[type=submit]")
    for path, name in ((f"/admin/experiments/{eid}", "admin-learner-phone"),
                       ("/admin/experiments", "admin-experiments-learner-phone")):
        phone.goto(site.url + path)
        expect(phone.locator(".topbar [aria-current=page]")).to_have_text("Experiments")
        assert fits(phone), path
        site.shot(phone, name)
    row = phone.locator(f"tr[data-experiment='{eid}'] td")
    expect(row.nth(2)).to_have_text("learner: PDGD, 5 features")
    expect(row.nth(3)).to_have_text("200")

    users(site, eid, token, 20, rng)                                 # the page refreshes itself
    expect(page.locator("#outcomes")).to_have_text("220", timeout=30_000)
    expect(page.locator("#impressions")).to_have_text("220")
    state = site.api.get(f"/api/experiments/{eid}").json()
    expect(rows.nth(0).locator("td").nth(1)).to_have_text(f"{state['weights'][0]:.3f}")
    expect(page.locator("#weights svg.weight-bar rect")).to_have_count(5)
    page.goto(site.url + "/admin/experiments")
    row = page.locator(f"tr[data-experiment='{eid}'] td")
    expect(row).to_have_text(["learning ranker", "running", "learner: PDGD, 5 features", "220", "—", "PDGD"])
    site.shot(page, "admin-experiments-learner-laptop")
