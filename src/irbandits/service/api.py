"""The judging routes of the JSON API (spec ``service.md``): campaigns, assessors, next, answers, exports."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import Discriminator, Field, StrictBool, StrictInt, StrictStr, Tag, field_validator, model_validator
from pydantic_core import PydanticCustomError
from starlette.concurrency import run_in_threadpool

from irbandits.service.auth import require_admin, require_assessor
from irbandits.service.campaign_spec import check_campaign
from irbandits.service.campaigns import Campaigns
from irbandits.service.judges import log_csv, log_jsonl
from irbandits.service.validation import MAX_NAMES, Name, Strict, parsed, raw_body

router = APIRouter(prefix="/api")
_RECORDED = b'{"recorded":true}'
admin = [Depends(require_admin)]


def _string_or(kind: Any, string: str, meaning: str) -> Any:
    """``str | kind`` (an object), validated as the member the value's JSON type picks (tagged ``string``
    or ``object``), so that a mistake is one error naming its place, not one per member."""
    return Annotated[Annotated[StrictStr, Tag(string)] | Annotated[kind, Tag("object")], Discriminator(
        lambda value: string if isinstance(value, str) else "object" if isinstance(value, dict) else None,
        custom_error_type="string_or_object",
        custom_error_message=f"Input should be a valid dictionary or a string ({meaning})")]


class TopicIn(Strict):
    """A topic of ``POST /api/campaigns``: its query, and what the assessor page shows beside it."""

    query: StrictStr
    description: StrictStr | None = None
    narrative: StrictStr | None = None


class CampaignIn(Strict):
    name: str = Field(min_length=1, max_length=200)
    kind: Literal["preference", "graded"]
    # a file's content (TSV, CSV or JSONL: irbandits.judging.texts), or topic -> query (or TopicIn), docno -> text
    topics: _string_or(dict[str, _string_or(TopicIn, "query", "the query")], "file", "a file's content")
    texts: _string_or(dict[str, StrictStr], "file", "a file's content")
    qrels: str | None = None
    runs: dict[str, str] | None = None
    tests: list | None = None  # known-answer test pairs [topic, better docno, worse docno]
    crowd: dict[str, Any] | None = None  # checked by irbandits.service.crowd.check_crowd
    options: dict[str, Any] = {}


class AssessorIn(Strict):
    name: Name
    automatic: str | None = Field(None, max_length=200)  # the name of a registered automatic assessor


class AssessorsIn(Strict):
    """``POST /api/campaigns/{CID}/assessors/bulk``: 1 to 1,000 names, none twice."""

    names: list[Name]

    @field_validator("names")
    @classmethod
    def _count(cls, names: list[str]) -> list[str]:
        if not 1 <= len(names) <= MAX_NAMES:
            raise PydanticCustomError("names", f"give 1 to {MAX_NAMES} names, got {len(names)}")
        first: dict[str, int] = {}
        for i, name in enumerate(names):
            if name in first:
                raise PydanticCustomError("names", f"names.{i} ({name!r}) repeats names.{first[name]}")
            first[name] = i
        return names


class AssessorChange(Strict):
    """``POST /api/campaigns/{CID}/assessors/{AID}``: any of the name, the flag, the revocation, a new token."""

    name: Name | None = None
    flagged: StrictBool | None = None
    revoked: StrictBool | None = None
    token: Literal["new"] | None = None

    @model_validator(mode="after")
    def _something(self):
        if self.name is None and self.flagged is None and self.revoked is None and self.token is None:
            raise ValueError('give "name", "flagged", "revoked" or "token": "new"')
        if self.token is not None and self.revoked:
            raise ValueError('"token": "new" issues a working token; it cannot go with "revoked": true')
        return self


class StateIn(Strict):
    """``POST /api/campaigns/{CID}``: the campaign's next lifecycle state."""

    state: Literal["running", "paused", "closed", "archived"]


class UndoIn(Strict):
    client_id: str = Field(min_length=1, max_length=200)


class AnswerIn(Strict):
    answer: StrictStr | StrictInt
    client_id: str = Field(min_length=1, max_length=200)


class SkipIn(Strict):
    """``POST /api/tasks/{TID}/skip``: why (:data:`~irbandits.service.campaign_runtime.SKIP_REASONS`), and
    an optional comment (stripped; a blank one is none)."""

    reason: Literal["cant-judge", "broken", "language", "other"]
    comment: StrictStr | None = Field(None, max_length=1000)
    client_id: str = Field(min_length=1, max_length=200)

    @field_validator("comment")
    @classmethod
    def _strip(cls, comment: str | None) -> str | None:
        return (comment or "").strip() or None


def registry(request: Request) -> Campaigns:
    return request.app.state.campaigns


