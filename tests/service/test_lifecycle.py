"""The campaign lifecycle (issue 24, item 4), on SQLite and PostgreSQL: running, paused, closed and
archived campaigns through the JSON API, the client and the organiser pages, what each state does to
assessors, deletion, and the state kept over a restart and a migration."""

from __future__ import annotations

import re
import time

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import func, select

from irbandits.client import Client, ServiceError
from irbandits.service.db import MIGRATIONS
from irbandits.service.models import Assessor, CampaignRow, Judgment, Task

from .conftest import ADMIN, csrf_of, exported, login, oracle, preference_body

# how to bring a new (running) campaign to each state
PATHS = {"running": [], "paused": ["paused"], "closed": ["closed"], "archived": ["closed", "archived"]}
ALLOWED = {("running", "paused"), ("running", "closed"), ("paused", "running"), ("paused", "closed"),
           ("closed", "archived"), ("archived", "closed")}


def move(service, cid: int, state, token: str = ADMIN):
    return service.client.post(f"/api/campaigns/{cid}", json={"state": state},
                               headers={"Authorization": f"Bearer {token}"})


def state_of(service, cid: int) -> str:
    return service.admin("GET", f"/api/campaigns/{cid}").json()["state"]


def in_state(service, state: str) -> int:
    cid = service.campaign(**preference_body())
    for step in PATHS[state]:
        assert move(service, cid, step).status_code == 200
    return cid


def me(service, who) -> dict:
    return service.client.get("/api/me", headers={"Authorization": who["Authorization"]}).json()


def undo(service, who, client_id: str = "u1"):
    return service.client.post("/api/undo", json={"client_id": client_id}, headers={"Authorization": who["Authorization"]})


def rows(service, cid: int) -> dict[str, int]:
    """How many rows each table holds for campaign ``cid``."""
    with service.app.state.engine.connect() as conn:
        return {t.__tablename__: conn.execute(select(func.count()).select_from(t).where(
            (t.id if t is CampaignRow else t.campaign_id) == cid)).scalar() for t in (CampaignRow, Assessor, Task, Judgment)}


# ----- moves -------------------------------------------------------------------------------------
def test_every_allowed_move_is_made_and_every_other_gets_409_naming_the_state(service):
    expected = {"running": "paused or closed", "paused": "running or closed", "closed": "archived", "archived": "closed"}
    now = {}
    for start in PATHS:
        for target in PATHS:
            cid = in_state(service, start)
            r = move(service, cid, target)
            now[cid] = target if (start, target) in ALLOWED else start
            if (start, target) in ALLOWED:
                assert r.status_code == 200 and r.json() == {"id": cid, "state": target}, (start, target)
                assert state_of(service, cid) == target
            else:
                assert r.status_code == 409, (start, target)
                assert r.json()["detail"] == (f"campaign {cid} is already {start}" if start == target else
                                              f"campaign {cid} is {start}: it can move to {expected[start]}, not to {target}")
                assert state_of(service, cid) == start
    listing = service.admin("GET", "/api/campaigns").json()
    assert all(c.keys() == {"id", "name", "kind", "state"} for c in listing)
    assert {c["id"]: c["state"] for c in listing} == now and len(now) == 16 and len(ALLOWED) == 6


@pytest.mark.parametrize("body, message", [
    ({"state": "done"}, "state: Input should be 'running', 'paused', 'closed' or 'archived'"),
    ({"state": None}, "state: Input should be 'running', 'paused', 'closed' or 'archived'"),
    ({}, "state: Field required"),
    ({"state": "paused", "name": "x"}, "name: Extra inputs are not permitted"),
])
def test_a_bad_state_body_gets_422_and_changes_nothing(service, body, message):
    cid = service.campaign(**preference_body())
    r = service.admin("POST", f"/api/campaigns/{cid}", json=body)
    assert r.status_code == 422 and r.json()["detail"] == message
    assert state_of(service, cid) == "running"


def test_moves_and_deletion_are_the_organisers_and_need_a_campaign(service):
    cid = in_state(service, "closed")
    ann = service.assessor(cid, "ann")
    token = ann["Authorization"].split()[1]
    assert service.client.post(f"/api/campaigns/{cid}", json={"state": "archived"}).status_code == 401
    assert move(service, cid, "archived", token="not-a-token").status_code == 401
    assert move(service, cid, "archived", token=token).status_code == 403
    assert service.client.delete(f"/api/campaigns/{cid}").status_code == 401
    assert service.client.delete(f"/api/campaigns/{cid}", headers={"Authorization": ann["Authorization"]}).status_code == 403
    for path in (f"/api/campaigns/{cid + 1}", f"/api/campaigns/{2**40}"):
        r = service.admin("POST", path, json={"state": "paused"})
        assert r.status_code == 404 and r.json()["detail"].startswith("no campaign")
        assert service.admin("DELETE", path).status_code == 404
    assert state_of(service, cid) == "closed" and rows(service, cid)["assessors"] == 1


