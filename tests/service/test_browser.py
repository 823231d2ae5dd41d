"""The pages in a real browser: Playwright driving Debian's chromium against uvicorn on 127.0.0.1.

Skipped with a reason when the ``playwright`` package or ``/usr/bin/chromium`` is missing
(``scripts/install-test-deps.sh`` installs chromium). Runs on SQLite and, when
``IRBANDITS_TEST_PG_URL`` is reachable, PostgreSQL (the ``settings`` fixture of ``conftest.py``).
Screenshots go to ``test-output/screenshots/``.
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from .conftest import ADMIN

sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"{CHROMIUM} is missing: run scripts/install-test-deps.sh")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
LAPTOP, PHONE = {"width": 1366, "height": 800}, {"width": 390, "height": 844}
expect = sync_api.expect
SCRIPT = '<script>alert("x")</script><img src=x onerror="alert(2)">'


# ----- fixtures ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


class Live:
    """The service app served by uvicorn in a thread, with an organiser client for the JSON API."""

    def __init__(self, settings):
        import uvicorn

        from irbandits.service.app import create_app

        self.app = create_app(settings)
        self.db = settings.db_url.split(":")[0].split("+")[0]
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)
        self.api = httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {ADMIN}"})

    def stop(self) -> None:
        self.api.close()
        self.server.should_exit = True
        self.thread.join(10)
        self.app.state.engine.dispose()

    def campaign(self, **body) -> int:
        r = self.api.post("/api/campaigns", json=body)
        assert r.status_code == 201, r.text
        return r.json()["id"]

    def assessor(self, cid: int, name: str = "ann") -> str:
        r = self.api.post(f"/api/campaigns/{cid}/assessors", json={"name": name})
        assert r.status_code == 201, r.text
        return self.url + r.json()["url"]

    def shot(self, page, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}-{self.db}.png"), full_page=True)


@pytest.fixture
def live(settings):
    server = Live(settings)
    yield server
    server.stop()


class Watched:
    """A page whose dialogs (alert etc.) and console errors (CSP violations, script errors) are recorded."""

    def __init__(self, browser, viewport=LAPTOP):
        self.context = browser.new_context(viewport=viewport)
        self.page = self.context.new_page()
        self.dialogs, self.errors = [], []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def check(self) -> None:
        assert self.dialogs == [] and self.errors == []
        self.context.close()


@pytest.fixture
def watched(browser):
    made = []

    def make(viewport=LAPTOP) -> Watched:
        made.append(Watched(browser, viewport))
        return made[-1]

    yield make
    for w in made:
        w.check()


# ----- campaigns ---------------------------------------------------------------------------------
FILLER = ("This passage is written for the browser tests; it says little, at some length, so that the "
          "layout has real lines to wrap. ")


def text(docno: str, length: int = 300) -> str:
    return f"({docno}) " + (FILLER * (length // len(FILLER) + 1))[:length]


def strength(passage: str) -> int:
    """The test assessor's taste: the lower the number in the passage's ``(dN)``, the better."""
    return -int(re.match(r"\((\w)(\d+)\)", passage).group(2))


def preference(items: int = 4, topics: int = 2, length: int = 300, **overrides) -> dict:
    docs = {t: [f"{'abcdef'[t]}{i}" for i in range(items)] for t in range(topics)}
    body = dict(name="keyboard study", kind="preference",
                topics={str(t + 1): f"question number {t + 1}: which passage is better?" for t in docs},
                texts={d: text(d, length) for ds in docs.values() for d in ds},
                qrels="".join(f"{t + 1} 0 {d} 1\n" for t, ds in docs.items() for d in ds), options={"seed": 5})
    body.update(overrides)
    return body


def graded() -> dict:
    runs = {"r1": "".join(f"{t} Q0 {x}{i} {i + 1} {9 - i} r1\n" for t, x in (("1", "a"), ("2", "b")) for i in range(3))}
    return dict(name="grading", kind="graded", topics={"1": "first question", "2": "second question"},
                texts={f"{x}{i}": text(f"{x}{i}") for x in "ab" for i in range(3)}, runs=runs, options={"depth": 3})


def shown(page) -> tuple[str, list[str]]:
    """The task id on screen and its passages' texts."""
    expect(page.locator("#task")).to_be_visible()
    return page.locator("#task").get_attribute("data-task"), page.locator(".item .text").all_inner_texts()


def wait_next(page, task: str) -> None:
    """Wait until the page shows another task than ``task``, or the idle state."""
    page.wait_for_function("t => { const s = document.getElementById('task');"
                           " return s.hidden ? !document.getElementById('idle').hidden : s.dataset.task !== t; }",
                           arg=task)


# ----- tests -------------------------------------------------------------------------------------
def test_assessor_finishes_a_preference_campaign_with_the_keyboard_only(live, watched):
    cid = live.campaign(**preference())
    page = watched().page
    page.goto(live.assessor(cid))
    keys, pressed = {"left": ["1", "ArrowLeft"], "right": ["2", "ArrowRight"]}, []
    while True:
        expect(page.locator("#task, #idle").locator("visible=true")).to_have_count(1)
        if page.locator("#idle").is_visible():
            break
        task, (left, right) = shown(page)
        if not pressed:
            live.shot(page, "assessor-preference-laptop")
        side = "left" if strength(left) > strength(right) else "right"
        page.keyboard.press(keys[side][len(pressed) % 2])
        pressed.append((left.split()[0].strip("()"), right.split()[0].strip("()"), side))
        wait_next(page, task)
    assert len(pressed) == 12                    # 2 topics x 6 pairs: pools of 4 go straight to the final phase
    expect(page.locator("#progress")).to_have_text("12 answered · 2 of 2 topics finished")
    expect(page.locator("#idle-title")).to_have_text("All done")
    expect(page.locator("#again")).to_be_hidden()
    live.shot(page, "assessor-finished")
    lines = [line.split() for line in live.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()]
    assert [(l, r, "left" if w == l else "right") for _, l, r, w, *_ in lines] == pressed
    best = live.api.get(f"/api/campaigns/{cid}/qrels?best=1").text.split()
    assert best == ["1", "Q0", "a0", "1", "2", "Q0", "b0", "1"]


