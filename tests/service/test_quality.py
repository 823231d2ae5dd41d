"""Quality control of judging campaigns: known-answer tests and repeats mixed into the streams, the
signals that catch a random, an always-left and a self-contradicting assessor (and leave careful ones
alone, over many seeds), flags that take answers out of the process and exports and back in, undo."""

from __future__ import annotations

import random

import pytest

from irbandits.errors import IrbanditsError
from irbandits.service.campaign_spec import check_campaign
from irbandits.service.judges import make_judge
from irbandits.service.quality import Signals, Votes, agreement, flag_reason, wilson

from .conftest import Service

TOPICS = 6


def quality_body(seed: int = 0, topics: int = TOPICS, **options) -> dict:
    """Topics of 14 top-grade items (a pruning phase, then the final) and 4 off-topic items (grade 0):
    the qrels give top-vs-off-topic test pairs. Item ``tT-i`` is better the smaller ``i``."""
    lines, texts = [], {}
    for t in range(topics):
        for i in range(18):
            docno = f"t{t}-{i}"
            lines.append(f"{t} 0 {docno} {3 if i < 14 else 0}\n")
            texts[docno] = f"passage {i} of topic {t}"
    return dict(name="quality", kind="preference", topics={str(t): f"question {t}" for t in range(topics)},
                texts=texts, qrels="".join(lines), options={"seed": seed, **options})


def rank(docno: str) -> int:
    return int(docno.split("-")[1])


class Careful:
    """Prefers the better item 90 % of the time; takes 10 s per answer."""
    seconds = 10.0

    def __init__(self, rng: random.Random):
        self.rng = rng

    def __call__(self, topic: str, left: str, right: str) -> str:
        better = "left" if rank(left) < rank(right) else "right"
        return better if self.rng.random() < 0.9 else {"left": "right", "right": "left"}[better]


class Random(Careful):
    seconds = 2.0

    def __call__(self, topic, left, right):
        return self.rng.choice(["left", "right"])


class AlwaysLeft(Careful):
    seconds = 1.0

    def __call__(self, topic, left, right):
        return "left"


class Contradicting(Careful):
    """Careful the first time they see a pair; picks the other item whenever it comes back."""

    def __init__(self, rng):
        super().__init__(rng)
        self.said: dict[tuple, str] = {}

    def __call__(self, topic, left, right):
        key = (topic, min(left, right), max(left, right))
        if key in self.said:
            winner = left if self.said[key] == right else right
        else:
            winner = left if super().__call__(topic, left, right) == "left" else right
        self.said[key] = winner
        return "left" if winner == left else "right"


def run_campaign(service, seed: int, answers: int = 200, topics: int = TOPICS) -> tuple[int, dict[str, int]]:
    """Five careful assessors and one of each bad kind take turns, ``answers`` tasks each at most,
    on the runtime (no HTTP, to keep many seeds fast); returns the campaign and the assessor ids."""
    cid = service.campaign(**quality_body(seed, topics))
    runtime = service.app.state.campaigns.get(cid)
    rng = random.Random(seed)
    kinds = {f"careful{i}": Careful for i in range(5)} | {"random": Random, "left": AlwaysLeft,
                                                         "contradicting": Contradicting}
    people = {name: (service.assessor(cid, name)["id"], kind(rng)) for name, kind in kinds.items()}
    for step in range(answers):
        for name, (aid, assess) in people.items():
            lease = runtime.next_task(aid)
            if lease is None:
                continue
            service.clock.now += assess.seconds
            runtime.answer(aid, lease.id, assess(lease.topic, lease.left, lease.right), f"{step}")
    return cid, {name: aid for name, (aid, _) in people.items()}


# ----- the rule and its parts --------------------------------------------------------------------
def test_wilson_interval_and_flag_rule():
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(8, 10, z=1.96)
    assert 0.49 < low < 0.5 and 0.94 < high < 0.95          # the textbook 95 % interval 0.490-0.943
    assert wilson(8, 10)[0] < low                            # the rule's is the 99 % interval
    assert flag_reason(Signals(tests=4, correct=0), 0.75, 0.5) is None   # too few to tell
    assert "test accuracy 0/5" in flag_reason(Signals(tests=5, correct=0), 0.75, 0.5)
    assert flag_reason(Signals(tests=20, correct=13), 0.75, 0.5) is None  # 65 % could still be 75 %
    assert "test accuracy 8/20" in flag_reason(Signals(tests=20, correct=8), 0.75, 0.5)
    assert "consistency on repeated pairs 1/12 is below 50%" in flag_reason(Signals(repeats=12, consistent=1), 0.75, 0.5)
    assert flag_reason(Signals(repeats=40, consistent=22), 0.75, 0.5) is None  # wavering on near ties is no flag
    assert "agreement" in flag_reason(Signals(compared=30, agreed=5), 0.75, 0.5)
    assert "answers left 20/20" in flag_reason(Signals(answers=20, left=20), 0.75, 0.5)
    assert "answers right" in flag_reason(Signals(answers=30, left=0), 0.75, 0.5)
    assert flag_reason(Signals(answers=30, left=16, tests=10, correct=9, repeats=5, consistent=4), 0.75, 0.5) is None


