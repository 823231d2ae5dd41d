"""The crowd routes of the JSON API (module :mod:`irbandits.service.crowd`): the organiser's join link
and payment report, the assessor's consent. The join page itself is ``/j/TOKEN`` (:mod:`irbandits.service.pages`)."""

from __future__ import annotations

import csv
import io
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from pydantic import Field, StrictBool, StrictInt, model_validator
from starlette.concurrency import run_in_threadpool

from irbandits.service.auth import Assessed, require_admin, require_assessor
from irbandits.service.campaign_runtime import CampaignRuntime
from irbandits.service.campaigns import Campaigns
from irbandits.service.crowd import check_crowd, join_token
from irbandits.service.validation import Strict, csv_text, parsed, raw_body

router = APIRouter(prefix="/api")
admin = [Depends(require_admin)]
PAYMENT_FIELDS = ("id", "name", "platform", "worker", "study", "session", "code", "stage", "answers", "checks",
                  "checks_right", "practice", "practice_right", "skips", "bundles", "accepted", "rejected",
                  "active_seconds", "first", "last", "flagged", "revoked")


class JoinIn(Strict):
    """``POST /api/campaigns/{CID}/join``: make the join link (``cap`` needed), change its cap, open or
    close it, or rotate it (a new address; the old one stops working)."""

    cap: StrictInt | None = Field(None, ge=1, le=100_000)
    open: StrictBool | None = None
    rotate: StrictBool = False

    @model_validator(mode="after")
    def _something(self):
        if self.cap is None and self.open is None and not self.rotate:
            raise ValueError('give "cap", "open" or "rotate": true')
        return self


class ConsentIn(Strict):
    agree: Literal[True]


def registry(request: Request) -> Campaigns:
    return request.app.state.campaigns


def join_state(request: Request, runtime: CampaignRuntime) -> dict:
    """The join link as the organiser sees it: address, cap, how many joined, open or not (None: none yet)."""
    link, joined = registry(request).join_link(runtime)
    if link is None:
        return dict(url=None, cap=None, joined=joined, open=False)
    token = join_token(request.app.state.session_secret, runtime.id, link.generation)
    return dict(url=f"/j/{token}", cap=link.cap, joined=joined, open=link.open)


@router.get("/campaigns/{cid}/join", dependencies=admin)
def get_join_link(cid: int, request: Request) -> dict:
    """The campaign's join link: ``url`` (relative; null before one is made), ``cap``, ``joined``, ``open``."""
    return join_state(request, registry(request).get(cid))


@router.post("/campaigns/{cid}/join", dependencies=admin)
def set_join_link(cid: int, body: JoinIn, request: Request) -> dict:
    """Make, re-cap, open, close or rotate the join link; answers as ``GET``. The platform's ids come
    after it as the platform adds them: ``/j/TOKEN?PROLIFIC_PID=...&STUDY_ID=...&SESSION_ID=...`` or
    ``?workerId=...&assignmentId=...&hitId=...``."""
    runtime = registry(request).get(cid)
    registry(request).set_join_link(runtime, body.cap, body.open, body.rotate)
    return join_state(request, runtime)


class CrowdSettingsIn(Strict):
    """``POST /api/campaigns/{CID}/crowd``: the campaign's new crowd settings (null: none)."""

    crowd: dict[str, Any] | None


@router.post("/campaigns/{cid}/crowd", dependencies=admin, openapi_extra=raw_body(CrowdSettingsIn),
             responses={409: {"description": "practice pairs or bundles changed after work was logged"}})
async def set_crowd(cid: int, request: Request) -> dict:
    """Replace the campaign's crowd settings (the fields of ``crowd`` in ``POST /api/campaigns``);
    answers with the stored settings. Guidelines, consent, quotas, the time limit and the completion may
    change at any time; the practice pairs and the bundles only before anyone has worked."""
    raw = await request.body()

    def store() -> dict:
        runtime = registry(request).get(cid)
        crowd = check_crowd(parsed(CrowdSettingsIn, raw).crowd, runtime.kind, runtime.topics, runtime.texts,
                            runtime.tests)
        runtime.set_crowd(crowd)
        return {"crowd": crowd}

    return await run_in_threadpool(store)


def payment_csv(rows: list[dict]) -> str:
    """The payment report as CSV (:data:`PAYMENT_FIELDS`), text cells safe from spreadsheet formulas."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PAYMENT_FIELDS)
    for r in rows:
        writer.writerow(["" if r[k] is None else csv_text(r[k]) if isinstance(r[k], str) else r[k]
                         for k in PAYMENT_FIELDS])
    return out.getvalue()


@router.get("/campaigns/{cid}/payments", dependencies=admin)
def payments(cid: int, request: Request, format: Literal["json", "csv"] = "json") -> Response:
    """Per assessor, for paying people: name, platform ids, completion code, stage (consent, practice,
    screened-out, work, finished), answers, checks (and right), practice (and right), skips, bundles
    (accepted, rejected), active time in seconds (lease to answer, at most a lease each) and first and
    last activity (unix seconds). ``?format=csv``: the same as CSV."""
    reg = registry(request)
    rows = reg.payments(reg.get(cid))
    if format == "csv":
        return Response(payment_csv(rows), media_type="text/csv; charset=utf-8")
    return JSONResponse(rows)


@router.post("/consent")
def consent(body: ConsentIn, request: Request, who: Assessed = Depends(require_assessor)) -> dict:
    """The assessor agrees to the campaign's consent (``{"agree": true}``); their tasks start."""
    reg = registry(request)
    reg.consent(reg.get(who.campaign_id), who.id)
    return {"consented": True}
