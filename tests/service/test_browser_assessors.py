"""Assessor management in a real browser: the organiser uploads a names file and gets a CSV of links,
renames an assessor, reads the topics' queries, and sees a bad file's problem, at 1366 px and 390 px.
Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, expect, needs_chromium, preference, shown  # noqa: E402
from .conftest import ADMIN  # noqa: E402

pytestmark = needs_chromium

LONG = "which passage explains best how the committee weighed the costs and the benefits of the new " * 3


def logged_in(page, site, cid: int) -> None:
    page.goto(site.url + "/admin/login")
    page.fill("#token", ADMIN)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Campaigns")
    page.goto(f"{site.url}/admin/campaigns/{cid}")


def fits(page) -> bool:
    """Whether the page needs no sideways scrolling."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_organiser_uploads_names_gets_links_renames_and_reads_queries(site, watched):
    body = preference(items=4, topics=2)
    body["topics"]["2"] = LONG
    cid = site.campaign(**body)
    page = watched(LAPTOP).page
    logged_in(page, site, cid)
    expect(page.locator("#bulk-assessors")).to_contain_text("the only time the links are shown")
    page.set_input_files("#names-file", files=[dict(name="workers.csv", mimeType="text/csv",
                                                    buffer='id,name\n1,ann\n\n2,"Smith, John"\n3,zoë\n'.encode())])
    with page.expect_download() as download:
        page.click("text=Add and download links")
    assert download.value.suggested_filename == f"campaign-{cid}-links.csv"
    rows = list(csv.reader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert rows[0] == ["name", "url"] and [r[0] for r in rows[1:]] == ["ann", "Smith, John", "zoë"]
    assert all(url.startswith(site.url + "/a/") for _, url in rows[1:])
    assessor = watched(PHONE).page
    assessor.goto(rows[2][1])
    shown(assessor)                                            # a link of the file opens its tasks

    page.reload()
    expect(page.locator("#assessors tbody tr")).to_have_count(3)
    row = page.locator("#assessors tbody tr", has_text="Smith, John")
    row.locator("summary", has_text="Rename").click()
    row.locator("input[name=name]").fill("John Smith")
    site.shot(page, "admin-assessor-rename-laptop")
    row.locator("button", has_text="Save").click()
    expect(page.locator("#assessors tbody tr").nth(1).locator("td").first).to_have_text("John Smith")
    assert [a["name"] for a in site.api.get(f"/api/campaigns/{cid}/assessors").json()] == ["ann", "John Smith", "zoë"]

    query = page.locator('#topics tr[data-topic="2"] .topic-query')
    expect(query).to_have_attribute("title", LONG)
    cell = page.locator('#topics tr[data-topic="2"] td.topic')
    assert cell.evaluate("e => e.scrollWidth > e.clientWidth")                  # cut short, with an ellipsis
    expect(page.locator('#topics tr[data-topic="1"] .topic-query')).to_have_text(body["topics"]["1"])
    assert fits(page)
    page.locator("#topics").scroll_into_view_if_needed()
    site.shot(page, "admin-assessors-topics-laptop")

    watch = watched(PHONE)
    phone = watch.page
    logged_in(phone, site, cid)
    expect(phone.locator('#topics tr[data-topic="2"] .topic-query')).to_have_attribute("title", LONG)
    phone.locator("#assessors tbody tr").first.locator("summary", has_text="Rename").click()
    assert fits(phone)
    site.shot(phone, "admin-assessors-phone")
    phone.set_input_files("#names-file", files=[dict(name="more.txt", mimeType="text/plain",
                                                     buffer=b"dora\neve\ndora\n")])
    phone.click("text=Add and download links")
    expect(phone.locator("#assessor-error")).to_have_text("names file more.txt, line 3: 'dora' is already on line 1")
    assert len(site.api.get(f"/api/campaigns/{cid}/assessors").json()) == 3      # the bad file added nobody
    assert len(watch.errors) == 1 and "422 (Unprocessable Entity)" in watch.errors.pop()     # the form's answer
    assert fits(phone)
    site.shot(phone, "admin-assessors-bad-file-phone")