def test_agreement_with_the_majority_and_campaign_alpha():
    votes, signals = Votes(), {}
    for who, won in [(1, "a"), (2, "a"), (3, "b"), (4, "a")]:
        votes.add(("q", "a", "b"), who, won, signals)
    # each against the others: 1, 2, 4 agree with a majority "a"; 3 disagrees
    assert [(signals[w].agreed, signals[w].compared) for w in (1, 2, 3, 4)] == [(1, 1), (1, 1), (0, 1), (1, 1)]
    votes.remove(("q", "a", "b"), 4, "a", signals)  # 1 and 2 now face a 1-1 tie: not counted
    assert [(signals[w].agreed, signals[w].compared) for w in (1, 2, 3, 4)] == [(0, 0), (0, 0), (0, 1), (0, 0)]
    perfect = Votes()
    for k in range(10):
        for who in range(3):
            perfect.add(("q", f"x{k}", f"y{k}"), who, f"x{k}" if k % 2 else f"y{k}", {})
    a = agreement(perfect)
    assert a["alpha"] == 1.0 and a["rate"] == 1.0 and a["units"] == 10 and a["pairs"] == 30
    coin, rng = Votes(), random.Random(1)
    for k in range(400):
        for who in range(3):
            coin.add(("q", f"x{k}", f"y{k}"), who, rng.choice([f"x{k}", f"y{k}"]), {})
    a = agreement(coin)
    assert abs(a["alpha"]) < 0.1 and a["low"] < 0.5 < a["high"]


def test_test_pairs_from_qrels_or_uploaded():
    fields = check_campaign(quality_body())
    assert len(fields["tests"]) == TOPICS * 10
    assert all(rank(better) < 14 <= rank(worse) for _, better, worse in fields["tests"])
    assert {d for _, a, b in fields["tests"] for d in (a, b)} <= set(fields["texts"])  # off-topic texts kept
    fields = check_campaign(quality_body() | dict(tests=[["0", "t0-1", "t0-16"]]))
    assert fields["tests"] == [["0", "t0-1", "t0-16"]]
    with pytest.raises(IrbanditsError, match=r"tests\[0\]: no text for document nope"):
        check_campaign(quality_body() | dict(tests=[["0", "t0-1", "nope"]]))
    with pytest.raises(IrbanditsError, match=r"tests\[0\]: topic 9 has no judging pool"):
        check_campaign(quality_body() | dict(tests=[["9", "t0-1", "t0-2"]]))


# ----- scripted assessors ------------------------------------------------------------------------
def test_checks_are_mixed_at_the_rate_and_kept_out_of_the_process(service):
    cid, ids = run_campaign(service, seed=0, answers=60)
    runtime = service.app.state.campaigns.get(cid)
    careful = runtime.signals[ids["careful0"]]
    checks = careful.tests + careful.repeats
    assert careful.answers == 60 and abs(checks - 60 * 3 / 13) <= 1 and careful.repeats >= 3
    exported = service.admin("GET", f"/api/campaigns/{cid}/judgments").text.splitlines()
    targets = [j for j in runtime.log if j.kind == "answer" and j.assessor_id not in runtime.flagged]
    assert len(exported) == len(targets) == sum(runtime.per_topic.values())
    fresh = make_judge("preference", runtime.pools, runtime.options)
    for j in targets:
        fresh.apply(j.topic, j.left, j.right, j.winner)
    assert fresh.state() == runtime.judge.state()
    listed = {a["name"]: a for a in service.admin("GET", f"/api/campaigns/{cid}/assessors").json()}
    assert listed["careful0"]["median_seconds"] == 10.0 and listed["left"]["left_share"] == 1.0


