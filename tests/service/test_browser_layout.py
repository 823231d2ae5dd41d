"""The assessor page on phones and keyboards, and the organiser's pages at 390 px, in a real browser: both
passages before the answer buttons on a phone, no key hints on a touch screen, the query's terms marked in
the passages (a choice remembered across reloads), a cue on a passage longer than its box, the keys' help
dialog, and the campaigns list and a campaign's dashboard without sideways scrolling. Screenshots go to
``test-output/screenshots/``."""

from __future__ import annotations

import httpx
import pytest

pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")

from .browsing import LAPTOP, PHONE, SHOTS, Watched, expect, graded, needs_chromium, organiser, preference, shown, text  # noqa: E402
from .test_browser_lifecycle import fits  # noqa: E402

pytestmark = needs_chromium

QUERY = "How do solar panels work in winter?"   # terms: solar, panels, work, winter ("how" is a stop word)
MARKED = "(a0) Solar panels lose power in WINTER, and solarium lamps work harder."
PLAIN = "(a1) A panel on a roof says nothing about the season."   # "panel" is not "panels"


def box(page, selector: str) -> dict:
    return page.locator(selector).bounding_box()


def below(page, buttons: str, passages: str) -> bool:
    """Whether every button's top is below every passage's bottom."""
    return page.evaluate("""([buttons, passages]) => {
        const tops = Array.from(document.querySelectorAll(buttons), (b) => b.getBoundingClientRect().top);
        const bottoms = Array.from(document.querySelectorAll(passages), (p) => p.getBoundingClientRect().bottom);
        return tops.length > 0 && bottoms.length > 0 && Math.min(...tops) >= Math.max(...bottoms);
    }""", [buttons, passages])


