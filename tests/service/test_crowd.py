"""Crowd campaigns (issue 24 items 1, 2 and 6), on SQLite and PostgreSQL: the join link with platform ids
(cap, close, rotate, a returning worker, an MTurk preview, malformed ids), consent, the practice round
with feedback, HIT-style bundles with the thesis's 75 % rule, quotas, time limits, completion codes, the
payment report and platform ids in the log export, a restart, and bad settings."""

from __future__ import annotations

import csv
import io
import json

import pytest

from .conftest import exported, oracle, preference_body

TESTS = [["1", "d0", "d6"], ["1", "d1", "d7"], ["1", "d2", "d8"], ["1", "d3", "d9"]]
PROLIFIC = "?PROLIFIC_PID={pid}&STUDY_ID=study1&SESSION_ID=s-{pid}"


def crowd_body(**crowd) -> dict:
    return preference_body() | {"tests": TESTS, "crowd": crowd}


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def join_link(service, cid: int, **body) -> dict:
    r = service.admin("POST", f"/api/campaigns/{cid}/join", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def arrive(service, url: str, query: str):
    return service.client.get(url + query, follow_redirects=False)


def token_of(r) -> str:
    assert r.status_code == 303, r.text
    assert r.headers["location"].startswith("/a/")
    return r.headers["location"][3:]


def is_test(task: dict) -> bool:
    return {i["docno"] for i in task["items"]} in [set(t[1:]) for t in TESTS]


def answer_all(service, who: dict, wrong_checks: set[int] = frozenset(), prefix: str = "x") -> list[dict]:
    """Answer with the oracle until nothing is left; the checks numbered in ``wrong_checks`` (0, 1, ...)
    are answered wrong. Returns the tasks answered."""
    done, checks = [], 0
    while (r := service.next(who)).status_code == 200:
        task = r.json()
        side = oracle(task)
        if is_test(task):
            if checks in wrong_checks:
                side = "right" if side == "left" else "left"
            checks += 1
        assert service.answer(who, task["task"], side, f"{prefix}{len(done)}").status_code == 200
        done.append(task)
    assert r.status_code == 204
    return done


def me(service, who: dict) -> dict:
    r = service.client.get("/api/me", headers={"Authorization": who["Authorization"]})
    assert r.status_code == 200
    return r.json()


def test_the_join_link_creates_assessors_with_platform_ids_up_to_its_cap(service):
    cid = service.campaign(**crowd_body(guidelines="# Judge *carefully*"))
    assert service.admin("GET", f"/api/campaigns/{cid}/join").json() == {"url": None, "cap": None, "joined": 0,
                                                                         "open": False}
    link = join_link(service, cid, cap=2)
    assert link["open"] and link["cap"] == 2 and link["joined"] == 0 and link["url"].startswith("/j/")
    ann = token_of(arrive(service, link["url"], PROLIFIC.format(pid="ann1")))
    assert token_of(arrive(service, link["url"], PROLIFIC.format(pid="ann1"))) == ann   # the same worker again
    bob = token_of(arrive(service, link["url"], "?workerId=BOB2&assignmentId=as9&hitId=h7"))
    full = arrive(service, link["url"], PROLIFIC.format(pid="cy3"))
    assert full.status_code == 409 and "full (2 assessors joined)" in full.text
    assert service.client.get(f"/a/{ann}").status_code == 200 and service.next(bearer(bob)).status_code == 200
    people = service.admin("GET", f"/api/campaigns/{cid}/payments").json()
    assert [(p["name"], p["platform"], p["worker"], p["study"], p["session"]) for p in people] == [
        ("prolific:ann1", "prolific", "ann1", "study1", "s-ann1"), ("mturk:BOB2", "mturk", "BOB2", "h7", "as9")]
    assert service.admin("GET", f"/api/campaigns/{cid}/join").json()["joined"] == 2


def test_a_join_link_is_closed_rotated_and_refuses_what_is_not_an_id(service):
    cid = service.campaign(**crowd_body(guidelines="Read **this**.\n\n<script>alert(1)</script>"))
    old = join_link(service, cid, cap=5)["url"]
    preview = arrive(service, old, "?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=h1")
    assert preview.status_code == 200 and "accept the HIT" in preview.text
    assert "<strong>this</strong>" in preview.text and "<script>" not in preview.text   # Markdown, no raw HTML
    for query, status, words in [("", 422, "needs your worker id"),
                                 ("?PROLIFIC_PID=a%20b", 422, "PROLIFIC_PID: an id is 1 to 64"),
                                 ("?workerId=" + "x" * 65, 422, "workerId: an id is 1 to 64"),
                                 ("?PROLIFIC_PID=abc%0A", 422, "PROLIFIC_PID: an id is 1 to 64")]:
        r = arrive(service, old, query)
        assert r.status_code == status and words in r.text, (query, r.text)
    assert service.admin("GET", f"/api/campaigns/{cid}/payments").json() == []       # nobody was created
    ann = token_of(arrive(service, old, PROLIFIC.format(pid="ann")))
    assert join_link(service, cid, open=False)["open"] is False
    assert arrive(service, old, PROLIFIC.format(pid="bob")).status_code == 409          # closed: nobody new
    assert token_of(arrive(service, old, PROLIFIC.format(pid="ann"))) == ann            # ann may come back
    new = join_link(service, cid, open=True, rotate=True)["url"]
    assert new != old and arrive(service, old, PROLIFIC.format(pid="bob")).status_code == 404
    assert token_of(arrive(service, new, PROLIFIC.format(pid="ann"))) == ann
    aid = service.admin("GET", f"/api/campaigns/{cid}/payments").json()[0]["id"]
    fresh = service.admin("POST", f"/api/campaigns/{cid}/assessors/{aid}", json={"token": "new"}).json()["token"]
    assert fresh != ann and service.next(bearer(ann)).status_code == 401               # the old link is dead ...
    assert token_of(arrive(service, new, PROLIFIC.format(pid="ann"))) == fresh          # ... for good: she gets the new one
    assert service.next(bearer(ann)).status_code == 401 and service.next(bearer(fresh)).status_code == 200
    assert service.admin("POST", f"/api/campaigns/{cid}/assessors/{aid}", json={"revoked": True}).status_code == 200
    assert arrive(service, new, PROLIFIC.format(pid="ann")).status_code == 401          # withdrawn by the organiser
    assert service.admin("POST", f"/api/campaigns/{cid}/join", json={}).status_code == 422
    other = service.campaign(**crowd_body())
    r = service.admin("POST", f"/api/campaigns/{other}/join", json={"open": True})
    assert r.status_code == 422 and "needs a cap" in r.text


def test_consent_comes_before_the_practice_round_and_its_feedback(service):
    cid = service.campaign(**crowd_body(consent="I agree to take part.", practice=[
        ["2", "e0", "e3", "e0 answers the question"], ["1", "d1", "d11"]], practice_pass=1))
    ann, bob = service.assessor(cid, "ann"), service.assessor(cid, "bob")
    r = service.next(ann)
    assert r.status_code == 409 and "consent" in r.json()["detail"] and me(service, ann)["stage"] == "consent"
    consent = service.client.post("/api/consent", json={"agree": True}, headers={"Authorization": ann["Authorization"]})
    assert consent.status_code == 200 and me(service, ann)["stage"] == "practice"
    assert service.client.post("/api/consent", json={"agree": False},
                               headers={"Authorization": bob["Authorization"]}).status_code == 422
    first = service.next(ann).json()
    assert {i["docno"] for i in first["items"]} == {"e0", "e3"}
    wrong = "right" if oracle(first) == "left" else "left"
    r = service.answer(ann, first["task"], wrong, "p0")
    assert r.json() == {"recorded": True, "correct": False, "better": "e0", "note": "e0 answers the question"}
    assert service.answer(ann, first["task"], wrong, "p0").json()["correct"] is False   # a retry: the same reply
    second = service.next(ann).json()
    assert service.answer(ann, second["task"], oracle(second), "p1").json() == {
        "recorded": True, "correct": True, "better": "d1", "note": ""}
    assert me(service, ann)["stage"] == "screened-out" and me(service, ann)["practice"] == {
        "done": 2, "total": 2, "correct": 1}
    assert service.next(ann).status_code == 204
    service.client.post("/api/consent", json={"agree": True}, headers={"Authorization": bob["Authorization"]})
    for n in range(2):
        task = service.next(bob).json()
        assert service.answer(bob, task["task"], oracle(task), f"b{n}").json()["correct"] is True
    assert me(service, bob)["stage"] == "work"
    assert service.admin("GET", f"/api/campaigns/{cid}").json()["judgments"] == 0         # practice is not work
    kinds = [json.loads(line)["kind"] for line in
             service.admin("GET", f"/api/campaigns/{cid}/judgments?format=jsonl").text.splitlines()]
    assert kinds == ["practice"] * 4 and exported(service, cid) == []


def test_a_bundle_below_three_of_four_checks_is_rejected_and_the_quota_ends_with_the_code(service):
    url = "https://app.prolific.com/submissions/complete?cc={code}"
    cid = service.campaign(**crowd_body(bundle={"targets": 4, "checks": 2, "pass": 0.75}, bundles=2,
                                        completion_code="auto", completion_url=url))
    ann = service.assessor(cid, "ann")
    tasks = answer_all(service, ann, wrong_checks={3})   # bundle 1: both checks right; bundle 2: one wrong
    assert len(tasks) == 12 and sum(map(is_test, tasks)) == 4
    assert [sum(map(is_test, tasks[i:i + 6])) for i in (0, 6)] == [2, 2]     # two checks in each bundle
    status = me(service, ann)
    assert status["stage"] == "finished" and status["bundles"] == {"size": 6, "done": 2, "accepted": 1,
                                                                    "current": 0, "quota": 2}
    [row] = service.admin("GET", f"/api/campaigns/{cid}/payments").json()
    assert status["completion"] == {"code": row["code"], "url": url.replace("{code}", row["code"])}
    assert (row["bundles"], row["accepted"], row["rejected"], row["answers"], row["checks"], row["checks_right"]) == (
        2, 1, 1, 8, 4, 3)
    assert len(exported(service, cid)) == 4          # only the accepted bundle's answers count
    assert service.admin("GET", f"/api/campaigns/{cid}").json()["judgments"] == 4
    undo = service.client.post("/api/undo", json={"client_id": "u1"}, headers={"Authorization": ann["Authorization"]})
    assert undo.status_code == 409 and "bundle is finished" in undo.json()["detail"]
    service.start()                                  # replayed from the log: the same verdicts
    assert me(service, ann)["bundles"]["accepted"] == 1 and len(exported(service, cid)) == 4
    text = service.admin("GET", f"/api/campaigns/{cid}/payments?format=csv").text
    assert next(csv.DictReader(io.StringIO(text)))["rejected"] == "1"


def test_an_answer_quota_and_a_time_limit_end_the_work(service):
    cid = service.campaign(**crowd_body(quota=3, completion_code="C0DE-1"))
    ann = service.assessor(cid, "ann")
    assert len(answer_all(service, ann)) == 3 and me(service, ann)["completion"] == {"code": "C0DE-1"}
    assert [row["code"] for row in service.admin("GET", f"/api/campaigns/{cid}/payments").json()] == ["C0DE-1"]
    other = service.campaign(**crowd_body(time_limit=10))
    bob = service.assessor(other, "bob")
    task = service.next(bob).json()
    assert service.answer(bob, task["task"], oracle(task), "b0").status_code == 200
    assert me(service, bob)["seconds_left"] == 600
    service.clock.now += 601
    assert service.next(bob).status_code == 204 and me(service, bob)["stage"] == "finished"
    assert "completion" in me(service, bob) and me(service, bob)["completion"] is None   # no code was set


def test_platform_ids_are_in_the_log_export(service):
    cid = service.campaign(**crowd_body())
    url = join_link(service, cid, cap=1)["url"]
    who = bearer(token_of(arrive(service, url, "?workerId=W1&assignmentId=A1&hitId=H1")))
    task = service.next(who).json()
    assert service.answer(who, task["task"], oracle(task), "c1").status_code == 200
    [row] = [json.loads(x) for x in service.admin("GET", f"/api/campaigns/{cid}/judgments?format=jsonl").text.splitlines()]
    assert (row["name"], row["platform"], row["worker"], row["study"], row["session"]) == (
        "mturk:W1", "mturk", "W1", "H1", "A1")


@pytest.mark.parametrize("crowd, words", [
    ({"quota": 0}, "crowd.quota: Input should be greater than or equal to 1"),
    ({"bundles": 2}, 'give "bundle" too'),
    ({"bundle": {"targets": 10, "checks": 3, "pass": 2}}, "crowd.bundle.pass"),
    ({"completion_code": "a b"}, "a completion code is 1 to 40"),
    ({"completion_code": "X", "completion_url": "javascript:alert(1)"}, "must be an https:// address"),
    ({"practice": [["1", "d0"]]}, "crowd.practice[0]: a practice pair is"),
    ({"practice": [["9", "d0", "d1"]]}, "no query for topic 9"),
    ({"practice": [["1", "d0", "zz"]]}, "no text for document zz"),
    ({"colour": "red"}, "crowd.colour: Extra inputs are not permitted"),
])
def test_bad_crowd_settings_get_one_message(service, crowd, words):
    r = service.admin("POST", "/api/campaigns", json=crowd_body(**crowd))
    assert r.status_code == 422 and words in r.json()["detail"], r.text


def test_settings_change_until_work_fixes_the_practice_and_the_bundles(service):
    cid = service.campaign(**crowd_body(bundle={"targets": 4, "checks": 2}))
    r = service.admin("POST", f"/api/campaigns/{cid}/crowd", json={"crowd": {"bundle": {"targets": 10, "checks": 3},
                                                                            "guidelines": "Be quick."}})
    assert r.status_code == 200 and r.json()["crowd"]["bundle"] == {"targets": 10, "checks": 3, "pass": 0.75,
                                                                              "scope": "bundle"}
    ann = service.assessor(cid, "ann")
    task = service.next(ann).json()
    assert service.answer(ann, task["task"], oracle(task), "a0").status_code == 200
    r = service.admin("POST", f"/api/campaigns/{cid}/crowd", json={"crowd": {"bundle": {"targets": 5, "checks": 1}}})
    assert r.status_code == 409 and "crowd.bundle: it cannot change once assessors have worked" in r.text
    r = service.admin("POST", f"/api/campaigns/{cid}/crowd", json={"crowd": {
        "bundle": {"targets": 10, "checks": 3}, "quota": 26, "completion_code": "DONE1"}})
    assert r.status_code == 200
    service.start()   # the stored settings come back
    assert me(service, ann)["quota"] == {"answers": 1, "of": 26} and me(service, ann)["bundles"]["size"] == 13


def test_the_dashboard_makes_the_join_link_saves_settings_and_downloads_payments(service):
    from .conftest import csrf_of, login

    cid = service.campaign(**crowd_body())
    assert login(service).status_code == 303
    page = service.client.get(f"/admin/campaigns/{cid}")
    assert page.status_code == 200 and 'id="make-join"' in page.text
    csrf = csrf_of(page)
    post = lambda path, **data: service.client.post(f"/admin/campaigns/{cid}/{path}", data={"csrf": csrf, **data},
                                                    follow_redirects=False)
    assert post("join", action="make", cap="").status_code == 422
    assert post("join", action="make", cap="3").status_code == 303
    url = service.admin("GET", f"/api/campaigns/{cid}/join").json()["url"]
    page = service.client.get(f"/admin/campaigns/{cid}")
    assert url in page.text and "0 of 3 assessors joined" in page.text
    assert post("join", action="close").status_code == 303
    assert service.admin("GET", f"/api/campaigns/{cid}/join").json()["open"] is False
    r = post("crowd", guidelines="# Rules", practice="1 d0 d9 d0 is on topic\n2 e0 e3", bundle_targets="4",
             bundle_checks="2", quota="x")
    assert r.status_code == 422 and "crowd.quota: give a whole number, got &#39;x&#39;" in r.text
    assert post("crowd", guidelines="# Rules", practice="1 d0 d9 d0 is on topic\n2 e0 e3", bundle_targets="4",
                bundle_checks="2", completion_code="auto").status_code == 303
    crowd = service.admin("POST", f"/api/campaigns/{cid}/crowd", json={"crowd": None}).json()
    assert crowd == {"crowd": None}
    assert post("crowd", practice="1 d0 d9 d0 is on topic").status_code == 303
    page = service.client.get(f"/admin/campaigns/{cid}")
    assert "1 d0 d9 d0 is on topic" in page.text
    csv_text = service.client.get(f"/admin/campaigns/{cid}/payments.csv")
    assert csv_text.status_code == 200 and csv_text.text.startswith("id,name,platform,worker")
    assert "attachment" in csv_text.headers["content-disposition"]


def test_the_worker_scope_counts_every_check_so_far_and_excludes_the_worker(service):
    cid = service.campaign(**crowd_body(bundle={"targets": 4, "checks": 3, "scope": "worker"}, bundles=3))
    ann, bob = service.assessor(cid, "ann"), service.assessor(cid, "bob")
    # ann: 3 of 3, then 2 of 3: 5 of 6 >= 75 %, both bundles kept (the thesis's two-HIT case)
    # bob: 3 of 3, then 1 of 3: 4 of 6 < 75 %: both bundles rejected and no more work
    assert len(answer_all(service, ann, wrong_checks={4}, prefix="a")) == 21
    assert me(service, ann)["bundles"]["accepted"] == 3 and me(service, ann)["stage"] == "finished"
    assert len(answer_all(service, bob, wrong_checks={3, 4}, prefix="b")) == 14
    assert me(service, bob)["stage"] == "excluded" and me(service, bob)["bundles"]["accepted"] == 0
    rows = {r["name"]: r for r in service.admin("GET", f"/api/campaigns/{cid}/payments").json()}
    assert (rows["bob"]["accepted"], rows["bob"]["rejected"]) == (0, 2)
    assert len(exported(service, cid)) == 12          # ann's three bundles of four; none of bob's
