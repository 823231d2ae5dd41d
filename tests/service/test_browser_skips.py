"""Skips and problem reports in a real browser: on a phone (390 px, taps only) an assessor reports a broken
passage with a comment and gets the next pair; on a laptop (1366 px) another gets that pair and can't judge
it; the organiser sees both in the dashboard's Reports card. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, expect, needs_chromium, preference, shown, wait_next  # noqa: E402
from .test_browser_lifecycle import fits, organiser  # noqa: E402

pytestmark = needs_chromium

COMMENT = "Passage 2 stops after 1 line: the rest is missing."   # its digits are no answer keys while typed


def test_an_assessor_reports_a_broken_passage_another_cannot_judge_it_and_the_organiser_sees_both(browser, site, watched):
    cid = site.campaign(**preference(name="report study"))
    ann_link, bob_link = site.assessor(cid, "ann"), site.assessor(cid, "bob")

    phone = watched(PHONE)
    ann = phone.page
    ann.goto(ann_link)
    first, first_texts = shown(ann)
    expect(ann.locator("#report")).to_be_hidden()
    ann.click("#report-open")
    expect(ann.locator("#report")).to_be_visible()
    expect(ann.locator("#report-open")).to_have_attribute("aria-expanded", "true")
    ann.check("#report input[value=broken]")
    ann.click("#report-comment")
    ann.keyboard.type(COMMENT)
    expect(ann.locator("#report-comment")).to_have_value(COMMENT)
    assert ann.locator("#task").get_attribute("data-task") == first   # typing answered nothing
    assert fits(ann)
    site.shot(ann, "assessor-report-open-phone")
    ann.click("#report-send")
    wait_next(ann, first)
    expect(ann.locator("#status")).to_have_text("Thank you: your report was sent. Here is the next one.")
    expect(ann.locator("#report")).to_be_hidden()
    expect(ann.locator("#report-comment")).to_have_value("")
    second, second_texts = shown(ann)
    assert sorted(second_texts) != sorted(first_texts)
    [report] = site.api.get(f"/api/campaigns/{cid}/reports").json()
    assert (report["reason"], report["comment"], report["name"], report["task"]) == ("broken", COMMENT, "ann", int(first))
    assert site.api.get(f"/api/campaigns/{cid}/judgments").text == ""          # not a judgment

    laptop = watched(LAPTOP)
    bob = laptop.page
    bob.goto(bob_link)
    task, texts = shown(bob)
    assert sorted(texts) == sorted(first_texts)                                  # the pair ann skipped
    bob.click("#report-open")
    bob.check("#report input[value=language]")
    bob.fill("#report-comment", "not sure")
    site.shot(bob, "assessor-report-open-laptop")
    bob.click("#report-cancel")                                                  # changed his mind
    expect(bob.locator("#report")).to_be_hidden()
    bob.click("#cant-judge")
    wait_next(bob, task)
    expect(bob.locator("#status")).to_have_text("Skipped. Here is the next one.")
    log = site.api.get(f"/api/campaigns/{cid}/judgments?log=1").text.splitlines()
    assert [line.split()[6:8] for line in log] == [["skip", "broken"], ["skip", "cant-judge"]]

    context, page, _, errors = organiser(browser, site, LAPTOP)
    page.goto(f"{site.url}/admin/campaigns/{cid}")
    expect(page.locator("#report-count")).to_have_text("2")
    rows = page.locator("#reports tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator(".reason")).to_have_text("can't judge")                 # the latest first
    expect(rows.nth(0).locator(".comment")).to_have_text("")
    expect(rows.nth(0).locator("td").nth(4)).to_have_text("bob")
    expect(rows.nth(1).locator("td").nth(0)).to_have_text(report["topic"])
    expect(rows.nth(1).locator(".reason")).to_have_text("broken passage")
    expect(rows.nth(1).locator(".comment")).to_have_text(COMMENT)
    expect(rows.nth(1).locator("td").nth(4)).to_have_text("ann")
    assert sorted(rows.nth(1).locator("td").nth(1).inner_text().split(", ")) == sorted(report["docnos"])
    page.locator("#reports-card").scroll_into_view_if_needed()
    site.shot(page, "admin-reports-laptop")
    page.locator("#reports-card").screenshot(path=str(_card_path(site, "laptop")))

    phone_admin, admin_phone, _, phone_errors = organiser(browser, site, PHONE)
    admin_phone.goto(f"{site.url}/admin/campaigns/{cid}")
    expect(admin_phone.locator("#reports tbody tr")).to_have_count(2)
    assert fits(admin_phone)
    site.shot(admin_phone, "admin-reports-phone")
    admin_phone.locator("#reports-card").screenshot(path=str(_card_path(site, "phone")))
    assert errors == [] and phone_errors == []
    context.close()
    phone_admin.close()


def _card_path(site, size: str):
    """Where the Reports card alone is shot (beside the full pages)."""
    from .browsing import SHOTS

    return SHOTS / f"admin-reports-card-{size}-{site.db}.png"
