"""The organiser's crowd controls on a campaign's dashboard (module :mod:`irbandits.service.crowd`): the
join link (make with a cap, close, open, rotate), the crowd settings form, and the payment report as a
CSV download. Each calls what the JSON routes of :mod:`irbandits.service.api_crowd` call."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from irbandits.errors import IrbanditsError
from irbandits.service.admin import _dashboard, _download, registry
from irbandits.service.api_crowd import payment_csv
from irbandits.service.crowd import check_crowd
from irbandits.service.guard import refusal
from irbandits.service.websession import check_csrf, require_session

router = APIRouter(prefix="/admin", include_in_schema=False)
NUMBERS = {"practice_pass": float, "quota": int, "bundles": int, "time_limit": int}


def _number(form, name: str, kind: type) -> Any:
    text = str(form.get(name, "")).strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise IrbanditsError(f"crowd.{name}: give a {'whole ' if kind is int else ''}number, got {text!r}") from None


def crowd_from_form(form) -> dict[str, Any] | None:
    """The crowd settings of the dashboard's form; blank fields are left out (None: nothing set).
    Practice pairs are one a line: ``topic better worse`` and an optional note after them."""
    crowd: dict[str, Any] = {}
    for name in ("guidelines", "consent", "completion_code", "completion_url"):
        text = str(form.get(name, "")).strip()
        if text:
            crowd[name] = text
    for name, kind in NUMBERS.items():
        value = _number(form, name, kind)
        if value is not None:
            crowd[name] = value
    practice = [line.split(maxsplit=3) for line in str(form.get("practice", "")).splitlines() if line.strip()]
    if practice:
        crowd["practice"] = practice
    targets, checks = _number(form, "bundle_targets", int), _number(form, "bundle_checks", int)
    if targets is not None or checks is not None:
        share = _number(form, "bundle_pass", float)
        crowd["bundle"] = ({"targets": targets, "checks": checks, "scope": "worker" if form.get("bundle_worker") else "bundle"}
                           | ({"pass": share} if share is not None else {}))
    return crowd or None


@router.post("/campaigns/{cid}/crowd", response_class=Response)
async def save_crowd(cid: int, request: Request, nonce: str = Depends(require_session)) -> Response:
    """Save the crowd settings form, then back to the dashboard; a problem: the dashboard saying it (422/409)."""
    form = await request.form()
    check_csrf(request, form, nonce)
    runtime = registry(request).get(cid)
    try:
        crowd = check_crowd(crowd_from_form(form), runtime.kind, runtime.topics, runtime.texts, runtime.tests)
        await run_in_threadpool(runtime.set_crowd, crowd)
    except IrbanditsError as exc:
        return await run_in_threadpool(_dashboard, request, cid, nonce, None, refusal(exc)[0], "", "", str(exc))
    return RedirectResponse(f"/admin/campaigns/{cid}#crowd", status_code=303)


@router.post("/campaigns/{cid}/join", response_class=Response)
async def change_join_link(cid: int, request: Request, nonce: str = Depends(require_session)) -> Response:
    """The join link's buttons: ``action`` make (with ``cap``), cap, close, open or rotate."""
    form = await request.form()
    check_csrf(request, form, nonce)
    reg = registry(request)
    runtime = reg.get(cid)
    action = form.get("action")
    try:
        cap = _number(form, "cap", int) if action in ("make", "cap") else None
        if action not in ("make", "cap", "close", "open", "rotate"):
            raise IrbanditsError(f"action: give make, cap, close, open or rotate, got {action!r}")
        if action in ("make", "cap") and (cap is None or not 1 <= cap <= 100_000):
            raise IrbanditsError("cap: give how many assessors the link may create (1 to 100,000)")
        await run_in_threadpool(reg.set_join_link, runtime, cap, {"close": False, "open": True}.get(action),
                                action == "rotate")
    except IrbanditsError as exc:
        return await run_in_threadpool(_dashboard, request, cid, nonce, None, refusal(exc)[0], "", "", str(exc))
    return RedirectResponse(f"/admin/campaigns/{cid}#crowd", status_code=303)


@router.get("/campaigns/{cid}/payments.csv")
def download_payments(cid: int, request: Request, nonce: str = Depends(require_session)) -> PlainTextResponse:
    """The payment report (see ``GET /api/campaigns/{CID}/payments``) as a CSV download."""
    reg = registry(request)
    return _download(payment_csv(reg.payments(reg.get(cid))), f"campaign-{cid}-payments.csv", "text/csv")
