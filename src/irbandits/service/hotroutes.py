"""``HotRoutes``: a raw ASGI dispatcher that serves a few routes in front of the FastAPI app.

FastAPI's routing, dependency solving and middleware stack cost more CPU per request than the work of a
front end's experiment calls (route matching alone walks every route of the app). The dispatcher takes
a request whose method is POST and whose path fully matches one of its ``routes`` (pairs of a compiled
pattern with one numeric group and a handler, e.g. :data:`irbandits.service.api_experiments.HOT`) and
does what the app's middleware and exception handlers would do for it, once:

- the body limit: 413 for a body over ``limit`` bytes (:func:`irbandits.service.app.read_body`);
- the handler ``handler(app state, id, Authorization header, body) -> (status, JSON bytes)``;
- refusals as the app answers them: ``HTTPException`` with its status and headers,
  ``IrbanditsError`` and ``RequestValidationError`` as 422, each with the body ``{"detail": "..."}``;
  any other error is left to the server-error middleware around it (500);
- the security headers of :mod:`irbandits.service.pages` and the request's log line
  (:func:`irbandits.service.app.log_request`).

Every other request goes to the app unchanged. Add it to the app last, so that it runs first.
"""

from __future__ import annotations

import json
import time

from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException

from irbandits.errors import IrbanditsError
from irbandits.service.app import log_request, read_body, too_large, validation_message
from irbandits.service.pages import SecurityHeaders

JSON = (b"content-type", b"application/json")


def detail(message) -> bytes:
    """An error body, encoded as FastAPI's ``JSONResponse`` encodes it."""
    return json.dumps({"detail": message}, ensure_ascii=False, separators=(",", ":")).encode()


class HotRoutes:
    """ASGI middleware: ``routes`` served directly (see the module); ``limit``: the body limit in bytes."""

    def __init__(self, app, routes, limit: int):
        self.app, self.routes, self.limit = app, routes, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            for pattern, handler in self.routes:
                match = pattern.fullmatch(scope["path"])
                if match is not None:
                    return await self._serve(scope, receive, send, handler, int(match[1]))
        await self.app(scope, receive, send)

    async def _serve(self, scope, receive, send, handler, key: int) -> None:
        start, status = time.perf_counter(), 500
        try:
            body, headers = await read_body(scope, receive, self.limit), []
            if body is None:
                status, payload = 413, too_large(self.limit)
            else:
                authorization = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), "")
                try:
                    status, payload = await handler(scope["app"].state, key, authorization, body)
                except HTTPException as exc:
                    status, payload = exc.status_code, detail(exc.detail)
                    headers = [(k.lower().encode("latin-1"), v.encode("latin-1"))
                               for k, v in (exc.headers or {}).items()]
                except IrbanditsError as exc:
                    status, payload = 422, detail(str(exc))
                except RequestValidationError as exc:
                    status, payload = 422, detail(validation_message(exc))
            await send({"type": "http.response.start", "status": status,
                        "headers": [JSON, (b"content-length", b"%d" % len(payload)), *headers,
                                    *SecurityHeaders.HEADERS]})
            await send({"type": "http.response.body", "body": payload})
        finally:
            log_request("POST", scope["path"], status, start)
