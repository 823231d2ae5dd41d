"""docs/service.md cannot drift from the app: its route tables list every ``/api`` route of the app and no
other, each with the ``irbandits.client.Client`` method that calls it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from test_client_routes import api_routes  # noqa: E402

from irbandits.client import ROUTES  # noqa: E402

PAGE = Path(__file__).resolve().parents[1] / "docs" / "service.md"
ROW = re.compile(r"^\| `(GET|POST|DELETE|PUT|PATCH) (/api/[^`]*)` \|[^|]*\| `([a-z_]+)` \|", re.M)


def placeholders(path: str) -> str:
    """The path with each ``{name}`` as ``{}`` (the page writes ``{CID}``, the app ``{cid}``)."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def test_the_route_tables_list_every_api_route_and_its_client_method(tmp_path):
    rows = ROW.findall(PAGE.read_text())
    documented = {(method, placeholders(path)): name for method, path, name in rows}
    assert len(documented) == len(rows), "a route is listed twice"
    routes = {(method, placeholders(path)): ROUTES.get((method, path)) for method, path in api_routes(tmp_path)}
    assert not sorted(routes.keys() - documented.keys()), "routes missing from docs/service.md"
    assert not sorted(documented.keys() - routes.keys()), "docs/service.md lists routes the app does not have"
    assert {k: documented[k] for k in routes if documented[k] != routes[k]} == {}, "wrong Client methods"