# ----- what each state does ----------------------------------------------------------------------
def test_paused_hands_out_no_work_keeps_leases_records_answers_and_says_why(service):
    cid = service.campaign(**preference_body())
    ann, bob, cy = service.assessor(cid, "ann"), service.assessor(cid, "bob"), service.assessor(cid, "cy")
    a_task, b_task = service.next(ann).json(), service.next(bob).json()
    assert me(service, ann)["state"] == "running"
    assert move(service, cid, "paused").status_code == 200
    for who in (ann, bob, cy):
        r = service.next(who)
        assert r.status_code == 204 and r.content == b""
        assert me(service, who)["state"] == "paused"
    r = service.answer(ann, a_task["task"], oracle(a_task), "a1")   # an answer to a pair shown before the pause
    assert r.status_code == 200 and r.json() == {"recorded": True}
    assert service.answer(ann, a_task["task"], oracle(a_task), "a1").status_code == 200   # a retry: recorded once
    assert len(exported(service, cid)) == 1 and service.admin("GET", f"/api/campaigns/{cid}").json()["judgments"] == 1
    r = undo(service, ann)                                          # an undo would lease the pair again
    assert r.status_code == 409 and r.json()["detail"] == f"campaign {cid} is paused; undo when it runs again"
    assert service.next(ann).status_code == 204
    service.clock.now += 30                                         # within the lease (60 s)
    assert move(service, cid, "running").status_code == 200
    assert service.next(bob).json()["task"] == b_task["task"]        # bob's lease was kept
    nxt = service.next(ann).json()
    assert nxt["task"] not in (a_task["task"], b_task["task"])
    assert me(service, ann)["state"] == "running" and service.next(cy).status_code == 200


def test_closed_refuses_new_answers_hands_out_no_work_and_still_exports(service):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    first = service.next(ann).json()
    assert service.answer(ann, first["task"], oracle(first), "c1").status_code == 200
    second = service.next(ann).json()
    assert move(service, cid, "closed").status_code == 200
    r = service.answer(ann, second["task"], oracle(second), "c2")
    assert r.status_code == 409 and r.json()["detail"] == f"campaign {cid} is closed"
    assert service.answer(ann, first["task"], oracle(first), "c1").status_code == 200   # a retry of a recorded one
    assert service.next(ann).status_code == 204 and me(service, ann)["state"] == "closed"
    r = undo(service, ann)
    assert r.status_code == 409 and r.json()["detail"] == f"campaign {cid} is closed"
    assert len(exported(service, cid)) == 1 and exported(service, cid)[0][4] == str(ann["id"])
    assert service.admin("GET", f"/api/campaigns/{cid}/qrels").status_code == 200
    assert service.admin("GET", f"/api/campaigns/{cid}/judgments?log=1").text.count("\n") == 1
    assert service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "late"}).status_code == 201


def test_archived_is_read_only_until_it_is_closed_again(service):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    task = service.next(ann).json()
    assert service.answer(ann, task["task"], oracle(task), "c1").status_code == 200
    task = service.next(ann).json()
    assert move(service, cid, "closed").status_code == 200 and move(service, cid, "archived").status_code == 200
    refused = f"campaign {cid} is archived (read-only); move it back to closed to change it"
    for method, path, body in [
        ("POST", f"/api/campaigns/{cid}/assessors", {"name": "bob"}),
        ("POST", f"/api/campaigns/{cid}/assessors/bulk", {"names": ["bob"]}),
        ("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", {"name": "Ann"}),
        ("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", {"flagged": True}),
        ("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", {"revoked": True}),
        ("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", {"token": "new"}),
    ]:
        r = service.admin(method, path, json=body)
        assert r.status_code == 409 and r.json()["detail"] == refused, path
    [a] = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    assert (a["name"], a["flagged"], a["revoked"]) == ("ann", False, False)
    r = service.answer(ann, task["task"], oracle(task), "c2")
    assert r.status_code == 409 and r.json()["detail"] == f"campaign {cid} is archived"
    assert service.next(ann).status_code == 204 and me(service, ann)["state"] == "archived"
    assert len(exported(service, cid)) == 1
    assert move(service, cid, "closed").status_code == 200
    r = service.admin("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", json={"name": "Ann"})
    assert r.status_code == 200 and r.json() == {"id": ann["id"], "name": "Ann"}


