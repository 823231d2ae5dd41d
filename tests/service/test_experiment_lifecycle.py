"""The online-experiment lifecycle (issue 24, item 9), on SQLite and PostgreSQL: running, paused and stopped
experiments through the JSON API, the client and the organiser pages (the lifecycle buttons and the creation
form), what each state does to a front end's calls, and the state kept over a restart and a migration."""

from __future__ import annotations

import re

import pytest
from alembic import command
from alembic.config import Config

from irbandits.client import Client, ServiceError
from irbandits.service.db import MIGRATIONS

from .conftest import ADMIN, csrf_of, login, refused_form

RANKERS = ["bm25", "neural", "mixed"]
# how to bring a new (running) experiment to each state
PATHS = {"running": [], "paused": ["paused"], "stopped": ["stopped"]}
ALLOWED = {("running", "paused"), ("running", "stopped"), ("paused", "running"), ("paused", "stopped")}


def organiser(service) -> Client:
    return Client("", ADMIN, http=service.client)


def move(service, eid: int, state, token: str = ADMIN):
    return service.client.post(f"/api/experiments/{eid}", json={"state": state},
                               headers={"Authorization": f"Bearer {token}"})


def in_state(service, state: str, name: str = "exp") -> tuple[int, Client]:
    """A new experiment moved to ``state``, and a front end with its client token."""
    org = organiser(service)
    eid = org.create_experiment(name, RANKERS, "RUCB", seed=3)
    front = Client("", org.add_client(eid, "web")["token"], http=service.client)
    for step in PATHS[state]:
        assert move(service, eid, step).status_code == 200
    return eid, front


def again(service, front: Client) -> Client:
    """The front end ``front`` on the restarted service."""
    return Client("", front.headers["Authorization"].removeprefix("Bearer "), http=service.client)


def refused(call) -> tuple[int, str]:
    with pytest.raises(ServiceError) as exc:
        call()
    return exc.value.status, exc.value.detail


def shown(front: Client, imp: dict) -> list[str]:
    """Send the impression's two lists; the combined list to show."""
    a, b = imp["rankers"]
    return front.lists(imp["impression"], {a: [f"{a}-1", f"{a}-2"], b: [f"{b}-1", f"{b}-2"]})


def counts(front: Client, eid: int) -> tuple[int, int, int, int]:
    """Impressions, outcomes, the algorithm's duels and the history's length."""
    s = front.experiment(eid)
    return s["impressions"], s["outcomes"], s["duels"], len(s["history"])


# ----- moves -------------------------------------------------------------------------------------
def test_every_allowed_move_is_made_and_every_other_gets_409_naming_both_states(service):
    expected = {"running": "paused or stopped", "paused": "running or stopped"}
    now = {}
    for start in PATHS:
        for target in PATHS:
            eid, _ = in_state(service, start)
            r = move(service, eid, target)
            now[eid] = target if (start, target) in ALLOWED else start
            if (start, target) in ALLOWED:
                assert r.status_code == 200 and r.json() == {"id": eid, "state": target}, (start, target)
            else:
                assert r.status_code == 409, (start, target)
                assert r.json()["detail"] == (
                    f"experiment {eid} is already {start}" if start == target else
                    f"experiment {eid} is stopped, which is final: it cannot move to {target}" if start == "stopped"
                    else f"experiment {eid} is {start}: it can move to {expected[start]}, not to {target}")
            assert service.admin("GET", f"/api/experiments/{eid}").json()["state"] == now[eid]
    listing = organiser(service).experiments()
    assert all(e.keys() == {"id", "name", "state", "algorithm", "rankers", "learner"} for e in listing)
    assert {e["id"]: e["state"] for e in listing} == now and len(now) == 9


@pytest.mark.parametrize("body, message", [
    ({"state": "closed"}, "state: Input should be 'running', 'paused' or 'stopped'"),
    ({"state": None}, "state: Input should be 'running', 'paused' or 'stopped'"),
    ({}, "state: Field required"),
    ({"state": "paused", "name": "x"}, "name: Extra inputs are not permitted"),
])
def test_a_bad_state_body_gets_422_and_changes_nothing(service, body, message):
    eid, _ = in_state(service, "running")
    r = service.admin("POST", f"/api/experiments/{eid}", json=body)
    assert r.status_code == 422 and r.json()["detail"] == message
    assert service.admin("GET", f"/api/experiments/{eid}").json()["state"] == "running"


