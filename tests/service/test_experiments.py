"""The online-experiment API through :mod:`irbandits.client`: every route, every refusal, restarts."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from irbandits.client import Client, ServiceError
from irbandits.dueling import parse_spec
from irbandits.service.experiment_runtime import algorithm_seed

from .conftest import ADMIN

RANKERS = ["bm25", "neural", "mixed", "random"]


def organiser(service) -> Client:
    return Client("", ADMIN, http=service.client)


def experiment(service, algorithm="RUCB", comparison="team-draft", rankers=RANKERS, **kw) -> tuple[int, Client]:
    """A new experiment and a client (front end) with its own token."""
    org = organiser(service)
    eid = org.create_experiment("exp", rankers, algorithm, comparison, seed=kw.pop("seed", 5), **kw)
    return eid, Client("", org.add_client(eid, "front end")["token"], http=service.client)


def status(call) -> int:
    with pytest.raises(ServiceError) as exc:
        call()
    return exc.value.status


def ranking(name: str) -> list[str]:
    """Each ranker's top 5: 'bm25' and 'neural' share d0."""
    return {"bm25": ["d0", "d1", "d2", "d3", "d4"], "neural": ["d0", "n1", "n2", "n3", "n4"],
            "mixed": ["d1", "n1", "m2", "m3", "m4"], "random": ["r0", "r1", "r2", "r3", "r4"]}[name]


def cycle(front: Client, eid: int, rng: np.random.Generator, best: str = "neural") -> str | None:
    """One impression -> lists -> clicks, the user clicking the first result that ``best`` ranks."""
    imp = front.impression(eid)
    a, b = imp["rankers"]
    shown = front.lists(imp["impression"], {a: ranking(a), b: ranking(b)})
    assert sorted(set(shown)) == sorted(shown) and set(shown) <= set(ranking(a)) | set(ranking(b))
    good = [p for p, d in enumerate(shown) if d in ranking(best)]
    clicks = good[:1] if good and rng.random() < 0.9 else [int(rng.integers(len(shown)))]
    return front.clicks(imp["impression"], clicks)


def test_click_cycle_credits_the_clicked_team_and_state_counts(service):
    eid, front = experiment(service)
    imp = front.impression(eid)
    a, b = imp["rankers"]
    assert a in RANKERS and b in RANKERS and a != b
    la, lb = ["x1", "x2", "x3"], ["y1", "y2", "y3"]
    shown = front.lists(imp["impression"], {a: la, b: lb})
    assert shown[:2] in (["x1", "y1"], ["y1", "x1"]) and len(shown) >= 4 and set(shown) <= set(la + lb)
    winner = front.clicks(imp["impression"], [shown.index("y1")])
    assert winner == b
    s = front.experiment(eid)
    assert (s["impressions"], s["outcomes"], s["expired"], s["open"]) == (1, 1, 0, 0)
    assert s["recommended"] in RANKERS and s["algorithm"] == "RUCB" and s["comparison"] == "team-draft"
    by_name = {r["name"]: r for r in s["rankers"]}
    assert by_name[b]["wins"] == 1 and by_name[a]["wins"] == 0 and by_name[a]["comparisons"] == 1
    assert s["matrix"]["wins"][RANKERS.index(b)][RANKERS.index(a)] == 1
    assert [h["outcomes"] for h in s["history"]] == [1]
    assert organiser(service).experiments() == [dict(id=eid, name="exp", state="running", algorithm="RUCB", rankers=4,
                                                     learner=False)]


def test_the_service_drives_the_librarys_algorithm_with_the_simulations_seed(service):
    """Every pair the service hands out is the one the library's object picks, fed the same outcomes."""
    eid, front = experiment(service, "MergeDTS:tuned", rankers=[f"r{i}" for i in range(6)], seed=11)
    twin = parse_spec("MergeDTS:tuned").make(6, seed=algorithm_seed(11))
    for n in range(60):
        imp = front.impression(eid)
        c, d = (int(x[1:]) for x in imp["rankers"])
        assert (c, d) == twin.select()
        winner = imp["rankers"][0] if min(c, d) == c else imp["rankers"][1]
        front.vote(imp["impression"], winner)
        twin.update(c, d, winner == imp["rankers"][0])
    assert front.experiment(eid)["recommended"] == f"r{twin.recommend()}"