def test_the_state_survives_a_restart_and_old_databases_upgrade_as_running(service):
    paused, archived, running = in_state(service, "paused"), in_state(service, "archived"), in_state(service, "running")
    ann = service.assessor(paused, "ann")
    service.start()
    assert [state_of(service, c) for c in (paused, archived, running)] == ["paused", "archived", "running"]
    assert service.next(ann).status_code == 204 and me(service, ann)["state"] == "paused"
    assert move(service, paused, "running").status_code == 200 and service.next(ann).status_code == 200
    # a database of before the lifecycle (0005) keeps its campaigns, which come back running
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with service.app.state.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0005_safety")
    service.start()
    assert [state_of(service, c) for c in (paused, archived, running)] == ["running"] * 3
    assert service.next(ann).json()["campaign"] == paused


# ----- deletion ----------------------------------------------------------------------------------
def test_delete_needs_a_closed_or_archived_campaign_and_removes_everything(service):
    cid, kept = service.campaign(**preference_body()), service.campaign(**preference_body())
    ann, other = service.assessor(cid, "ann"), service.assessor(kept, "other")
    for who, prefix in ((ann, "a"), (other, "o")):
        task = service.next(who).json()
        assert service.answer(who, task["task"], oracle(task), f"{prefix}1").status_code == 200
        service.next(who)                                            # an open lease too
    for state in ("running", "paused"):
        if state == "paused":
            move(service, cid, "paused")
        r = service.admin("DELETE", f"/api/campaigns/{cid}")
        assert r.status_code == 409 and r.json()["detail"] == f"campaign {cid} is {state}; close it before deleting it"
    assert rows(service, cid) == {"campaigns": 1, "assessors": 1, "tasks": 2, "judgments": 1}
    assert move(service, cid, "closed").status_code == 200
    r = service.admin("DELETE", f"/api/campaigns/{cid}")
    assert r.status_code == 204 and r.content == b""
    assert rows(service, cid) == {"campaigns": 0, "assessors": 0, "tasks": 0, "judgments": 0}
    for method, path, body in (("GET", f"/api/campaigns/{cid}", None), ("GET", f"/api/campaigns/{cid}/judgments", None),
                               ("GET", f"/api/campaigns/{cid}/assessors", None), ("DELETE", f"/api/campaigns/{cid}", None),
                               ("POST", f"/api/campaigns/{cid}", {"state": "archived"}),
                               ("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", {"name": "x"})):
        r = service.admin(method, path, json=body)
        assert r.status_code == 404 and r.json()["detail"] == f"no campaign {cid}", path
    assert service.next(ann).status_code == 401                      # its links open nothing
    assert service.client.get(f"/a/{ann['Authorization'].split()[1]}").status_code == 404
    assert [c["id"] for c in service.admin("GET", "/api/campaigns").json()] == [kept]
    service.start()                                                 # gone for good; the other one intact
    assert service.admin("GET", f"/api/campaigns/{cid}").status_code == 404
    assert rows(service, kept) == {"campaigns": 1, "assessors": 1, "tasks": 2, "judgments": 1}
    assert len(exported(service, kept)) == 1 and service.next(other).status_code == 200


def test_an_archived_campaign_is_deleted_with_its_automatic_assessor_stopped(service):
    cid = in_state(service, "paused")
    r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "bot", "automatic": "left"})
    assert r.status_code == 201

    def answered() -> int:   # the bot's answers (a bot answering "left" only is flagged: the process counts none)
        return service.admin("GET", f"/api/campaigns/{cid}/assessors").json()[0]["judgments"]

    time.sleep(0.3)
    assert answered() == 0                                          # paused: no work for it
    assert move(service, cid, "running").status_code == 200
    deadline = time.monotonic() + 20
    while answered() == 0:
        assert time.monotonic() < deadline, "the automatic assessor did not answer after the resume"
        time.sleep(0.05)
    assert move(service, cid, "closed").status_code == 200 and move(service, cid, "archived").status_code == 200
    [worker] = [w for w in service.app.state.campaigns.workers if w.runtime.id == cid]
    assert service.admin("DELETE", f"/api/campaigns/{cid}").status_code == 204
    assert not worker.is_alive() and worker not in service.app.state.campaigns.workers
    assert rows(service, cid)["judgments"] == 0