def viewport_shot(site, page, name: str) -> None:
    """A screenshot of the viewport only: a full-page one (``Live.shot``) turns Chromium's touch emulation
    off while it captures (the key hints would show in it), and leaves a modal's backdrop a viewport high."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{site.db}.png"))


def visible_kbd(page) -> int:
    return page.locator("main kbd").locator("visible=true").count()


def test_a_phone_shows_both_passages_before_the_buttons_and_a_touch_screen_no_key_hints(browser, site, watched):
    cid = site.campaign(**preference(items=2, topics=1, length=400))
    link = site.assessor(cid)
    touch = Watched(browser, PHONE, has_touch=True, is_mobile=True)
    page = touch.page
    page.goto(link)
    shown(page)
    assert page.evaluate("window.innerWidth") == PHONE["width"]
    assert below(page, "button.answer", ".item")
    left, right = box(page, "button[data-answer=left]"), box(page, "button[data-answer=right]")
    assert abs(left["y"] - right["y"]) < 1 and right["x"] >= left["x"] + left["width"]     # side by side
    assert visible_kbd(page) == 0
    expect(page.locator("#help-open")).to_be_hidden()
    assert fits(page)
    page.locator(".skip-row").scroll_into_view_if_needed()        # the foot of passage 2, then the buttons
    viewport_shot(site, page, "layout-assessor-touch-phone")
    touch.check()

    page = watched(LAPTOP).page
    page.goto(link)
    shown(page)
    assert below(page, "button.answer", ".item")
    for side in ("left", "right"):                     # each button under its own passage
        item, button = box(page, f"#item-{side}"), box(page, f"button[data-answer={side}]")
        assert item["x"] <= button["x"] < item["x"] + item["width"]
    assert visible_kbd(page) == 5                      # 1 ← 2 → on the buttons, ? on the help's
    expect(page.locator("#help-open")).to_be_visible()

    graded_cid = site.campaign(**graded())
    touch = Watched(browser, PHONE, has_touch=True, is_mobile=True)
    page = touch.page
    page.goto(site.assessor(graded_cid))
    shown(page)
    assert below(page, ".grades button", "#item-doc") and visible_kbd(page) == 0 and fits(page)
    viewport_shot(site, page, "layout-assessor-graded-touch-phone")
    touch.check()


def test_the_query_terms_are_marked_and_the_choice_to_turn_it_off_survives_a_reload(site, watched):
    body = preference(items=2, topics=1, texts={"a0": MARKED, "a1": PLAIN})
    body["topics"] = {"1": QUERY}
    cid = site.campaign(**body)
    link = site.assessor(cid)
    for viewport, name in ((LAPTOP, "laptop"), (PHONE, "phone")):
        page = watched(viewport).page
        page.goto(link)
        _, texts = shown(page)
        assert sorted(texts) == [MARKED, PLAIN]                         # the marks change no text
        expect(page.locator("#highlight")).to_be_checked()
        expect(page.locator(".item mark")).to_have_count(4)
        assert sorted(page.locator(".item mark").all_inner_texts()) == ["Solar", "WINTER", "panels", "work"]
        assert page.locator("#query mark").count() == 0
        assert fits(page)
        site.shot(page, f"layout-assessor-highlight-{name}")
    page.uncheck("#highlight")
    expect(page.locator(".item mark")).to_have_count(0)
    assert sorted(shown(page)[1]) == [MARKED, PLAIN]
    page.reload()
    shown(page)
    expect(page.locator("#highlight")).not_to_be_checked()
    expect(page.locator(".item mark")).to_have_count(0)
    page.check("#highlight")
    expect(page.locator(".item mark")).to_have_count(4)


def test_a_topics_description_and_narrative_show_when_the_task_has_them(site, watched):
    cid = site.campaign(**preference(items=2, topics=1))
    page = watched().page
    page.goto(site.assessor(cid))
    shown(page)
    expect(page.locator("#description")).to_be_hidden()
    expect(page.locator("#narrative")).to_be_hidden()
    about = {"description": "Find passages about <b>winter</b> yields.",
             "narrative": "A relevant passage names a figure.\nOne that only mentions the sun is not."}

    def with_topic(route):
        response = route.fetch()
        route.fulfill(response=response, json=response.json() | about)

    page.route("**/api/next", with_topic)
    page.reload()
    shown(page)
    expect(page.locator("#description")).to_have_text(about["description"])      # as text, not HTML
    assert page.locator("#description b").count() == 0
    expect(page.locator("#narrative")).to_be_visible()
    expect(page.locator("#narrative-text")).to_be_hidden()                         # folded until asked
    page.click("#narrative summary")
    expect(page.locator("#narrative-text")).to_have_text(about["narrative"])
    site.shot(page, "layout-assessor-topic-laptop")


def test_a_passage_longer_than_its_box_shows_a_cue_until_scrolled_to_its_end(site, watched):
    body = preference(items=2, topics=1)
    body["texts"] = {"a0": text("a0", 3000), "a1": text("a1", 200)}
    cid = site.campaign(**body)
    watch = watched(LAPTOP)
    page = watch.page
    page.goto(site.assessor(cid))
    _, texts = shown(page)
    long, short = ("#item-left", "#item-right") if texts[0].startswith("(a0)") else ("#item-right", "#item-left")
    expect(page.locator(f"{long} .more")).to_be_visible()
    expect(page.locator(f"{short} .more")).to_be_hidden()
    cue, pane = box(page, f"{long} .more"), box(page, f"{long} .text")
    assert pane["y"] < cue["y"] and cue["y"] + cue["height"] <= pane["y"] + pane["height"] + 1   # over the box's foot
    site.shot(page, "layout-assessor-cue-laptop")
    page.locator(f"{long} .text").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    expect(page.locator(f"{long} .more")).to_be_hidden()
    page.locator(f"{long} .text").evaluate("e => { e.scrollTop = 0; }")
    expect(page.locator(f"{long} .more")).to_be_visible()
    page.set_viewport_size({"width": LAPTOP["width"], "height": 3000})           # the box grows to hold it all
    expect(page.locator(f"{long} .more")).to_be_hidden()
    assert page.locator(f"{long} .text").evaluate("e => e.scrollHeight <= e.clientHeight")


def test_the_question_mark_opens_the_keys_help_and_escape_closes_it(site, watched):
    cid = site.campaign(**preference(items=4, topics=1))
    for viewport, name in ((LAPTOP, "laptop"), (PHONE, "phone")):
        page = watched(viewport).page
        page.goto(site.assessor(cid, name))
        task, _ = shown(page)
        page.locator("#item-right .text").focus()
        page.keyboard.press("?")
        expect(page.locator("#help")).to_be_visible()
        expect(page.locator("#help")).to_contain_text("Passage 2 is better")
        page.keyboard.press("2")                  # no answer while the help is open: an answer marks its button at once
        assert page.locator("button.answer.pressed, button.answer:disabled").count() == 0
        viewport_shot(site, page, f"layout-assessor-help-{name}")
        page.keyboard.press("Escape")
        expect(page.locator("#help")).to_be_hidden()
        expect(page.locator("#item-right .text")).to_be_focused()      # the focus is back where it was
        page.click("#help-open")
        expect(page.locator("#help")).to_be_visible()
        page.click("#help-close")
        expect(page.locator("#help")).to_be_hidden()
        expect(page.locator("#help-open")).to_be_focused()
        assert page.locator("#task").get_attribute("data-task") == task
    assert site.api.get(f"/api/campaigns/{cid}/judgments").text == ""


def test_the_campaigns_list_and_a_dashboard_fit_a_phone(browser, site):
    cid = site.campaign(**preference(name="a campaign whose name is much too long for one line on a phone"))
    site.campaign(**graded())
    old = site.campaign(**preference(name="last year's pilot"))
    for state in ("closed", "archived"):
        assert site.api.post(f"/api/campaigns/{old}", json={"state": state}).status_code == 200
    token = site.assessor(cid, "bob").rsplit("/", 1)[1]
    with httpx.Client(base_url=site.url, headers={"Authorization": f"Bearer {token}"}) as bob:
        task = bob.get("/api/next").json()["task"]
        r = bob.post(f"/api/tasks/{task}/skip", json={"reason": "other", "comment": "Both passages are the same "
                     "text, word for word, as far as I can tell from reading them twice.", "client_id": "s1"})
        assert r.status_code == 200, r.text
    context, page, _, errors = organiser(browser, site, PHONE)
    expect(page.locator("#campaign-list tbody tr")).to_have_count(2)
    assert fits(page)
    page.click("text=Show archived")
    expect(page.locator("#campaign-list tbody tr")).to_have_count(3)
    assert fits(page)
    site.shot(page, "layout-admin-campaigns-phone")
    page.goto(f"{site.url}/admin/campaigns/{cid}")
    page.fill("#assessor-name", "a crowd worker id like A2X3KQ8R7V1B0Z")
    page.click("text=Add and show link")
    expect(page.locator("#new-link")).to_be_visible()
    expect(page.locator("#reports tbody tr")).to_have_count(1)
    assert fits(page)
    site.shot(page, "layout-admin-campaign-phone")
    assert errors == []
    context.close()
