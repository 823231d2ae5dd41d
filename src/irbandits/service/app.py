"""``create_app(settings)``: the FastAPI application of ``irbandits serve``.

At start it loads (or makes) the secrets kept beside the database (:mod:`irbandits.service.credentials`),
migrates the database, and rebuilds every campaign's process by replaying its judgments table
(:class:`irbandits.service.campaigns.Campaigns`). Routers: the judging API (:mod:`irbandits.service.api`),
the experiments' and the pages. The front end's experiment calls are served by
:class:`irbandits.service.hotroutes.HotRoutes` in front of the routers, and
:class:`irbandits.service.guard.Guard` stands in front of everything: credentials and body limits before
any work, security headers and the request log (method, masked path, status, time; never a header,
body or passage text).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from irbandits.errors import IrbanditsError
from irbandits.service.guard import refusal, validation_message
from irbandits.service.settings import Settings


def document_errors(app: FastAPI) -> None:
    """Make the app's OpenAPI schema describe its error bodies as they are, ``{"detail": "one line"}``
    (FastAPI documents its own list of validation errors, which :func:`validation_message` joins)."""
    generate = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            schemas = generate()["components"]["schemas"]
            schemas.pop("ValidationError", None)
            schemas["HTTPValidationError"] = {"title": "Error", "type": "object", "required": ["detail"],
                                              "properties": {"detail": {"title": "Detail", "type": "string"}}}
        return app.openapi_schema

    app.openapi = openapi


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service app for ``settings``: secrets loaded, database migrated, campaigns and experiments
    rebuilt, every router mounted (the one place the app is assembled)."""
    from fastapi.staticfiles import StaticFiles

    from irbandits.judging.assessors import AssessorRegistry
    from irbandits.service import admin, admin_crowd, admin_experiments, api, api_crowd, api_experiments, pages
    from irbandits.service.auth import AssessorCache
    from irbandits.service.campaigns import Campaigns
    from irbandits.service.credentials import load_credentials, secrets_path
    from irbandits.service.db import make_engine, migrate, sessions
    from irbandits.service.experiments import Experiments
    from irbandits.service.guard import Guard, LoginBackoff
    from irbandits.service.hotroutes import HotRoutes

    settings = settings or Settings()
    automatic = AssessorRegistry(settings.assessors)   # --assessor mistakes stop the start here
    engine = make_engine(settings.db_url, settings.schema)
    credentials = load_credentials(engine, secrets_path(settings.db_url, settings.secrets_file),
                                   settings.admin_token, settings.session_secret)
    migrate(engine)
    # redirect_slashes off: Starlette would answer "/admin/" with an absolute URL built from the Host header
    app = FastAPI(title="irbandits", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json",
                  redirect_slashes=False)
    state = app.state
    state.settings, state.engine, state.sessions = settings, engine, sessions(engine)
    state.admin_hash, state.new_admin_token = credentials.admin_hash, credentials.new_admin_token
    state.session_secret = credentials.session_secret
    state.logins = LoginBackoff(settings.clock)
    state.assessor_cache = AssessorCache(engine)
    state.campaigns = Campaigns.load(state.sessions, settings, automatic)
    state.experiments = Experiments.load(state.sessions, settings)
    app.router.on_shutdown.append(state.campaigns.stop)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": validation_message(exc)}, status_code=422)

    @app.exception_handler(IrbanditsError)
    async def _refused(request: Request, exc: IrbanditsError):
        status, body, headers = refusal(exc)
        return Response(body, status, {k.decode(): v.decode() for k, v in headers}, media_type="application/json")

    document_errors(app)
    for module in (api, api_crowd, api_experiments, admin_experiments, pages, admin, admin_crowd):   # each request walks them in order
        app.include_router(module.router)
    app.mount("/static", StaticFiles(directory=pages.STATIC), name="static")
    # a front end's experiment calls skip FastAPI's routing; the guard stands before everything
    app.add_middleware(HotRoutes, routes=api_experiments.HOT)
    app.add_middleware(Guard, limit=settings.max_body_bytes, upload_limit=settings.max_upload_bytes,
                       impression_limit=settings.max_impression_bytes)
    return app
