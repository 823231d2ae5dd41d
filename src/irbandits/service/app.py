"""``create_app(settings)``: the FastAPI application of ``irbandits serve``.

At start it loads (or makes) the secrets kept beside the database (:mod:`irbandits.service.credentials`),
migrates the database, and rebuilds every campaign's process by replaying its judgments table
(:class:`irbandits.service.assign.Registry`). Routers: the judging API (:mod:`irbandits.service.api`),
the experiments' and the pages. The front end's experiment calls are served by
:class:`irbandits.service.hotroutes.HotRoutes` in front of the routers, and
:class:`irbandits.service.guard.Guard` stands in front of everything: credentials and body limits before
any work, security headers and the request log (method, masked path, status, time; never a header,
body or passage text).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from irbandits.errors import IrbanditsError
from irbandits.service.settings import Settings


def validation_message(exc: RequestValidationError) -> str:
    """A list of validation errors (FastAPI's or pydantic's) as one line: where, then what."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


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
    """The service app for ``settings``: secrets loaded, database migrated, campaigns rebuilt, routers mounted."""
    from irbandits.judging.assessors import AssessorRegistry
    from irbandits.service import api, api_experiments, pages
    from irbandits.service.assign import Registry
    from irbandits.service.auth import AssessorCache
    from irbandits.service.credentials import load_credentials, secrets_path
    from irbandits.service.db import make_engine, migrate, sessions
    from irbandits.service.guard import Guard, LoginBackoff
    from irbandits.service.hotroutes import HotRoutes

    settings = settings or Settings()
    automatic = AssessorRegistry(settings.assessors)   # --assessor mistakes stop the start here
    engine = make_engine(settings.db_url, settings.schema)
    credentials = load_credentials(engine, secrets_path(settings.db_url, settings.secrets_file),
                                   settings.admin_token, settings.session_secret)
    migrate(engine)
    app = FastAPI(title="irbandits", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.settings, app.state.engine, app.state.sessions = settings, engine, sessions(engine)
    app.state.admin_hash, app.state.new_admin_token = credentials.admin_hash, credentials.new_admin_token
    app.state.session_secret = credentials.session_secret
    app.state.logins = LoginBackoff(settings.clock)
    app.state.assessor_cache = AssessorCache(engine)
    app.state.campaigns = Registry.load(app.state.sessions, settings, automatic)
    app.router.on_shutdown.append(app.state.campaigns.stop)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": validation_message(exc)}, status_code=422)

    @app.exception_handler(IrbanditsError)
    async def _user_error(request: Request, exc: IrbanditsError):
        return JSONResponse({"detail": str(exc)}, status_code=422)

    document_errors(app)
    app.include_router(api.router)
    api_experiments.install(app)   # before the pages: each request walks the routes in order
    pages.install(app)
    # a front end's experiment calls skip FastAPI's routing; the guard stands before everything
    app.add_middleware(HotRoutes, routes=api_experiments.HOT)
    app.add_middleware(Guard, limit=settings.max_body_bytes, upload_limit=settings.max_upload_bytes)
    return app

