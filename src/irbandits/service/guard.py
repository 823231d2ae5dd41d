"""``Guard``: the outermost ASGI layer of ``irbandits serve``, what every request passes before any work.

Before a byte of the body is read:

- an ``/api/`` call (but the OpenAPI schema) needs a known, unrevoked token (the organiser's, an
  assessor's or an experiment client's), else 401; an assessor's opens no experiment route, and the
  routes with large bodies take only their own callers' tokens (:func:`credential_refusal`); which role
  any other route needs is checked later, by the route. An organiser page's POST needs a valid session, else 303 to the login; the login form
  answers 429 while its client backs off after failed logins (:class:`LoginBackoff`);
- the route's body limit: the organiser's campaign uploads (``POST /api/campaigns``, the creation
  form) take ``max_upload_bytes``, an experiment's impressions ``max_impression_bytes`` (a learner's
  candidate documents come with their features), every other route ``max_body_bytes`` (an answer, a
  list, a vote are a few hundred bytes); over it: 413, by Content-Length at once or by the bytes
  streamed. The body is then read once and replayed to the app.

On every answer: the security headers (:data:`SECURITY_HEADERS`; HSTS when the request came over
HTTPS, directly or through a proxy uvicorn trusts) and one log line, ``METHOD path status time``,
with every token-shaped path segment masked (:func:`masked`). The helpers here serve the app and
:class:`irbandits.service.hotroutes.HotRoutes` alike: body reading, the one table of status codes of
the domain errors (:data:`STATUS`, :func:`refusal`), validation messages, error bodies, the log line.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import time
from collections import OrderedDict

from irbandits.errors import Conflict, Forbidden, IrbanditsError, NotFound, Unauthorized, Unavailable
from irbandits.service.credentials import token_hash
from irbandits.service.websession import cookie_nonce

log = logging.getLogger("irbandits.service")

SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}
HEADERS = [(name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]
HSTS = (b"strict-transport-security", b"max-age=31536000")
JSON = (b"content-type", b"application/json")
UPLOADS = ("/api/campaigns", "/admin/campaigns")   # POST: the only routes that take large bodies ...
IMPRESSIONS = re.compile(r"/api/experiments/([0-9]+)/impressions")   # ... but a learner's impressions
_TOKENISH = re.compile(r"[A-Za-z0-9_-]{20,}")


def masked(path: str) -> str:
    """A request path fit for the log: the segment after any ``a`` segment and every token-shaped one
    (20 or more URL-safe characters) replaced by ``***``, however the route is spelled.

    >>> masked("/a/Xy_z12/next")
    '/a/***/next'
    >>> masked("//A/abc") + " " + masked("/x/" + "t" * 43)
    '//A/*** /x/***'
    """
    parts = path.split("/")
    return "/".join("***" if (i and parts[i - 1].lower() == "a") or _TOKENISH.fullmatch(part) else part
                    for i, part in enumerate(parts))


def log_request(method: str, path: str, status: int, start: float) -> None:
    """The request's log line: ``METHOD masked-path status time`` (``start``: its ``perf_counter()``)."""
    log.info("%s %s %d %.1f ms", method, masked(path), status, 1000 * (time.perf_counter() - start))


def detail(message) -> bytes:
    """An error body, encoded as FastAPI's ``JSONResponse`` encodes it."""
    return json.dumps({"detail": message}, ensure_ascii=False, separators=(",", ":")).encode()


WWW_AUTHENTICATE = (b"www-authenticate", b"Bearer")
MISSING = "missing bearer token (Authorization: Bearer TOKEN)"
NOT_A_CLIENT = "unknown token: use the organiser token or this experiment's client token"
NOT_ORGANISER = "this endpoint needs the organiser token"
STATUS = {NotFound: 404, Conflict: 409, Unauthorized: 401, Forbidden: 403, Unavailable: 503, IrbanditsError: 422}


def refusal(exc: IrbanditsError) -> tuple[int, bytes, list]:
    """``(status, body, headers)`` of a domain error, by :data:`STATUS` (the nearest class that names one)."""
    status = next(STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS)
    return status, detail(str(exc)), [WWW_AUTHENTICATE] if status == 401 else []


def validation_message(exc) -> str:
    """A list of validation errors (FastAPI's ``RequestValidationError`` or pydantic's) as one line:
    where, then what."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(x) for x in err.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def too_large(limit: int) -> bytes:
    """The body of a 413."""
    return detail(f"request body over the limit of {limit} bytes")


async def json_answer(send, status: int, payload: bytes, headers=()) -> None:
    """Send a whole JSON response (the security headers are added by :class:`Guard` on the way out)."""
    await send({"type": "http.response.start", "status": status,
                "headers": [JSON, (b"content-length", b"%d" % len(payload)), *headers]})
    await send({"type": "http.response.body", "body": payload})


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


def header(scope, name: bytes) -> str:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == name), "")


def bearer_of(authorization: str) -> str | None:
    """The token of an ``Authorization`` header's value, or None when it names none."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def token_role(state, digest: str) -> str:
    """Whose token the hash ``digest`` is: ``organiser``, ``client`` (of an experiment), ``assessor``,
    ``revoked`` (an assessor's, revoked) or ``unknown``."""
    if hmac.compare_digest(digest, state.admin_hash):
        return "organiser"
    if digest in state.experiments.clients:
        return "client"
    row = state.assessor_cache.get(digest)
    return "unknown" if row is None else "revoked" if row.revoked else "assessor"


