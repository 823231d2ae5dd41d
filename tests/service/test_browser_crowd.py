"""The Yan thesis's crowd design end to end in chromium (issue 24): the organiser makes a join link on the
dashboard; a worker arrives through it with Prolific ids, reads the guidelines, agrees to the consent,
passes the practice round (one wrong answer, with feedback), does two bundles of 10 targets + 3 checks,
the second rejected by the 75 % rule, and gets the completion code and the link back to Prolific. The
organiser pauses and resumes the campaign meanwhile, revokes a second worker, and downloads the payment
report. Screenshots at 1366 px and 390 px go to ``test-output/screenshots/crowd-*``."""

from __future__ import annotations

import csv
import io
import re

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, expect, needs_chromium, organiser, preference, shown, text  # noqa: E402

pytestmark = needs_chromium

CHECKS = [["1", f"a{i}", f"a{i + 4}"] for i in range(12, 16)]   # passages outside the pool: never a target pair
DONE_URL = "https://app.prolific.com/submissions/complete?cc={code}"
CROWD = dict(
    guidelines="# How to judge\n\nPrefer the passage that **answers** the question.\n\n<script>alert(1)</script>",
    consent="I agree that my answers are used for research and published without my name.",
    practice=[["1", "a0", "a11", "a0 is about the question; a11 only repeats its words."], ["1", "a1", "a10"]],
    practice_pass=0.5, bundle={"targets": 10, "checks": 3, "pass": 0.75}, bundles=2, completion_code="auto",
    completion_url=DONE_URL)


def docnos(texts: list[str]) -> list[str]:
    return [re.match(r"\((\w\d+)\)", t).group(1) for t in texts]


