"""The service's web pages: the assessor page ``/a/TOKEN`` and its progress route, the templates
(:func:`render`) and the static files (:data:`STATIC`) the organiser pages use too; the
Content-Security-Policy and friends are set on every response by :class:`irbandits.service.guard.Guard`.

The assessor page is a shell: ``static/assessor.js`` reads the token from the page's own URL and
calls the JSON API (``/api/next``, ``/api/tasks/{TID}/answer``, ``/api/me``) on the same origin with
it as a Bearer token. The HTML never contains the token; ``Referrer-Policy: no-referrer`` keeps the
URL from leaving the site; the request log masks ``/a/TOKEN`` (:func:`irbandits.service.guard.masked`).
Every text is escaped (Jinja2 autoescaping on the server, ``textContent`` in the scripts) and shown
without bidirectional control characters (:func:`shown`, and the same in the scripts).
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup
from sqlalchemy import select

from irbandits.errors import IrbanditsError
from irbandits.service.auth import Assessed, require_assessor, token_hash
from irbandits.service.crowd import MTURK_PREVIEW, guidelines_html, platform_ids
from irbandits.service.guard import refusal
from irbandits.service.models import Assessor

HERE = Path(__file__).parent
STATIC = HERE / "static"
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def shown(value):
    """A value as a page shows it: text without bidirectional overrides, embeddings and isolates, so
    that no name or passage displays reversed or reorders its neighbours (styles isolate each one).

    >>> shown("\u202egnp.exe") + " " + str(shown(3))
    'gnp.exe 3'
    """
    return BIDI_CONTROLS.sub("", value) if isinstance(value, str) and not isinstance(value, Markup) else value


TEMPLATES = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True, trim_blocks=True,
                        lstrip_blocks=True, finalize=shown)
GRADE_LABELS = {0: "Irrelevant", 1: "Related", 2: "Highly relevant", 3: "Perfectly relevant"}

router = APIRouter()


def render(name: str, status_code: int = 200, **context) -> HTMLResponse:
    """The template ``name`` rendered (autoescaped) as a page nobody caches."""
    return HTMLResponse(TEMPLATES.get_template(name).render(**context), status_code=status_code,
                        headers={"Cache-Control": "no-store"})


@router.get("/", include_in_schema=False)
def home() -> RedirectResponse:
    return RedirectResponse("/admin", status_code=303)


@router.get("/a/{token}", response_class=HTMLResponse, include_in_schema=False)
def assessor_page(token: str, request: Request) -> HTMLResponse:
    """The assessor page of a valid, unrevoked assessor token; a 404 page otherwise."""
    with request.app.state.sessions() as session:
        who = session.scalars(select(Assessor).where(Assessor.token_hash == token_hash(token))).first()
    runtime = None if who is None or who.revoked else request.app.state.campaigns.campaigns.get(who.campaign_id)
    if runtime is None:
        return render("invalid_link.html", 404)
    grades = runtime.judge.grades if runtime.kind == "graded" else []
    crowd = runtime.crowd.s
    return render("assessor.html", campaign=runtime.name, kind=runtime.kind,
                  grades=[(g, GRADE_LABELS.get(g) if grades == [0, 1, 2, 3] else None) for g in grades],
                  guidelines=guidelines_html(crowd["guidelines"]) if crowd.get("guidelines") else None,
                  consent=crowd.get("consent"), practice=len(runtime.crowd.practice))


@router.get("/j/{token}", response_class=HTMLResponse, include_in_schema=False)
def join(token: str, request: Request) -> Response:
    """A campaign's join link: the worker's platform ids from the query string make (or find again)
    their assessor, and the page sends them on to their own assessor page; an MTurk preview shows the
    guidelines only. A refusal (closed, full, withdrawn, ids missing or malformed) is a page saying why."""
    registry = request.app.state.campaigns
    runtime = registry.find_join(request.app.state.session_secret, token)
    if runtime is None:
        return render("invalid_link.html", 404)
    guidelines = guidelines_html(runtime.crowd.s.get("guidelines", "")) or None
    params = dict(request.query_params)
    if params.get("assignmentId") == MTURK_PREVIEW:
        return render("join_refused.html", title=runtime.name, guidelines=guidelines,
                      why="This is a preview: accept the HIT to start judging.")
    try:
        found = platform_ids(params)
        if found is None:
            raise IrbanditsError("open this link from your crowd platform: it needs your worker id "
                                 "(PROLIFIC_PID or workerId)")
        assessor_token = registry.join(runtime, request.app.state.session_secret, *found)
    except IrbanditsError as exc:
        return render("join_refused.html", refusal(exc)[0], title="Cannot join", why=str(exc))
    return RedirectResponse(f"/a/{assessor_token}", status_code=303)


@router.get("/api/me")
def my_progress(request: Request, who: Assessed = Depends(require_assessor)) -> dict:
    """The assessor page's progress line: this assessor's answers and the campaign's finished topics,
    and the campaign's ``state`` (running, paused, closed or archived), which tells a page that got 204
    from ``/api/next`` whether the campaign is paused or closed rather than out of work for now."""
    registry = request.app.state.campaigns
    runtime = registry.get(who.campaign_id)
    progress = runtime.progress()
    me = dict(name=who.name, answered=runtime.answers().get(who.id, 0),
              topics=len(progress["topics"]), topics_done=sum(t["done"] for t in progress["topics"]),
              done=progress["done"], state=progress["state"])
    if runtime.crowd.s:
        me |= runtime.crowd.progress(who.id, request.app.state.settings.clock(), progress["done"])
        if me["stage"] == "finished":
            me["completion"] = runtime.crowd.completion(registry.assessor(runtime, who.id).code)
    return me
