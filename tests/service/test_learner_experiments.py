"""Online experiments that hold a learner (:mod:`irbandits.service.learner_runtime`), through
:mod:`irbandits.client`: the learner learns the users' ranker, the service drives the library's learner
with per-impression generators, lists wait for their clicks side by side, a restart replays the same
state, and every malformed impression or click is refused without touching it."""

from __future__ import annotations

import numpy as np
import pytest

from irbandits.client import Client, ServiceError
from irbandits.oltr.base import parse_learner
from irbandits.service.experiment_runtime import algorithm_seed, impression_rng

from .conftest import ADMIN

W = np.array([1.0, 0.5, 0.0, -0.5, -1.0])   # the users' hidden ranker: they click its best document


def learner_experiment(service, learner="PDGD", features=5, seed=3) -> tuple[int, Client]:
    org = Client("", ADMIN, http=service.client)
    eid = org.create_experiment("learner", learner=learner, features=features, seed=seed)
    return eid, Client("", org.add_client(eid, "front end")["token"], http=service.client)


def candidates(rng: np.random.Generator, n: int = 20) -> tuple[list[str], np.ndarray]:
    return [f"d{j}" for j in range(n)], rng.normal(size=(n, len(W)))


def best_clicks(shown: list[str], documents: list[str], X: np.ndarray) -> list[int]:
    """The user clicks the hidden ranker's best document where it is in the list (if it is)."""
    best = documents[int(np.argmax(X @ W))]
    return [p for p, d in enumerate(shown) if d == best]


def status(call) -> int:
    with pytest.raises(ServiceError) as exc:
        call()
    return exc.value.status


@pytest.mark.parametrize("learner", ["PDGD", "DBGD", "MGD:n=4"])
def test_the_learner_learns_the_users_ranker_through_the_api(service, learner):
    eid, front = learner_experiment(service, learner)
    rng = np.random.default_rng(0)
    top = []   # whether the best document was shown first
    for _ in range(400):
        documents, X = candidates(rng)
        imp = front.impression(eid, documents, X)
        shown = imp["list"]
        assert len(shown) == 10 and len(set(shown)) == 10 and set(shown) <= set(documents)
        clicks = best_clicks(shown, documents, X)
        top.append(clicks == [0])
        assert front.clicks(imp["impression"], clicks) is None
    s = front.experiment(eid)
    assert (s["impressions"], s["outcomes"], s["open"], s["learner"], s["features"]) == (400, 400, 0, learner, 5)
    w = np.array(s["weights"])
    assert w @ W / (np.linalg.norm(w) * np.linalg.norm(W)) > 0.9
    assert np.mean(top[-100:]) > np.mean(top[:100])   # users see the best document first more often
    assert s["updates"] > 0 and len(s["history"]) == 200 and s["history"][-1]["outcomes"] == 400


def test_the_service_drives_the_librarys_learner_one_generator_an_impression(service):
    """Lists shown side by side and answered out of order: the service's learner equals the library's
    learner driven with ``show(X, rng=impression_rng(seed, 1, seq))`` and ``learn(...,
    rng=impression_rng(seed, 2, seq))`` in the same order."""
    eid, front = learner_experiment(service, "MGD:n=4,update=winner", seed=7)
    cls, params = parse_learner("MGD:n=4,update=winner")
    mirror = cls(5, seed=algorithm_seed(7), **params)
    rng = np.random.default_rng(1)
    waiting, seq = [], 0
    for n in range(120):
        documents, X = candidates(rng)
        imp = front.impression(eid, documents, X)
        seq += 1
        mine = mirror.show(X, rng=impression_rng(7, 1, seq))
        assert imp["list"] == [documents[i] for i in mine.list]
        waiting.append((imp["impression"], mine, best_clicks(imp["list"], documents, X), seq))
        if n % 3 == 2:                                 # answer the middle one of the last three first
            for iid, shown, clicks, at in (waiting.pop(1), waiting.pop(0), waiting.pop(0)):
                front.clicks(iid, clicks)
                seq += 1
                mirror.learn(shown, clicks, rng=impression_rng(7, 2, at))
    served = service.app.state.experiments.get(eid).learner
    assert np.array_equal(served.weights, mirror.weights) and np.any(mirror.weights != 0)


