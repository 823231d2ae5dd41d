"""The organiser's experiment pages: ``/admin/experiments`` (the experiments with their states, and the
creation form, of rankers or of a learner) and one experiment's dashboard (its state with the Pause, Resume
and Stop buttons; for rankers the Bradley-Terry leaderboard, the per-pair matrix, the recommendation and
whether it is settled, live plots of cumulative outcomes and of the recommendation over time; for a learner
its clicks and weight updates, the current ranker's weights, live plots of cumulative outcomes and of the
clicks per impression; and the front ends' client tokens: add, revoke, restore, re-issue), on the session
of :mod:`irbandits.service.websession` like the campaign pages. They call the experiments registry
(:class:`irbandits.service.experiments.Experiments`) and its checks as the JSON routes do."""

from __future__ import annotations

import re
import time
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from irbandits.dueling.base import REGISTRY
from irbandits.errors import IrbanditsError
from irbandits.oltr import LEARNERS
from irbandits.service.api_experiments import ExperimentIn
from irbandits.service.experiment_runtime import COMPARISONS, MOVES
from irbandits.service.experiments import checked
from irbandits.service.guard import refusal, validation_message
from irbandits.service.pages import render
from irbandits.service.validation import check_text
from irbandits.service.websession import check_csrf, csrf_token, form_move, form_name, require_session

router = APIRouter(prefix="/admin", include_in_schema=False)
# the creation form's fields; ``kind``: what the experiment tests, each kind reading the fields KINDS names
FIELDS = ("name", "kind", "rankers", "algorithm", "comparison", "length", "seed", "horizon", "learner", "features")
KINDS = {"rankers": ("rankers", "algorithm", "comparison", "length", "seed", "horizon"),
         "learner": ("learner", "features", "seed")}
WHOLE = ("length", "seed", "horizon", "features")   # the form's whole-number fields; empty: the API's default
# what the algorithm field suggests: each registered algorithm, and NAME:SETTING for its named settings
ALGORITHMS = [(spec, cls.description) for name, cls in REGISTRY.items()
              for spec in (name, *(f"{name}:{setting}" for setting in cls.settings))]
# what the learner field suggests: each registered learner, and NAME:PARAM=DEFAULT for its first parameter
LEARNER_SPECS = [spec for name, cls in LEARNERS.items()
                 for spec in ((name, cls.description),
                              *((f"{name}:{p.name}={p.default}", f"{p.name}: {p.description} (default {p.default})")
                                for p in cls.params[:1]))]


def _list_page(request: Request, nonce: str, values: dict[str, str], error: str = "",
               status_code: int = 200) -> HTMLResponse:
    """The experiments and the creation form with ``values``; the field ``error`` names first is marked."""
    rows = [e.state() for e in request.app.state.experiments.experiments.values()]
    named = re.match(r"[a-z]+", error)
    return render("admin_experiments.html", status_code, csrf=csrf_token(request, nonce), experiments=rows,
                  values=values, error=error, invalid=named and named.group(), algorithms=ALGORITHMS,
                  learners=LEARNER_SPECS, comparisons=COMPARISONS)


@router.get("/experiments", response_class=HTMLResponse)
def experiment_list(request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    return _list_page(request, nonce, {"kind": "rankers", "comparison": "team-draft"})


def form_body(values: dict[str, str]) -> dict[str, Any]:
    """The creation form's fields as a ``POST /api/experiments`` body, validated as that route validates
    it (:class:`~irbandits.service.api_experiments.ExperimentIn`). ``kind`` (default ``rankers``) says what
    the experiment tests; the fields of the other kind are ignored. The rankers are one a line or separated
    by commas. A bad field: :class:`IrbanditsError` naming it."""
    kind = values.get("kind", "rankers")
    if kind not in KINDS:
        raise IrbanditsError(f"kind: give one of {', '.join(KINDS)}, got {kind!r}")
    body: dict[str, Any] = dict(name=values.get("name", "").strip())
    if kind == "learner":
        body["learner"] = values.get("learner", "").strip()
        if not body["learner"]:
            raise IrbanditsError("learner: give the online learner, e.g. PDGD or MGD:n=9")
    else:
        body.update(rankers=[r.strip() for r in re.split(r"[,\n]", values.get("rankers", "")) if r.strip()],
                    algorithm=values.get("algorithm", ""), comparison=values.get("comparison", ""))
    for field in (f for f in WHOLE if f in KINDS[kind]):
        text = values.get(field, "").strip()
        if text:
            try:
                body[field] = int(text)
            except ValueError:
                raise IrbanditsError(f"{field}: give a whole number, got {text!r}") from None
    check_text(body, "experiment")   # first: the model would name a bad text's field after "body: Value error"
    try:
        return ExperimentIn.model_validate(body).model_dump()
    except ValidationError as exc:
        raise IrbanditsError(validation_message(exc)) from None


@router.post("/experiments", response_class=HTMLResponse)
async def create_experiment(request: Request, nonce: str = Depends(require_session)) -> Response:
    """Create an experiment from the form (checked as ``POST /api/experiments`` checks its body), then its
    page; a bad field: the form again with the problem and the values kept, 422."""
    form = await request.form()
    check_csrf(request, form, nonce)
    values = {k: v for k, v in form.items() if k in FIELDS and isinstance(v, str)}
    registry = request.app.state.experiments
    try:
        runtime = await run_in_threadpool(lambda: registry.create(checked(form_body(values))))
    except IrbanditsError as exc:
        return await run_in_threadpool(_list_page, request, nonce, values, str(exc), 422)
    return RedirectResponse(f"/admin/experiments/{runtime.id}", status_code=303)


def _page(request: Request, eid: int, nonce: str, new_token: dict | None = None, status_code: int = 200,
          state_error: str = "") -> HTMLResponse:
    registry = request.app.state.experiments
    runtime = registry.get(eid)
    state = runtime.state()
    clients = [c | dict(created=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(c["created_at"])))
               for c in registry.client_list(eid)]
    template = "admin_learner.html" if runtime.learns else "admin_experiment.html"
    return render(template, status_code, csrf=csrf_token(request, nonce), s=state, clients=clients,
                  new_token=new_token, moves=MOVES[state["state"]], state_error=state_error)


@router.get("/experiments/{eid}", response_class=HTMLResponse)
def experiment_page(eid: int, request: Request, nonce: str = Depends(require_session)) -> HTMLResponse:
    return _page(request, eid, nonce)


@router.post("/experiments/{eid}/state", response_class=HTMLResponse)
async def set_state(eid: int, request: Request, nonce: str = Depends(require_session)) -> Response:
    """Move the experiment to the form's ``state`` (the buttons offer the moves its state allows), then back
    to its page; a refused move: the page with the reason (409, or 422 for no state)."""
    form = await request.form()
    check_csrf(request, form, nonce)
    refused = await form_move(form, request.app.state.experiments.get(eid), MOVES)
    if refused is not None:
        return await run_in_threadpool(_page, request, eid, nonce, None, refusal(refused)[0], str(refused))
    return RedirectResponse(f"/admin/experiments/{eid}", status_code=303)


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
