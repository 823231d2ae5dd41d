"""The organiser pages ``/admin``: login, campaigns, the creation form, the dashboard, the lifecycle
buttons, downloads.

They call the same runtime and registry methods as the JSON API (:mod:`irbandits.service.api`): the
session cookie (:mod:`irbandits.service.websession`) stands in for the organiser's Bearer token. Every
POST carries the session's CSRF token; an assessor token opens nothing here.
"""

from __future__ import annotations

import csv
import hmac
import io
import time
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from irbandits.errors import Conflict, IrbanditsError
from irbandits.service.api_crowd import join_state
from irbandits.service.campaign_runtime import MOVES
from irbandits.service.campaign_spec import OPTIONS, check_campaign
from irbandits.service.campaigns import Campaigns
from irbandits.service.credentials import token_hash
from irbandits.service.guard import client_address, refusal
from irbandits.service.judges import log_csv, log_jsonl
from irbandits.service.models import Assessor
from irbandits.service.pages import render
from irbandits.service.uploads import campaign_body, file_name
from irbandits.service.validation import csv_text, name_problem, read_names
from irbandits.service.websession import (
    LOGIN_COOKIE,
    check_csrf,
    csrf_token,
    end_session,
    form_move,
    form_name,
    login_nonce,
    require_session,
    set_login_cookie,
    start_session,
)

router = APIRouter(prefix="/admin", include_in_schema=False)


def registry(request: Request) -> Campaigns:
    return request.app.state.campaigns
PLOT_POINTS = 240


# ----- login -------------------------------------------------------------------------------------
def _login_page(request: Request, error: str = "", status_code: int = 200) -> HTMLResponse:
    nonce = login_nonce(request)
    response = render("admin_login.html", status_code, csrf=csrf_token(request, nonce, "login"), error=error)
    set_login_cookie(request, response, nonce)
    return response


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request) -> HTMLResponse:
    return _login_page(request)


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request) -> HTMLResponse:
    """Log in with the organiser token; failures from one address back off (the guard answers 429)."""
    form = await request.form()
    check_csrf(request, form, request.cookies.get(LOGIN_COOKIE), "login")
    token, logins = str(form.get("token", "")).strip(), request.app.state.logins
    if not hmac.compare_digest(token_hash(token), request.app.state.admin_hash):
        logins.failed(client_address(request.scope))
        with request.app.state.sessions() as session:
            assessor = session.scalars(select(Assessor.id).where(Assessor.token_hash == token_hash(token))).first()
        message = ("this is an assessor token: the organiser pages need the organiser token" if assessor is not None
                   else "unknown token: use the organiser token (IRBANDITS_ADMIN_TOKEN, or printed at first start)")
        wait = logins.wait(client_address(request.scope))
        if wait > 0:
            message += f"; too many failed logins: the next try is open in {wait:.0f} s"
        return _login_page(request, message, 403 if assessor is not None else 401)
    logins.succeeded(client_address(request.scope))
    response = RedirectResponse("/admin", status_code=303)
    start_session(request, response)
    return response


@router.post("/logout")
async def logout(request: Request, nonce: str = Depends(require_session)) -> RedirectResponse:
    check_csrf(request, await request.form(), nonce)
    response = RedirectResponse("/admin/login", status_code=303)
    end_session(response)
    return response


# ----- campaigns ---------------------------------------------------------------------------------
@router.get("", response_class=HTMLResponse)
def campaign_list(request: Request, archived: bool = False, nonce: str = Depends(require_session)) -> HTMLResponse:
    """The campaigns; archived ones only with ``?archived=1`` ("Show archived")."""
    campaigns = [runtime.progress() for runtime in registry(request).campaigns.values()]
    hidden = 0 if archived else sum(c["state"] == "archived" for c in campaigns)
    shown = campaigns if archived else [c for c in campaigns if c["state"] != "archived"]
    return render("admin_campaigns.html", csrf=csrf_token(request, nonce), campaigns=shown, hidden=hidden,
                  archived=archived)


