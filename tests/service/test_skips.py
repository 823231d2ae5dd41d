"""Skips and problem reports (issue 24, item 5), on SQLite and PostgreSQL: ``POST /api/tasks/{TID}/skip``,
its errors and idempotence, the pair going to someone else and never back, the log export, the
organiser's reports (API, client, dashboard), a restart and the upgrade from 0006."""

from __future__ import annotations

import json

import pytest
from alembic import command
from alembic.config import Config

from irbandits.client import Client, ServiceError
from irbandits.service.db import MIGRATIONS

from .conftest import ADMIN, exported, graded_body, login, oracle, preference_body, work


def skip(service, who, task: int, reason="broken", client_id="s1", **extra):
    return service.client.post(f"/api/tasks/{task}/skip", json={"reason": reason, "client_id": client_id, **extra},
                               headers={"Authorization": who["Authorization"]})


def pair(task: dict) -> frozenset:
    return frozenset(item["docno"] for item in task["items"])


def log_lines(service, cid: int) -> list[str]:
    return service.admin("GET", f"/api/campaigns/{cid}/judgments?log=1").text.splitlines()


def reports(service, cid: int) -> list[dict]:
    r = service.admin("GET", f"/api/campaigns/{cid}/reports")
    assert r.status_code == 200
    return r.json()


def test_a_report_is_logged_not_counted_and_the_pair_goes_to_someone_else(service):
    cid = service.campaign(**preference_body())
    ann, bob = service.assessor(cid, "ann"), service.assessor(cid, "bob")
    first = service.next(ann).json()
    before = service.admin("GET", f"/api/campaigns/{cid}").json()
    r = skip(service, ann, first["task"], "broken", comment="  the text stops mid-sentence\n")
    assert r.status_code == 200 and r.json() == {"recorded": True}
    after = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert after == before and after["judgments"] == 0             # the process did not move
    assert [a["judgments"] for a in service.admin("GET", f"/api/campaigns/{cid}/assessors").json()] == [0, 0]
    nxt = service.next(ann).json()
    assert nxt["task"] != first["task"] and pair(nxt) != pair(first)  # the next pair, another one
    assert pair(service.next(bob).json()) == pair(first)              # the skipped pair went to bob
    [report] = reports(service, cid)
    left, right = (i["docno"] for i in first["items"])
    assert report == {"id": report["id"], "task": first["task"], "topic": first["topic"], "docnos": [left, right],
                      "reason": "broken", "comment": "the text stops mid-sentence", "assessor": ann["id"],
                      "name": "ann", "time": service.clock.now}
    assert log_lines(service, cid) == [f'{first["topic"]} {left} {right} - {ann["id"]} {int(service.clock.now)} '
                                       f'skip broken "the text stops mid-sentence"']
    assert exported(service, cid) == []                               # not a judgment: not in the plain export
    assert service.answer(ann, nxt["task"], oracle(nxt), "a1").status_code == 200
    assert skip(service, ann, service.next(ann).json()["task"], "cant-judge", "s2").status_code == 200
    kinds = [line.split()[6] for line in log_lines(service, cid)]
    assert kinds == ["skip", "answer", "skip"] and log_lines(service, cid)[2].endswith(' skip cant-judge ""')
    assert [(r["reason"], r["comment"]) for r in reports(service, cid)] == [("broken", "the text stops mid-sentence"),
                                                                             ("cant-judge", None)]
    assert service.admin("GET", f"/api/campaigns/{cid}").json()["judgments"] == 1


def test_a_skip_sent_again_is_recorded_once_and_a_reused_client_id_gets_409(service):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    task = service.next(ann).json()
    assert skip(service, ann, task["task"], "language", comment="German").status_code == 200
    r = skip(service, ann, task["task"], "language", comment="German")   # a retry after a lost reply
    assert r.status_code == 200 and r.json() == {"recorded": True}
    assert len(reports(service, cid)) == 1 and len(log_lines(service, cid)) == 1
    for other in [dict(reason="other", comment="German"), dict(reason="language", comment="French"),
                  dict(reason="language")]:
        r = skip(service, ann, task["task"], **other)
        assert r.status_code == 409 and "already recorded something else" in r.json()["detail"], other
    nxt = service.next(ann).json()
    r = service.answer(ann, nxt["task"], oracle(nxt), "s1")               # an answer may not reuse a skip's id
    assert r.status_code == 409 and "already recorded another answer" in r.json()["detail"]
    assert service.answer(ann, nxt["task"], oracle(nxt), "a1").status_code == 200
    r = skip(service, ann, nxt["task"], "broken", client_id="a1")        # nor a skip an answer's
    assert r.status_code == 409
    assert len(reports(service, cid)) == 1 and len(log_lines(service, cid)) == 2