def test_votes_give_a_leaderboard_matrix_and_a_settled_recommendation(service):
    eid, front = experiment(service, "RUCB", rankers=["a", "b", "c"])
    strength = {"a": 3.0, "b": 1.0, "c": 0.2}
    rng = np.random.default_rng(0)
    unsettled = []
    for n in range(600):
        imp = front.impression(eid)
        x, y = imp["rankers"]
        if x == y:
            front.vote(imp["impression"], "tie")
        else:
            front.vote(imp["impression"], x if rng.random() < strength[x] / (strength[x] + strength[y]) else y)
        if n in (10, 599):
            unsettled.append(not front.experiment(eid)["settled"])
    s = front.experiment(eid)
    assert s["recommended"] == "a" and unsettled == [True, False] and s["arms_left"] == 3
    board = s["leaderboard"]
    assert [r["name"] for r in board] == ["a", "b", "c"]
    assert all(r["low"] <= r["score"] <= r["high"] for r in board) and board[0]["low"] > board[2]["high"]
    W = np.array(s["matrix"]["wins"])
    assert W.sum() + sum(r["ties"] for r in s["rankers"]) // 2 == s["outcomes"] - (s["duels"] - np.array(s["matrix"]["comparisons"]).sum() // 2)
    assert (np.array(s["matrix"]["comparisons"]) == (W + W.T)).all()   # no ties among different rankers here


def test_refusals(service):
    eid, front = experiment(service)
    other, stranger = experiment(service)
    c = service.client
    assert c.post(f"/api/experiments/{eid}/impressions", json={}).status_code == 401
    assert c.post(f"/api/experiments/{eid}/impressions", json={},
                  headers={"Authorization": "Bearer nope"}).status_code == 401
    assert status(lambda: stranger.impression(eid)) == 404          # another experiment's token
    assert status(lambda: stranger.experiment(eid)) == 404
    assert status(lambda: front.create_experiment("x", RANKERS, "RUCB")) == 401
    assert status(lambda: front.add_client(eid, "x")) == 401
    org = organiser(service)
    assert status(lambda: org.create_experiment("x", RANKERS, "NoSuchAlgo")) == 422
    assert status(lambda: org.create_experiment("x", RANKERS, "RUCB:alpha=-1")) == 422
    assert status(lambda: org.create_experiment("x", RANKERS, "MergeDTS")) == 422     # needs a horizon
    assert org.create_experiment("x", RANKERS, "MergeDTS", horizon=1000) > 0
    assert status(lambda: org.create_experiment("x", RANKERS, "RUCB", comparison="zipper")) == 422
    assert status(lambda: org.create_experiment("x", ["a", "a"], "RUCB")) == 422
    assert status(lambda: org.experiment(999)) == 404 and status(lambda: org.impression(999)) == 404

    imp = front.impression(eid)
    iid, (a, b) = imp["impression"], imp["rankers"]
    assert status(lambda: stranger.lists(iid, {a: ["x"], b: ["y"]})) == 404
    assert status(lambda: front.lists(iid, {a: ["x"], b: ["y"], "ghost": ["z"]})) == 422   # unknown ranker
    assert status(lambda: front.lists(iid, {a: ["x"]} if a != b else {})) == 422          # one missing
    assert status(lambda: front.lists(iid, {a: ["x", "x"], b: ["y"]})) == 422             # duplicates
    assert status(lambda: front.lists(iid, {a: [f"x{i}" for i in range(11)], b: ["y"]})) == 422  # over 10
    assert status(lambda: front.clicks(iid, [0])) == 409                                  # no list yet
    shown = front.lists(iid, {a: ["x1", "x2"], b: ["y1", "y2"]})
    assert status(lambda: front.lists(iid, {a: ["x1"], b: ["y1"]})) == 409                # list given already
    assert status(lambda: front.clicks(iid, [len(shown)])) == 422                         # outside the list
    assert status(lambda: front.clicks(iid, [-1])) == 422
    assert status(lambda: front.vote(iid, "nobody")) == 422
    assert status(lambda: stranger.clicks(iid, [0])) == 404
    front.clicks(iid, [0])
    assert status(lambda: front.clicks(iid, [1])) == 409                                  # second outcome
    assert status(lambda: front.vote(iid, "tie")) == 409
    assert status(lambda: front.lists(999_999, {a: ["x"], b: ["y"]})) == 404

    late = front.impression(eid)["impression"]
    service.clock.now += service.settings.lease_seconds + 1
    assert status(lambda: front.vote(late, "tie")) == 409                                 # expired
    s = front.experiment(eid)
    assert (s["impressions"], s["outcomes"], s["expired"], s["open"]) == (2, 1, 1, 0)
    assert c.post(f"/api/impressions/{late}/vote", content=b"x" * 3_000_000,
                  headers={"Authorization": f"Bearer {ADMIN}"}).status_code == 413


