"""What the browser tests share beside their fixtures (``conftest.py``): the served app (:class:`Live`), a
watched page (:class:`Watched`), campaign bodies with passages long enough to wrap, and page helpers.
Imported only by the browser test modules, after they checked that playwright and chromium are there."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from .conftest import ADMIN

CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                    reason=f"{CHROMIUM} is missing: run scripts/install-test-deps.sh")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
LAPTOP, PHONE = {"width": 1366, "height": 800}, {"width": 390, "height": 844}


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


class Watched:
    """A page whose dialogs (alert etc.) and console errors (CSP violations, script errors) are recorded."""

    def __init__(self, browser, viewport=LAPTOP, **options):
        self.context = browser.new_context(viewport=viewport, **options)
        self.page = self.context.new_page()
        self.dialogs, self.errors = [], []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def check(self) -> None:
        assert self.dialogs == [] and self.errors == [], (self.dialogs, self.errors)
        self.context.close()


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


def organiser(browser, site, viewport=LAPTOP):
    """A logged-in organiser page on the campaigns list that accepts (and records) the confirmations of
    the buttons: (context, page, confirmation messages, page errors)."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    confirmed, errors = [], []
    page.on("dialog", lambda d: (confirmed.append(d.message), d.accept()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site.url + "/admin")
    page.fill("#token", ADMIN)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Campaigns")
    return context, page, confirmed, errors
