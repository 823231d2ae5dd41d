"""The safety features in a real browser: the organiser revokes, restores and re-issues an assessor's
link and a front end's client token with the pages' buttons, and a passage with a right-to-left override
is shown in reading order. Screenshots go to ``test-output/screenshots/``."""

from __future__ import annotations

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import expect, needs_chromium, organiser, preference  # noqa: E402

pytestmark = needs_chromium


def test_organiser_revokes_restores_and_reissues_an_assessor_link(browser, site):
    cid = site.campaign(**preference())
    link = site.assessor(cid, "ann")
    context, page, confirmed, errors = organiser(browser, site)
    page.goto(f"{site.url}/admin/campaigns/{cid}")
    row = page.locator("#assessors tbody tr").first
    row.locator("button", has_text="Revoke").click()
    expect(row).to_contain_text("revoked")
    assert confirmed == ["Revoke the link of ann? Its next request is refused; what it sent so far stays."]
    site.shot(page, "admin-assessor-revoked")
    assessor = context.new_page()            # not a watched page: the revoked link's 404 is expected
    assessor.goto(link)
    expect(assessor.locator("body")).to_contain_text("not valid")      # the old link opens nothing now
    row.locator("button", has_text="Restore").click()
    expect(row).to_contain_text("active")
    row.locator("button", has_text="New link").click()
    new_link = page.locator("#new-link").input_value()
    assert new_link.startswith(site.url + "/a/") and new_link != link and len(confirmed) == 2
    site.shot(page, "admin-assessor-new-link")
    assessor.goto(link)
    expect(assessor.locator("body")).to_contain_text("not valid")
    assessor.goto(new_link)
    expect(assessor.locator("#task")).to_be_visible()
    page.reload()                                                        # the link was shown once
    expect(page.locator("#new-link")).to_have_count(0)
    assert errors == []
    context.close()


def test_organiser_adds_revokes_and_reissues_a_front_end_token(browser, site):
    eid = site.api.post("/api/experiments", json=dict(name="arena", rankers=["bm25", "neural"], algorithm="RUCB",
                                                      comparison="team-draft", seed=1)).json()["id"]
    context, page, confirmed, errors = organiser(browser, site)
    page.goto(f"{site.url}/admin/experiments/{eid}")
    page.fill("#client-name", "search-frontend")
    page.click("#clients button[type=submit]:has-text('Add and show token')")
    token = page.locator("#new-token").input_value()

    def impression(token: str) -> int:
        return site.api.post(f"/api/experiments/{eid}/impressions", json={},
                             headers={"Authorization": f"Bearer {token}"}).status_code

    assert impression(token) == 201
    row = page.locator("#client-list tbody tr").first
    expect(row).to_contain_text("search-frontend")
    row.locator("button", has_text="Revoke").click()
    expect(row).to_contain_text("revoked")
    assert impression(token) == 401
    site.shot(page, "admin-client-revoked")
    row.locator("button", has_text="New token").click()
    fresh = page.locator("#new-token").input_value()
    assert fresh != token and impression(fresh) == 201 and impression(token) == 401
    expect(page.locator("#client-list tbody tr").first).to_contain_text("active")
    site.shot(page, "admin-client-new-token")
    assert len(confirmed) == 2 and errors == []
    context.close()


def test_a_right_to_left_override_does_not_reverse_a_passage(site, watched):
    body = preference(items=2, topics=1)
    docs = sorted(body["texts"])
    body["texts"] = {docs[0]: "\u202eThe override would show this sentence backwards.",
                     docs[1]: "An ordinary passage \u202eexe.txt with an override inside it."}
    body["topics"] = {"1": "which \u202eseussi is better?"}
    cid = site.campaign(**body)
    page = watched().page
    page.goto(site.assessor(cid))
    expect(page.locator("#task")).to_be_visible()
    site.shot(page, "assessor-bidi-override")
    # along the first line of every text the characters run left to right: reading order, not reversed
    order = page.evaluate("""() => Array.from(document.querySelectorAll('#query, .item .text')).map((node) => {
        const text = node.firstChild, range = document.createRange();
        const x = (i) => { range.setStart(text, i); range.setEnd(text, i + 1); return range.getBoundingClientRect().x; };
        const n = Math.min(text.length, 40), xs = Array.from({ length: n }, (_, i) => x(i));
        return [node.textContent, xs.every((v, i) => i === 0 || v >= xs[i - 1])];
    })""")
    assert len(order) == 3 and all(left_to_right for _, left_to_right in order), order
    assert all("\u202e" not in shown for shown, _ in order)
