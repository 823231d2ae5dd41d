"""``HotRoutes``: a raw ASGI dispatcher that serves a few routes in front of the FastAPI app.

FastAPI's routing, dependency solving and middleware stack cost more CPU per request than the work of a
front end's experiment calls (route matching alone walks every route of the app). The dispatcher takes
a request whose method is POST and whose path fully matches one of its ``routes`` (pairs of a compiled
pattern with one numeric group and a handler, e.g. :data:`irbandits.service.api_experiments.HOT`) and
does what the app's exception handlers would do for it, once:

- the handler ``handler(app state, id, Authorization header, body) -> (status, JSON bytes)``;
- refusals as the app answers them: a domain error (:class:`irbandits.errors.IrbanditsError` and its
  subclasses) by the one table of
  :func:`irbandits.service.guard.refusal`, ``RequestValidationError`` as 422, each with the body
  ``{"detail": "..."}``; any other error is left to the server-error middleware around it (500).

It sits behind :class:`irbandits.service.guard.Guard`, which has checked the token's existence and the
body limit, and adds the security headers and the log line. Every other request goes to the app
unchanged.
"""

from __future__ import annotations

from fastapi.exceptions import RequestValidationError

from irbandits.errors import IrbanditsError
from irbandits.service.guard import detail, header, json_answer, read_body, refusal, validation_message


class HotRoutes:
    """ASGI middleware: ``routes`` served directly (see the module)."""

    def __init__(self, app, routes):
        self.app, self.routes = app, routes

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            for pattern, handler in self.routes:
                match = pattern.fullmatch(scope["path"])
                if match is not None:
                    return await self._serve(scope, receive, send, handler, int(match[1]))
        await self.app(scope, receive, send)

    async def _serve(self, scope, receive, send, handler, key: int) -> None:
        body, headers = await read_body(scope, receive, 1 << 62), []   # the guard held it to its limit
        try:
            status, payload = await handler(scope["app"].state, key, header(scope, b"authorization"), body)
        except IrbanditsError as exc:
            status, payload, headers = refusal(exc)
        except RequestValidationError as exc:
            status, payload = 422, detail(validation_message(exc))
        await json_answer(send, status, payload, headers)