def test_the_client_moves_and_deletes_a_campaign(service):
    cid = service.campaign(**preference_body())
    client = Client("http://testserver", ADMIN, http=service.client)
    assert client.set_state(cid, "paused") == {"id": cid, "state": "paused"}
    assert client.campaign(cid)["state"] == "paused" and client.campaigns()[0]["state"] == "paused"
    with pytest.raises(ServiceError) as error:
        client.delete_campaign(cid)
    assert error.value.status == 409 and error.value.detail == f"campaign {cid} is paused; close it before deleting it"
    with pytest.raises(ServiceError) as error:
        client.set_state(cid, "archived")
    assert error.value.status == 409 and error.value.detail.startswith(f"campaign {cid} is paused:")
    assert client.set_state(cid, "closed")["state"] == "closed"
    assert client.delete_campaign(cid) is None and client.campaigns() == []


# ----- the organiser pages -----------------------------------------------------------------------
def dashboard(service, cid: int) -> str:
    """Log in and return the campaign page's CSRF token."""
    login(service)
    return csrf_of(service.client.get(f"/admin/campaigns/{cid}"))


def buttons(page: str) -> list[str]:
    """The values of the campaign page's state buttons, in order."""


    return re.findall(r'name="state" value="(\w+)"', page)


def test_the_campaign_page_offers_the_allowed_moves_and_makes_them(service):
    cid = service.campaign(**preference_body())
    csrf = dashboard(service, cid)
    page = service.client.get(f"/admin/campaigns/{cid}").text
    assert buttons(page) == ["paused", "closed"] and 'id="state">running</span>' in page
    assert f'action="/admin/campaigns/{cid}/delete"' not in page
    for state, offered, label in (("paused", ["running", "closed"], "paused"), ("running", ["paused", "closed"], "running"),
                                  ("closed", ["archived"], "closed"), ("archived", ["closed"], "archived")):
        r = service.client.post(f"/admin/campaigns/{cid}/state", data={"csrf": csrf, "state": state}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"/admin/campaigns/{cid}"
        page = service.client.get(f"/admin/campaigns/{cid}").text
        assert buttons(page) == offered and f'id="state">{label}</span>' in page and state_of(service, cid) == state
    assert "Unarchive</button>" in page and 'name="name" value=' not in page       # archived: no assessor forms
    assert ('data-confirm="Delete the campaign pref for good? Its 0 assessors, their tasks and every recorded '
            'answer are removed from the database; download what you need first."') in page
    r = service.client.post(f"/admin/campaigns/{cid}/state", data={"csrf": csrf, "state": "running"})
    assert r.status_code == 409 and buttons(r.text) == ["closed"]
    assert f'id="state-error">campaign {cid} is archived: it can move to closed, not to running</p>' in r.text
    r = service.client.post(f"/admin/campaigns/{cid}/state", data={"csrf": csrf, "state": "gone"})
    assert r.status_code == 422 and "state: give one of running, paused, closed, archived, got &#39;gone&#39;" in r.text
    assert state_of(service, cid) == "archived"


def test_the_delete_button_removes_a_closed_campaign_and_both_forms_need_the_csrf_token(service):
    cid = service.campaign(**preference_body())
    csrf = dashboard(service, cid)
    for path, data in (("state", {"state": "closed"}), ("delete", {})):
        r = service.client.post(f"/admin/campaigns/{cid}/{path}", data=data | {"csrf": "0" * 64})
        assert r.status_code == 403
    assert state_of(service, cid) == "running"
    r = service.client.post(f"/admin/campaigns/{cid}/delete", data={"csrf": csrf})
    assert r.status_code == 409 and f'id="state-error">campaign {cid} is running; close it before deleting it</p>' in r.text
    service.admin("POST", f"/api/campaigns/{cid}", json={"state": "closed"})
    r = service.client.post(f"/admin/campaigns/{cid}/delete", data={"csrf": csrf}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/admin"
    assert service.client.get(f"/admin/campaigns/{cid}").status_code == 404 and rows(service, cid)["campaigns"] == 0


def test_the_campaign_list_hides_archived_ones_unless_asked(service):
    shown, archived, paused = in_state(service, "running"), in_state(service, "archived"), in_state(service, "paused")
    login(service)
    page = service.client.get("/admin").text
    assert f'data-campaign="{shown}"' in page and f'data-campaign="{archived}"' not in page
    assert '1 archived campaign hidden. <a href="/admin?archived=1">Show archived</a>' in page
    assert f'data-campaign="{paused}"' in page and '<span class="tag state-tag paused">paused</span>' in page
    page = service.client.get("/admin?archived=1").text
    assert f'data-campaign="{archived}"' in page and '<a href="/admin">Hide archived</a>' in page
    assert '<span class="tag state-tag archived">archived</span>' in page
