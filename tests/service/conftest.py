"""Fixtures of the service tests: a service on SQLite (temporary file) and, when reachable, on
PostgreSQL (URL in ``IRBANDITS_TEST_PG_URL``, each test in a fresh schema dropped afterwards)."""

from __future__ import annotations

import os
import re
import uuid

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from irbandits.service.app import create_app  # noqa: E402
from irbandits.service.settings import Settings  # noqa: E402

ADMIN = "organiser-token-for-tests"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_of(page) -> str:
    """The CSRF token in a page's forms."""
    return CSRF.search(page.text).group(1)


def login(service, token: str = ADMIN):
    """Log the test client in through the form; returns the login response (not followed)."""
    page = service.client.get("/admin/login")
    return service.client.post("/admin/login", data={"token": token, "csrf": csrf_of(page)}, follow_redirects=False)


def refused_form(service, path: str, data: dict, message: str) -> tuple[str, list[str]]:
    """Post the organiser's form at ``path`` with ``data``: it must come back 422 with the form's error
    starting with ``message``. Returns the page and the names of the fields it marks invalid."""
    login(service)
    r = service.client.post(path, data=data | {"csrf": csrf_of(service.client.get(path))})
    assert r.status_code == 422 and message in r.text, r.text
    assert re.search(r'<p class="error" role="alert" id="form-error">([^<]*)</p>', r.text).group(1).startswith(message)
    return r.text, re.findall(r'name="(\w+)"[^>]* autofocus aria-invalid="true"', r.text)


# ----- campaign bodies and an assessor who knows the answers (the API tests share them) ------------
SCRIPT = 'Best <script>alert("x")</script> & "quotes"'


def preference_body(**options) -> dict:
    """A preference campaign: topic 1's twelve passages (d0, a script, among them), topic 2's four."""
    qrels = "".join(f"1 0 d{i} {3 if i < 4 else 2}\n" for i in range(12)) + "".join(f"2 0 e{i} 1\n" for i in range(4))
    texts = {f"d{i}": f"passage d{i}" for i in range(12)} | {f"e{i}": f"passage e{i}" for i in range(4)}
    texts["d0"] = SCRIPT
    return dict(name="pref", kind="preference", topics={"1": "first <b>question</b>", "2": "second"},
                texts=texts, qrels=qrels, options={"seed": 3, **options})


def strength(docno: str) -> int:
    return -int(docno[1:])


def oracle(task: dict) -> str:
    """The answer of an assessor who always prefers the lower-numbered document (d0 over d1, ...)."""
    left, right = (item["docno"] for item in task["items"])
    return "left" if strength(left) > strength(right) else "right"


def work(service, who, limit: int = 10_000, prefix: str = "") -> int:
    """Answer with the oracle until nothing is left for ``who``; returns the number of answers."""
    for n in range(limit):
        r = service.next(who)
        if r.status_code == 204:
            return n
        assert service.answer(who, r.json()["task"], oracle(r.json()), f"{prefix}{who['id']}-{n}").status_code == 200
    return limit


def exported(service, cid: int) -> list[list[str]]:
    """The campaign's judgments as the organiser exports them, each line split."""
    r = service.admin("GET", f"/api/campaigns/{cid}/judgments")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return [line.split() for line in r.text.splitlines()]


def graded_body(**options) -> dict:
    """A graded campaign pooled from two runs (MTF to depth 5); e0's text is :data:`SCRIPT`."""
    runs = {"x": "".join(f"1 Q0 d{i} {i + 1} {10 - i} x\n" for i in range(6)) + "2 Q0 e0 1 5 x\n",
            "y": "".join(f"1 Q0 d{j} {i + 1} {10 - i} y\n" for i, j in enumerate([5, 4, 7, 8])) + "2 Q0 e1 1 5 y\n"}
    texts = {f"d{i}": f"doc {i}" for i in range(9)} | {"e0": SCRIPT, "e1": "e one"}
    return dict(name="graded", kind="graded", topics={"1": "q1", "2": "q2"}, texts=texts, runs=runs,
                options={"depth": 5, "method": "MTF", **options})


