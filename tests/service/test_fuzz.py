"""The whole JSON API fuzzed from its OpenAPI schema (Schemathesis, property-based), on both databases:
whatever a caller sends, no answer is a 500 and none breaks the schema.

Each operation is called with the token its role takes (an assessor's for ``/api/next``, ``/api/undo``,
``/api/tasks/...`` and ``/api/me``, else the organiser's), on a service that holds a preference and a
graded campaign, an assessor with an open task and an experiment with an open impression, so that the
generated ids and bodies reach real objects as well as missing ones. The run is bounded (examples per
operation, derandomized) so that CI repeats it; ``IRBANDITS_FUZZ_EXAMPLES`` asks for a longer one.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings

from .conftest import ADMIN, Service, graded_body, preference_body

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.checks import not_a_server_error, response_schema_conformance  # noqa: E402

EXAMPLES = int(os.environ.get("IRBANDITS_FUZZ_EXAMPLES", "25"))
ASSESSOR_PATHS = ("/api/next", "/api/undo", "/api/tasks/", "/api/me")


@pytest.fixture
def fuzzed(settings):
    """A service with something of every kind in it, and the tokens of its roles."""
    service = Service(settings)
    cid = service.campaign(**preference_body())
    service.campaign(**graded_body())
    who = service.assessor(cid)
    service.next(who)
    eid = service.admin("POST", "/api/experiments", json=dict(name="e", rankers=["a", "b", "c"], algorithm="RUCB",
                                                              comparison="team-draft", seed=1)).json()["id"]
    service.admin("POST", f"/api/experiments/{eid}/impressions", json={})
    yield service, who["Authorization"]
    service.client.close()
    service.app.state.campaigns.stop()
    service.app.state.engine.dispose()


def test_no_request_gets_a_500_or_an_answer_outside_the_schema(fuzzed):
    service, assessor = fuzzed
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", service.app)
    calls, operations = Counter(), 0
    for result in schema.get_all_operations():
        operation = result.ok()
        token = assessor if operation.path.startswith(ASSESSOR_PATHS) else f"Bearer {ADMIN}"
        operations += 1

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def call(case):
            response = case.call_and_validate(headers={"Authorization": token},
                                              checks=[not_a_server_error, response_schema_conformance])
            calls[response.status_code] += 1

        call()
    print(f"fuzzed {operations} operations with {sum(calls.values())} requests: {dict(sorted(calls.items()))}")
    assert operations >= 20 and sum(calls.values()) >= operations * 5 and 500 not in calls
