"""The organiser's pages for an experiment that holds a learner, without a browser: the creation form's
server side (the learner's fields, the rankers' ignored), the list's row and the dashboard."""

from __future__ import annotations

import re

import pytest

from irbandits.client import Client

from .conftest import ADMIN, csrf_of, login, refused_form

FORM = dict(name="learning ranker", kind="learner", learner="PDGD", features="5", seed="3",
            rankers="ignored", algorithm="NoSuchAlgo", comparison="zipper", length="x")   # the rankers' fields: ignored


def experiments(service) -> list[dict]:
    return Client("", ADMIN, http=service.client).experiments()


def test_the_form_creates_a_learner_experiment_and_the_pages_show_it(service):
    login(service)
    page = service.client.get("/admin/experiments")
    assert '<option value="MGD:n=9"' in page.text and '<option value="PDGD" label="Pairwise' in page.text
    r = service.client.post("/admin/experiments", data=FORM | {"csrf": csrf_of(page)}, follow_redirects=False)
    eid = experiments(service)[0]["id"]
    assert r.status_code == 303 and r.headers["location"] == f"/admin/experiments/{eid}"
    state = Client("", ADMIN, http=service.client).experiment(eid)
    assert (state["name"], state["learner"], state["features"], state["seed"]) == ("learning ranker", "PDGD", 5, 3)
    page = service.client.get(f"/admin/experiments/{eid}").text
    assert "<h1>learning ranker</h1>" in page and '<span class="tag">5 features</span>' in page
    assert len(re.findall(r"<svg class=\"weight-bar\"", page)) == 5 and 'id="leaderboard"' not in page
    assert 'id="state">running</span>' in page and 'id="client-name"' in page
    listing = service.client.get("/admin/experiments").text
    assert "<td>learner: PDGD, 5 features</td>" in listing


@pytest.mark.parametrize("change, field, message", [
    ({"learner": "NoSuchLearner"}, "learner", "learner: unknown online learner &#39;NoSuchLearner&#39;"),
    ({"learner": "MGD:n=0"}, "learner", "learner: MGD: parameter n=0 is invalid; n must be 1 to 100"),
    ({"learner": "MGD:n=100000000"}, "learner", "learner: MGD: parameter n=100000000 is invalid; n must be 1 to 100"),
    ({"learner": " "}, "learner", "learner: give the online learner, e.g. PDGD or MGD:n=9"),
    ({"features": ""}, "features", "features: give the number of features of a document, 1 to 1000, got None"),
    ({"features": "2.5"}, "features", "features: give a whole number, got &#39;2.5&#39;"),
    ({"features": "1001"}, "features", "features: give the number of features of a document, 1 to 1000"),
    ({"kind": "both"}, "kind", "kind: give one of rankers, learner, got &#39;both&#39;"),
])
def test_a_bad_learner_field_shows_the_form_again_with_the_problem_and_the_values(service, change, field, message):
    page, marked = refused_form(service, "/admin/experiments", FORM | change, message)
    kept = FORM | change
    assert f'value="{kept["learner"]}"' in page and f'value="{kept["features"]}"' in page
    if field != "kind":
        assert 'name="kind" value="learner" checked' in page
    assert marked == ([field] if field != "kind" else [])
    assert experiments(service) == []
