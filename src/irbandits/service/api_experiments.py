"""The online-experiment routes of the JSON API (spec ``service.md``, "Online experiments").

The organiser creates experiments, moves them between running, paused and stopped, and issues
per-experiment client tokens for front ends; the impression, lists, clicks, vote and state routes take
the organiser token or a client token of that experiment (another experiment's token gets 404, an
unknown one 401).

The four routes of a front end's cycle (impression, lists, clicks, vote) are coroutines on the event
loop: their work is in memory but for one write that they wait for (a group commit, see
:mod:`irbandits.service.logwriter`). Each is one function of ``(app state, id, Authorization header,
raw body)`` to ``(status, JSON bytes)`` that checks the token (a dict lookup), validates the body and
raises an ``IrbanditsError`` (a domain refusal) or ``RequestValidationError`` for a refusal. :data:`HOT`
lists them for :class:`irbandits.service.hotroutes.HotRoutes`, which serves them in front of FastAPI;
the FastAPI routes below call the same functions (they declare the routes in the OpenAPI schema, and
answer what the dispatcher passes on: another method, an id that is not a plain number).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request, Response
from pydantic import Field, StrictBool, StrictFloat, StrictInt, model_validator

from irbandits.errors import Unauthorized
from irbandits.service.auth import bearer_token, require_admin
from irbandits.service.credentials import token_hash
from irbandits.service.experiments import Experiments, checked
from irbandits.service.guard import NOT_A_CLIENT
from irbandits.service.validation import MAX_SEED, Strict, parsed, raw_body

router = APIRouter(prefix="/api")
admin = [Depends(require_admin)]


class ExperimentIn(Strict):
    """Rankers and the algorithm that compares them, or a learner (``irbandits oltr -a``) and its features."""

    name: str = Field(min_length=1, max_length=200)
    rankers: list[Annotated[str, Field(max_length=200)]] = Field([], max_length=1000)
    algorithm: str | None = Field(None, min_length=1, max_length=200)
    learner: str | None = Field(None, min_length=1, max_length=200)
    features: StrictInt | None = None
    comparison: str = Field("team-draft", max_length=40)
    length: StrictInt = Field(10, ge=1, le=1000)
    seed: StrictInt = Field(0, ge=0, le=MAX_SEED)
    horizon: StrictInt | None = Field(None, ge=1, le=MAX_SEED)


class ExperimentStateIn(Strict):
    """``POST /api/experiments/{EID}``: the experiment's next lifecycle state."""

    state: Literal["running", "paused", "stopped"]


class ClientIn(Strict):
    name: str = Field(min_length=1, max_length=200)


class ClientChange(Strict):
    """``POST /api/experiments/{EID}/clients/{ID}``: revoke (or restore) the token, or issue a new one."""

    revoked: StrictBool | None = None
    token: Literal["new"] | None = None

    @model_validator(mode="after")
    def _something(self):
        if (self.revoked is None) == (self.token is None):
            raise ValueError('give either "revoked" or "token": "new"')
        return self


class QueryIn(Strict):
    """A learner experiment's impression: the candidate documents and their features, a row each."""

    documents: list[Annotated[str, Field(max_length=200)]]
    features: list[list[StrictFloat]]


class ListsIn(Strict):
    lists: dict[str, list[str]]


class ClicksIn(Strict):
    clicks: list[Annotated[StrictInt, Field(ge=0, le=1_000_000)]] = Field(max_length=1000)


class VoteIn(Strict):
    winner: str


def encoded(body) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


def experiments(request: Request) -> Experiments:
    return request.app.state.experiments


def allowed(state, authorization: str) -> int | None:
    """None for the organiser's token, the experiment id for a client token, else 401."""
    digest = token_hash(bearer_token(authorization))
    if hmac.compare_digest(digest, state.admin_hash):
        return None
    eid = state.experiments.clients.get(digest)
    if eid is None:
        raise Unauthorized(NOT_A_CLIENT)
    return eid


def caller(request: Request) -> int | None:
    """FastAPI dependency: :func:`allowed` for the request's token."""
    return allowed(request.app.state, request.headers.get("authorization", ""))


# ----- organiser ---------------------------------------------------------------------------------
@router.post("/experiments", status_code=201, dependencies=admin)
def create_experiment(body: ExperimentIn, request: Request) -> dict:
    return {"id": experiments(request).create(checked(body.model_dump())).id}


@router.get("/experiments", dependencies=admin)
def list_experiments(request: Request) -> list[dict]:
    return [dict(id=e.id, name=e.name, state=e.lifecycle, algorithm=e.algorithm, rankers=len(e.rankers),
                 learner=e.learns) for e in experiments(request).experiments.values()]