class Clock:
    """A settable clock, so tests expire leases without sleeping."""

    def __init__(self, now: float = 1_700_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def _pg_url() -> str | None:
    url = os.environ.get("IRBANDITS_TEST_PG_URL")
    if not url:
        return None
    try:
        import psycopg

        psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), connect_timeout=3).close()
    except Exception:
        return None
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request, tmp_path):
    """Settings of a fresh, empty database of each kind (PostgreSQL skipped when unreachable)."""
    if request.param == "sqlite":
        yield Settings(db_url=f"sqlite:///{tmp_path / 'service.db'}", admin_token=ADMIN, clock=Clock(),
                       lease_seconds=60, max_upload_bytes=2_000_000)
        return
    url = _pg_url()
    if url is None:
        pytest.skip("PostgreSQL: IRBANDITS_TEST_PG_URL unset or the server unreachable")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield Settings(db_url=url, schema=schema, admin_token=ADMIN, clock=Clock(), lease_seconds=60,
                   max_upload_bytes=2_000_000, secrets_file=str(tmp_path / "secrets.json"))
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


class Service:
    """A running app on ``settings`` with helpers for the organiser and assessors."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.start()

    def start(self) -> "Service":
        """(Re)start: a new app on the same database, as after a crash."""
        if getattr(self, "app", None) is not None:
            self.client.close()
            self.app.state.campaigns.stop()
            self.app.state.engine.dispose()
        self.app = create_app(self.settings)
        self.client = TestClient(self.app)
        return self

    @property
    def clock(self) -> Clock:
        return self.settings.clock

    def admin(self, method: str, path: str, **kw):
        return self.client.request(method, path, headers={"Authorization": f"Bearer {ADMIN}"}, **kw)

    def campaign(self, **body) -> int:
        r = self.admin("POST", "/api/campaigns", json=body)
        assert r.status_code == 201, r.text
        return r.json()["id"]

    def assessor(self, cid: int, name: str = "a") -> dict:
        r = self.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": name})
        assert r.status_code == 201, r.text
        return {"Authorization": f"Bearer {r.json()['token']}", "id": r.json()["id"]}

    def next(self, who: dict):
        return self.client.get("/api/next", headers={"Authorization": who["Authorization"]})

    def answer(self, who: dict, task: int, answer, client_id: str):
        return self.client.post(f"/api/tasks/{task}/answer", json={"answer": answer, "client_id": client_id},
                                headers={"Authorization": who["Authorization"]})


@pytest.fixture
def live(service):
    """The service's app served by uvicorn on a free loopback port (in a thread); yields its base URL."""
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(service.app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def service(settings):
    s = Service(settings)
    yield s
    s.client.close()
    s.app.state.campaigns.stop()
    s.app.state.engine.dispose()


# ----- the browser tests' fixtures (helpers in browsing.py) ----------------------------------------
@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright (skipped when either is missing). Module-scoped: while
    Playwright's sync API is open, the main thread runs its event loop, which ``asyncio.run`` refuses."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    from .browsing import ARGS, CHROMIUM

    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: run scripts/install-test-deps.sh")
    # every expect waits for its event up to 30 s (Playwright's 5 s is too short on a loaded machine;
    # a check that holds passes at once)
    sync_api.expect.set_options(timeout=30_000)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def site(settings):
    """A fresh app on ``settings`` served by uvicorn, with an organiser client (:class:`browsing.Live`)."""
    from .browsing import Live

    server = Live(settings)
    yield server
    server.stop()


@pytest.fixture
def watched(browser):
    """Make pages whose dialogs and console errors are recorded; none may have any at the end."""
    from .browsing import LAPTOP, Watched

    made = []

    def make(viewport=LAPTOP) -> Watched:
        made.append(Watched(browser, viewport))
        return made[-1]

    yield make
    for w in made:
        w.check()