def test_restart_rebuilds_the_uninterrupted_state_and_keeps_open_impressions(service):
    eid, front = experiment(service, "MergeDTS:tuned", rankers=[f"r{i}" for i in range(8)], seed=3)
    rng = np.random.default_rng(1)
    waiting = []
    for n in range(120):
        imp = front.impression(eid)
        a, b = imp["rankers"]
        if n % 7 == 3:                     # left open across the restart, some with their list shown
            shown = front.lists(imp["impression"], {a: ["p", "q"], b: ["q", "s"]}) if n % 2 else None
            waiting.append((imp["impression"], shown))
        else:
            front.vote(imp["impression"], [a, b, "tie"][int(rng.integers(3))])
    live = service.app.state.experiments.experiments[eid]
    before, state_before = live.algo.state, front.experiment(eid)
    service.start()                        # a new app on the same database
    front = Client("", front.headers["Authorization"].split()[1], http=service.client)
    after = service.app.state.experiments.experiments[eid].algo.state
    assert before["params"] == after["params"] and (before["rng"] == after["rng"]).all()
    assert all((before["arrays"][k] == after["arrays"][k]).all() for k in before["arrays"])
    state_after = front.experiment(eid)
    assert state_after == state_before and state_after["open"] == len(waiting)
    for iid, shown in waiting:             # the open impressions still take their outcome, once
        if shown is None:
            front.vote(iid, "tie")
        else:
            assert status(lambda: front.lists(iid, {"x": ["p"]})) in (409, 422)
            front.clicks(iid, [len(shown) - 1])
        assert status(lambda: front.vote(iid, "tie")) == 409
    assert front.experiment(eid)["outcomes"] == 120


def test_concurrent_clients_over_http_each_outcome_applied_once_and_replayed(service, live):
    eid, front = experiment(service, "RUCB")
    token = front.headers["Authorization"].split()[1]
    errors, winners = [], []

    def run(k: int):
        rng = np.random.default_rng(k)
        with Client(live, token) as c:
            for _ in range(25):
                try:
                    winners.append(cycle(c, eid, rng))
                except Exception as exc:  # noqa: BLE001 - collected and asserted below
                    errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    s = front.experiment(eid)
    assert s["impressions"] == s["outcomes"] == 100 and s["open"] == 0
    before = service.app.state.experiments.experiments[eid].algo.state
    service.start()
    after = service.app.state.experiments.experiments[eid].algo.state
    assert (before["rng"] == after["rng"]).all() and (before["arrays"]["W"] == after["arrays"]["W"]).all()


class Injected(Exception):
    """A database failure made up by the test."""


def test_a_failed_write_leaves_the_state_of_the_log(service, monkeypatch):
    """An impression insert that fails after select() ran, and an outcome whose commit reached the
    database but whose answer did not: memory must equal a rebuild from the tables both times."""
    eid, front = experiment(service, "MergeDTS:tuned", rankers=[f"r{i}" for i in range(6)], seed=2)
    log = service.app.state.experiments.log
    real, fail = log.write, {}

    def write(statement, params):
        if fail.get("before") is statement:
            del fail["before"]
            raise Injected("the insert failed")
        row = real(statement, params)
        if fail.get("after") is statement:
            del fail["after"]
            raise Injected("the commit's answer was lost")
        return row

    monkeypatch.setattr(log, "write", write)
    rng = np.random.default_rng(3)

    def play(n: int) -> None:
        for _ in range(n):
            imp = front.impression(eid)
            front.vote(imp["impression"], imp["rankers"][int(rng.integers(2))])

    play(20)
    fail["before"] = log.new_impression
    with pytest.raises(Injected):
        front.impression(eid)
    play(15)                                  # the failed select() is not in memory: the pairs go on as logged
    fail["after"] = log.new_outcome
    imp = front.impression(eid)
    with pytest.raises(Injected):
        front.vote(imp["impression"], "tie")
    assert status(lambda: front.vote(imp["impression"], "tie")) == 409   # it was stored: applied once
    play(15)
    s = front.experiment(eid)
    assert (s["impressions"], s["outcomes"], s["open"]) == (51, 51, 0)
    live = service.app.state.experiments.get(eid).algo.state
    service.start()                           # a fresh rebuild from the tables
    replayed = service.app.state.experiments.get(eid).algo.state
    assert (live["rng"] == replayed["rng"]).all()
    assert all((live["arrays"][k] == replayed["arrays"][k]).all() for k in live["arrays"])


def test_demo_experiment_is_played_once_and_its_page_shows_the_leaderboard(service):
    from irbandits.service.demo import EXPERIMENT, load_demo_experiment

    from .conftest import login

    first, second = load_demo_experiment(service.app, played=80), load_demo_experiment(service.app, played=80)
    assert first["id"] == second["id"] and first["token"] != second["token"]   # one experiment, new tokens
    front = Client("", second["token"], http=service.client)
    s = front.experiment(first["id"])
    assert (s["name"], s["impressions"], s["outcomes"], s["open"]) == (EXPERIMENT, 80, 80, 0)
    assert len(s["leaderboard"]) == 6 and s["recommended"].startswith("arxiv-") and len(s["history"]) == 80
    assert np.array(s["matrix"]["comparisons"]).sum() > 0
    assert login(service).status_code == 303
    page = service.client.get(first["url"])
    assert page.status_code == 200 and EXPERIMENT.replace("?", "") in page.text and "arxiv-1" in page.text
