"""A hybrid campaign (issue 25): an LLM assessor on a stub OpenAI-compatible endpoint answers first,
people get only the pairs it is unsure about and its audits, and when the stub turns random mid-campaign
the checks and audits catch it: its answers stop counting and every new pair goes to people. The
exports name who gave each answer and what each call cost; the cut-off survives a restart."""

from __future__ import annotations

import hashlib
import json
import re
import time

import pytest

from irbandits.judging.hybrid import wilson
from irbandits.judging.llm import parse_llm_spec
from tests.llm_stub import Stub, stronger

from .conftest import Service

TOPICS, ITEMS, OFF = 4, 14, 4   # per topic: 14 top-grade items, 4 off-topic ones (the test pairs' worse side)


def body(**options) -> dict:
    """Item ``tT-i`` is better the smaller ``i``; its text says so to the stub ("strength 100 - i")."""
    lines, texts = [], {}
    for t in range(TOPICS):
        for i in range(ITEMS + OFF):
            lines.append(f"{t} 0 t{t}-{i} {3 if i < ITEMS else 0}\n")
            texts[f"t{t}-{i}"] = f"passage {i} of topic {t}, strength {100 - i}"
    return dict(name="hybrid", kind="preference", topics={str(t): f"question {t}" for t in range(TOPICS)},
                texts=texts, qrels="".join(lines), options=options)


def rank(docno: str) -> int:
    return int(docno.split("-")[1])


def unsure_on_neighbours(prompt: str) -> str:
    """The stub's good phase: right, except on neighbours (strengths 1 apart), where it always says "1"
    (a position bias: the two orders disagree, so the pair is unsure)."""
    first, second = (int(x) for x in re.findall(r"strength (\d+)", prompt)[:2])
    return "1" if abs(first - second) == 1 else stronger(prompt)


def coin(prompt: str) -> str:
    """The stub turned random: "1" or "2" by a hash of the prompt."""
    return "12"[hashlib.sha256(prompt.encode()).digest()[0] & 1]


class People:
    """ann and bob: answer every task they get with the truth, as fast as the test thread runs (two, as
    the final phase asks again for pairs judged when pruning, and nobody gets a pair twice)."""

    def __init__(self, service: Service, cid: int):
        self.service, self.cid = service, cid
        self.who = [service.assessor(cid, name) for name in ("ann", "bob")]

    def work(self, until, seconds: float = 120) -> None:
        """Answer until ``until()`` holds (or the campaign is done); when nothing is open for her, wait for
        the automatic assessor to pass pairs on."""
        deadline = time.monotonic() + seconds
        while not until():
            assert time.monotonic() < deadline, "the campaign stalled"
            me = self.who[0]
            r = self.service.next(me)
            if r.status_code == 204:
                me = self.who[1]
                r = self.service.next(me)
            if r.status_code == 204:
                if self.service.admin("GET", f"/api/campaigns/{self.cid}").json()["done"]:
                    return
                time.sleep(0.01)
                continue
            task = r.json()
            left, right = (i["docno"] for i in task["items"])
            side = "left" if rank(left) < rank(right) else "right"
            assert self.service.answer(me, task["task"], side, f"c-{task['task']}").status_code == 200


def gpt(service: Service, cid: int) -> dict:
    return next(a for a in service.admin("GET", f"/api/campaigns/{cid}/assessors").json() if a["automatic"])


