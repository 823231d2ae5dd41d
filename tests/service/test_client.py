"""The client's methods for the routes it lacked before the crowd slice, against a real app on SQLite and
PostgreSQL: automatic assessors, changing an assessor, undo, the judgments formats, quality, an
experiment's client tokens, and the crowd routes (settings, join link, consent, progress, payments)."""

from __future__ import annotations

import csv
import io

import pytest

from irbandits.client import Client, ServiceError

from .conftest import ADMIN, oracle, preference_body


def clients(service, cid: int, name: str = "ann") -> tuple[Client, Client]:
    """The organiser's client and a new assessor's."""
    organiser = Client("", ADMIN, http=service.client)
    return organiser, Client("", organiser.add_assessor(cid, name)["token"], http=service.client)


def refused(call) -> ServiceError:
    with pytest.raises(ServiceError) as error:
        call()
    return error.value


def test_automatic_assessors_changes_and_undo(service):
    cid = service.campaign(**preference_body())
    organiser, ann = clients(service, cid)
    assert {"coin", "left", "lexical"} <= set(organiser.automatic_assessors())
    error = refused(lambda: organiser.add_assessor(cid, "bot", automatic="no-such-judge"))
    assert error.status == 422 and "no-such-judge" in error.detail
    task = ann.next_task()
    assert ann.answer(task["task"], oracle(task), "c1") == {"recorded": True}
    assert ann.undo("u1")["items"] == task["items"]   # the same pair, leased again
    assert [line.split()[-1] for line in organiser.judgments(cid, log=True).splitlines()] == ["answer", "retract"]
    assert organiser.judgments(cid) == ""
    aid = organiser.assessors(cid)[0]["id"]
    assert organiser.change_assessor(cid, aid, flagged=True) == {"id": aid, "flagged": True}
    assert organiser.quality(cid)["assessors"][0]["flagged"] is True
    assert organiser.change_assessor(cid, aid, revoked=True) == {"id": aid, "revoked": True}
    assert refused(ann.next_task).status == 401
    new = organiser.change_assessor(cid, aid, token="new", flagged=False)
    assert new["revoked"] is False and new["url"] == f"/a/{new['token']}"
    assert Client("", new["token"], http=service.client).next_task()["items"] == task["items"]
    assert refused(lambda: organiser.change_assessor(cid, aid)).status == 422   # nothing to change


def test_the_judgments_csv_and_the_client_tokens_of_an_experiment(service):
    cid = service.campaign(**preference_body())
    organiser, ann = clients(service, cid)
    task = ann.next_task()
    ann.answer(task["task"], "left", "c1")
    [row] = list(csv.DictReader(io.StringIO(organiser.judgments_csv(cid))))
    assert (row["kind"], row["name"], row["answer"]) == ("answer", "ann", task["items"][0]["docno"])
    eid = organiser.create_experiment("exp", ["a", "b", "c"], "RUCB")
    made = organiser.add_client(eid, "web")
    front = Client("", made["token"], http=service.client)
    assert front.impression(eid)["rankers"]
    assert [(c["id"], c["name"], c["revoked"]) for c in organiser.clients(eid)] == [(made["id"], "web", False)]
    assert organiser.change_client(eid, made["id"], revoked=True) == {"id": made["id"], "revoked": True}
    assert refused(lambda: front.impression(eid)).status == 401
    new = organiser.change_client(eid, made["id"], token="new")
    assert Client("", new["token"], http=service.client).impression(eid)["rankers"]
    assert refused(lambda: organiser.change_client(eid, made["id"])).status == 422


def test_the_crowd_routes(service):
    cid = service.campaign(**preference_body())
    organiser = Client("", ADMIN, http=service.client)
    assert organiser.join_link(cid) == {"url": None, "cap": None, "joined": 0, "open": False}
    stored = organiser.set_crowd(cid, {"consent": "I agree.", "quota": 2, "completion_code": "auto"})
    assert stored["consent"] == "I agree." and stored["quota"] == 2
    link = organiser.set_join_link(cid, cap=3)
    assert link["open"] and link["cap"] == 3 and organiser.join_link(cid) == link
    joined = service.client.get(link["url"] + "?PROLIFIC_PID=ann1&STUDY_ID=s1&SESSION_ID=x1", follow_redirects=False)
    ann = Client("", joined.headers["location"].removeprefix("/a/"), http=service.client)
    assert ann.me()["stage"] == "consent" and refused(ann.next_task).status == 409
    assert ann.consent() == {"consented": True}
    for n in range(2):
        task = ann.next_task()
        ann.answer(task["task"], oracle(task), f"c{n}")
    finished = ann.me()
    assert finished["stage"] == "finished" and ann.next_task() is None
    [paid] = organiser.payments(cid)
    assert (paid["worker"], paid["study"], paid["answers"], paid["code"]) == ("ann1", "s1", 2, finished["completion"]["code"])
    [row] = list(csv.DictReader(io.StringIO(organiser.payments_csv(cid))))
    assert (row["worker"], row["code"], row["answers"]) == ("ann1", paid["code"], "2")
    rotated = organiser.set_join_link(cid, open=False, rotate=True)
    assert rotated["url"] != link["url"] and rotated["open"] is False and rotated["joined"] == 1
    assert organiser.set_crowd(cid, None) is None and ann.me().get("stage") is None