def _form_page(request: Request, nonce: str, values: dict[str, Any], error: str = "",
               status_code: int = 200) -> HTMLResponse:
    fields = {kind: [(f"{kind}.{p.name}", p.name, p.description, _placeholder(p.default)) for p in params]
              for kind, params in OPTIONS.items()}
    return render("admin_new.html", status_code, csrf=csrf_token(request, nonce), options=fields,
                  values=values, error=error)


def _placeholder(default: Any) -> str:
    """An option's default as the form shows it (empty field = default)."""
    if default is None:
        return "(none)"
    return ", ".join(map(str, default)) if isinstance(default, list) else str(default)


@router.get("/campaigns/new", response_class=HTMLResponse)
def new_campaign_form(request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    return _form_page(request, nonce, {"kind": "preference"})


@router.post("/campaigns", response_class=HTMLResponse)
async def create_campaign(request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    form = await request.form()
    check_csrf(request, form, nonce)
    try:
        body = await campaign_body(form)
        runtime = await run_in_threadpool(lambda: registry(request).create(check_campaign(body)))
    except IrbanditsError as exc:
        values = {k: v for k, v in form.multi_items() if isinstance(v, str) and k != "csrf"}
        return _form_page(request, nonce, values, str(exc), 422)
    return RedirectResponse(f"/admin/campaigns/{runtime.id}", status_code=303)


def _dashboard(request: Request, cid: int, nonce: str, new_link: dict | None = None,
               status_code: int = 200, error: str = "", state_error: str = "", crowd_error: str = "") -> HTMLResponse:
    stats = campaign_stats(cid, request)
    runtime = registry(request).get(cid)
    return render("admin_campaign.html", status_code, csrf=csrf_token(request, nonce), stats=stats,
                  queries=runtime.topics, new_link=new_link, base=_base(request), error=error,
                  body_limit=request.app.state.settings.max_body_bytes, moves=MOVES[stats["state"]],
                  state_error=state_error, crowd=runtime.crowd.s, join=join_state(request, runtime),
                  crowd_error=crowd_error)


def _base(request: Request) -> str:
    """The site's address, which links are made absolute with."""
    return str(request.base_url).rstrip("/")


@router.get("/campaigns/{cid}", response_class=HTMLResponse)
def dashboard(cid: int, request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    return _dashboard(request, cid, nonce)


@router.post("/campaigns/{cid}/state", response_class=HTMLResponse)
async def set_state(cid: int, request: Request, nonce: str = Depends(require_session)) -> Response:
    """Move the campaign to the form's ``state`` (the buttons offer the moves its state allows), then
    back to the dashboard; a refused move: the dashboard with the reason (409, or 422 for no state)."""
    form = await request.form()
    check_csrf(request, form, nonce)
    refused = await form_move(form, registry(request).get(cid), MOVES)
    if refused is not None:
        return await run_in_threadpool(_dashboard, request, cid, nonce, None, refusal(refused)[0], "", str(refused))
    return RedirectResponse(f"/admin/campaigns/{cid}", status_code=303)


@router.post("/campaigns/{cid}/delete", response_class=HTMLResponse)
async def delete_campaign(cid: int, request: Request, nonce: str = Depends(require_session)) -> Response:
    """Delete a closed or archived campaign (the button asks first, naming it), then the campaign list;
    any other: the dashboard with the reason, 409."""
    form = await request.form()
    check_csrf(request, form, nonce)
    reg = registry(request)
    try:
        await run_in_threadpool(reg.delete, reg.get(cid))
    except Conflict as exc:
        return await run_in_threadpool(_dashboard, request, cid, nonce, None, 409, "", str(exc))
    return RedirectResponse("/admin", status_code=303)


@router.post("/campaigns/{cid}/assessors", response_class=HTMLResponse)
async def add_assessor(cid: int, request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    """Add an assessor and show their link once (only the token's hash is stored)."""
    form = await request.form()
    check_csrf(request, form, nonce)
    name = form_name(form, "assessor")
    reg = registry(request)
    _, token = await run_in_threadpool(reg.add_assessor, reg.get(cid), name)
    return await run_in_threadpool(_dashboard, request, cid, nonce, dict(name=name, url=f"/a/{token}"), 201)


@router.post("/campaigns/{cid}/assessors/bulk", response_class=Response)
async def add_assessors(cid: int, request: Request, nonce: str = Depends(require_session)) -> Response:
    """Add one assessor per name of the uploaded file (a plain list, or a CSV: see
    :func:`irbandits.service.validation.read_names`), all or none, and answer with their links as a CSV
    download ``name,url``: the only time the links are shown. A bad file: the dashboard with the problem, 422."""
    form = await request.form()
    check_csrf(request, form, nonce)
    reg = registry(request)
    runtime = reg.get(cid)
    try:
        upload = form.get("names")
        if not isinstance(upload, UploadFile) or not (upload.filename or upload.size):
            raise IrbanditsError("names file: choose a file of names (one a line, or a CSV with a name column)")
        filename = file_name(upload, "names")
        try:
            text = (await upload.read()).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise IrbanditsError(f"names file {filename}: not UTF-8 text") from None
        csv_file = filename.lower().endswith(".csv") or (upload.content_type or "").startswith("text/csv")
        names = read_names(text, f"names file {filename}", csv_file)
    except IrbanditsError as exc:
        return await run_in_threadpool(_dashboard, request, cid, nonce, None, 422, str(exc))
    made = await run_in_threadpool(reg.add_people, runtime, names)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["name", "url"])
    writer.writerows([csv_text(name), f"{_base(request)}/a/{token}"] for name, (_, token) in zip(names, made))
    return _download(out.getvalue(), f"campaign-{cid}-links.csv", "text/csv")


@router.post("/campaigns/{cid}/assessors/{aid}/name", response_class=HTMLResponse)
async def rename_assessor(cid: int, aid: int, request: Request, nonce: str = Depends(require_session)) -> Response:
    """Rename an assessor (the form's ``name``, stripped), then back to the dashboard; a bad name: the
    dashboard with the problem, 422."""
    form = await request.form()
    check_csrf(request, form, nonce)
    reg = registry(request)
    runtime = reg.get(cid)
    old = reg.assessor(runtime, aid).name
    name = form.get("name")
    name = name.strip() if isinstance(name, str) else ""
    problem = name_problem(name)
    if problem is not None:
        return await run_in_threadpool(_dashboard, request, cid, nonce, None, 422, f"rename {old}: {problem}")
    await run_in_threadpool(reg.rename, runtime, aid, name)
    return RedirectResponse(f"/admin/campaigns/{cid}", status_code=303)


@router.post("/campaigns/{cid}/assessors/{aid}/flag")
async def flag_assessor(cid: int, aid: int, request: Request, nonce: str = Depends(require_session)) -> RedirectResponse:
    """Flag or clear an assessor (the form's ``flagged`` is 1 or 0), then back to the dashboard."""
    form = await request.form()
    check_csrf(request, form, nonce)
    reg = registry(request)
    runtime = reg.get(cid)
    reg.assessor(runtime, aid)
    await run_in_threadpool(runtime.set_flag, aid, str(form.get("flagged", "")) == "1")
    return RedirectResponse(f"/admin/campaigns/{cid}", status_code=303)


@router.post("/campaigns/{cid}/assessors/{aid}/revoke")
async def revoke_assessor(cid: int, aid: int, request: Request, nonce: str = Depends(require_session)) -> RedirectResponse:
    """Revoke an assessor's link (the form's ``revoked`` is 1) or restore it (0), then back to the dashboard."""
    form = await request.form()
    check_csrf(request, form, nonce)
    reg = registry(request)
    await run_in_threadpool(reg.set_revoked, reg.get(cid), aid, str(form.get("revoked", "")) == "1")
    return RedirectResponse(f"/admin/campaigns/{cid}", status_code=303)


@router.post("/campaigns/{cid}/assessors/{aid}/link", response_class=HTMLResponse)
async def new_link(cid: int, aid: int, request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    """Issue a new link for an assessor (the old one stops working) and show it once."""
    form = await request.form()
    check_csrf(request, form, nonce)
    reg = registry(request)
    runtime = reg.get(cid)
    name = reg.assessor(runtime, aid).name
    token = await run_in_threadpool(reg.reissue, runtime, aid, request.app.state.session_secret)
    return await run_in_threadpool(_dashboard, request, cid, nonce, dict(name=name, url=f"/a/{token}"), 201)


@router.get("/campaigns/{cid}/stats.json")
def stats(cid: int, request: Request, nonce: str = Depends(require_session)) -> dict:
    """What the dashboard's script refreshes: progress, assessors, judgments per hour, the plot's points."""
    return campaign_stats(cid, request)


def campaign_stats(cid: int, request: Request) -> dict[str, Any]:
    """Progress of campaign ``cid`` with its assessors, judgments per hour, cumulative judgments and the
    assessors' skips and problem reports (the latest first)."""
    runtime = registry(request).get(cid)
    progress = runtime.progress()
    with runtime.lock:  # the judgments the process counts: target answers of unflagged assessors, not retracted
        times = [j.created_at for j in runtime.log if runtime.exported(j)]
    now = request.app.state.settings.clock()
    hours: dict[int, int] = {}
    for t in times:
        hours[int(t // 3600)] = hours.get(int(t // 3600), 0) + 1
    step = max(1, len(times) // PLOT_POINTS)
    series = [[times[i], i + 1] for i in range(step - 1, len(times), step)]
    if times and series[-1][1] != len(times):
        series.append([times[-1], len(times)])
    assessors = registry(request).listing(runtime)
    names = {a["id"]: a["name"] for a in assessors}
    automatic = {a["id"] for a in assessors if a["automatic"]}   # their "unsure": the Automatic assessors card
    reports = [r | dict(name=names.get(r["assessor"]), when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(r["time"])))
               for r in reversed(runtime.reports()) if r["assessor"] not in automatic]   # the latest first
    return dict(progress, assessors=assessors, now=now, reports=reports,
                agreement=runtime.agreement(),
                last_hour=sum(1 for t in times if t > now - 3600),
                per_hour=[dict(hour=time.strftime("%Y-%m-%d %H:00 UTC", time.gmtime(h * 3600)), judgments=n)
                          for h, n in sorted(hours.items(), reverse=True)[:24]],
                series=series)


# ----- downloads ---------------------------------------------------------------------------------
def _download(text: str, filename: str, media_type: str = "text/plain") -> PlainTextResponse:
    return PlainTextResponse(text, media_type=media_type, headers={
        "Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"})


@router.get("/campaigns/{cid}/judgments.txt")
def download_judgments(cid: int, request: Request, nonce: str = Depends(require_session)) -> PlainTextResponse:
    return _download(registry(request).get(cid).judgments_text(), f"campaign-{cid}-judgments.txt")


@router.get("/campaigns/{cid}/judgments.{fmt}")
def download_log(cid: int, fmt: Literal["jsonl", "csv"], request: Request,
                 nonce: str = Depends(require_session)) -> PlainTextResponse:
    """The whole judgments log as JSON Lines or CSV (see ``GET /api/campaigns/{CID}/judgments?format=``)."""
    reg = registry(request)
    rows = reg.log_rows(reg.get(cid))
    text, media = (log_jsonl(rows), "application/x-ndjson") if fmt == "jsonl" else (log_csv(rows), "text/csv")
    return _download(text, f"campaign-{cid}-log.{fmt}", media)


@router.get("/campaigns/{cid}/qrels.txt")
def download_qrels(cid: int, request: Request, best: bool = False,
                   nonce: str = Depends(require_session)) -> PlainTextResponse:
    return _download(registry(request).get(cid).qrels_text(best), f"campaign-{cid}-{'best-' if best else ''}qrels.txt")