@pytest.mark.parametrize("settings", ["sqlite", "postgresql"], indirect=True)
def test_an_llm_answers_first_people_get_its_unsure_and_audit_pairs_and_a_degraded_llm_is_cut_off(settings):
    with Stub(prefer=unsure_on_neighbours, usage=(120, 1)) as stub:
        name, judge = parse_llm_spec(f"gpt={stub.url},model=stub-7b,price-in=2.5,price-out=10")
        settings.assessors = {name: judge}   # what `irbandits serve --llm` registers
        service = Service(settings)
        try:
            cid = service.campaign(**body(seed=3, audit=0.4, auto_threshold=0.85, test_rate=0.4))
            people = People(service, cid)
            r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": "llm", "automatic": "gpt"})
            assert r.status_code == 201
            llm = r.json()["id"]

            # the good phase: it answers, is unsure on neighbours, and its audits agree with the people
            people.work(lambda: (h := gpt(service, cid)["hybrid"])["counted"] >= 20 and h["audited"] >= 3)
            good = gpt(service, cid)["hybrid"]
            assert good["status"] == "answering" and good["unsure"] > 0 and good["accuracy"] == 1.0
            assert good["agreed"] == good["audited"] and good["checks"] == good["correct"]

            # the stub turns random: its checks and audits catch it
            stub.prefer = coin
            people.work(lambda: gpt(service, cid)["hybrid"]["status"] == "cut off")
            cut = gpt(service, cid)["hybrid"]
            at = cut["cutoff"]   # the score when it was cut off (audits it gave before may still be scored)
            assert at["scored"] >= 5 and wilson(at["right"], at["scored"])[1] < 0.85
            assert "below the threshold 85%" in at["reason"]
            progress = service.admin("GET", f"/api/campaigns/{cid}").json()
            assert progress["for_people"] == progress["requests"] > 0   # every open pair is the people's now
            after = cut["cutoff"]["after"]

            people.work(lambda: False)   # people finish the campaign
            assert service.admin("GET", f"/api/campaigns/{cid}").json()["done"]
            rows = [json.loads(x) for x in service.admin(
                "GET", f"/api/campaigns/{cid}/judgments?format=jsonl").text.splitlines()]
            mine = [x for x in rows if x["assessor"] == llm]
            assert all(x["automatic"] == "gpt" and x["name"] == "llm" for x in mine)
            assert all(x["automatic"] is None and x["name"] in ("ann", "bob") for x in rows if x["assessor"] != llm)
            assert sum(x["id"] > after for x in mine) <= 1   # cut off: at most the answer it was thinking over

            # while it worked, people got only the pairs it passed on: its skips, its audits, and pairs a final
            # phase asks again after it answered them when pruning (nobody gets a pair twice)
            passed, before_cut = set(), []
            for x in rows:
                key = (x["topic"], *sorted(x["docnos"]))
                if x["assessor"] == llm and x["kind"] in ("skip", "audit", "answer"):
                    passed.add(key)
                elif x["kind"] == "answer" and x["id"] < after:
                    before_cut.append(key)
            assert before_cut and all(k in passed for k in before_cut)
            audits = [x for x in mine if x["kind"] == "audit"]
            assert len(audits) >= 3 and {x["kind"] for x in mine} <= {"answer", "audit", "skip", "test", "repeat"}

            # the judgments export: its answers up to the cut-off, and the people's
            lines = [x.split() for x in service.admin("GET", f"/api/campaigns/{cid}/judgments").text.splitlines()]
            counted = [x for x in mine if x["kind"] == "answer" and x["id"] <= after]
            assert sum(int(x[4]) == llm for x in lines) == len(counted) == gpt(service, cid)["hybrid"]["counted"]
            assert {int(x[4]) for x in lines} <= {llm, *(p["id"] for p in people.who)}

            # cost: every call is on a row, and the rows add up to the stub's log and the judge's totals
            calls = sum(x["calls"] for x in mine)
            assert calls == len(stub.log) == judge.usage()["calls"] > 0
            assert sum(x["prompt_tokens"] for x in mine) == 120 * calls
            assert sum(x["completion_tokens"] for x in mine) == calls
            assert sum(x["calls"] + x["cached"] for x in mine) == 2 * len(mine)   # both orders, every pair
            summary = gpt(service, cid)["hybrid"]
            assert summary["usage"]["calls"] == calls
            assert summary["usage"]["cost_usd"] == pytest.approx(calls * (120 * 2.5 + 10) / 1e6)

            # a restart replays the log: the same scores, still cut off
            service.start()
            again = gpt(service, cid)["hybrid"]
            assert again["status"] == "cut off" and again["cutoff"] == summary["cutoff"]
            assert {k: again[k] for k in ("audited", "agreed", "checks", "correct", "counted", "unsure", "usage")} == \
                {k: summary[k] for k in ("audited", "agreed", "checks", "correct", "counted", "unsure", "usage")}
        finally:
            service.client.close()
            service.app.state.campaigns.stop()
            service.app.state.engine.dispose()
