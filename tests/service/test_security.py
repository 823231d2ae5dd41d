"""The security review's findings (spec ``service.md``, "Administration and safety"), one test each, on
SQLite and PostgreSQL: no request names code to run, the token before the body, revocation, secrets
out of the database, 404 / 422 instead of 500 on bad numbers and text, and the smaller ones."""

from __future__ import annotations

import json
import socket
import sys
import time

import pytest
from alembic import command
from alembic.config import Config
from fastapi.testclient import TestClient
from sqlalchemy import inspect, text, update

from irbandits.service.app import create_app
from irbandits.service.credentials import secrets_path, sqlite_path, token_hash
from irbandits.service.db import MIGRATIONS, make_engine
from irbandits.service.models import Assessor

from .conftest import ADMIN, Service, exported, login, oracle, preference_body, work

# a module that leaves a mark when it is imported: proof that a request made the server import it
PLANTED = '''
import pathlib
pathlib.Path(__file__).with_name("IMPORTED").write_text("imported")


def judge(topic, query, left, right):
    return "left"


def raises(topic, query, left, right):
    raise RuntimeError("the judge's endpoint is down")
'''


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """The name of a planted module on ``sys.path`` and the file its import would write."""
    name = f"planted_{tmp_path.name.replace('-', '_').replace('[', '_').replace(']', '_')}"
    (tmp_path / f"{name}.py").write_text(PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, tmp_path / "IMPORTED"
    sys.modules.pop(name, None)


def until(condition, seconds: float = 60):
    """Wait for ``condition()`` to be true (polled), else fail; returns its value."""
    deadline = time.monotonic() + seconds
    while not (value := condition()):
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.05)
    return value


# ----- 1. no request names code ------------------------------------------------------------------
def test_a_request_naming_module_function_is_refused_and_nothing_is_imported(service, planted):
    module, mark = planted
    cid = service.campaign(**preference_body())
    for spec in (f"{module}:judge", "os:execl", "subprocess:getoutput", "builtins:eval", "../../etc/passwd"):
        r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "x", "automatic": spec})
        assert r.status_code == 422 and "no automatic assessor is registered as" in r.json()["detail"], spec
    assert not mark.exists() and module not in sys.modules
    assert [a["name"] for a in service.admin("GET", f"/api/campaigns/{cid}/assessors").json()] == []


def test_registered_and_built_in_assessors_answer_and_a_raising_one_is_marked_failed(settings, planted):
    module, mark = planted
    settings.assessors = {"flaky": f"{module}:raises"}
    service = Service(settings)
    try:
        assert mark.exists()                 # the starter's --assessor is imported at start, by them
        cid = service.campaign(**preference_body())
        for name in ("flaky", "lexical"):
            r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": name, "automatic": name})
            assert r.status_code == 201, r.text
        listed = until(lambda: (rows := service.admin("GET", f"/api/campaigns/{cid}/assessors").json())[0]["failed"]
                       and rows)
        assert "RuntimeError: the judge's endpoint is down" in listed[0]["failed"]
        assert until(lambda: service.admin("GET", f"/api/campaigns/{cid}/assessors").json()[1]["judgments"] >= 3)
        service.start()                      # the server starts again and retries the failed one
        assert service.admin("GET", f"/api/campaigns/{cid}").status_code == 200
        assert "RuntimeError" in until(lambda: service.admin("GET", f"/api/campaigns/{cid}/assessors").json()[0]["failed"])
    finally:
        service.app.state.campaigns.stop()
        service.app.state.engine.dispose()


def test_an_unregistered_name_in_the_database_is_not_imported_at_start(service, planted):
    module, mark = planted
    cid = service.campaign(**preference_body())
    aid = service.assessor(cid)["id"]
    with service.app.state.engine.begin() as conn:   # what an earlier version stored: module:function
        conn.execute(update(Assessor).where(Assessor.id == aid).values(automatic=f"{module}:judge"))
    service.start()
    assert not mark.exists() and module not in sys.modules
    listed = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    assert "no automatic assessor is registered as" in listed[0]["failed"]


