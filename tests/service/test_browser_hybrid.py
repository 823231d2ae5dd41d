"""The organiser's view of a hybrid campaign in a real browser: an LLM assessor (a stub endpoint) answering
first, its audits and checks, the accuracy interval against the threshold, its calls and cost, and the
cut-off once the stub turns random. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from irbandits.judging.llm import parse_llm_spec  # noqa: E402
from tests.llm_stub import Stub  # noqa: E402

from .browsing import PHONE, Live, expect, needs_chromium  # noqa: E402
from .conftest import ADMIN  # noqa: E402
from .test_hybrid_campaign import body, coin, rank, unsure_on_neighbours  # noqa: E402

pytestmark = needs_chromium


def automatic(site: Live, cid: int) -> dict:
    return next(a for a in site.api.get(f"/api/campaigns/{cid}/assessors").json() if a["automatic"])["hybrid"]


def work(site: Live, cid: int, tokens: list[str], until, seconds: float = 120) -> None:
    """People answer every task they get with the truth until ``until()`` holds."""
    deadline = time.monotonic() + seconds
    while not until():
        assert time.monotonic() < deadline, "the campaign stalled"
        for token in tokens:
            r = site.api.get("/api/next", headers={"Authorization": f"Bearer {token}"})
            if r.status_code == 200:
                break
        else:
            assert not site.api.get(f"/api/campaigns/{cid}").json()["done"]
            time.sleep(0.01)
            continue
        task = r.json()
        left, right = (i["docno"] for i in task["items"])
        r = site.api.post(f"/api/tasks/{task['task']}/answer", headers={"Authorization": f"Bearer {token}"},
                          json={"answer": "left" if rank(left) < rank(right) else "right", "client_id": f"c{task['task']}"})
        assert r.status_code == 200, r.text


def recorded(site: Live, cid: int, stub: Stub, seconds: float = 60) -> dict:
    """The automatic assessor's state once every call the stub took is stored with its cost (in a paused
    campaign, which starts no new call)."""
    deadline = time.monotonic() + seconds
    while (h := automatic(site, cid))["usage"]["calls"] != len(stub.log) or stub.in_flight:
        assert time.monotonic() < deadline, f"{len(stub.log)} calls, {h['usage']['calls']} stored after {seconds} s"
        time.sleep(0.05)
    return h


def dashboard(site: Live, page, cid: int) -> None:
    page.goto(site.url + "/admin")
    page.fill("#token", ADMIN)
    page.click("button[type=submit]")
    page.goto(f"{site.url}/admin/campaigns/{cid}")


def test_the_dashboard_shows_an_llm_assessor_its_accuracy_interval_cost_and_cut_off(settings, watched):
    with Stub(prefer=unsure_on_neighbours, usage=(120, 1)) as stub:
        name, judge = parse_llm_spec(f"gpt={stub.url},model=stub-7b,price-in=2.5,price-out=10")
        settings.assessors = {name: judge}   # what `irbandits serve --llm` registers
        site = Live(settings)
        try:
            cid = site.campaign(**body(seed=3, audit=0.4, auto_threshold=0.85, test_rate=0.4))
            tokens = [site.api.post(f"/api/campaigns/{cid}/assessors", json={"name": n}).json()["token"]
                      for n in ("ann", "bob")]
            assert site.api.post(f"/api/campaigns/{cid}/assessors",
                                 json={"name": "llm", "automatic": "gpt"}).status_code == 201
            work(site, cid, tokens, lambda: (h := automatic(site, cid))["counted"] >= 20 and h["audited"] >= 3)
            state = f"/api/campaigns/{cid}"
            assert site.api.post(state, json={"state": "paused"}).status_code == 200   # no new work while we look

            page = watched().page
            dashboard(site, page, cid)
            card = page.locator("#automatic")
            expect(card).to_contain_text("answering")
            expect(page.locator("#state")).to_have_text("paused")
            expect(card).to_contain_text("100 % of")
            expect(card.locator("svg.interval rect.span")).to_have_count(1)
            site.shot(page, "hybrid-dashboard-answering-laptop")

            stub.prefer = coin
            assert site.api.post(state, json={"state": "running"}).status_code == 200
            work(site, cid, tokens, lambda: automatic(site, cid)["status"] == "cut off")
            assert site.api.post(state, json={"state": "paused"}).status_code == 200
            h = recorded(site, cid, stub)   # a call in flight at the cut-off is on its row too
            page.reload()
            expect(card).to_contain_text("cut off")
            expect(card).to_contain_text(f"after judgment {h['cutoff']['after']}")
            expect(card).to_contain_text("below the threshold 85%")
            expect(card).to_contain_text(f"${h['usage']['cost_usd']:.4f}")
            progress = site.api.get(f"/api/campaigns/{cid}").json()
            expect(page.locator("#for-people")).to_have_text(str(progress["for_people"]))
            site.shot(page, "hybrid-dashboard-cut-off-laptop")

            phone = watched(PHONE).page
            dashboard(site, phone, cid)
            phone.locator("#automatic").scroll_into_view_if_needed()
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"the dashboard is {width} px wide on a phone"
            site.shot(phone, "hybrid-dashboard-phone")
        finally:
            site.stop()
            site.app.state.campaigns.stop()