def test_moves_are_the_organisers_and_need_an_experiment(service):
    eid, front = in_state(service, "running")
    assert service.client.post(f"/api/experiments/{eid}", json={"state": "paused"}).status_code == 401
    assert move(service, eid, "paused", token="not-a-token").status_code == 401
    assert refused(lambda: front.set_experiment_state(eid, "paused"))[0] == 401     # a client token
    for path in (f"/api/experiments/{eid + 1}", f"/api/experiments/{2**40}"):
        r = service.admin("POST", path, json={"state": "paused"})
        assert r.status_code == 404 and r.json()["detail"].startswith("no experiment")
    assert front.experiment(eid)["state"] == "running"


def test_the_client_moves_an_experiment(service):
    eid, front = in_state(service, "running")
    org = organiser(service)
    assert org.set_experiment_state(eid, "paused") == {"id": eid, "state": "paused"}
    assert refused(lambda: org.set_experiment_state(eid, "paused")) == (409, f"experiment {eid} is already paused")
    assert org.set_experiment_state(eid, "running") == {"id": eid, "state": "running"}
    assert org.set_experiment_state(eid, "stopped") == {"id": eid, "state": "stopped"}
    assert front.experiment(eid)["state"] == "stopped"


# ----- what each state does ----------------------------------------------------------------------
def test_paused_refuses_impressions_but_records_the_outcomes_of_earlier_ones(service):
    eid, front = in_state(service, "running")
    clicked, voted = front.impression(eid), front.impression(eid)
    listed = shown(front, clicked)
    before = counts(front, eid)
    assert before == (2, 0, 0, 0)
    assert move(service, eid, "paused").status_code == 200
    assert refused(lambda: front.impression(eid)) == (409, f"experiment {eid} is paused")
    assert refused(lambda: organiser(service).impression(eid)) == (409, f"experiment {eid} is paused")
    # outcomes of impressions issued before the pause: recorded and applied to the algorithm
    assert front.clicks(clicked["impression"], [listed.index(f"{clicked['rankers'][1]}-1")]) == clicked["rankers"][1]
    assert shown(front, voted) and front.vote(voted["impression"], voted["rankers"][0]) == {"recorded": True}
    assert counts(front, eid) == (2, 2, 2, 2)
    board = {r["name"]: r for r in front.experiment(eid)["rankers"]}
    assert board[clicked["rankers"][1]]["wins"] >= 1 and sum(r["comparisons"] for r in board.values()) == 4
    assert refused(lambda: front.impression(eid))[0] == 409 and counts(front, eid)[0] == 2
    assert move(service, eid, "running").status_code == 200                     # resumed: impressions again
    assert front.impression(eid)["rankers"][0] in RANKERS and counts(front, eid) == (3, 2, 2, 2)


def test_stopped_refuses_impressions_and_outcomes_and_stays_readable(service):
    eid, front = in_state(service, "running")
    listed, fresh = front.impression(eid), front.impression(eid)
    shown(front, listed)
    done = front.impression(eid)
    front.vote(done["impression"], "tie")
    assert move(service, eid, "stopped").status_code == 200
    stopped = (409, f"experiment {eid} is stopped")
    assert refused(lambda: front.impression(eid)) == stopped
    assert refused(lambda: front.clicks(listed["impression"], [0])) == stopped
    assert refused(lambda: front.vote(listed["impression"], "tie")) == stopped
    assert refused(lambda: shown(front, fresh)) == stopped
    assert refused(lambda: front.vote(fresh["impression"], "tie")) == stopped
    state = front.experiment(eid)
    assert state["state"] == "stopped" and counts(front, eid) == (3, 1, 1, 1)
    assert [r["name"] for r in state["leaderboard"]] and state["recommended"] in RANKERS
    for target in ("running", "paused"):
        assert move(service, eid, target).status_code == 409
    login(service)
    page = service.client.get(f"/admin/experiments/{eid}")
    assert page.status_code == 200 and 'id="state">stopped</span>' in page.text and buttons(page.text) == []


