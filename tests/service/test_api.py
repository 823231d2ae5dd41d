"""The judging API as scripts and assessors meet it: every route, every refusal, leases, restarts."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from irbandits.io import read_qrels
from irbandits.judging.pools import grade_pools
from irbandits.judging.topk import TopKProcess

from .conftest import ADMIN, SCRIPT, exported, graded_body, oracle, preference_body, work


def replayed(body: dict, lines: list[list[str]], tmp_path) -> TopKProcess:
    """A fresh process, as ``irbandits judge init`` makes it, fed the exported answers in order."""
    (tmp_path / "qrels").write_text(body["qrels"])
    pools = grade_pools(read_qrels(tmp_path / "qrels"))
    proc = TopKProcess(pools, seed=body["options"]["seed"], extra=body["options"].get("extra", 0))
    for topic, left, right, winner, *_ in lines:
        proc.add(topic, left, right, winner)
    return proc


# ----- campaigns and progress --------------------------------------------------------------------
def test_campaign_to_the_end_with_progress_and_exports(service):
    body = preference_body()
    cid = service.campaign(**body)
    a = service.assessor(cid, "ann")
    first = service.next(a).json()
    assert first["campaign"] == cid and first["topic"] in ("1", "2") and len(first["items"]) == 2
    texts = {i["docno"]: i["text"] for i in first["items"]}
    assert all(texts[d] == body["texts"][d] for d in texts)
    p = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert p["kind"] == "preference" and p["judgments"] == 0 and not p["done"]
    assert [t["topic"] for t in p["topics"]] == ["1", "2"]
    assert service.admin("GET", f"/api/campaigns/{cid}/qrels").text == ""
    n = work(service, a)
    p = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert not p["done"] and p["requests"] > 0   # the final phase asks again for pairs a judged when pruning
    b = service.assessor(cid, "bob")
    n_b = work(service, b)
    assert work(service, a) == 0
    n += n_b
    p = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert p["done"] and p["judgments"] == n == len(exported(service, cid))
    assert sum(t["judgments"] for t in p["topics"]) == n
    best = service.admin("GET", f"/api/campaigns/{cid}/qrels", params={"best": 1}).text.split()
    assert best == ["1", "Q0", "d0", "1", "2", "Q0", "e0", "1"]
    qrels = [line.split() for line in service.admin("GET", f"/api/campaigns/{cid}/qrels").text.splitlines()]
    assert [q[2] for q in qrels] == ["d0", "d1", "d2", "d3", "d4", "e0", "e1", "e2"]    # top 5, then scores > 0
    assert service.next(a).status_code == 204
    assert service.admin("GET", "/api/campaigns").json() == [dict(id=cid, name="pref", kind="preference", state="running")]
    listed = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    keys = ("id", "name", "judgments", "flagged", "revoked")
    assert [{k: x[k] for k in keys} for x in listed] == [
        dict(id=a["id"], name="ann", judgments=n - n_b, flagged=False, revoked=False),
        dict(id=b["id"], name="bob", judgments=n_b, flagged=False, revoked=False)]


def test_script_passage_is_returned_verbatim_in_json(service):
    body = preference_body()
    cid = service.campaign(**body)
    a = service.assessor(cid)
    for n in range(200):
        r = service.next(a)
        items = {i["docno"]: i["text"] for i in r.json()["items"]}
        if "d0" in items:
            assert items["d0"] == SCRIPT and r.headers["content-type"] == "application/json"
            assert '"Best <script>alert(\\"x\\")</script> & \\"quotes\\""' in r.text   # a JSON string, quotes escaped
            return
        service.answer(a, r.json()["task"], oracle(r.json()), f"c{n}")
    pytest.fail("d0 was never shown")


# ----- refusals ----------------------------------------------------------------------------------
def test_401_403_404(service):
    cid = service.campaign(**preference_body())
    a, b = service.assessor(cid, "a"), service.assessor(cid, "b")
    c = service.client
    assert c.get("/api/campaigns").status_code == 401
    assert c.get("/api/next").status_code == 401
    assert c.get("/api/next", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert c.get("/api/next", headers={"Authorization": "Basic abc"}).status_code == 401
    r = c.get(f"/api/campaigns/{cid}", headers={"Authorization": a["Authorization"]})
    assert r.status_code == 403 and r.json() == {"detail": "this endpoint needs the organiser token"}
    for method, path in [("POST", "/api/campaigns"), ("GET", f"/api/campaigns/{cid}/judgments"),
                         ("GET", f"/api/campaigns/{cid}/qrels"), ("GET", f"/api/campaigns/{cid}/assessors"),
                         ("POST", f"/api/campaigns/{cid}/assessors")]:
        assert c.request(method, path, headers={"Authorization": a["Authorization"]}, json={}).status_code == 403
    assert service.admin("GET", "/api/next").status_code == 403
    assert service.admin("GET", "/api/campaigns/999").status_code == 404
    assert service.admin("POST", "/api/campaigns/999/assessors", json={"name": "x"}).status_code == 404
    task = service.next(a).json()["task"]
    r = service.answer(b, task, "left", "b1")
    assert r.status_code == 404 and "no task" in r.json()["detail"]
    assert service.answer(b, 12345, "left", "b2").status_code == 404
    # a revoked token is refused
    from sqlalchemy import update

    from irbandits.service.models import Assessor

    with service.app.state.sessions() as session:
        session.execute(update(Assessor).where(Assessor.id == a["id"]).values(revoked=True))
        session.commit()
    r = service.next(a)
    assert r.status_code == 401 and "revoked" in r.json()["detail"]


@pytest.mark.parametrize("change, message", [
    (dict(options={"seed": 1, "zz": 2}), "options: unknown option 'zz'"),
    (dict(options={"n": 0}), "options: parameter n=0 is invalid"),
    (dict(options={"keep": "most"}), "options: parameter keep='most' is invalid"),
    (dict(options={"n": True}), "options: parameter n must be int, got True"),
    (dict(options={"seed": True}), "options: parameter seed must be int, got True"),
    (dict(qrels="".join(f"{'t' * 101} 0 d{i} 3\n" for i in range(6)), topics={"t" * 101: "q"}),
     "topics: the topic id 'tttttttttttttttttttttttttttttttttttttttt'... has 101 characters; at most 100"),
    (dict(qrels="".join(f"1 0 {'d' * 201}{i} 3\n" for i in range(6)),
          texts={f"{'d' * 201}{i}": "text" for i in range(6)}), "texts: the document id 'ddd"),
    (dict(qrels="1 0 d1\n"), "qrels, line 1: a qrels line has 4 columns"),
    (dict(qrels="1 0 d1 high\n"), "qrels, line 1, column 4: grade must be a number"),
    (dict(qrels="1 0 zz 3\n"), "texts: no text for document zz (topic 1)"),
    (dict(qrels="9 0 d1 3\n"), "topics: no query for topic 9"),
    (dict(qrels="1 0 d1 0\n"), "qrels: no topic has anything to judge"),
    (dict(qrels=None), "a preference campaign needs qrels"),
    (dict(kind="pairwise"), "kind: Input should be 'preference' or 'graded'"),
    (dict(name=""), "name: String should have at least 1 character"),
    (dict(topics=["1"]), "topics: Input should be a valid dictionary"),
    (dict(colour="red"), "colour: Extra inputs are not permitted"),
])
def test_422_campaign_with_one_readable_message(service, change, message):
    r = service.admin("POST", "/api/campaigns", json={**preference_body(), **change})
    assert r.status_code == 422
    assert isinstance(r.json()["detail"], str) and r.json()["detail"].startswith(message), r.json()


def test_422_malformed_answers_and_bodies(service):
    cid = service.campaign(**preference_body())
    a = service.assessor(cid)
    task = service.next(a).json()["task"]
    for body in ({"answer": "middle", "client_id": "x"}, {"answer": 1, "client_id": "x"},
                 {"answer": "left"}, {"answer": "left", "client_id": ""}, {"answer": None, "client_id": "x"}):
        r = service.client.post(f"/api/tasks/{task}/answer", json=body, headers={"Authorization": a["Authorization"]})
        assert r.status_code == 422 and isinstance(r.json()["detail"], str), body
    r = service.client.post(f"/api/tasks/{task}/answer", content=b"{not json", headers={
        "Authorization": a["Authorization"], "content-type": "application/json"})
    assert r.status_code == 422
    assert service.admin("POST", f"/api/campaigns/{cid}/assessors", json={}).json() == {"detail": "name: Field required"}
    deep = b'{"crowd": ' + b"[" * 5000 + b"]" * 5000 + b"}"   # nested past any parser's depth: 422, like any bad body
    for path in ("/api/campaigns", f"/api/campaigns/{cid}/crowd"):
        r = service.client.post(path, content=deep, headers={"Authorization": f"Bearer {ADMIN}",
                                                            "content-type": "application/json"})
        assert r.status_code == 422 and isinstance(r.json()["detail"], str), (path, r.text)
    assert exported(service, cid) == []


def test_413_by_content_length_and_by_streamed_size(service):
    big = preference_body()
    big["texts"]["filler"] = "x" * 2_100_000
    r = service.admin("POST", "/api/campaigns", json=big)
    assert r.status_code == 413 and "over the limit" in r.json()["detail"]

    def chunks():
        for _ in range(30):
            yield b"x" * 100_000

    r = service.client.post("/api/campaigns", content=chunks(), headers={"Authorization": f"Bearer {ADMIN}"})
    assert r.status_code == 413
    r = service.client.post("/api/campaigns", content=chunks(), headers={"Authorization": "Bearer whatever"})
    assert r.status_code == 401   # the token is checked before the body is read
    assert service.admin("GET", "/api/campaigns").json() == []


# ----- the assignment engine ---------------------------------------------------------------------
def test_reload_gives_the_same_task_and_client_id_is_idempotent(service):
    cid = service.campaign(**preference_body())
    a = service.assessor(cid)
    first = service.next(a).json()
    assert service.next(a).json() == first
    r1 = service.answer(a, first["task"], "left", "click-1")
    r2 = service.answer(a, first["task"], "left", "click-1")
    assert r1.status_code == r2.status_code == 200 and r1.json() == r2.json() == {"recorded": True}
    assert len(exported(service, cid)) == 1
    second = service.next(a).json()
    assert second["task"] != first["task"]
    r = service.answer(a, first["task"], "right", "click-2")
    assert r.status_code == 409 and "already answered" in r.json()["detail"]
    r = service.answer(a, second["task"], "right", "click-1")   # a used client_id with another answer: refused
    assert r.status_code == 409 and "already recorded another answer" in r.json()["detail"]
    assert len(exported(service, cid)) == 1          # click-1 was recorded once; second still open
    assert service.next(a).json() == second


def test_expired_lease_is_reissued_and_its_answer_gets_409(service):
    cid = service.campaign(**preference_body())
    a, b = service.assessor(cid, "a"), service.assessor(cid, "b")
    ta = service.next(a).json()
    tb = service.next(b).json()
    assert ta["task"] != tb["task"] and ta["items"] != tb["items"]      # a leased pair goes to one assessor
    service.clock.now += service.settings.lease_seconds + 1
    service.answer(b, tb["task"], "left", "b-late")
    again = service.next(b).json()
    assert again["items"] == ta["items"] and again["task"] != ta["task"]  # a's expired pair, to b
    r = service.answer(a, ta["task"], "left", "a-late")
    assert r.status_code == 409 and "expired" in r.json()["detail"]
    assert service.answer(b, again["task"], "left", "b-ok").status_code == 200
    assert [line[:3] for line in exported(service, cid)] == [
        [ta["topic"], *(i["docno"] for i in ta["items"])]]


def test_one_assessor_never_gets_a_pair_twice_and_every_pair_gets_different_assessors(service):
    body = preference_body(extra=1, assessors_per_pair=2)
    cid = service.campaign(**body)
    people = [service.assessor(cid, f"p{i}") for i in range(6)]
    total = 0
    while True:
        done = [work(service, who, limit=7, prefix=f"r{total}-") for who in people]
        total += sum(done)
        if not any(done):
            break
    lines = exported(service, cid)
    assert len(lines) == total
    per_assessor_pair = Counter((line[4], line[0], *sorted(line[1:3])) for line in lines)
    assert max(per_assessor_pair.values()) == 1
    per_pair = Counter((line[0], *sorted(line[1:3])) for line in lines)
    final_pairs = [k for k, v in per_pair.items() if v >= 4]          # two final phases x two assessors
    assert final_pairs and set(per_pair.values()) == {2, 4, 6}        # 6: also judged when pruning
    p = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert p["done"] and p["judgments"] == total
    assert service.admin("GET", f"/api/campaigns/{cid}/qrels", params={"best": 1}).text.split()[2] == "d0"


def test_restart_resumes_where_it_stopped_with_the_state_of_a_replay(service, tmp_path):
    body = preference_body()
    cid = service.campaign(**body)
    a, b = service.assessor(cid, "a"), service.assessor(cid, "b")
    work(service, a, limit=25)
    open_task = service.next(b).json()
    before = service.admin("GET", f"/api/campaigns/{cid}").json()
    state = service.app.state.campaigns.get(cid).judge.state()
    service.start()
    assert service.admin("GET", f"/api/campaigns/{cid}").json() == before
    assert service.app.state.campaigns.get(cid).judge.state() == state
    lines = exported(service, cid)
    assert len(lines) == 25
    assert service.app.state.campaigns.get(cid).judge.process.to_json() == replayed(body, lines, tmp_path).to_json()
    assert service.next(b).json() == open_task                           # the open lease survived
    assert service.answer(b, open_task["task"], oracle(open_task), "b-after").status_code == 200
    first = next(line for line in lines if line[4] == str(a["id"]))        # a's first answer, task 1
    side = "left" if first[3] == first[1] else "right"
    assert service.answer(a, 1, side, f"{a['id']}-0").json() == {"recorded": True}  # idempotent across restarts
    work(service, a, prefix="after-")
    work(service, b, prefix="after-")
    service.start()
    assert service.admin("GET", f"/api/campaigns/{cid}").json()["done"]
    assert service.app.state.campaigns.get(cid).judge.process.to_json() == replayed(body, exported(service, cid), tmp_path).to_json()


# ----- graded campaigns --------------------------------------------------------------------------
def test_graded_campaign_one_lease_per_topic_budget_and_qrels(service):
    cid = service.campaign(**graded_body(budget=4))
    a, b, c = (service.assessor(cid, n) for n in "abc")
    ta, tb = service.next(a).json(), service.next(b).json()
    assert ta["grades"] == [0, 1, 2, 3] and len(ta["items"]) == 1 and {ta["topic"], tb["topic"]} == {"1", "2"}
    assert service.next(c).status_code == 204                         # each topic's document is leased
    assert service.answer(a, ta["task"], 7, "a0").status_code == 422
    assert service.answer(a, ta["task"], "2", "a0").status_code == 422
    assert service.answer(a, ta["task"], 2, "a0").status_code == 200
    grades = iter([3, 0, 1, 2, 0, 1, 2, 3])
    while (r := service.next(c)).status_code == 200:
        assert service.answer(c, r.json()["task"], next(grades), f"c{r.json()['task']}").status_code == 200
    service.answer(b, tb["task"], 1, "b0")
    while (r := service.next(c)).status_code == 200:
        assert service.answer(c, r.json()["task"], next(grades), f"c{r.json()['task']}").status_code == 200
    p = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert p["done"] and [t["judgments"] for t in p["topics"]] == [4, 2]   # budget 4; topic 2's pool has 2
    qrels = [line.split() for line in service.admin("GET", f"/api/campaigns/{cid}/qrels").text.splitlines()]
    assert len(qrels) == 6 and all(q[1] == "0" and q[3] in "0123" for q in qrels)
    lines = exported(service, cid)
    assert [line[:3] for line in lines] == [[q[0], q[2], q[3]] for q in qrels]
    state = service.app.state.campaigns.get(cid).judge.state()
    service.start()
    assert service.app.state.campaigns.get(cid).judge.state() == state


@pytest.mark.parametrize("change, message", [
    (dict(options={"method": "NOPE"}), "unknown pooling method 'NOPE'"),
    (dict(options={"grades": [0, 0]}), "options: grades must be a list of different whole numbers"),
    (dict(options={"grades": [0, 2**53 + 1]}), "options: grades must be a list of different whole numbers from"),
    (dict(options={"relevant_grade": float("nan")}), "options: parameter relevant_grade must be a finite number"),
    (dict(options={"relevant_grade": "inf"}), "options: parameter relevant_grade must be a finite number"),
    (dict(options={"budget": 0}), "options: parameter budget=0 is invalid"),
    (dict(runs={"x": "1 Q0 d1 1\n"}), "runs/x, line 1: a run line has 6 columns"),
    (dict(runs={"../x": "1 Q0 d1 1 1 x\n"}), "runs: the run name '../x' may only use"),
    (dict(qrels="1 0 d1 1\n"), "a graded campaign needs runs"),
])
def test_422_graded(service, change, message):
    body = json.dumps({**graded_body(), **change})   # NaN as JavaScript writes it
    r = service.client.post("/api/campaigns", content=body, headers={"Authorization": f"Bearer {ADMIN}",
                                                                       "content-type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"].startswith(message), r.json()
