"""``create_app(settings)``: the FastAPI application of ``irbandits serve``.

At start it migrates the database, loads (or makes) the organiser credential and rebuilds every
campaign's process by replaying its judgments table (:class:`irbandits.service.assign.Registry`).
Routers: the judging API (:mod:`irbandits.service.api`); pages and later parts add theirs here. The
front end's experiment calls are served by :class:`irbandits.service.hotroutes.HotRoutes` in front of
all of it.
Requests are logged as method, path, status and time only: ``/a/TOKEN`` paths are masked, and no
header, body or passage text is ever logged.
"""

from __future__ import annotations

import json
import logging
import re
import time

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from irbandits.errors import IrbanditsError
from irbandits.service.settings import Settings

log = logging.getLogger("irbandits.service")
_SECRET_PATH = re.compile(r"^/a/[^/]+")


def masked(path: str) -> str:
    """A request path fit for the log: the token of ``/a/TOKEN`` replaced by ``***``.

    >>> masked("/a/Xy_z12/next")
    '/a/***/next'
    """
    return _SECRET_PATH.sub("/a/***", path)


async def read_body(scope, receive, limit: int) -> bytes | None:
    """A request's whole body, or None when it is over ``limit`` bytes (by Content-Length or by the bytes
    streamed; reading stops there)."""
    declared = next((value for name, value in scope["headers"] if name == b"content-length"), None)
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            return None
        more = message.get("more_body", False)
    return b"".join(chunks)


def too_large(limit: int) -> bytes:
    """The body of a 413."""
    return json.dumps({"detail": f"request body over the limit of {limit} bytes"}).encode()


class BodyLimit:
    """ASGI middleware: 413 for a body over ``limit`` bytes, by Content-Length or by the bytes streamed."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        body, sent = await read_body(scope, receive, self.limit), False
        if body is None:
            return await self._refuse(send)

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send):
        payload = too_large(self.limit)
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
        await send({"type": "http.response.body", "body": payload})


def log_request(method: str, path: str, status: int, start: float) -> None:
    """The request's log line: ``METHOD masked-path status time`` (``start``: its ``perf_counter()``)."""
    log.info("%s %s %d %.1f ms", method, masked(path), status, 1000 * (time.perf_counter() - start))


class RequestLog:
    """ASGI middleware: one log line per request (:func:`log_request`), nothing else."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status = time.perf_counter(), [500]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            log_request(scope["method"], scope["path"], status[0], start)


def validation_message(exc: RequestValidationError) -> str:
    """A list of validation errors (FastAPI's or pydantic's) as one line: where, then what."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service app for ``settings``: database migrated, campaigns rebuilt, routers mounted."""
    from irbandits.service import api, api_experiments, pages
    from irbandits.service.assign import Registry
    from irbandits.service.auth import AssessorCache, admin_hash
    from irbandits.service.db import make_engine, migrate, sessions
    from irbandits.service.hotroutes import HotRoutes

    settings = settings or Settings()
    engine = make_engine(settings.db_url, settings.schema)
    migrate(engine)
    app = FastAPI(title="irbandits", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.settings, app.state.engine, app.state.sessions = settings, engine, sessions(engine)
    with app.state.sessions() as session:
        app.state.admin_hash, app.state.new_admin_token = admin_hash(session, settings.clock, settings.admin_token)
    app.state.assessor_cache = AssessorCache(engine)
    app.state.campaigns = Registry.load(app.state.sessions, settings)
    app.router.on_shutdown.append(app.state.campaigns.stop)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": validation_message(exc)}, status_code=422)

    @app.exception_handler(IrbanditsError)
    async def _user_error(request: Request, exc: IrbanditsError):
        return JSONResponse({"detail": str(exc)}, status_code=422)

    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(RequestLog)
    app.include_router(api.router)
    api_experiments.install(app)   # before the pages: each request walks the routes in order
    pages.install(app)
    # last, so outermost: a front end's experiment calls skip the middleware and routing above
    app.add_middleware(HotRoutes, routes=api_experiments.HOT, limit=settings.max_body_bytes)
    return app

