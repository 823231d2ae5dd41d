"""The organiser's experiment pages: ``/admin/experiments`` and one experiment's dashboard (the
Bradley-Terry leaderboard, the per-pair matrix, the recommendation and whether it is settled, live
plots of cumulative outcomes and of the recommendation over time), on the session of
:mod:`irbandits.service.websession` like the campaign pages."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from irbandits.service.pages import render
from irbandits.service.websession import csrf_token, require_session

router = APIRouter(prefix="/admin", include_in_schema=False)


@router.get("/experiments", response_class=HTMLResponse)
def experiment_list(request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    rows = [e.state() for e in request.app.state.experiments.experiments.values()]
    return render("admin_experiments.html", csrf=csrf_token(request, nonce), experiments=rows)


@router.get("/experiments/{eid}", response_class=HTMLResponse)
def experiment_page(eid: int, request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    state = request.app.state.experiments.get(eid).state()
    return render("admin_experiment.html", csrf=csrf_token(request, nonce), s=state)


@router.get("/experiments/{eid}/state.json")
def experiment_state(eid: int, request: Request, nonce: str = Depends(require_session)) -> dict:
    """What the page's script refreshes every 5 seconds."""
    return request.app.state.experiments.get(eid).state()