# ----- organiser ---------------------------------------------------------------------------------
@router.post("/campaigns", status_code=201, dependencies=admin, openapi_extra=raw_body(CampaignIn))
async def create_campaign(request: Request) -> dict:
    """Parsed and checked off the event loop: the body may hold a collection's texts (``--max-upload``)."""
    raw = await request.body()

    def create() -> dict:
        return {"id": registry(request).create(check_campaign(parsed(CampaignIn, raw).model_dump())).id}

    return await run_in_threadpool(create)


@router.get("/campaigns", dependencies=admin)
def list_campaigns(request: Request) -> list[dict]:
    return [dict(id=c.id, name=c.name, kind=c.kind, state=c.state) for c in registry(request).campaigns.values()]


@router.get("/campaigns/{cid}", dependencies=admin)
def campaign_progress(cid: int, request: Request) -> dict:
    return registry(request).get(cid).progress()


@router.post("/campaigns/{cid}", dependencies=admin,
             responses={409: {"description": "the move is not allowed from the campaign's current state"}})
def set_campaign_state(cid: int, body: StateIn, request: Request) -> dict:
    """Pause, resume, close, archive or un-archive a campaign: running <-> paused, running or paused ->
    closed, closed <-> archived. A paused or closed campaign hands out no work; a closed one refuses new
    answers; an archived one is read-only too and hidden from the dashboard's list."""
    runtime = registry(request).get(cid)
    runtime.set_state(body.state)
    return {"id": cid, "state": runtime.state}


@router.delete("/campaigns/{cid}", status_code=204, dependencies=admin,
               responses={409: {"description": "the campaign is not closed or archived"}})
def delete_campaign(cid: int, request: Request) -> Response:
    """Remove a closed or archived campaign with its assessors, tasks and judgments, for good."""
    reg = registry(request)
    reg.delete(reg.get(cid))
    return Response(status_code=204)


@router.post("/campaigns/{cid}/assessors", status_code=201, dependencies=admin)
def add_assessor(cid: int, body: AssessorIn, request: Request) -> dict:
    """A person's link, or (``automatic``: a name of the server's assessor registry) a program at work."""
    reg = registry(request)
    aid, token = reg.add_assessor(reg.get(cid), body.name, body.automatic)
    return {"id": aid, "token": token, "url": f"/a/{token}"}


@router.post("/campaigns/{cid}/assessors/bulk", status_code=201, dependencies=admin)
def add_assessors(cid: int, body: AssessorsIn, request: Request) -> list[dict]:
    """People's links, one per name, created together (a bad name creates nobody), in the given order."""
    reg = registry(request)
    made = reg.add_people(reg.get(cid), body.names)
    return [{"id": aid, "name": name, "token": token, "url": f"/a/{token}"}
            for name, (aid, token) in zip(body.names, made)]


@router.get("/automatic-assessors", dependencies=admin)
def automatic_assessors(request: Request) -> list[str]:
    """The names ``automatic`` may take: what whoever started the server registered."""
    return registry(request).automatic.names()


@router.get("/campaigns/{cid}/assessors", dependencies=admin)
def list_assessors(cid: int, request: Request) -> list[dict]:
    """Each assessor with their answers, flag and quality signals (see :mod:`irbandits.service.quality`)."""
    reg = registry(request)
    return reg.listing(reg.get(cid))


@router.post("/campaigns/{cid}/assessors/{aid}", dependencies=admin)
def change_assessor(cid: int, aid: int, body: AssessorChange, request: Request) -> dict:
    """Rename an assessor, flag or clear them (the process is rebuilt from the log with or without their
    answers), revoke or restore their token, or issue a new one (the old one stops working at once)."""
    reg = registry(request)
    runtime = reg.get(cid)
    reg.assessor(runtime, aid)
    runtime.editable()
    changed: dict[str, Any] = {"id": aid}
    if body.name is not None:
        reg.rename(runtime, aid, body.name)
        changed["name"] = body.name
    if body.flagged is not None:
        runtime.set_flag(aid, body.flagged)
        changed["flagged"] = body.flagged
    if body.revoked is not None:
        reg.set_revoked(runtime, aid, body.revoked)
        changed["revoked"] = body.revoked
    if body.token is not None:
        token = reg.reissue(runtime, aid, request.app.state.session_secret)
        changed |= {"revoked": False, "token": token, "url": f"/a/{token}"}
    return changed


@router.get("/campaigns/{cid}/quality", dependencies=admin)
def campaign_quality(cid: int, request: Request) -> dict:
    """Campaign agreement (Krippendorff's alpha, pairwise rate with its interval), test accuracy over
    all assessors (what ``irbandits judge plan --accuracy-from`` reads) and the assessors."""
    reg = registry(request)
    runtime = reg.get(cid)
    people = reg.listing(runtime)
    tests = sum(a["tests"] for a in people if not a["flagged"])
    correct = sum(round(a["accuracy"] * a["tests"]) for a in people if not a["flagged"] and a["tests"])
    return dict(agreement=runtime.agreement(), tests=tests, accuracy=round(correct / tests, 4) if tests else None,
                threshold=runtime.options.get("threshold"), assessors=people)