def test_assessor_grades_with_keys_0_to_3(live, watched):
    cid = live.campaign(**graded())
    page = watched().page
    page.goto(live.assessor(cid))
    given = []
    while True:
        expect(page.locator("#task, #idle").locator("visible=true")).to_have_count(1)
        if page.locator("#idle").is_visible():
            break
        task, (passage,) = shown(page)
        if not given:
            live.shot(page, "assessor-graded-laptop")
        grade = -strength(passage)
        page.keyboard.press(str(grade))
        given.append((passage.split()[0].strip("()"), grade))
        wait_next(page, task)
    assert sorted(given) == [("a0", 0), ("a1", 1), ("a2", 2), ("b0", 0), ("b1", 1), ("b2", 2)]
    qrels = {(t, d): g for t, _, d, g in (l.split() for l in live.api.get(f"/api/campaigns/{cid}/qrels").text.splitlines())}
    assert {k: float(g) for k, g in qrels.items()} == {({"a": "1", "b": "2"}[d[0]], d): g for d, g in given}


def test_reload_shows_the_same_pair_and_a_retried_answer_is_recorded_once(live, watched):
    cid = live.campaign(**preference())
    watch = watched()
    page = watch.page
    page.goto(live.assessor(cid))
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
    assert len(live.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()) == 1
    expect(page.locator("#progress")).to_contain_text("1 answered")


def test_an_answer_after_the_lease_expired_is_refused_and_the_page_moves_on(live, watched, settings):
    cid = live.campaign(**preference())
    watch = watched()
    page = watch.page
    page.goto(live.assessor(cid))
    task, _ = shown(page)
    settings.clock.now += settings.lease_seconds + 1      # the assessor left the page open too long
    page.keyboard.press("2")
    expect(page.locator("#status")).to_contain_text("expired")
    assert shown(page)[0] != task
    assert len(watch.errors) == 1 and "409 (Conflict)" in watch.errors.pop()
    assert live.api.get(f"/api/campaigns/{cid}/judgments").text == ""


def test_organiser_creates_a_campaign_with_the_form_and_sees_the_answers(live, watched):
    body = preference(items=4, topics=2)
    admin = watched().page
    admin.goto(live.url + "/admin")
    expect(admin).to_have_url(live.url + "/admin/login")
    admin.fill("#token", ADMIN)
    live.shot(admin, "admin-login")
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
    live.shot(admin, "admin-new-campaign")
    admin.click("text=Create campaign")
    expect(admin.locator("h1")).to_have_text("form study")
    cid = int(admin.url.rsplit("/", 1)[1])
    admin.fill("#assessor-name", "ann")
    admin.click("text=Add and show link")
    link = admin.locator("#new-link").input_value()
    assert link.startswith(live.url + "/a/")
    live.shot(admin, "admin-new-assessor")
    assert admin.url == f"{live.url}/admin/campaigns/{cid}"    # a reload is a GET, not the POST again

    assessor = watched().page
    assessor.goto(link)
    for _ in range(3):
        task, (left, right) = shown(assessor)
        assessor.keyboard.press("1" if strength(left) > strength(right) else "2")
        wait_next(assessor, task)
    expect(admin.locator("#judgments")).to_have_text("3", timeout=15_000)          # the live refresh
    expect(admin.locator("#assessors tbody tr").first).to_contain_text("3")
    expect(admin.locator("#plot path.line")).to_have_count(1)
    live.shot(admin, "admin-dashboard")
    assert len(live.api.get(f"/api/campaigns/{cid}/judgments").text.splitlines()) == 3
    with admin.expect_download() as download:
        admin.click("a[href$='judgments.txt']")
    assert Path(download.value.path()).read_text() == live.api.get(f"/api/campaigns/{cid}/judgments").text


def test_script_passage_is_shown_as_text(live, watched):
    body = preference(items=2, topics=1)
    body["texts"] = {"a0": "(a0) " + SCRIPT, "a1": "(a1) plain"}
    body["topics"] = {"1": SCRIPT}
    cid = live.campaign(**body)
    page = watched().page
    page.goto(live.assessor(cid))
    _, texts = shown(page)
    assert "(a0) " + SCRIPT in texts and page.locator("#query").inner_text() == SCRIPT
    assert page.evaluate("document.querySelectorAll('main script, main img').length") == 0
    live.shot(page, "assessor-script-text")
    # dialogs and console errors are checked when the page is closed (Watched.check)


def test_phone_stacks_long_passages_and_laptop_puts_them_side_by_side(live, watched):
    cid = live.campaign(**preference(items=2, topics=1, length=3000))
    link = live.assessor(cid)
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
            button = page.locator("#item-left button").bounding_box()
            assert button["y"] + button["height"] <= viewport["height"]           # answer buttons stay on screen
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")  # no sideways scrolling
        live.shot(page, f"assessor-long-{name}")