def stream(kind: str, rng: random.Random, answers: int, rate: float = 3 / 13) -> int | None:
    """The answer at which the flag rule catches a scripted assessor whose checks come as the service
    mixes them (a check while checks < rate x answers, every third a repeat), or None."""
    s = Signals()
    for i in range(answers):
        checks = s.tests + s.repeats
        check = checks < rate * (s.answers + 1)
        better_left = rng.random() < 0.5
        right = {"careful": rng.random() < 0.9, "contradicting": rng.random() < 0.9,
                 "random": rng.random() < 0.5, "left": better_left}[kind]
        s.answers += 1
        s.left += right == better_left
        if check and checks % 3 == 2:  # a repeat of an earlier pair, sides swapped
            first = {"careful": rng.random() < 0.9, "random": rng.random() < 0.5}.get(kind, not right)
            s.repeats += 1
            s.consistent += first == right
        elif check:
            s.tests += 1
            s.correct += right
        if flag_reason(s, 0.75, 0.5):
            return i + 1
    return None


def test_flag_rule_over_many_seeds():
    """Measured over 2,000 streams of 500 answers: careful assessors (90 % right) flagged in 0.05 %, a
    random one caught in 99.5 % (median at answer 95), always-left in all by answer 20, a
    self-contradicting one in all (median at answer 86). Here 250 streams of 500 answers."""
    rng = random.Random(7)
    runs = 250
    found = {kind: [stream(kind, rng, 500) for _ in range(runs)]
             for kind in ("careful", "random", "left", "contradicting")}
    assert sum(x is not None for x in found["careful"]) <= 1
    assert sum(x is not None for x in found["random"]) >= runs - 5
    assert all(x is not None and x <= 20 for x in found["left"])
    assert all(x is not None and x <= 120 for x in found["contradicting"])


@pytest.mark.slow
@pytest.mark.parametrize("settings", ["sqlite"], indirect=True)
def test_bad_assessors_are_caught_and_careful_ones_are_not_in_campaigns(service):
    """Whole campaigns (20 topics, 300 answers each): left, contradicting and random flagged with
    their reason, five careful assessors not, in each of three seeds."""
    for seed in range(3):
        cid, ids = run_campaign(service, seed, answers=300, topics=20)
        listed = {a["name"]: a for a in service.admin("GET", f"/api/campaigns/{cid}/assessors").json()}
        assert not any(listed[f"careful{i}"]["flagged"] for i in range(5)), (seed, listed)
        assert "answers left" in listed["left"]["reason"]
        assert "consistency" in listed["contradicting"]["reason"]
        assert "test accuracy" in listed["random"]["reason"]


def test_flag_and_clear_rebuild_the_process_from_the_log(service):
    cid, ids = run_campaign(service, seed=3, answers=80)
    runtime = service.app.state.campaigns.get(cid)
    assert ids["left"] in runtime.flagged
    state_flagged = runtime.judge.state()
    lines = service.admin("GET", f"/api/campaigns/{cid}/judgments").text.splitlines()
    assert not any(line.split()[4] in {str(a) for a in runtime.flagged} for line in lines)
    r = service.admin("POST", f"/api/campaigns/{cid}/assessors/{ids['left']}", json={"flagged": False})
    assert r.status_code == 200 and ids["left"] not in runtime.flagged and ids["left"] in runtime.trusted
    lines_cleared = service.admin("GET", f"/api/campaigns/{cid}/judgments").text.splitlines()
    assert sum(line.split()[4] == str(ids["left"]) for line in lines_cleared) > 0
    assert runtime.judge.state() != state_flagged
    lease = runtime.next_task(ids["left"])  # trusted: stays unflagged whatever they do
    runtime.answer(ids["left"], lease.id, "left", "more")
    assert ids["left"] not in runtime.flagged
    service.admin("POST", f"/api/campaigns/{cid}/assessors/{ids['left']}", json={"flagged": True})
    assert service.admin("GET", f"/api/campaigns/{cid}/judgments").text.splitlines() == lines
    assert runtime.judge.state() == state_flagged
    state = runtime.judge.state()
    service.start()  # a restart replays the log with the stored flags
    runtime = service.app.state.campaigns.get(cid)
    assert runtime.judge.state() == state and ids["left"] in runtime.flagged
    assert service.admin("POST", f"/api/campaigns/{cid}/assessors/999", json={"flagged": False}).status_code == 404
    quality = service.admin("GET", f"/api/campaigns/{cid}/quality").json()
    assert 0.85 < quality["accuracy"] <= 1 and quality["agreement"]["pairs"] > 0


