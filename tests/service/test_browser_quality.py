"""Quality control in a real browser: an assessor undoes a mis-click, and the organiser reads the
quality dashboard and clears a flag. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import httpx
import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import expect, needs_chromium, preference, shown, strength, text, wait_next  # noqa: E402
from .conftest import ADMIN  # noqa: E402

pytestmark = needs_chromium


def test_assessor_undoes_a_misclick_and_answers_again(site, watched):
    cid = site.campaign(**preference(items=4, topics=1, options={"seed": 5, "test_rate": 0}))
    page = watched().page
    page.goto(site.assessor(cid))
    expect(page.locator("#undo")).to_be_hidden()              # nothing to undo yet
    first, (left, right) = shown(page)
    wrong = "2" if strength(left) > strength(right) else "1"
    page.keyboard.press(wrong)                                # the mis-click
    wait_next(page, first)
    expect(page.locator("#undo")).to_be_visible()
    site.shot(page, "assessor-undo-offered")
    page.click("#undo")
    expect(page.locator("#status")).to_have_text("Your last answer was taken back: here is that pair again.")
    again, texts = shown(page)
    assert texts == [left, right] and again != first         # the same pair, leased anew
    expect(page.locator("#undo")).to_be_hidden()
    site.shot(page, "assessor-undo-done")
    page.keyboard.press("1" if wrong == "2" else "2")        # the intended answer
    wait_next(page, again)
    page.keyboard.press("u")                                  # the key works too: take that one back
    expect(page.locator("#status")).to_contain_text("taken back")
    page.keyboard.press("1" if wrong == "2" else "2")
    expect(page.locator("#progress")).to_contain_text("1 answered")
    lines = [line.split() for line in site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()]
    assert len(lines) == 1 and lines[0][3] == max(lines[0][1:3], key=lambda d: -int(d[1:]))  # the better item


def answer_all(base: str, token: str, pick, limit: int) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client:
        for n in range(limit):
            r = client.get("/api/next")
            if r.status_code == 204:
                return
            task = r.json()
            side = pick(*(item["text"] for item in task["items"]))
            assert client.post(f"/api/tasks/{task['task']}/answer", json={"answer": side, "client_id": str(n)}).is_success


def test_quality_dashboard_shows_signals_flags_and_settled_topics(site, watched):
    body = preference(items=12, topics=3, options={"seed": 5, "test_rate": 0.3})
    body["qrels"] += "".join(f"{t} 0 off{t}-{i} 0\n" for t in (1, 2, 3) for i in range(3))  # off-topic: test pairs
    body["qrels"] = body["qrels"].replace(" 1\n", " 2\n")
    body["texts"] |= {f"off{t}-{i}": text(f"z9{t}{i}") for t in (1, 2, 3) for i in range(3)}
    cid = site.campaign(**body)
    careful = lambda a, b: "left" if strength(a) > strength(b) else "right"  # noqa: E731
    people = {}
    for name in ("ann", "bob", "cat", "lefty"):
        r = site.api.post(f"/api/campaigns/{cid}/assessors", json={"name": name})
        people[name] = (r.json()["id"], r.json()["token"])
    for name in ("ann", "bob", "lefty", "cat"):
        answer_all(site.url, people[name][1], (lambda a, b: "left") if name == "lefty" else careful, 70)
    listed = {a["name"]: a for a in site.api.get(f"/api/campaigns/{cid}/assessors").json()}
    assert listed["lefty"]["flagged"] and not listed["ann"]["flagged"]
    admin = watched().page
    admin.goto(site.url + "/admin")
    admin.fill("#token", ADMIN)
    admin.click("button[type=submit]")
    admin.goto(f"{site.url}/admin/campaigns/{cid}")
    row = admin.locator(f"#assessors tr[data-assessor='{people['lefty'][0]}']")
    expect(row).to_contain_text("flagged")
    expect(row).to_contain_text("answers left")
    expect(admin.locator(f"#assessors tr[data-assessor='{people['ann'][0]}']")).to_contain_text("100 %")
    expect(admin.locator("#topics")).to_contain_text("settled")
    site.shot(admin, "admin-quality-dashboard")
    before = len(site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines())
    row.locator("button", has_text="Clear").click()
    row = admin.locator(f"#assessors tr[data-assessor='{people['lefty'][0]}']")
    expect(row).to_contain_text("active")
    site.shot(admin, "admin-quality-cleared")
    assert len(site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()) > before  # lefty's answers back