@pytest.mark.parametrize("body, field", [
    ({"reason": "boring", "client_id": "x"}, "reason"),
    ({"reason": "broken", "comment": "x" * 1001, "client_id": "x"}, "comment"),
    ({"reason": "broken", "comment": 5, "client_id": "x"}, "comment"),
    ({"reason": "broken", "comment": "a\x00b", "client_id": "x"}, "comment"),
    ({"reason": "broken"}, "client_id"),
    ({"reason": "broken", "client_id": ""}, "client_id"),
    ({"reason": "broken", "client_id": "x", "answer": "left"}, "answer"),
])
def test_a_malformed_skip_gets_422_and_records_nothing(service, body, field):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    task = service.next(ann).json()
    r = service.client.post(f"/api/tasks/{task['task']}/skip", json=body, headers={"Authorization": ann["Authorization"]})
    assert r.status_code == 422 and field in json.dumps(r.json()["detail"])
    assert reports(service, cid) == [] and service.next(ann).json()["task"] == task["task"]
    assert skip(service, ann, task["task"], comment="x" * 1000).status_code == 200   # 1,000 characters are fine


def test_only_the_lease_holder_skips_an_open_task(service):
    cid = service.campaign(**preference_body())
    ann, bob = service.assessor(cid, "ann"), service.assessor(cid, "bob")
    task = service.next(ann).json()
    r = service.client.post(f"/api/tasks/{task['task']}/skip", json={"reason": "broken", "client_id": "x"})
    assert r.status_code == 401
    r = service.client.post(f"/api/tasks/{task['task']}/skip", json={"reason": "broken", "client_id": "x"},
                            headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401
    for tid in (task["task"], task["task"] + 1000, 2**70):
        assert skip(service, bob, tid).status_code == 404                 # not bob's, or no such task
    service.clock.now += 61                                               # the lease (60 s) expired
    r = skip(service, ann, task["task"])
    assert r.status_code == 409 and r.json()["detail"] == f"the lease on task {task['task']} expired; GET /api/next for a new task"
    task = service.next(ann).json()
    assert skip(service, ann, task["task"], client_id="s2").status_code == 200
    r = skip(service, ann, task["task"], client_id="s3")                  # skipped already
    assert r.status_code == 409 and r.json()["detail"] == f"task {task['task']} is already answered"
    assert service.admin("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", json={"revoked": True}).status_code == 200
    task = service.next(bob).json()
    assert skip(service, ann, task["task"], client_id="s4").status_code == 401
    assert len(reports(service, cid)) == 1
    assert service.client.get(f"/api/campaigns/{cid}/reports").status_code == 401
    assert service.admin("GET", f"/api/campaigns/{cid + 99}/reports").status_code == 404


def test_the_campaign_states_rule_skips_as_they_rule_answers(service):
    cid = service.campaign(**preference_body())
    ann, bob = service.assessor(cid, "ann"), service.assessor(cid, "bob")
    a_task, b_task = service.next(ann).json(), service.next(bob).json()
    assert service.admin("POST", f"/api/campaigns/{cid}", json={"state": "paused"}).status_code == 200
    assert skip(service, ann, a_task["task"]).status_code == 200          # a pair shown before the pause
    assert service.next(ann).status_code == 204
    assert service.admin("POST", f"/api/campaigns/{cid}", json={"state": "closed"}).status_code == 200
    r = skip(service, bob, b_task["task"])
    assert r.status_code == 409 and r.json()["detail"] == f"campaign {cid} is closed"
    assert skip(service, ann, a_task["task"]).status_code == 200          # a retry of a recorded one
    assert len(reports(service, cid)) == 1


def test_a_skipped_pair_never_comes_back_to_its_assessor_even_after_a_restart(service):
    cid = service.campaign(**preference_body(assessors_per_pair=1))
    ann, bob = service.assessor(cid, "ann"), service.assessor(cid, "bob")
    first = service.next(ann).json()
    assert skip(service, ann, first["task"], "cant-judge").status_code == 200
    service.start()                                                       # replayed from the log
    assert len(reports(service, cid)) == 1
    shown = []
    for n in range(500):
        r = service.next(ann)
        if r.status_code == 204:
            break
        shown.append(pair(r.json()))
        assert service.answer(ann, r.json()["task"], oracle(r.json()), f"a{n}").status_code == 200
    assert len(shown) > 10 and pair(first) not in shown
    assert pair(service.next(bob).json()) == pair(first)
    assert service.admin("GET", f"/api/campaigns/{cid}").json()["judgments"] == len(shown)


def test_a_graded_document_skipped_goes_to_someone_else(service):
    cid = service.campaign(**graded_body())
    ann, bob = service.assessor(cid, "ann"), service.assessor(cid, "bob")
    first = service.next(ann).json()
    r = skip(service, ann, first["task"], "other", comment="a table of numbers")
    assert r.status_code == 200
    nxt = service.next(ann).json()
    assert nxt["items"][0]["docno"] != first["items"][0]["docno"]
    assert service.next(bob).json()["items"] == first["items"]
    doc = first["items"][0]["docno"]
    assert log_lines(service, cid) == [f'{first["topic"]} {doc} - {ann["id"]} {int(service.clock.now)} '
                                       'skip other "a table of numbers"']
    assert reports(service, cid)[0]["docnos"] == [doc] and service.admin("GET", f"/api/campaigns/{cid}").json()["judgments"] == 0


def test_the_client_skips_and_lists_reports(service):
    cid = service.campaign(**preference_body())
    token = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "ann"}).json()["token"]
    organiser = Client("http://testserver", ADMIN, http=service.client)
    assessor = Client("http://testserver", token, http=service.client)
    task = assessor.next_task()
    assert assessor.skip(task["task"], "broken", "c1", comment="empty") == {"recorded": True}
    assert assessor.skip(task["task"], "broken", "c1", comment="empty") == {"recorded": True}
    with pytest.raises(ServiceError) as error:
        assessor.skip(task["task"], "nonsense", "c2")
    assert error.value.status == 422
    [report] = organiser.reports(cid)
    assert (report["reason"], report["comment"], report["name"]) == ("broken", "empty", "ann")
    assert assessor.next_task()["task"] != task["task"]