def test_the_state_survives_a_restart_and_old_databases_upgrade_as_running(service):
    paused, front = in_state(service, "running", "p")
    earlier = front.impression(paused)
    assert move(service, paused, "paused").status_code == 200
    stopped, _ = in_state(service, "stopped", "s")
    running, _ = in_state(service, "running", "r")
    service.start()
    org, front = organiser(service), again(service, front)
    states = {e["id"]: e["state"] for e in org.experiments()}
    assert states == {paused: "paused", stopped: "stopped", running: "running"}
    assert refused(lambda: front.impression(paused)) == (409, f"experiment {paused} is paused")
    assert front.vote(earlier["impression"], "tie") == {"recorded": True}    # issued before the pause and the restart
    assert counts(front, paused) == (1, 1, 1, 1)
    assert refused(lambda: org.impression(stopped)) == (409, f"experiment {stopped} is stopped")
    service.start()                                                          # the outcome is replayed
    org, front = organiser(service), again(service, front)
    assert counts(front, paused) == (1, 1, 1, 1) and front.experiment(paused)["state"] == "paused"
    assert org.set_experiment_state(paused, "running")["state"] == "running" and front.impression(paused)
    # a database of before the lifecycle (0007) keeps its experiments, which come back running
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with service.app.state.engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0007_skips")
    service.start()
    assert [e["state"] for e in organiser(service).experiments()] == ["running"] * 3
    assert organiser(service).impression(stopped)["rankers"][0] in RANKERS


# ----- the organiser's pages ---------------------------------------------------------------------
def buttons(page: str) -> list[str]:
    """The values of the experiment page's state buttons, in order."""
    return re.findall(r'name="state" value="(\w+)"', page)


