"""Graded campaigns with ``budget_split=global``: budget times topics judgments over all topics, moved by
the bandit over topics to the topics still yielding relevant documents, the same after a restart."""

from __future__ import annotations

import pytest

from irbandits.service.campaign_spec import check_options

from .conftest import graded_body


def test_check_options_knows_the_budget_split():
    assert check_options("graded", {})["budget_split"] == "per-topic"
    assert check_options("graded", {"budget_split": "global:w=2,min=1"})["budget_split"] == "global:w=2,min=1"


def test_a_global_split_moves_the_budget_to_the_topic_that_yields(service):
    cid = service.campaign(**graded_body(budget=2, budget_split="global:w=1,min=1"))
    a, b, c = (service.assessor(cid, n) for n in "abc")
    ta, tb = service.next(a).json(), service.next(b).json()
    assert {ta["topic"], tb["topic"]} == {"1", "2"}                    # one judgment handed out per topic first
    assert service.next(c).status_code == 204
    grade = {"1": 3, "2": 0}                                           # topic 1 yields, topic 2 does not
    for who, task in ((a, ta), (b, tb)):
        assert service.answer(who, task["task"], grade[task["topic"]], f"{who['id']}-0").status_code == 200
    n = 0
    while (r := service.next(c)).status_code == 200:
        assert r.json()["topic"] == "1"
        assert service.answer(c, r.json()["task"], 3, f"c{n}").status_code == 200
        n += 1
    p = service.admin("GET", f"/api/campaigns/{cid}").json()
    assert p["done"] and [t["judgments"] for t in p["topics"]] == [3, 1]   # 2 x 2 topics, three to topic 1
    state = service.app.state.campaigns.get(cid).judge.state()
    service.start()
    assert service.app.state.campaigns.get(cid).judge.state() == state


@pytest.mark.parametrize("split", ["halves", "global:w=0", "global:x=1"])
def test_a_bad_budget_split_is_a_422(service, split):
    r = service.admin("POST", "/api/campaigns", json=graded_body(budget_split=split))
    assert r.status_code == 422 and r.json()["detail"].startswith(f"options: parameter budget_split={split!r} is invalid")
