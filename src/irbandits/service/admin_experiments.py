"""The organiser's experiment pages: ``/admin/experiments`` and one experiment's dashboard (the
Bradley-Terry leaderboard, the per-pair matrix, the recommendation and whether it is settled, live
plots of cumulative outcomes and of the recommendation over time, and the front ends' client tokens:
add, revoke, restore, re-issue), on the session of :mod:`irbandits.service.websession` like the
campaign pages. They call the experiments registry (:class:`irbandits.service.experiment_runtime.Experiments`)
as the JSON routes do."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from irbandits.service.pages import render
from irbandits.service.websession import check_csrf, csrf_token, form_name, require_session

router = APIRouter(prefix="/admin", include_in_schema=False)


@router.get("/experiments", response_class=HTMLResponse)
def experiment_list(request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    rows = [e.state() for e in request.app.state.experiments.experiments.values()]
    return render("admin_experiments.html", csrf=csrf_token(request, nonce), experiments=rows)


def _page(request: Request, eid: int, nonce: str, new_token: dict | None = None, status_code: int = 200):
    registry = request.app.state.experiments
    state = registry.get(eid).state()
    clients = [c | dict(created=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(c["created_at"])))
               for c in registry.client_list(eid)]
    return render("admin_experiment.html", status_code, csrf=csrf_token(request, nonce), s=state, clients=clients,
                  new_token=new_token)


@router.get("/experiments/{eid}", response_class=HTMLResponse)
def experiment_page(eid: int, request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    return _page(request, eid, nonce)


@router.get("/experiments/{eid}/state.json")
def experiment_state(eid: int, request: Request, nonce: str = Depends(require_session)) -> dict:
    """What the page's script refreshes every 5 seconds."""
    return request.app.state.experiments.get(eid).state()


@router.post("/experiments/{eid}/clients", response_class=HTMLResponse)
async def add_client(eid: int, request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    """Add a front end's client token and show it once (only its hash is stored)."""
    form = await request.form()
    check_csrf(request, form, nonce)
    name = form_name(form, "client")
    _, token = await run_in_threadpool(request.app.state.experiments.add_client, eid, name)
    return await run_in_threadpool(_page, request, eid, nonce, dict(name=name, token=token), 201)


@router.post("/experiments/{eid}/clients/{client}/revoke")
async def revoke_client(eid: int, client: int, request: Request,
                        nonce: str = Depends(require_session)) -> RedirectResponse:
    """Revoke a client token (the form's ``revoked`` is 1) or restore it (0), then back to the page."""
    form = await request.form()
    check_csrf(request, form, nonce)
    await run_in_threadpool(request.app.state.experiments.set_client_revoked, eid, client,
                            str(form.get("revoked", "")) == "1")
    return RedirectResponse(f"/admin/experiments/{eid}", status_code=303)


@router.post("/experiments/{eid}/clients/{client}/token", response_class=HTMLResponse)
async def new_client_token(eid: int, client: int, request: Request,
                           nonce: str = Depends(require_session)) -> HTMLResponse:
    """Issue a new token for a client (the old one stops working) and show it once."""
    form = await request.form()
    check_csrf(request, form, nonce)
    registry = request.app.state.experiments
    token = await run_in_threadpool(registry.reissue_client, eid, client)
    name = next(c["name"] for c in registry.client_list(eid) if c["id"] == client)
    return await run_in_threadpool(_page, request, eid, nonce, dict(name=name, token=token), 201)