# ----- undo --------------------------------------------------------------------------------------
def undo(service, who, client_id: str):
    return service.client.post("/api/undo", json={"client_id": client_id},
                               headers={"Authorization": who["Authorization"]})


def test_undo_retracts_the_last_answer_and_gives_the_task_back(service):
    cid = service.campaign(**quality_body(test_rate=0))
    a = service.assessor(cid, "ann")
    runtime = service.app.state.campaigns.get(cid)
    assert undo(service, a, "u0").status_code == 409  # nothing yet
    first = service.next(a).json()
    assert service.answer(a, first["task"], "left", "c1").status_code == 200
    before = runtime.judge.state()
    second = service.next(a).json()
    assert service.answer(a, second["task"], "left", "c2").status_code == 200
    shown = service.next(a).json()  # the page shows the next pair when the assessor clicks undo
    r = undo(service, a, "u1")
    assert r.status_code == 200 and [i["docno"] for i in r.json()["items"]] == [i["docno"] for i in second["items"]]
    assert runtime.judge.state() == before
    assert undo(service, a, "u1").json()["task"] == r.json()["task"]  # the same undo again: no second retraction
    assert undo(service, a, "u2").status_code == 409                   # one step only
    lines = service.admin("GET", f"/api/campaigns/{cid}/judgments").text.splitlines()
    assert len(lines) == 1 and lines[0].split()[:2] == [first["topic"], first["items"][0]["docno"]]
    assert service.answer(a, r.json()["task"], "right", "c3").status_code == 200  # answered again, other way
    assert service.answer(a, shown["task"], "left", "c4").status_code in (404, 409)  # that lease went back
    state = runtime.judge.state()
    service.start()
    assert service.app.state.campaigns.get(cid).judge.state() == state
    listed = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    assert listed[0]["judgments"] == 2
    log = [line.split() for line in service.admin("GET", f"/api/campaigns/{cid}/judgments?log=1").text.splitlines()]
    assert [x[-1] for x in log] == ["answer", "answer", "retract", "answer"]   # append-only: nothing deleted


def test_undo_is_refused_once_the_phase_is_closed(service):
    body = quality_body(test_rate=0)
    body["qrels"] = "".join(line for line in body["qrels"].splitlines(True) if line.startswith("0 ")
                            and rank(line.split()[2]) < 3)  # one topic, 3 items: one final phase of 3 pairs
    cid = service.campaign(**body)
    a = service.assessor(cid, "ann")
    for n in range(3):
        task = service.next(a).json()
        service.answer(a, task["task"], "left", f"c{n}")
    assert service.next(a).status_code == 204
    r = undo(service, a, "u")
    assert r.status_code == 409 and "phase that asked for it is closed" in r.json()["detail"]


# ----- settled topics ----------------------------------------------------------------------------
def test_routing_and_stopping_settled_topics(service):
    body = quality_body(test_rate=0, stop_settled=1, topics=3)
    body["qrels"] = "".join(line for line in body["qrels"].splitlines(True)
                            if rank(line.split()[2]) < (9 if line.startswith("0 ") else 4 if line.startswith("1 ") else 3))
    cid = service.campaign(**body)            # final phases: 36, 6 and 3 pairs
    runtime = service.app.state.campaigns.get(cid)
    assert [t for t, *_ in runtime.judge.requests()][:1] == ["0"]    # the topic with most open requests first
    a = service.assessor(cid, "ann")
    answers = 0
    while (r := service.next(a)).status_code == 200:
        left, right = (i["docno"] for i in r.json()["items"])
        service.answer(a, r.json()["task"], "left" if rank(left) < rank(right) else "right", f"c{answers}")
        answers += 1
    p = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert p["done"] and p["settled"] == 3 and answers == p["judgments"] < 36 + 6 + 3
    assert p["saved"] == 36 + 6 + 3 - answers == sum(t["saved"] for t in p["topics"])
    best = service.admin("GET", f"/api/campaigns/{cid}/qrels?best=1").text.split()
    assert best[2::4] == ["t0-0", "t1-0", "t2-0"]


# ----- automatic assessors -----------------------------------------------------------------------
AUTOMATIC = '''
import random
import re

_rng = random.Random(0)


def _rank(text):
    return int(re.search(r"passage (\\d+) ", text).group(1))


def oracle(topic, query, left, right):
    """Grade first (items 0-13 have grade 3, the rest 0), then the lower number."""
    key = lambda text: (_rank(text) >= 14, _rank(text))
    return "left" if key(left) < key(right) else "right"


def noisy(topic, query, left, right):
    side = oracle(topic, query, left, right)
    return side if _rng.random() < 0.7 else {"left": "right", "right": "left"}[side]
'''


