"""The judging routes of the JSON API (spec ``service.md``): campaigns, assessors, next, answers, exports."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError
from sqlalchemy import select

from irbandits.service.assign import Registry
from irbandits.service.auth import new_token, require_admin, require_assessor, token_hash
from irbandits.service.campaigns import check_campaign, judgments_text
from irbandits.service.models import Assessor, Judgment

router = APIRouter(prefix="/api")
_RECORDED = b'{"recorded":true}'
admin = [Depends(require_admin)]


class CampaignIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    kind: Literal["preference", "graded"]
    topics: dict[str, str]
    texts: dict[str, str]
    qrels: str | None = None
    runs: dict[str, str] | None = None
    options: dict[str, Any] = {}


class AssessorIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)


class AnswerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: StrictStr | StrictInt
    client_id: str = Field(min_length=1, max_length=200)


def registry(request: Request) -> Registry:
    return request.app.state.campaigns


# ----- organiser ---------------------------------------------------------------------------------
@router.post("/campaigns", status_code=201, dependencies=admin)
def create_campaign(body: CampaignIn, request: Request) -> dict:
    runtime = registry(request).create(check_campaign(body.model_dump()))
    return {"id": runtime.id}


@router.get("/campaigns", dependencies=admin)
def list_campaigns(request: Request) -> list[dict]:
    return [dict(id=c.id, name=c.name, kind=c.kind) for c in registry(request).campaigns.values()]


@router.get("/campaigns/{cid}", dependencies=admin)
def campaign_progress(cid: int, request: Request) -> dict:
    return registry(request).get(cid).progress()


@router.post("/campaigns/{cid}/assessors", status_code=201, dependencies=admin)
def add_assessor(cid: int, body: AssessorIn, request: Request) -> dict:
    reg = registry(request)
    reg.get(cid)
    token = new_token()
    with request.app.state.sessions() as session:
        row = Assessor(campaign_id=cid, name=body.name, token_hash=token_hash(token), revoked=False, flagged=False,
                       created_at=request.app.state.settings.clock())
        session.add(row)
        session.commit()
    return {"id": row.id, "token": token, "url": f"/a/{token}"}


@router.get("/campaigns/{cid}/assessors", dependencies=admin)
def list_assessors(cid: int, request: Request) -> list[dict]:
    reg = registry(request)
    reg.get(cid)
    counts = reg.judgment_counts(cid)
    return [dict(id=a.id, name=a.name, judgments=counts.get(a.id, 0), flagged=a.flagged, revoked=a.revoked)
            for a in reg.assessors(cid)]


@router.get("/campaigns/{cid}/judgments", response_class=PlainTextResponse, dependencies=admin)
def export_judgments(cid: int, request: Request) -> str:
    registry(request).get(cid)
    with request.app.state.sessions() as session:
        rows = session.scalars(select(Judgment).where(Judgment.campaign_id == cid).order_by(Judgment.id))
        return judgments_text(rows)


@router.get("/campaigns/{cid}/qrels", response_class=PlainTextResponse, dependencies=admin)
def export_qrels(cid: int, request: Request, best: bool = False) -> str:
    runtime = registry(request).get(cid)
    with runtime.lock:
        return runtime.judge.qrels(best)


# ----- assessor ----------------------------------------------------------------------------------
# The two hot routes run on the event loop: their work is in memory but for one short commit, made
# under the campaign's lock that serialises it anyway, so a hop to the thread pool (and the threads'
# fight for the GIL) would only add cost. They return ready responses (no FastAPI encoding pass). ``require_assessor`` is called, not a sub-dependency, which
# FastAPI would run in the thread pool; it comes first, so a bad token gets 401 before a bad body 422.
@router.get("/next", responses={204: {"description": "nothing waiting for this assessor now"}})
async def next_task(request: Request):
    who = require_assessor(request)
    runtime = registry(request).get(who.campaign_id)
    lease = runtime.next_task(who.id)
    return Response(status_code=204) if lease is None else JSONResponse(runtime.task_json(lease))


@router.post("/tasks/{tid}/answer", openapi_extra={"requestBody": {"required": True, "content": {
    "application/json": {"schema": AnswerIn.model_json_schema()}}}})
async def answer(tid: int, request: Request) -> Response:
    who = require_assessor(request)
    try:
        body = AnswerIn.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None
    runtime = registry(request).get(who.campaign_id)
    runtime.answer(who.id, tid, body.answer, body.client_id)
    return Response(_RECORDED, media_type="application/json")