def test_restart_replays_the_same_learner_and_keeps_open_impressions(service):
    eid, front = learner_experiment(service, "DBGD-CPS:candidates=4,history=5", seed=2)
    rng = np.random.default_rng(2)
    waiting = []
    for n in range(80):
        documents, X = candidates(rng, 12 + n % 9)    # queries of different sizes
        imp = front.impression(eid, documents, X)
        if n % 9 == 4:
            waiting.append((imp["impression"], best_clicks(imp["list"], documents, X)))
        else:
            front.clicks(imp["impression"], best_clicks(imp["list"], documents, X))
    expired = front.impression(eid, *candidates(rng))["impression"]
    service.clock.now += 30                                  # half a lease: the others stay open
    state, live = front.experiment(eid), service.app.state.experiments.get(eid).learner.state
    service.start()
    replayed = service.app.state.experiments.get(eid).learner.state
    assert all(np.array_equal(live["arrays"][k], replayed["arrays"][k]) for k in live["arrays"])
    front = Client("", front.headers["Authorization"].split()[1], http=service.client)
    assert front.experiment(eid) == state and state["open"] == len(waiting) + 1
    for iid, clicks in waiting:                             # they still take their clicks, once
        front.clicks(iid, clicks)
        assert status(lambda iid=iid: front.clicks(iid, [])) == 409
    service.clock.now += 31
    assert status(lambda: front.clicks(expired, [0])) == 409
    s = front.experiment(eid)
    assert (s["outcomes"], s["open"], s["expired"]) == (80, 0, 1)


def test_malformed_impressions_and_clicks_are_refused_and_change_nothing(service):
    eid, front = learner_experiment(service)
    rng = np.random.default_rng(3)
    documents, X = candidates(rng)
    head = {"Authorization": front.headers["Authorization"]}

    def refused(body, code=422) -> str:
        r = service.client.post(f"/api/experiments/{eid}/impressions", json=body, headers=head)
        assert r.status_code == code, r.text
        return r.json()["detail"]

    rows = X.tolist()
    assert "features[3]" in refused(dict(documents=documents, features=rows[:3] + [rows[3][:4]] + rows[4:]))
    assert "19 rows for 20 documents" in refused(dict(documents=documents, features=rows[:-1]))
    assert "'d0' is repeated" in refused(dict(documents=documents[:-1] + ["d0"], features=rows))
    assert "documents" in refused(dict(documents=[], features=[]))
    assert "features" in refused(dict(documents=documents, features=[["1"] * 5] * 20))   # strings, not numbers
    r = service.client.post(f"/api/experiments/{eid}/impressions", headers=head | {"Content-Type": "application/json"},
               content=b'{"documents": ["a"], "features": [[1, 2, NaN, 4, 5]]}')
    assert r.status_code == 422 and "not finite" in r.json()["detail"]
    assert refused({}) == "documents: Field required; features: Field required"
    over = dict(documents=[f"x{i}" for i in range(1001)], features=[[0.0] * 5] * 1001)
    assert "1 to 1000" in refused(over)
    service.settings.max_impression_bytes = 1000
    service.start()
    assert refused(dict(documents=documents, features=rows), 413)
    service.settings.max_impression_bytes = 4 * 1024 * 1024
    service.start()
    front = Client("", head["Authorization"].split()[1], http=service.client)
    imp = front.impression(eid, documents, X)
    iid = imp["impression"]
    assert status(lambda: front.clicks(iid, [10])) == 422              # the list has 10 results
    assert status(lambda: front.vote(iid, "tie")) == 422
    assert status(lambda: front.lists(iid, {"a": ["d0"]})) == 422
    s = front.experiment(eid)
    assert (s["impressions"], s["outcomes"], s["open"]) == (1, 0, 1)
    front.clicks(iid, [0, 0, 2])
    assert status(lambda: front.clicks(iid, [1])) == 409
    org = Client("", ADMIN, http=service.client)
    for body, field in [(dict(name="x", learner="NoSuch", features=5), "learner: "),
                        (dict(name="x", learner="PDGD", features=0), "features: "),
                        (dict(name="x", learner="PDGD:learning_rate=-1", features=5), "learner: "),
                        (dict(name="x", learner="PDGD-NN", features=5), "learner: PDGD-NN ranks with a neural"),
                        (dict(name="x", learner="MGD:n=100000000", features=5), "n must be 1 to 100"),
                        (dict(name="x", learner="PDGD:length=1000000000", features=5), "length must be 1 to 1000"),
                        (dict(name="x", learner="DBGD-CPS:candidates=100000000", features=5), "must be 1 to 100"),
                        (dict(name="x", learner="PDGD:learning_rate=1e999", features=5), "a finite number"),
                        (dict(name="x", learner="PDGD", features=5, rankers=["a", "b"]), "rankers: "),
                        (dict(name="x", rankers=["a", "b"]), "algorithm: ")]:
        with pytest.raises(ServiceError) as exc:
            org._call("POST", "/api/experiments", json=body)
        assert exc.value.status == 422 and field in exc.value.detail, exc.value.detail
    assert [e["learner"] for e in org.experiments()] == [True]