def judge(page, wrong: bool = False) -> tuple[str, bool]:
    """Answer the pair on screen as the test's worker would (the lower number is better; ``wrong``:
    the other one) and wait for what comes next; returns the task id and whether it was a check."""
    task, texts = shown(page)
    left, right = docnos(texts)
    better_left = int(left[1:]) < int(right[1:])
    page.keyboard.press("1" if better_left != wrong else "2")
    page.wait_for_function("t => { const s = document.getElementById('task');"    # another task, idle, or feedback
                           " return s.hidden ? document.getElementById('loading').hidden : s.dataset.task !== t; }",
                           arg=task)
    return task, sorted([left, right], key=lambda d: int(d[1:])) in [c[1:] for c in CHECKS]


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_a_prolific_worker_does_the_thesis_design_from_the_join_link_to_the_completion_code(browser, site, watched):
    body = preference(items=12, topics=1, name="passage study", tests=CHECKS, crowd=CROWD)
    body["texts"] |= {f"a{i}": text(f"a{i}") for i in range(12, 20)}
    cid = site.campaign(**body)
    context, admin, confirmed, admin_errors = organiser(browser, site, LAPTOP)
    admin.goto(f"{site.url}/admin/campaigns/{cid}")
    admin.fill("#join-cap", "3")
    admin.click("#make-join button[type=submit]")
    expect(admin.locator("#join-state")).to_contain_text("0 of 3 assessors joined")
    join = admin.locator("#join-url").input_value()
    assert join.startswith(site.url + "/j/")
    site.shot(admin, "crowd-dashboard-laptop")

    # the worker arrives from Prolific, reads the guidelines and agrees
    watch = watched(LAPTOP)
    page = watch.page
    page.goto(join + "?PROLIFIC_PID=5f0c1e2d3b4a5968778695a4&STUDY_ID=6a7b8c&SESSION_ID=s123")
    assert re.search(r"/a/[\w-]+$", page.url)
    expect(page.locator("#intro")).to_be_visible()
    expect(page.locator("#guidelines h1")).to_have_text("How to judge")
    expect(page.locator("#guidelines strong")).to_have_text("answers")
    expect(page.locator("#guidelines")).to_contain_text("<script>alert(1)</script>")   # shown as text, never run
    expect(page.locator("#consent-text")).to_contain_text("I agree that my answers are used")
    site.shot(page, "crowd-guidelines-laptop")
    phone = watched(PHONE)
    phone.page.goto(page.url)
    expect(phone.page.locator("#intro")).to_be_visible()
    assert fits(phone.page)
    site.shot(phone.page, "crowd-guidelines-phone")
    page.click("#start")                                        # the consent box is not ticked: nothing happens
    expect(page.locator("#intro")).to_be_visible()
    page.check("#consent-agree")
    page.click("#start")

    # the practice round: one wrong answer and its feedback, one right
    expect(page.locator("#progress")).to_contain_text("practice 1 of 2")
    task, texts = shown(page)
    assert sorted(docnos(texts)) == ["a0", "a11"]
    page.keyboard.press("2" if docnos(texts)[0] == "a0" else "1")
    expect(page.locator("#feedback-title")).to_have_text("Not quite")
    expect(page.locator("#feedback-note")).to_have_text("a0 is about the question; a11 only repeats its words.")
    site.shot(page, "crowd-practice-feedback-laptop")
    page.keyboard.press("Enter")
    judge(page)
    expect(page.locator("#feedback-title")).to_have_text("Right")
    page.click("#feedback-next")

    # bundle 1: ten targets and three checks, all right; the organiser pauses and resumes in its middle
    checks = []
    for n in range(13):
        if n == 6:
            admin.locator("#lifecycle button", has_text="Pause").click()
            expect(admin.locator("#state")).to_have_text("paused")
            _, check = judge(page)                              # the pair on screen is still recorded
            checks.append(check)
            expect(page.locator("#idle-title")).to_have_text("Paused")
            site.shot(page, "crowd-paused-laptop")
            admin.locator("#lifecycle button", has_text="Resume").click()
            expect(admin.locator("#state")).to_have_text("running")
            page.click("#again")
            continue
        expect(page.locator("#progress")).to_contain_text(f"bundle 1 of 2: {n} of 13")
        checks.append(judge(page)[1])
    assert sum(checks) == 3
    assert site.api.get(f"/api/campaigns/{cid}").json()["judgments"] == 10

    # a second worker joins; the organiser revokes them from the dashboard
    other = browser.new_context(viewport=PHONE).new_page()   # it is shown a 404 and a 401 page on purpose
    other.goto(join + "?PROLIFIC_PID=bob0&STUDY_ID=6a7b8c&SESSION_ID=s9")
    expect(other.locator("#intro")).to_be_visible()
    bob_link = other.url
    admin.goto(f"{site.url}/admin/campaigns/{cid}")
    admin.locator("tr", has_text="prolific:bob0").locator("button", has_text="Revoke").click()
    expect(admin.locator("tr", has_text="prolific:bob0")).to_contain_text("revoked")
    assert any("Revoke the link of prolific:bob0" in m for m in confirmed)
    other.goto(bob_link)
    expect(other.locator("h1")).to_have_text("This link is not valid")
    other.goto(join + "?PROLIFIC_PID=bob0&STUDY_ID=6a7b8c&SESSION_ID=s9")
    expect(other.locator("h1")).to_have_text("Cannot join")
    expect(other.locator("main")).to_contain_text("withdrawn")
    other.context.close()

    # bundle 2: one check wrong, so the bundle is rejected (3 checks, 75 %)
    phone.page.goto(page.url)
    expect(phone.page.locator("#task")).to_be_visible()
    assert fits(phone.page)
    site.shot(phone.page, "crowd-task-phone")
    wrong_given = False
    for n in range(13):
        task, texts = shown(page)
        check = sorted(docnos(texts), key=lambda d: int(d[1:])) in [c[1:] for c in CHECKS]
        judge(page, wrong=check and not wrong_given)
        wrong_given |= check
    assert wrong_given

    # the end: the completion code and the link back to Prolific
    expect(page.locator("#idle-title")).to_have_text("All done")
    expect(page.locator("#completion")).to_be_visible()
    code = page.locator("#completion-code").input_value()
    expect(page.locator("#completion-link")).to_have_attribute("href", DONE_URL.replace("{code}", code))
    site.shot(page, "crowd-completion-laptop")
    phone.page.goto(page.url)
    expect(phone.page.locator("#completion")).to_be_visible()
    assert fits(phone.page)
    site.shot(phone.page, "crowd-completion-phone")
    assert site.api.get(f"/api/campaigns/{cid}").json()["judgments"] == 10    # the rejected bundle left the process

    # the organiser's payment report
    admin.goto(f"{site.url}/admin/campaigns/{cid}")
    with admin.expect_download() as download:
        admin.click("#payments")
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(open(download.value.path(), encoding="utf-8").read()))}
    ann = rows["prolific:5f0c1e2d3b4a5968778695a4"]
    assert (ann["code"], ann["bundles"], ann["accepted"], ann["rejected"], ann["answers"], ann["checks"]) == (
        code, "2", "1", "1", "20", "6")
    assert (ann["worker"], ann["study"], ann["session"], ann["practice_right"], ann["stage"]) == (
        "5f0c1e2d3b4a5968778695a4", "6a7b8c", "s123", "1", "finished")
    assert rows["prolific:bob0"]["revoked"] == "True"
    admin.set_viewport_size(PHONE)
    assert fits(admin)
    site.shot(admin, "crowd-dashboard-phone")
    assert admin_errors == []
    context.close()