def test_the_experiment_page_offers_the_allowed_moves_and_makes_them(service):
    eid, front = in_state(service, "running", "arena")
    login(service)
    page = service.client.get(f"/admin/experiments/{eid}").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    assert buttons(page) == ["paused", "stopped"] and 'id="state">running</span>' in page
    assert ('data-confirm="Stop the experiment arena? Front ends get no new impression and their clicks and votes '
            'are refused; a stopped experiment does not run again."') in page
    for state, offered in (("paused", ["running", "stopped"]), ("running", ["paused", "stopped"]), ("stopped", [])):
        r = service.client.post(f"/admin/experiments/{eid}/state", data={"csrf": csrf, "state": state},
                                follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == f"/admin/experiments/{eid}"
        page = service.client.get(f"/admin/experiments/{eid}").text
        assert buttons(page) == offered and f'id="state">{state}</span>' in page
        assert front.experiment(eid)["state"] == state
    r = service.client.post(f"/admin/experiments/{eid}/state", data={"csrf": csrf, "state": "running"})
    assert r.status_code == 409
    assert f'id="state-error">experiment {eid} is stopped, which is final: it cannot move to running</p>' in r.text
    r = service.client.post(f"/admin/experiments/{eid}/state", data={"csrf": csrf, "state": "gone"})
    assert r.status_code == 422 and "state: give one of running, paused, stopped, got &#39;gone&#39;" in r.text
    r = service.client.post(f"/admin/experiments/{eid + 1}/state", data={"csrf": csrf, "state": "paused"})
    assert r.status_code == 404
    listing = service.client.get("/admin/experiments").text
    assert f'<tr data-experiment="{eid}">' in listing
    assert '<span class="tag state-tag stopped">stopped</span>' in listing
    assert '<a href="/admin/experiments" aria-current="page">Experiments</a>' in listing


def test_the_state_buttons_need_the_csrf_token_and_a_session(service):
    eid, front = in_state(service, "running")
    r = service.client.post(f"/admin/experiments/{eid}/state", data={"state": "paused"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/admin/login"
    login(service)
    for csrf in ("0" * 64, None):
        data = {"state": "paused"} | ({"csrf": csrf} if csrf else {})
        assert service.client.post(f"/admin/experiments/{eid}/state", data=data).status_code == 403
    assert front.experiment(eid)["state"] == "running"


FORM = dict(name="ranker arena", rankers="bm25\nneural, mixed\n\n", algorithm="MergeDTS:tuned",
            comparison="balanced", length="20", seed="7", horizon="5000")


def test_the_form_creates_an_experiment_as_the_api_would(service):
    login(service)
    page = service.client.get("/admin/experiments")
    assert '<option value="MergeDTS:tuned"' in page.text and "<option selected>team-draft</option>" in page.text
    r = service.client.post("/admin/experiments", data=FORM | {"csrf": csrf_of(page)}, follow_redirects=False)
    eid = organiser(service).experiments()[0]["id"]
    assert r.status_code == 303 and r.headers["location"] == f"/admin/experiments/{eid}"
    state = organiser(service).experiment(eid)
    assert (state["name"], [x["name"] for x in state["rankers"]], state["algorithm"], state["comparison"],
            state["seed"], state["state"]) == ("ranker arena", ["bm25", "neural", "mixed"], "MergeDTS:tuned",
                                               "balanced@20", 7, "running")
    assert service.app.state.experiments.get(eid).horizon == 5000
    page = service.client.get(f"/admin/experiments/{eid}")
    assert "<h1>ranker arena</h1>" in page.text and '<a href="/admin/experiments" aria-current="page">' in page.text
    # empty optional fields take the API's defaults
    r = service.client.post("/admin/experiments", data=dict(FORM, algorithm="RUCB", comparison="team-draft", length="",
                                                            seed="", horizon="", csrf=csrf_of(page)))
    assert r.status_code == 200 and r.url.path == f"/admin/experiments/{eid + 1}"
    state = organiser(service).experiment(eid + 1)
    horizon = service.app.state.experiments.get(eid + 1).horizon
    assert (state["comparison"], state["seed"], horizon) == ("team-draft", 0, None)


@pytest.mark.parametrize("change, field, message", [
    ({"name": "  "}, "name", "name: String should have at least 1 character"),
    ({"rankers": "bm25, ,"}, "rankers", "rankers: give at least 2 different non-empty names, got [&#39;bm25&#39;]"),
    ({"rankers": "a\na"}, "rankers", "rankers: give at least 2 different non-empty names, got [&#39;a&#39;, &#39;a"),
    ({"algorithm": "NoSuchAlgo"}, "algorithm", "algorithm: unknown algorithm &#39;NoSuchAlgo&#39;"),
    ({"algorithm": "MergeDTS", "horizon": ""}, "algorithm", "algorithm: MergeDTS: epsilon = 1/T needs the horizon T"),
    ({"comparison": "zipper"}, "comparison", "comparison: unknown method &#39;zipper&#39;; known: team-draft, "),
    ({"seed": "1.5"}, "seed", "seed: give a whole number, got &#39;1.5&#39;"),
    ({"seed": "-1"}, "seed", "seed: Input should be greater than or equal to 0"),
    ({"length": "0"}, "length", "length: Input should be greater than or equal to 1"),
    ({"horizon": "x"}, "horizon", "horizon: give a whole number, got &#39;x&#39;"),
    ({"name": "a\x00b"}, "experiment", "experiment[&#39;name&#39;]: the text contains a NUL character"),
])
def test_a_bad_field_shows_the_form_again_with_the_problem_and_the_values(service, change, field, message):
    page, marked = refused_form(service, "/admin/experiments", FORM | change, message)
    kept = FORM | change
    assert f"value=\"{kept['algorithm']}\"" in page and kept["rankers"] in page
    assert f"<option selected>{kept['comparison']}</option>" in page or kept["comparison"] == "zipper"
    assert marked == ([field] if field in FORM else [])
    assert organiser(service).experiments() == []


def test_the_form_needs_the_csrf_token_and_a_session(service):
    r = service.client.post("/admin/experiments", data=FORM, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/admin/login"
    login(service)
    assert service.client.post("/admin/experiments", data=FORM | {"csrf": "0" * 64}).status_code == 403
    assert service.client.post("/admin/experiments", data=FORM).status_code == 403
    assert organiser(service).experiments() == []