def test_every_other_string_that_picks_behaviour_is_a_registry_name(service, planted):
    """Algorithm, comparison, pooling method, options and run names: each is looked up (or checked by a
    pattern), never imported or opened."""
    module, mark = planted
    experiment = dict(name="e", rankers=["a", "b"], algorithm="RUCB", comparison="team-draft", seed=0)
    for change, message in ((dict(algorithm=f"{module}:judge"), "unknown algorithm"),
                            (dict(algorithm="RUCB:__class__=os.system"), "__class__"),
                            (dict(comparison="os.system"), "unknown method"),
                            (dict(comparison="../../etc/passwd"), "unknown method")):
        r = service.admin("POST", "/api/experiments", json=experiment | change)
        assert r.status_code == 422 and message in r.json()["detail"], (change, r.text)
    graded = dict(name="g", kind="graded", topics={"1": "q"}, texts={"d": "t"}, runs={"r": "1 Q0 d 1 1 r\n"})
    for change, message in ((dict(options={"method": f"{module}:judge"}), "unknown pooling method"),
                            (dict(options={"method": "../MTF"}), "unknown pooling method"),
                            (dict(options={"exec": "os.system"}), "unknown option 'exec'"),
                            (dict(runs={"../../etc/passwd": "1 Q0 d 1 1 r\n"}), "may only use letters"),
                            (dict(runs={"..": "1 Q0 d 1 1 r\n"}), "not only dots")):
        r = service.admin("POST", "/api/campaigns", json=graded | change)
        assert r.status_code == 422 and message in r.json()["detail"], (change, r.text)
    r = service.admin("POST", "/api/campaigns", json=preference_body(keep=f"{module}:judge"))
    assert r.status_code == 422 and "wins or borda" in r.json()["detail"]
    assert not mark.exists() and module not in sys.modules