@router.post("/experiments/{eid}", dependencies=admin)
def set_experiment_state(eid: int, body: ExperimentStateIn, request: Request) -> dict:
    """Pause, resume or stop an experiment: running <-> paused, running or paused -> stopped (final). Only a
    running experiment issues impressions; a paused one still takes the lists and outcomes of impressions
    issued before the pause; a stopped one refuses them too, and its state stays readable."""
    runtime = experiments(request).get(eid)
    runtime.set_state(body.state)
    return {"id": eid, "state": runtime.lifecycle}


@router.post("/experiments/{eid}/clients", status_code=201, dependencies=admin)
def add_client(eid: int, body: ClientIn, request: Request) -> dict:
    """A client token for one front end of experiment ``eid`` (only its hash is stored)."""
    cid, token = experiments(request).add_client(eid, body.name)
    return {"id": cid, "token": token}


@router.get("/experiments/{eid}/clients", dependencies=admin)
def list_clients(eid: int, request: Request) -> list[dict]:
    return experiments(request).client_list(eid)


@router.post("/experiments/{eid}/clients/{client}", dependencies=admin)
def change_client(eid: int, client: int, body: ClientChange, request: Request) -> dict:
    """Revoke (or restore) a client token: its next call gets 401; or issue a new one, revoking the old."""
    reg = experiments(request)
    if body.token is not None:
        return {"id": client, "revoked": False, "token": reg.reissue_client(eid, client)}
    reg.set_client_revoked(eid, client, body.revoked)
    return {"id": client, "revoked": body.revoked}


# ----- front ends ----------------------------------------------------------------------------------
@router.get("/experiments/{eid}")
def experiment_state(eid: int, request: Request, who: int | None = Depends(caller)) -> dict:
    return experiments(request).get(eid, who).state()


async def post_impression(state, eid: int, authorization: str, body: bytes) -> tuple[int, bytes]:
    runtime = state.experiments.get(eid, allowed(state, authorization))
    if runtime.learns:
        query = await asyncio.to_thread(parsed, QueryIn, body)   # features of up to 1,000 documents: off the loop
        imp, docnos = await runtime.rank(query.documents, query.features)
        return 201, encoded({"impression": imp.id, "list": docnos})
    imp, names = await runtime.impression()
    return 201, encoded({"impression": imp.id, "rankers": names})


async def post_lists(state, iid: int, authorization: str, body: bytes) -> tuple[int, bytes]:
    who = allowed(state, authorization)
    lists = parsed(ListsIn, body).lists
    return 200, encoded({"list": await state.experiments.of_impression(iid, who).interleave(iid, lists)})


async def post_clicks(state, iid: int, authorization: str, body: bytes) -> tuple[int, bytes]:
    who = allowed(state, authorization)
    positions = parsed(ClicksIn, body).clicks
    runtime = state.experiments.of_impression(iid, who)
    if runtime.learns:
        return 200, encoded({"winner": None, "updated": await runtime.clicks(iid, positions)})
    return 200, encoded({"winner": await runtime.clicks(iid, positions)})


async def post_vote(state, iid: int, authorization: str, body: bytes) -> tuple[int, bytes]:
    who = allowed(state, authorization)
    winner = parsed(VoteIn, body).winner
    await state.experiments.of_impression(iid, who).vote(iid, winner)
    return 200, b'{"recorded":true}'


HOT = [(re.compile(r"/api/experiments/([0-9]+)/impressions"), post_impression),
       (re.compile(r"/api/impressions/([0-9]+)/lists"), post_lists),
       (re.compile(r"/api/impressions/([0-9]+)/clicks"), post_clicks),
       (re.compile(r"/api/impressions/([0-9]+)/vote"), post_vote)]


async def answered(handler, key: int, request: Request) -> Response:
    """``handler``'s answer to a request that FastAPI routed."""
    status, body = await handler(request.app.state, key, request.headers.get("authorization", ""),
                                 await request.body())
    return Response(body, status, media_type="application/json")


@router.post("/experiments/{eid}/impressions", status_code=201)
async def new_impression(eid: int, request: Request) -> Response:
    return await answered(post_impression, eid, request)


@router.post("/impressions/{iid}/lists", openapi_extra=raw_body(ListsIn))
async def lists(iid: int, request: Request) -> Response:
    return await answered(post_lists, iid, request)


@router.post("/impressions/{iid}/clicks", openapi_extra=raw_body(ClicksIn))
async def clicks(iid: int, request: Request) -> Response:
    return await answered(post_clicks, iid, request)


@router.post("/impressions/{iid}/vote", openapi_extra=raw_body(VoteIn))
async def vote(iid: int, request: Request) -> Response:
    return await answered(post_vote, iid, request)