def test_the_dashboard_shows_the_reports_escaped(service):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    task = service.next(ann).json()
    assert skip(service, ann, task["task"], "language", comment="<b>nicht</b> English").status_code == 200
    login(service)
    page = service.client.get(f"/admin/campaigns/{cid}").text
    assert 'id="report-count">1<' in page and "wrong language" in page
    assert "&lt;b&gt;nicht&lt;/b&gt; English" in page and "<b>nicht" not in page
    stats = service.client.get(f"/admin/campaigns/{cid}/stats.json").json()
    assert [(r["reason"], r["name"]) for r in stats["reports"]] == [("language", "ann")]


def test_old_databases_upgrade_from_0006_and_take_skips(service):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    task = service.next(ann).json()
    assert service.answer(ann, task["task"], oracle(task), "a1").status_code == 200
    task = service.next(ann).json()
    assert skip(service, ann, task["task"]).status_code == 200
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with service.app.state.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0006_lifecycle")   # a database of before skips: their rows go with the columns
    service.start()                                   # upgrades to head
    assert [line.split()[6] for line in log_lines(service, cid)] == ["answer"] and reports(service, cid) == []
    assert len(exported(service, cid)) == 1
    task = service.next(ann).json()
    assert skip(service, ann, task["task"], "other", "s9", comment="after the upgrade").status_code == 200
    service.start()
    assert [r["comment"] for r in reports(service, cid)] == ["after the upgrade"]
    assert work(service, ann) > 0
