"""The dispatcher in front of FastAPI (:mod:`irbandits.service.hotroutes`) answers a front end's experiment
calls exactly as the app's own routes, middleware and exception handlers do: the same statuses, bodies
and headers, refusals included, and the same log line."""

from __future__ import annotations

import logging

import pytest

from irbandits.service import api_experiments
from irbandits.service.hotroutes import HotRoutes
from irbandits.service.settings import Settings

from .conftest import ADMIN, Clock, Service

RANKERS = ["bm25", "neural", "mixed"]


def services(tmp_path) -> tuple[Service, Service]:
    """Two services on fresh SQLite files: the app as built, and the same app without its dispatcher."""
    made = [Service(Settings(db_url=f"sqlite:///{tmp_path / f'{name}.db'}", admin_token=ADMIN, clock=Clock(),
                             lease_seconds=60, max_body_bytes=4000)) for name in ("hot", "plain")]
    plain = made[1].app
    plain.user_middleware = [m for m in plain.user_middleware if m.cls is not HotRoutes]
    return made[0], made[1]


def script(service: Service) -> list[tuple]:
    """A front end's calls, refusals among them: (status, body, headers but the date) of each."""
    org = {"Authorization": f"Bearer {ADMIN}"}
    eid = service.admin("POST", "/api/experiments", json=dict(name="e", rankers=RANKERS, algorithm="RUCB",
                                                               comparison="team-draft", seed=3)).json()["id"]
    token = service.admin("POST", f"/api/experiments/{eid}/clients", json={"name": "f"}).json()["token"]
    other = service.admin("POST", "/api/experiments", json=dict(name="o", rankers=RANKERS, algorithm="RUCB",
                                                                 comparison="team-draft", seed=3)).json()["id"]
    stranger = service.admin("POST", f"/api/experiments/{other}/clients", json={"name": "s"}).json()["token"]
    front, foreign = {"Authorization": f"Bearer {token}"}, {"Authorization": f"Bearer {stranger}"}
    c, answers = service.client, []

    def call(method, path, headers=None, **kw):
        r = c.request(method, path, headers=headers, **kw)
        headers = sorted((k, v) for k, v in r.headers.items() if k != "date")
        answers.append((method, path, r.status_code, r.content, headers))
        return r

    call("POST", f"/api/experiments/{eid}/impressions", json={})                          # no token
    call("POST", f"/api/experiments/{eid}/impressions", {"Authorization": "Bearer nope"}, json={})
    call("POST", f"/api/experiments/{eid}/impressions", foreign, json={})                 # another experiment's
    call("POST", "/api/experiments/999/impressions", org, json={})
    imp = call("POST", f"/api/experiments/{eid}/impressions", front, json={}).json()
    iid, (a, b) = imp["impression"], imp["rankers"]
    call("POST", f"/api/impressions/{iid}/clicks", front, json={"clicks": [0]})            # no list yet
    call("POST", f"/api/impressions/{iid}/lists", front, content=b"{not json")
    call("POST", f"/api/impressions/{iid}/lists", front, json={"lists": {a: "x"}, "more": 1})
    call("POST", f"/api/impressions/{iid}/lists", front, json={"lists": {a: ["x"], "ghost": ["y"]}})
    call("POST", f"/api/impressions/{iid}/lists", front, json={"lists": {a: ["x", "x"], b: ["y"]}})
    call("POST", f"/api/impressions/{iid}/lists", front, content=b"x" * 5000)              # over the limit
    call("POST", f"/api/impressions/{iid}/lists", foreign, json={"lists": {a: ["x"], b: ["y"]}})
    call("POST", "/api/impressions/424242/lists", front, json={"lists": {a: ["x"], b: ["y"]}})
    call("POST", f"/api/impressions/{iid}/lists", front, json={"lists": {a: ["x1", "x2"], b: ["y1", "ü"]}})
    call("POST", f"/api/impressions/{iid}/clicks", front, json={"clicks": [9]})
    call("POST", f"/api/impressions/{iid}/clicks", front, json={"clicks": ["1"]})
    call("POST", f"/api/impressions/{iid}/clicks", front, json={"clicks": [1]})
    call("POST", f"/api/impressions/{iid}/vote", front, json={"winner": "tie"})           # second outcome
    vote = call("POST", f"/api/experiments/{eid}/impressions", org, json={}).json()["impression"]
    call("POST", f"/api/impressions/{vote}/vote", front, json={"winner": "nobody"})
    call("POST", f"/api/impressions/{vote}/vote", front, json={"winner": "tie"})
    call("GET", f"/api/impressions/{vote}/vote", front)                                  # left to FastAPI
    call("POST", "/api/impressions/x/vote", front, json={"winner": "tie"})
    return answers


def test_the_dispatcher_answers_as_the_apps_routes_do(tmp_path, caplog):
    hot, plain = services(tmp_path)
    caplog.set_level(logging.INFO, logger="irbandits.service")
    served = script(hot)
    hot_log = [r.getMessage().rsplit(" ", 2)[0] for r in caplog.records]
    caplog.clear()
    expected = script(plain)
    assert served == expected
    assert hot_log == [r.getMessage().rsplit(" ", 2)[0] for r in caplog.records]   # "METHOD path status"
    statuses = [s for _, _, s, _, _ in served]
    assert statuses == [401, 401, 404, 404, 201, 409, 422, 422, 422, 422, 413, 404, 404, 200, 422, 422, 200, 409,
                        201, 422, 200, 405, 422]
    assert all(("x-frame-options", "DENY") in headers for *_, headers in served)
    for s in (hot, plain):
        s.client.close()
        s.app.state.engine.dispose()


def test_the_front_end_calls_skip_the_fastapi_routes(tmp_path, monkeypatch):
    hot, plain = services(tmp_path)

    async def unused(*args):
        raise AssertionError("a FastAPI route answered a call the dispatcher serves")

    monkeypatch.setattr(api_experiments, "answered", unused)
    assert len(script(hot)) == 23
    with pytest.raises(AssertionError, match="a FastAPI route"):   # while the app compared with uses them
        script(plain)
    for s in (hot, plain):
        s.client.close()
        s.app.state.engine.dispose()