@router.get("/campaigns/{cid}/judgments", response_class=PlainTextResponse, dependencies=admin)
def export_judgments(cid: int, request: Request, log: bool = False,
                     format: Literal["text", "jsonl", "csv"] = "text") -> Response:
    """Target answers in log order, without flagged assessors' and retracted ones (quality checks are
    not judgments of the process); the assessor listing tells which ids are automatic. With ``?log=1``:
    the whole append-only log, every row with its kind as a last column (answer, test, repeat, retract,
    skip); a skip row has ``-`` for its answer and its reason and comment (a JSON string) after its kind.
    With ``?format=jsonl`` or ``csv``: the whole log for analysis and payment, one row per entry with
    its kind, topic, docnos, answer, assessor id and name, lease and answer times (unix seconds), a
    skip's reason and comment, and the id a retract takes back (:data:`irbandits.service.judges.LOG_FIELDS`)."""
    reg = registry(request)
    runtime = reg.get(cid)
    if format == "text":
        return PlainTextResponse(runtime.judgments_text(log))
    rows = reg.log_rows(runtime)
    if format == "jsonl":
        return Response(log_jsonl(rows), media_type="application/x-ndjson")
    return Response(log_csv(rows), media_type="text/csv; charset=utf-8")


@router.get("/campaigns/{cid}/reports", dependencies=admin)
def campaign_reports(cid: int, request: Request) -> list[dict]:
    """The assessors' skips ("can't judge") and problem reports, in the order they came: topic, docnos,
    reason, comment, the assessor's id and name, and the time (unix seconds)."""
    reg = registry(request)
    runtime = reg.get(cid)
    names = {a.id: a.name for a in reg.assessors(cid)}
    return [r | {"name": names.get(r["assessor"])} for r in runtime.reports()]


@router.get("/campaigns/{cid}/qrels", response_class=PlainTextResponse, dependencies=admin)
def export_qrels(cid: int, request: Request, best: bool = False) -> str:
    return registry(request).get(cid).qrels_text(best)


# ----- assessor ----------------------------------------------------------------------------------
# The two hot routes run on the event loop: their work is in memory but for one short commit, made
# under the campaign's lock that serialises it anyway, so a hop to the thread pool (and the threads'
# fight for the GIL) would only add cost. They return ready responses (no FastAPI encoding pass). ``require_assessor`` is called, not a sub-dependency, which
# FastAPI would run in the thread pool; it comes first, so a bad token gets 401 before a bad body 422.
@router.get("/next", responses={204: {"description": "nothing waiting for this assessor now, or the campaign is "
                                                      "not running (GET /api/me tells which)"}})
async def next_task(request: Request):
    who = require_assessor(request)
    runtime = registry(request).get(who.campaign_id)
    lease = runtime.next_task(who.id)
    return Response(status_code=204) if lease is None else JSONResponse(runtime.task_json(lease))


@router.post("/undo", openapi_extra=raw_body(UndoIn),
             responses={409: {"description": "nothing to undo, or the phase that asked for it is closed"}})
async def undo(request: Request):
    """Take back this assessor's latest answer while the phase that asked for it is open: a "retract"
    row is appended to the log, and the same task is leased to them again (the body of ``GET /api/next``)."""
    who = require_assessor(request)
    body = parsed(UndoIn, await request.body())
    runtime = registry(request).get(who.campaign_id)
    lease = runtime.undo(who.id, body.client_id)
    return Response(status_code=204) if lease is None else JSONResponse(runtime.task_json(lease))


@router.post("/tasks/{tid}/answer", openapi_extra=raw_body(AnswerIn))
async def answer(tid: int, request: Request) -> Response:
    who = require_assessor(request)
    body = parsed(AnswerIn, await request.body())
    runtime = registry(request).get(who.campaign_id)
    feedback = runtime.answer(who.id, tid, body.answer, body.client_id)
    if feedback is not None:   # a practice pair: right or wrong, the better item, the organiser's note
        return JSONResponse({"recorded": True, **feedback})
    return Response(_RECORDED, media_type="application/json")


@router.post("/tasks/{tid}/skip", openapi_extra=raw_body(SkipIn))
async def skip(tid: int, request: Request) -> Response:
    """Skip the task held ("can't judge", or a problem report with a reason and a comment): logged as a
    "skip" row, not a judgment; the request goes to someone else, and ``GET /api/next`` gives the next task."""
    who = require_assessor(request)
    body = parsed(SkipIn, await request.body())
    runtime = registry(request).get(who.campaign_id)
    runtime.skip(who.id, tid, body.reason, body.comment, body.client_id)
    return Response(_RECORDED, media_type="application/json")
