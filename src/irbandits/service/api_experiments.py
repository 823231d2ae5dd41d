"""The online-experiment routes of the JSON API (spec ``service.md``, "Online experiments").

The organiser creates experiments and issues per-experiment client tokens for front ends; the
impression, lists, clicks, vote and state routes take the organiser token or a client token of that
experiment (another experiment's token gets 404, an unknown one 401).

The four routes of a front end's cycle (impression, lists, clicks, vote) run on the event loop, as
the judging API's hot routes do: their work is in memory but for one short commit (see
:mod:`irbandits.service.experiments`); they check the token by calling :func:`caller` (a dict lookup),
validate the raw body and return ready JSON, with no thread-pool hop and no FastAPI encoding pass.
"""

from __future__ import annotations

import hmac
import json

from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from irbandits.service.auth import bearer, new_token, require_admin, token_hash
from irbandits.service.experiments import Experiments, check_experiment
from irbandits.service.models import ExperimentClient

router = APIRouter(prefix="/api")
admin = [Depends(require_admin)]


class ExperimentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    rankers: list[str] = Field(max_length=1000)
    algorithm: str = Field(min_length=1, max_length=200)
    comparison: str = "team-draft"
    length: StrictInt = Field(10, ge=1, le=1000)
    seed: StrictInt = 0
    horizon: StrictInt | None = Field(None, ge=1)


class ClientIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)


class ListsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lists: dict[str, list[str]]


class ClicksIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    clicks: list[StrictInt]


class VoteIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    winner: str


def raw_body(model: type[BaseModel]) -> dict:
    """``openapi_extra`` of a route that validates its body itself with ``model``."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


async def parsed(model: type[BaseModel], request: Request):
    """The request body validated by ``model``; 422 (the app's one-line message) when it does not fit."""
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None


def reply(body, status: int = 200) -> Response:
    return Response(json.dumps(body, separators=(",", ":")).encode(), status, media_type="application/json")


def experiments(request: Request) -> Experiments:
    return request.app.state.experiments


def caller(request: Request) -> int | None:
    """FastAPI dependency: None for the organiser, the experiment id for a client token, else 401."""
    digest = token_hash(bearer(request))
    if hmac.compare_digest(digest, request.app.state.admin_hash):
        return None
    eid = experiments(request).clients.get(digest)
    if eid is None:
        raise HTTPException(401, "unknown token: use the organiser token or this experiment's client token",
                            headers={"WWW-Authenticate": "Bearer"})
    return eid


# ----- organiser ---------------------------------------------------------------------------------
@router.post("/experiments", status_code=201, dependencies=admin)
def create_experiment(body: ExperimentIn, request: Request) -> dict:
    return {"id": experiments(request).create(check_experiment(body.model_dump())).id}


@router.get("/experiments", dependencies=admin)
def list_experiments(request: Request) -> list[dict]:
    return [dict(id=e.id, name=e.name, algorithm=e.algorithm, rankers=len(e.rankers))
            for e in experiments(request).experiments.values()]


@router.post("/experiments/{eid}/clients", status_code=201, dependencies=admin)
def add_client(eid: int, body: ClientIn, request: Request) -> dict:
    reg = experiments(request)
    reg.get(eid)
    token = new_token()
    with request.app.state.sessions() as session:
        row = ExperimentClient(experiment_id=eid, name=body.name, token_hash=token_hash(token),
                               created_at=request.app.state.settings.clock())
        session.add(row)
        session.commit()
    reg.clients[row.token_hash] = eid
    return {"id": row.id, "token": token}


# ----- front ends ----------------------------------------------------------------------------------
@router.get("/experiments/{eid}")
def experiment_state(eid: int, request: Request, allowed: int | None = Depends(caller)) -> dict:
    return experiments(request).get(eid, allowed).state()


@router.post("/experiments/{eid}/impressions", status_code=201)
async def new_impression(eid: int, request: Request) -> Response:
    allowed = caller(request)
    reg = experiments(request)
    imp, names = reg.impression(reg.get(eid, allowed))
    return reply({"impression": imp.id, "rankers": names}, 201)


@router.post("/impressions/{iid}/lists", openapi_extra=raw_body(ListsIn))
async def lists(iid: int, request: Request) -> Response:
    allowed = caller(request)
    body = await parsed(ListsIn, request)
    return reply({"list": experiments(request).of_impression(iid, allowed).interleave(iid, body.lists)})


@router.post("/impressions/{iid}/clicks", openapi_extra=raw_body(ClicksIn))
async def clicks(iid: int, request: Request) -> Response:
    allowed = caller(request)
    body = await parsed(ClicksIn, request)
    return reply({"winner": experiments(request).of_impression(iid, allowed).clicks(iid, body.clicks)})


@router.post("/impressions/{iid}/vote", openapi_extra=raw_body(VoteIn))
async def vote(iid: int, request: Request) -> Response:
    allowed = caller(request)
    body = await parsed(VoteIn, request)
    experiments(request).of_impression(iid, allowed).vote(iid, body.winner)
    return Response(b'{"recorded":true}', media_type="application/json")


def install(app) -> None:
    """Rebuild every experiment from its log and mount these routes and the experiment pages on ``app``."""
    from irbandits.service import admin_experiments

    app.state.experiments = Experiments.load(app.state.sessions, app.state.settings)
    app.include_router(router)
    app.include_router(admin_experiments.router)
