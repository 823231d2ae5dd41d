"""The campaign lifecycle in a real browser: the organiser pauses a campaign from its page, the assessor's
page says it is paused, the organiser resumes it and the assessor gets a pair, then closes, archives and
deletes it with the page's buttons, at 1366 px and 390 px. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, expect, needs_chromium, organiser, preference, shown  # noqa: E402

pytestmark = needs_chromium

PAUSED = "This campaign is paused by its organiser; come back later."


def fits(page) -> bool:
    """Whether the page needs no sideways scrolling."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_organiser_pauses_resumes_closes_archives_and_deletes_while_the_assessor_watches(browser, site, watched):
    cid = site.campaign(**preference(name="relevance study"))
    link = site.assessor(cid, "ann")
    context, page, confirmed, errors = organiser(browser, site, LAPTOP)
    page.goto(f"{site.url}/admin/campaigns/{cid}")
    expect(page.locator("#state")).to_have_text("running")
    page.locator("#lifecycle button", has_text="Pause").click()
    expect(page.locator("#state")).to_have_text("paused")
    expect(page.locator("#lifecycle button")).to_have_text(["Resume", "Close"])
    expect(page.locator("#state-note")).to_contain_text("no assessor gets new work")
    assert site.api.get(f"/api/campaigns/{cid}").json()["state"] == "paused"
    site.shot(page, "admin-campaign-paused-laptop")

    phone_admin, admin_phone, _, phone_errors = organiser(browser, site, PHONE)
    admin_phone.goto(f"{site.url}/admin/campaigns/{cid}")
    expect(admin_phone.locator("#lifecycle button")).to_have_text(["Resume", "Close"])
    assert fits(admin_phone)
    site.shot(admin_phone, "admin-campaign-paused-phone")

    for viewport, name in ((PHONE, "assessor-paused-phone"), (LAPTOP, "assessor-paused-laptop")):
        watch = watched(viewport)
        assessor = watch.page
        assessor.goto(link)
        expect(assessor.locator("#idle-title")).to_have_text("Paused")
        expect(assessor.locator("#idle-why")).to_contain_text(PAUSED)
        expect(assessor.locator("#task")).to_be_hidden()
        assert fits(assessor)
        site.shot(assessor, name)

    page.locator("#lifecycle button", has_text="Resume").click()
    expect(page.locator("#state")).to_have_text("running")
    assessor.click("#again")
    task, texts = shown(assessor)                                        # a pair again
    assert len(texts) == 2 and all(texts)
    assessor.keyboard.press("1")
    expect(assessor.locator("#task")).not_to_have_attribute("data-task", task)
    assert len(site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()) == 1

    page.locator("#lifecycle button", has_text="Close").click()
    expect(page.locator("#state")).to_have_text("closed")
    assert confirmed == ["Close the campaign relevance study? Its assessors get no more work and new answers are "
                         "refused; a closed campaign does not run again."]
    assessor.keyboard.press("1")                                         # an answer after the close: refused, said
    expect(assessor.locator("#status")).to_have_text("The campaign was closed by its organiser: that answer was not recorded.")
    expect(assessor.locator("#idle-title")).to_have_text("Closed")
    expect(assessor.locator("#again")).to_be_hidden()
    assert len(site.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()) == 1
    assert len(watch.errors) == 1 and "409 (Conflict)" in watch.errors.pop()          # the refused answer

    page.locator("#lifecycle button", has_text="Archive").click()
    expect(page.locator("#state")).to_have_text("archived")
    expect(page.locator("#lifecycle button")).to_have_text(["Unarchive", "Delete…"])
    expect(page.locator("#assessor-name")).to_have_count(0)                  # read-only: no assessor forms
    site.shot(page, "admin-campaign-archived-laptop")
    page.goto(site.url + "/admin")
    expect(page.locator(f'tr[data-campaign="{cid}"]')).to_have_count(0)
    page.click("text=Show archived")
    expect(page.locator(f'tr[data-campaign="{cid}"] .tag')).to_have_text("archived")

    page.goto(f"{site.url}/admin/campaigns/{cid}")
    page.locator("#lifecycle button", has_text="Delete").click()
    expect(page.locator("h1")).to_have_text("Campaigns")
    assert confirmed[-1] == ("Delete the campaign relevance study for good? Its 1 assessor, their tasks and every "
                             "recorded answer are removed from the database; download what you need first.")
    assert site.api.get(f"/api/campaigns/{cid}").status_code == 404
    assert errors == [] and phone_errors == []
    context.close()
    phone_admin.close()
