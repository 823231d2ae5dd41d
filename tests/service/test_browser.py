"""The pages in a real browser: Playwright driving Debian's chromium against uvicorn on 127.0.0.1.

Skipped with a reason when the ``playwright`` package or ``/usr/bin/chromium`` is missing
(``scripts/install-test-deps.sh`` installs chromium). Runs on SQLite and, when
``IRBANDITS_TEST_PG_URL`` is reachable, PostgreSQL (the ``settings`` fixture of ``conftest.py``).
Screenshots go to ``test-output/screenshots/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, expect, graded, needs_chromium, preference, shown, strength, wait_next  # noqa: E402
from .conftest import ADMIN  # noqa: E402

pytestmark = needs_chromium
SCRIPT = '<script>alert("x")</script><img src=x onerror="alert(2)">'


# ----- tests -------------------------------------------------------------------------------------
def test_assessor_finishes_a_preference_campaign_with_the_keyboard_only(site, watched):
    cid = site.campaign(**preference())
    page = watched().page
    page.goto(site.assessor(cid))
    keys, pressed = {"left": ["1", "ArrowLeft"], "right": ["2", "ArrowRight"]}, []
    while True:
        expect(page.locator("#task, #idle").locator("visible=true")).to_have_count(1)
        if page.locator("#idle").is_visible():
            break
        task, (left, right) = shown(page)
        if not pressed:
            site.shot(page, "assessor-preference-laptop")
        side = "left" if strength(left) > strength(right) else "right"
        page.keyboard.press(keys[side][len(pressed) % 2])
        pressed.append((left.split()[0].strip("()"), right.split()[0].strip("()"), side))
        wait_next(page, task)
    assert len(pressed) == 12                    # 2 topics x 6 pairs: pools of 4 go straight to the final phase
    expect(page.locator("#progress")).to_have_text("12 answered · 2 of 2 topics finished")
    expect(page.locator("#idle-title")).to_have_text("All done")
    expect(page.locator("#again")).to_be_hidden()
    site.shot(page, "assessor-finished")
    lines = [line.split() for line in site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()]
    assert [(l, r, "left" if w == l else "right") for _, l, r, w, *_ in lines] == pressed
    best = site.api.get(f"/api/campaigns/{cid}/qrels?best=1").text.split()
    assert best == ["1", "Q0", "a0", "1", "2", "Q0", "b0", "1"]


def test_assessor_grades_with_keys_0_to_3(site, watched):
    cid = site.campaign(**graded())
    page = watched().page
    page.goto(site.assessor(cid))
    given = []
    while True:
        expect(page.locator("#task, #idle").locator("visible=true")).to_have_count(1)
        if page.locator("#idle").is_visible():
            break
        task, (passage,) = shown(page)
        if not given:
            site.shot(page, "assessor-graded-laptop")
        grade = -strength(passage)
        page.keyboard.press(str(grade))
        given.append((passage.split()[0].strip("()"), grade))
        wait_next(page, task)
    assert sorted(given) == [("a0", 0), ("a1", 1), ("a2", 2), ("b0", 0), ("b1", 1), ("b2", 2)]
    qrels = {(t, d): g for t, _, d, g in (l.split() for l in site.api.get(f"/api/campaigns/{cid}/qrels").text.splitlines())}
    assert {k: float(g) for k, g in qrels.items()} == {({"a": "1", "b": "2"}[d[0]], d): g for d, g in given}


def test_reload_shows_the_same_pair_and_a_retried_answer_is_recorded_once(site, watched):
    cid = site.campaign(**preference())
    watch = watched()
    page = watch.page
    page.goto(site.assessor(cid))
    before = shown(page)
    page.reload()
    assert shown(page) == before
    # the server records the answer but the browser sees the connection fail: pressing again
    # resends the same client_id, which is acknowledged without a second record
    sent = []

    def lose_reply(route):
        sent.append(route.request.post_data_json)
        route.fetch()
        route.abort("connectionreset")

    page.route("**/api/tasks/*/answer", lose_reply)
    page.keyboard.press("1")
    expect(page.locator("#status")).to_contain_text("Press again")
    assert len(watch.errors) == 1 and "ERR_CONNECTION_RESET" in watch.errors.pop()
    page.unroute("**/api/tasks/*/answer")
    page.on("request", lambda r: r.url.endswith("/answer") and sent.append(r.post_data_json))
    page.keyboard.press("1")
    wait_next(page, before[0])
    assert len(sent) == 2 and sent[0] == sent[1]
    assert len(site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()) == 1
    expect(page.locator("#progress")).to_contain_text("1 answered")


def test_an_answer_after_the_lease_expired_is_refused_and_the_page_moves_on(site, watched, settings):
    cid = site.campaign(**preference())
    watch = watched()
    page = watch.page
    page.goto(site.assessor(cid))
    task, _ = shown(page)
    settings.clock.now += settings.lease_seconds + 1      # the assessor left the page open too long
    page.keyboard.press("2")
    expect(page.locator("#status")).to_contain_text("expired")
    assert shown(page)[0] != task
    assert len(watch.errors) == 1 and "409 (Conflict)" in watch.errors.pop()
    assert site.api.get(f"/api/campaigns/{cid}/judgments").text == ""


def test_organiser_creates_a_campaign_with_the_form_and_sees_the_answers(site, watched):
    body = preference(items=4, topics=2)
    admin = watched().page
    admin.goto(site.url + "/admin")
    expect(admin).to_have_url(site.url + "/admin/login")
    admin.fill("#token", ADMIN)
    site.shot(admin, "admin-login")
    admin.click("button[type=submit]")
    expect(admin.locator("h1")).to_have_text("Campaigns")
    admin.click("text=New campaign")
    admin.fill("#name", "form study")
    admin.set_input_files("#topics", files=[dict(name="topics.tsv", mimeType="text/plain", buffer="".join(
        f"{t}\t{q}\n" for t, q in body["topics"].items()).encode())])
    admin.set_input_files("#texts", files=[dict(name="passages.tsv", mimeType="text/plain", buffer="".join(
        f"{d}\t{x}\n" for d, x in body["texts"].items()).encode())])
    admin.set_input_files("#qrels", files=[dict(name="qrels.txt", mimeType="text/plain", buffer=body["qrels"].encode())])
    expect(admin.locator("#runs")).to_be_hidden()     # the graded options are hidden for a preference campaign
    admin.fill("[name='preference.seed']", "5")
    site.shot(admin, "admin-new-campaign")
    admin.click("text=Create campaign")
    expect(admin.locator("h1")).to_have_text("form study")
    cid = int(admin.url.rsplit("/", 1)[1])
    admin.fill("#assessor-name", "ann")
    admin.click("text=Add and show link")
    link = admin.locator("#new-link").input_value()
    assert link.startswith(site.url + "/a/")
    site.shot(admin, "admin-new-assessor")
    assert admin.url == f"{site.url}/admin/campaigns/{cid}"    # a reload is a GET, not the POST again

    assessor = watched().page
    assessor.goto(link)
    for _ in range(3):
        task, (left, right) = shown(assessor)
        assessor.keyboard.press("1" if strength(left) > strength(right) else "2")
        wait_next(assessor, task)
    expect(admin.locator("#judgments")).to_have_text("3")          # the live refresh
    expect(admin.locator("#assessors tbody tr").first).to_contain_text("3")
    expect(admin.locator("#plot path.line")).to_have_count(1)
    site.shot(admin, "admin-dashboard")
    assert len(site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()) == 3
    with admin.expect_download() as download:
        admin.click("a[href$='judgments.txt']")
    assert Path(download.value.path()).read_text() == site.api.get(f"/api/campaigns/{cid}/judgments").text


def test_script_passage_is_shown_as_text(site, watched):
    body = preference(items=2, topics=1)
    body["texts"] = {"a0": "(a0) " + SCRIPT, "a1": "(a1) plain"}
    body["topics"] = {"1": SCRIPT}
    cid = site.campaign(**body)
    page = watched().page
    page.goto(site.assessor(cid))
    _, texts = shown(page)
    assert "(a0) " + SCRIPT in texts and page.locator("#query").inner_text() == SCRIPT
    assert page.evaluate("document.querySelectorAll('main script, main img').length") == 0
    site.shot(page, "assessor-script-text")
    # dialogs and console errors are checked when the page is closed (Watched.check)


def test_phone_stacks_long_passages_and_laptop_puts_them_side_by_side(site, watched):
    cid = site.campaign(**preference(items=2, topics=1, length=3000))
    link = site.assessor(cid)
    for name, viewport in (("phone", PHONE), ("laptop", LAPTOP)):
        page = watched(viewport).page
        page.goto(link)
        shown(page)
        left, right = (page.locator(f"#item-{side}").bounding_box() for side in ("left", "right"))
        if name == "phone":
            assert right["y"] >= left["y"] + left["height"] and abs(right["x"] - left["x"]) < 1
            assert left["width"] <= viewport["width"]
        else:
            assert abs(right["y"] - left["y"]) < 1 and right["x"] >= left["x"] + left["width"]
            pane = page.locator("#item-left .text")
            assert pane.evaluate("e => e.scrollHeight > e.clientHeight")          # the passage scrolls in its pane
            button = page.locator("button[data-answer=left]").bounding_box()
            assert button["y"] + button["height"] <= viewport["height"]           # answer buttons stay on screen
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scrolling
        site.shot(page, f"assessor-long-{name}")
