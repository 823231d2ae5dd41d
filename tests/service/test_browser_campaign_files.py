"""The creation form in a real browser with a CSV topics file and a JSONL passages file, on a laptop
and a phone: the help names the formats, nothing overflows, the campaign is made with its topic notes."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, expect, needs_chromium, organiser, preference  # noqa: E402

pytestmark = needs_chromium


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["laptop", "phone"])
def test_form_creates_a_campaign_from_csv_topics_and_jsonl_passages(site, browser, viewport):
    body = preference(items=4, topics=2)
    topics = "topic,query,description,narrative\n" + "".join(
        f'{t},"{q}","What topic {t} is about, in a sentence","A relevant passage answers it."\n'
        for t, q in body["topics"].items())
    texts = "".join(json.dumps({"docno": d, "text": x}) + "\n" for d, x in body["texts"].items())
    context, page, _, errors = organiser(browser, site, viewport)
    page.click("text=New campaign")
    for field in ("topics", "texts"):
        assert page.locator(f"#{field}").get_attribute("accept") == ".tsv,.txt,.csv,.jsonl,.json,.ndjson"
    expect(page.locator("label[for=topics]")).to_contain_text("description and narrative")
    page.fill("#name", "from files")
    page.set_input_files("#topics", files=[dict(name="topics.csv", mimeType="text/csv", buffer=topics.encode())])
    page.set_input_files("#texts", files=[dict(name="passages.jsonl", mimeType="application/jsonl",
                                               buffer=texts.encode())])
    page.set_input_files("#qrels", files=[dict(name="qrels.txt", mimeType="text/plain", buffer=body["qrels"].encode())])
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    site.shot(page, f"admin-new-campaign-files-{viewport['width']}")
    page.click("text=Create campaign")
    expect(page.locator("h1")).to_have_text("from files")
    cid = int(page.url.rsplit("/", 1)[1])
    runtime = site.app.state.campaigns.campaigns[cid]
    assert runtime.notes == {t: {"description": f"What topic {t} is about, in a sentence",
                                 "narrative": "A relevant passage answers it."} for t in body["topics"]}
    assert runtime.texts == body["texts"] and errors == []
    context.close()
