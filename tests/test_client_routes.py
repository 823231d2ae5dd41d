"""``irbandits.client.Client`` covers the JSON API: every ``/api`` route of the app has a method in
``client.ROUTES``, every entry there is a route of the app, and each method sends the method and path
its entry says (checked on a recording transport, no server)."""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections import defaultdict

import pytest

pytest.importorskip("fastapi")

from irbandits.client import ROUTES, Client  # noqa: E402

ID = 7   # every id argument


def api_routes(tmp_path) -> set[tuple[str, str]]:
    """The app's JSON API as (method, path) pairs, from its OpenAPI schema (FastAPI's placeholders: ``{cid}``)."""
    from irbandits.service.app import create_app
    from irbandits.service.settings import Settings

    app = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'routes.db'}", admin_token="organiser-token-for-tests"))
    try:
        return {(method.upper(), path) for path, ops in app.openapi()["paths"].items() for method in ops}
    finally:
        app.state.campaigns.stop()
        app.state.engine.dispose()


class Answer:
    """A 200 answer with an empty body."""

    status_code, text = 200, ""

    def json(self) -> dict:
        return defaultdict(lambda: None)


class Recorder:
    """An ``httpx.Client`` stand-in that records each request."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []

    def request(self, method: str, path: str, **kw) -> Answer:
        self.calls.append((method, path))
        return Answer()


def placeholder(hint) -> typing.Any:
    """A value of the annotation ``hint`` (of the first type of a union)."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = typing.get_args(hint)[0]
    return {int: ID, str: "x", bool: False, list: [], dict: {}}[typing.get_origin(hint) or hint]


def recorded(name: str) -> tuple[str, str]:
    """The one request ``Client.name`` sends when called with a placeholder for each argument it needs."""
    method = getattr(Client, name)
    hints = typing.get_type_hints(method)
    args = [placeholder(hints[p.name]) for p in inspect.signature(method).parameters.values()
            if p.name != "self" and p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD]
    recorder = Recorder()
    method(Client("", "TOKEN", http=recorder), *args)
    assert len(recorder.calls) == 1, (name, recorder.calls)
    return recorder.calls[0]


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", str(ID), path)


def test_every_api_route_has_a_client_method_and_every_entry_is_a_route(tmp_path):
    routes = api_routes(tmp_path)
    assert len(routes) >= 30 and ("POST", "/api/campaigns/{cid}/join") in routes
    assert not sorted(routes - ROUTES.keys()), "routes without a client method (add one and a ROUTES entry)"
    assert not sorted(ROUTES.keys() - routes), "ROUTES entries that are not routes of the app"


def test_each_method_sends_the_request_its_entry_names():
    for (method, path), name in ROUTES.items():
        assert recorded(name) == (method, concrete(path)), name


def test_every_other_method_calls_a_listed_route():
    """The conveniences beside the table (``rename_assessor``, ``judgments_log``, ``payments_csv``, ...)."""
    listed = {(method, concrete(path)) for method, path in ROUTES}
    others = [name for name, _ in inspect.getmembers(Client, inspect.isfunction)
              if not name.startswith("_") and name != "close" and name not in ROUTES.values()]
    assert {"rename_assessor", "judgments_log", "judgments_csv", "payments_csv"} <= set(others)
    for name in others:
        assert recorded(name) in listed, name