def wait_done(service, cid: int, seconds: float = 60) -> dict:
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        p = service.admin("GET", f"/api/campaigns/{cid}").json()
        if p["done"]:
            return p
        time.sleep(0.1)
    raise AssertionError(f"campaign {cid} not done in {seconds} s: {p}")


@pytest.fixture
def automatic(settings, tmp_path, monkeypatch):
    """A service whose starter registered ``oracle`` and ``noisy`` (``serve --assessor NAME=module:function``)."""
    (tmp_path / "auto_judges.py").write_text(AUTOMATIC)
    monkeypatch.syspath_prepend(str(tmp_path))
    settings.assessors = {"oracle": "auto_judges:oracle", "noisy": "auto_judges:noisy"}
    service = Service(settings)
    yield service
    service.client.close()
    service.app.state.campaigns.stop()
    service.app.state.engine.dispose()


@pytest.mark.parametrize("settings", ["sqlite"], indirect=True)
def test_automatic_assessors_answer_a_campaign_and_are_marked_in_exports(automatic):
    service = automatic
    cid = service.campaign(**quality_body(topics=2, audit=0))   # no people: nobody to audit them
    ids = []
    for name in ("llm1", "llm2"):  # the final phase asks again for pairs judged when pruning: two are needed
        r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": name, "automatic": "oracle"})
        assert r.status_code == 201
        ids.append(r.json()["id"])
    p = wait_done(service, cid)
    lines = [line.split() for line in service.admin("GET", f"/api/campaigns/{cid}/judgments").text.splitlines()]
    assert len(lines) == p["judgments"] > 0 and {int(line[4]) for line in lines} == set(ids)
    assert service.admin("GET", f"/api/campaigns/{cid}/qrels?best=1").text.split()[2::4] == ["t0-0", "t1-0"]
    listed = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    assert listed[0]["automatic"] == "oracle" and listed[0]["accuracy"] == 1.0 and not listed[0]["flagged"]

    cid = service.campaign(**quality_body(topics=2, audit=0))
    for name, spec in (("cheap", "noisy"), ("llm1", "oracle"), ("llm2", "oracle")):
        service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": name, "automatic": spec})
    wait_done(service, cid)
    cheap, *llms = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    # the three threads race for the work, so one oracle may finish before any check reached it
    assert cheap["tests"] >= 5 and 0.3 < cheap["accuracy"] < 1 and sum(x["tests"] for x in llms) > 0
    assert all(x["accuracy"] == 1 for x in llms if x["tests"])
    assert service.admin("GET", "/api/automatic-assessors").json() == ["coin", "left", "lexical", "noisy", "oracle"]
    for spec in ("auto_judges:oracle", "nope"):   # only registered names: a module:function is not imported
        r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "bad", "automatic": spec})
        assert r.status_code == 422 and f"no automatic assessor is registered as {spec!r}" in r.json()["detail"]


@pytest.mark.parametrize("settings", ["sqlite", "postgresql"], indirect=True)
def test_an_unsure_automatic_assessor_skips_and_its_pairs_go_to_people(settings):
    import time

    settings.assessors = {"doubter": lambda topic, query, left, right: "unsure"}   # as serve --llm registers one
    service = Service(settings)
    try:
        cid = service.campaign(**quality_body(topics=1, test_rate=0))   # no checks: every task is a request
        open_requests = service.admin("GET", f"/api/campaigns/{cid}").json()["requests"]
        r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "llm", "automatic": "doubter"})
        assert r.status_code == 201
        deadline = time.monotonic() + 60
        while len(reports := service.admin("GET", f"/api/campaigns/{cid}/reports").json()) < open_requests:
            assert time.monotonic() < deadline, reports
            time.sleep(0.05)
        assert {(x["reason"], x["comment"], x["name"]) for x in reports} == {("cant-judge", "automatic assessor unsure", "llm")}
        assert service.admin("GET", f"/api/campaigns/{cid}").json()["judgments"] == 0
        ann = service.assessor(cid, "ann")
        task = service.next(ann).json()                     # every pair it declined is open to people
        assert {i["docno"] for i in task["items"]} in [set(x["docnos"]) for x in reports]
    finally:
        service.client.close()
        service.app.state.campaigns.stop()
        service.app.state.engine.dispose()