def credential_refusal(state, method: str, path: str, authorization: str) -> tuple[int, str] | None:
    """``(status, why)`` when an ``/api/`` call's token cannot open its route, else None: a missing,
    unknown or revoked token (401); an assessor's on an experiment's routes (401, as those routes say);
    and, on the routes whose bodies are large, any token but the one those routes take: the campaign
    upload is the organiser's (403 for an assessor), an experiment's impressions its own client's (404)."""
    token = bearer_of(authorization)
    if token is None:
        return 401, MISSING
    digest = token_hash(token)
    role = token_role(state, digest)
    experiment = path.startswith(("/api/experiments", "/api/impressions"))
    if role == "revoked":
        return 401, "this assessor token is revoked"
    if role == "unknown" or (role == "assessor" and experiment):
        return 401, NOT_A_CLIENT if experiment else "unknown token"
    if method == "POST" and path in UPLOADS and role != "organiser":
        return (403, NOT_ORGANISER) if role == "assessor" else (401, "unknown token")
    large = IMPRESSIONS.fullmatch(path) if method == "POST" else None
    if large and role == "client" and state.experiments.clients[digest] != int(large.group(1)):
        return 404, f"no experiment {int(large.group(1))}"
    return None


class LoginBackoff:
    """Failed organiser logins per client address: after :attr:`FREE` failures each further one doubles
    the wait before the next try (1 s, 2 s, 4 s, ... at most :attr:`CAP`); a success clears it. At most
    :attr:`KEEP` addresses are remembered (the oldest are forgotten first)."""

    FREE, CAP, KEEP = 5, 900.0, 10_000

    def __init__(self, clock):
        self.clock = clock
        self.failures: OrderedDict[str, tuple[int, float]] = OrderedDict()   # client -> (failures, until)

    def wait(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        _, until = self.failures.get(client, (0, 0.0))
        return max(0.0, until - self.clock())

    def failed(self, client: str) -> None:
        n = self.failures.pop(client, (0, 0.0))[0] + 1
        until = self.clock() + min(2.0 ** (n - self.FREE - 1), self.CAP) if n > self.FREE else 0.0
        self.failures[client] = (n, until)
        while len(self.failures) > self.KEEP:
            self.failures.popitem(last=False)

    def succeeded(self, client: str) -> None:
        self.failures.pop(client, None)


def client_address(scope) -> str:
    return (scope.get("client") or ("unknown", 0))[0]


class Guard:
    """ASGI middleware, outermost: credentials and body limits before any work, then headers and the log
    line on every answer (see the module)."""

    def __init__(self, app, limit: int, upload_limit: int, impression_limit: int):
        self.app, self.limit, self.upload_limit, self.impression_limit = app, limit, upload_limit, impression_limit

    def _limit(self, scope) -> int:
        """The body limit of the request's route (see the module)."""
        if scope["method"] != "POST":
            return self.limit
        if scope["path"] in UPLOADS:
            return self.upload_limit
        return self.impression_limit if IMPRESSIONS.fullmatch(scope["path"]) else self.limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status, https = time.perf_counter(), [500], scope.get("scheme") == "https"

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                have = {name.lower() for name, _ in message.get("headers", ())}
                message["headers"] = [*message.get("headers", ()), *(h for h in HEADERS if h[0] not in have),
                                      *([HSTS] if https else [])]
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                return await json_answer(sending, *refusal)
            limit = self._limit(scope)
            body = await read_body(scope, receive, limit)
            if body is None:
                return await json_answer(sending, 413, too_large(limit))
            await self.app(scope, replay(body, receive), sending)
        finally:
            log_request(scope["method"], scope["path"], status[0], start)

    def _refusal(self, scope) -> tuple[int, bytes, list] | None:
        """``(status, body, headers)`` of a request refused before its body is read, or None."""
        path, state = scope["path"], scope["app"].state
        if path.startswith("/api/") and path != "/api/openapi.json":
            refused = credential_refusal(state, scope["method"], path, header(scope, b"authorization"))
            if refused is None:
                return None
            status, why = refused
            return status, detail(why), [WWW_AUTHENTICATE] if status == 401 else []
        if scope["method"] != "POST" or not path.startswith("/admin"):
            return None
        if path == "/admin/login":
            wait = state.logins.wait(client_address(scope))
            if wait > 0:
                return 429, detail(f"too many failed logins: try again in {wait:.0f} s"), [
                    (b"retry-after", b"%d" % max(1, round(wait)))]
            return None
        if cookie_nonce(state, header(scope, b"cookie")) is None:
            return 303, detail("log in first"), [(b"location", b"/admin/login")]
        return None


def replay(body: bytes, receive):
    """A ``receive`` that gives ``body`` once, then waits on the real one (for the disconnect)."""
    sent = False

    async def receiving():
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receiving