# ----- 2. the token before the body, small limits but for uploads --------------------------------
def raw_request(url: str, head: str, seconds: float = 20) -> bytes:
    """Send ``head`` (no body follows) and read what the server answers within ``seconds``."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=seconds) as sock:
        sock.sendall(head.encode())
        return sock.recv(65536)


def test_an_unauthenticated_body_is_refused_before_it_is_read(service, live):
    cid = service.campaign(**preference_body())
    a = service.assessor(cid)
    task = service.next(a).json()["task"]
    size = 63 * 1024 * 1024
    for auth in ("", "Authorization: Bearer forged\r\n"):   # 63 MiB announced, never sent: answered at once
        answer = raw_request(live, f"POST /api/tasks/{task}/answer HTTP/1.1\r\nHost: x\r\n{auth}"
                                   f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    answer = raw_request(live, f"POST /api/tasks/{task}/answer HTTP/1.1\r\nHost: x\r\nAuthorization: {a['Authorization']}"
                               f"\r\nContent-Type: application/json\r\nContent-Length: {size}\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]   # an assessor's route is small
    experiment = dict(rankers=["a", "b"], algorithm="RUCB", comparison="team-draft", seed=1)
    e1, e2 = (service.admin("POST", "/api/experiments", json=dict(name=n, **experiment)).json()["id"] for n in "xy")
    other = service.admin("POST", f"/api/experiments/{e2}/clients", json={"name": "front"}).json()["token"]
    for path, token, status in (("/api/campaigns", a["Authorization"], 403),      # large bodies: their callers' only
                                ("/api/campaigns", f"Bearer {other}", 401),
                                (f"/api/experiments/{e1}/impressions", a["Authorization"], 401),
                                (f"/api/experiments/{e1}/impressions", f"Bearer {other}", 404)):
        answer = raw_request(live, f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {token}\r\n"
                                   f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 %d" % status), (path, answer[:300])
    r = service.client.post(f"/api/tasks/{task}/answer", content=b'{"answer": "left", "client_id": "' + b"x" * 70_000
                            + b'"}', headers={"Authorization": a["Authorization"], "content-type": "application/json"})
    assert r.status_code == 413
    assert service.answer(a, task, "left", "small").status_code == 200


# ----- 3. revocation -----------------------------------------------------------------------------
def test_revoked_and_reissued_assessor_links(service):
    cid = service.campaign(**preference_body())
    a, b = service.assessor(cid, "a"), service.assessor(cid, "b")
    work(service, a, limit=3)
    held = service.next(a).json()
    r = service.admin("POST", f"/api/campaigns/{cid}/assessors/{a['id']}", json={"revoked": True})
    assert r.status_code == 200 and r.json()["revoked"] is True
    assert service.next(a).status_code == 401 and service.answer(a, held["task"], "left", "late").status_code == 401
    assert service.client.get(f"/a/{a['Authorization'].split()[1]}").status_code == 404
    assert len(exported(service, cid)) == 3                      # the answers so far stay
    assert service.next(b).json()["items"] == held["items"]      # the revoked one's open lease went to b
    r = service.admin("POST", f"/api/campaigns/{cid}/assessors/{a['id']}", json={"token": "new"})
    fresh = {"Authorization": f"Bearer {r.json()['token']}", "id": a["id"]}
    assert r.status_code == 200 and r.json()["url"] == f"/a/{r.json()['token']}"
    assert service.next(a).status_code == 401 and service.next(fresh).status_code == 200
    listed = {x["id"]: x for x in service.admin("GET", f"/api/campaigns/{cid}/assessors").json()}
    assert listed[a["id"]]["revoked"] is False and listed[a["id"]]["judgments"] == 3
    for body in ({}, {"revoked": "yes"}, {"token": "old"}, {"revoked": True, "token": "new"}):
        assert service.admin("POST", f"/api/campaigns/{cid}/assessors/{a['id']}", json=body).status_code == 422
    assert service.admin("POST", f"/api/campaigns/{cid}/assessors/999", json={"revoked": True}).status_code == 404


def test_revoked_and_reissued_experiment_client_tokens(service):
    eid = service.admin("POST", "/api/experiments", json=dict(name="e", rankers=["a", "b", "c"], algorithm="RUCB",
                                                              comparison="team-draft", seed=1)).json()["id"]
    made = service.admin("POST", f"/api/experiments/{eid}/clients", json={"name": "front"}).json()
    front = {"Authorization": f"Bearer {made['token']}"}
    assert service.client.post(f"/api/experiments/{eid}/impressions", json={}, headers=front).status_code == 201
    r = service.admin("POST", f"/api/experiments/{eid}/clients/{made['id']}", json={"revoked": True})
    assert r.status_code == 200 and r.json() == {"id": made["id"], "revoked": True}
    assert service.client.post(f"/api/experiments/{eid}/impressions", json={}, headers=front).status_code == 401
    assert service.admin("GET", f"/api/experiments/{eid}/clients").json()[0]["revoked"] is True
    service.start()                                               # a revocation survives a restart
    assert service.client.post(f"/api/experiments/{eid}/impressions", json={}, headers=front).status_code == 401
    token = service.admin("POST", f"/api/experiments/{eid}/clients/{made['id']}", json={"token": "new"}).json()["token"]
    assert service.client.post(f"/api/experiments/{eid}/impressions", json={},
                               headers={"Authorization": f"Bearer {token}"}).status_code == 201
    assert service.client.post(f"/api/experiments/{eid}/impressions", json={}, headers=front).status_code == 401
    assert service.admin("POST", f"/api/experiments/{eid}/clients/77", json={"revoked": True}).status_code == 404


# ----- 4. a copy of the database is no login -----------------------------------------------------
def test_the_database_holds_no_secret_and_a_sqlite_file_is_private(service):
    state = service.app.state
    secrets = (state.admin_hash, state.session_secret.hex(), token_hash(ADMIN))
    engine = state.engine
    with engine.connect() as conn:
        dump = " ".join(str(row) for table in inspect(conn).get_table_names()
                        for row in conn.execute(text(f'SELECT * FROM "{table}"')))
    assert dump and not any(secret in dump for secret in secrets)
    path = secrets_path(service.settings.db_url, service.settings.secrets_file)
    assert path.stat().st_mode & 0o777 == 0o600 and state.admin_hash in path.read_text()
    db_file = sqlite_path(service.settings.db_url)
    if db_file is not None:
        for f in db_file.parent.glob(db_file.name + "*"):
            if f == path:
                continue
            assert f.stat().st_mode & 0o077 == 0, f                  # the database and its WAL: 0600
            assert not any(secret.encode() in f.read_bytes() for secret in secrets), f


def test_secrets_of_an_older_database_move_to_the_file_and_sessions_survive(settings, tmp_path):
    engine = make_engine(settings.db_url, settings.schema)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:                                   # the schema of the previous release
        config.attributes["connection"] = conn
        command.upgrade(config, "0004_quality")
        conn.execute(text("INSERT INTO admin_credentials (id, token_hash, created_at) VALUES (1, :h, 0)"),
                     {"h": token_hash("old-organiser-token")})
        conn.execute(text("INSERT INTO server_secrets (name, value, created_at) VALUES ('session', :v, 0)"),
                     {"v": "ab" * 32})
    engine.dispose()
    settings.admin_token = None
    service = Service(settings)
    try:
        assert service.app.state.new_admin_token is None and service.app.state.session_secret == bytes.fromhex("ab" * 32)
        stored = json.loads(secrets_path(settings.db_url, settings.secrets_file).read_text())
        assert stored == {"admin_hash": token_hash("old-organiser-token"), "session": "ab" * 32}
        with service.app.state.engine.connect() as conn:
            assert not {"admin_credentials", "server_secrets"} & set(inspect(conn).get_table_names())
        assert login(service, "old-organiser-token").status_code == 303
    finally:
        service.app.state.campaigns.stop()
        service.app.state.engine.dispose()


def test_a_secrets_file_others_can_read_is_refused(settings):
    path = secrets_path(settings.db_url, settings.secrets_file)
    create_app(settings).state.engine.dispose()
    path.chmod(0o644)
    with pytest.raises(Exception, match="others may read it"):
        create_app(settings)


# ----- 5. numbers and text: 404 / 422, never 500 -------------------------------------------------
HUGE = 99999999999999999999999
JSON_ADMIN = {"Authorization": f"Bearer {ADMIN}", "content-type": "application/json"}


def test_out_of_range_ids_seeds_and_bad_text_get_404_or_422(service):
    cid = service.campaign(**preference_body())
    a = service.assessor(cid)
    eid = service.admin("POST", "/api/experiments", json=dict(name="e", rankers=["a", "b"], algorithm="RUCB",
                                                              comparison="team-draft", seed=2**63 - 1))
    assert eid.status_code == 201 and service.admin("GET", f"/api/experiments/{eid.json()['id']}").json()["seed"] == 2**63 - 1
    front = {"Authorization": f"Bearer {ADMIN}"}
    for i in (HUGE, -HUGE, 2**31, -1):
        assert service.answer(a, i, "left", f"c{i}").status_code == 404
        assert service.client.post(f"/api/impressions/{i}/clicks", json={"clicks": [0]}, headers=front).status_code == 404
        assert service.admin("GET", f"/api/campaigns/{i}").status_code == 404
        assert service.admin("GET", f"/api/experiments/{i}").status_code == 404
        assert service.admin("POST", f"/api/campaigns/{cid}/assessors/{i}", json={"revoked": True}).status_code == 404
    bad = [dict(seed=-1), dict(seed=2**64), dict(seed=HUGE), dict(name="a\x00b"), dict(rankers=["a", "b\x00"]),
           dict(name="\ud800"), dict(horizon=2**70)]
    for change in bad:
        body = dict(name="e", rankers=["a", "b"], algorithm="RUCB", comparison="team-draft", seed=0) | change
        r = service.client.post("/api/experiments", content=json.dumps(body), headers=JSON_ADMIN)
        assert r.status_code == 422, (change, r.text)
    for body in (dict(name="a\x00"), dict(name="ok", automatic="lexical\x00")):
        assert service.admin("POST", f"/api/campaigns/{cid}/assessors", json=body).status_code == 422
    for change in (dict(options={"seed": 1e23}), dict(options={"seed": -1}), dict(topics={"1": "q\x00", "2": "x"}),
                   dict(name="\ud83d")):
        r = service.client.post("/api/campaigns", content=json.dumps(preference_body() | change), headers=JSON_ADMIN)
        assert r.status_code == 422, (change, r.text)
    graded = dict(name="g", kind="graded", topics={"1": "q"}, texts={"d": "t"}, runs={"..": "1 Q0 d 1 1 x\n"})
    assert service.admin("POST", "/api/campaigns", json=graded).status_code == 422
    assert service.client.post("/api/tasks/1/answer", json={"answer": "left", "client_id": "a\x00"},
                               headers={"Authorization": a["Authorization"]}).status_code == 422


# ----- 6. the smaller ones -----------------------------------------------------------------------
def test_over_https_cookies_are_secure_and_hsts_is_sent(service):
    plain = service.client.get("/admin/login")
    assert "strict-transport-security" not in plain.headers and "secure" not in plain.headers["set-cookie"].lower()
    secure = TestClient(service.app, base_url="https://testserver")
    page = secure.get("/admin/login")
    assert page.headers["strict-transport-security"].startswith("max-age=")
    assert "; secure" in page.headers["set-cookie"].lower()
    csrf = page.text.split('name="csrf" value="')[1].split('"')[0]
    r = secure.post("/admin/login", data={"token": ADMIN, "csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and "; secure" in r.headers["set-cookie"].lower()
    r = secure.post("/api/campaigns", json={}, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401 and "strict-transport-security" in r.headers
    for path in ("/admin/", "/admin/campaigns/"):   # no redirect to a URL the request's Host header names
        r = service.client.get(path, headers={"Host": "evil.example"}, follow_redirects=False)
        assert r.status_code == 404 and "location" not in r.headers, (path, r.headers)


def test_every_spelling_of_a_token_path_is_masked_in_the_log(service, caplog):
    cid = service.campaign(**preference_body())
    token = service.assessor(cid)["Authorization"].split()[1]
    with caplog.at_level("INFO", logger="irbandits.service"):
        for path in (f"/a/{token}", f"//a/{token}", f"/A/{token}", f"/a/{token}/x", f"/static/{token}",
                     f"/api/x/{token}"):
            service.client.get(path)
    assert caplog.text.count("***") >= 6 and token not in caplog.text and token[:20] not in caplog.text


def test_a_client_id_reused_for_another_answer_gets_409(service):
    cid = service.campaign(**preference_body())
    a = service.assessor(cid)
    task = service.next(a).json()
    side = oracle(task)
    assert service.answer(a, task["task"], side, "c1").status_code == 200
    assert service.answer(a, task["task"], side, "c1").json() == {"recorded": True}        # a retry: same reply
    other = {"left": "right", "right": "left"}[side]
    r = service.answer(a, task["task"], other, "c1")
    assert r.status_code == 409 and "already recorded another answer" in r.json()["detail"]
    assert len(exported(service, cid)) == 1 and exported(service, cid)[0][3] == task["items"][side == "right"]["docno"]


def test_failed_logins_back_off(service):
    for _ in range(5):
        assert login(service, "guess").status_code == 401
    r = login(service, "guess")                        # the sixth failure: the next try waits a second
    assert r.status_code == 401 and "too many failed logins" in r.text
    r = login(service, ADMIN)                          # even the right token waits
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    service.clock.now += 1
    assert login(service, "guess").status_code == 401  # the seventh: two seconds
    service.clock.now += 1
    assert login(service, ADMIN).status_code == 429
    service.clock.now += 1
    assert login(service, ADMIN).status_code == 303    # a success clears the count
    assert login(service, "guess").status_code == 401 and login(service, "guess").status_code == 401


def test_pages_show_names_without_bidirectional_overrides(service):
    body = preference_body()
    body["name"] = "campaign \u202egnp.exe"
    cid = service.campaign(**body)
    a = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "ann \u202edrowssap"}).json()
    assert service.client.get(a["url"]).status_code == 200 and "\u202e" not in service.client.get(a["url"]).text
    assert login(service).status_code == 303
    page = service.client.get(f"/admin/campaigns/{cid}").text
    assert "gnp.exe" in page and "drowssap" in page and "\u202e" not in page


def test_a_revoked_assessor_cannot_answer_while_a_flagged_one_can(service):
    cid = service.campaign(**preference_body())
    flagged, revoked = service.assessor(cid, "f"), service.assessor(cid, "r")
    tasks = {who["id"]: service.next(who).json() for who in (flagged, revoked)}
    service.admin("POST", f"/api/campaigns/{cid}/assessors/{flagged['id']}", json={"flagged": True})
    service.admin("POST", f"/api/campaigns/{cid}/assessors/{revoked['id']}", json={"revoked": True})
    t = tasks[flagged["id"]]
    assert service.answer(flagged, t["task"], oracle(t), "f1").status_code == 200
    t = tasks[revoked["id"]]
    assert service.answer(revoked, t["task"], oracle(t), "r1").status_code == 401
