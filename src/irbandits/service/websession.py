"""The organiser's browser session: a signed cookie and CSRF tokens.

- The signing key is ``HMAC(session secret, organiser token hash)``; the secret is kept outside the
  database (:mod:`irbandits.service.credentials`), so sessions survive a restart and a copy of the
  database signs nothing. Changing the organiser token ends every session.
- The session cookie is ``issued.nonce.signature`` (HttpOnly, SameSite=Strict, Path=/admin, and
  Secure when the page came over HTTPS), valid for :data:`MAX_AGE` seconds; it holds no token.
- A form's CSRF token is ``HMAC(key, purpose, nonce)``: the session's nonce on the organiser pages,
  and on the login form the nonce of a short-lived login cookie (a double-submit token that the
  server can check without state). A POST without the matching token is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import HTTPException, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import cookie_parser

from irbandits.errors import IrbanditsError

SESSION_COOKIE = "irbandits_admin"
LOGIN_COOKIE = "irbandits_login"
MAX_AGE = 12 * 3600


def _key(state) -> bytes:
    return hmac.new(state.session_secret, state.admin_hash.encode(), hashlib.sha256).digest()


def _sign(state, *parts: str) -> str:
    return hmac.new(_key(state), "|".join(parts).encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def _set(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/admin", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")


# ----- the session -------------------------------------------------------------------------------
def start_session(request: Request, response: Response) -> None:
    """Give the browser a fresh signed session cookie (after a correct organiser token)."""
    state = request.app.state
    issued, nonce = str(int(state.settings.clock())), secrets.token_urlsafe(16)
    _set(request, response, SESSION_COOKIE, f"{issued}.{nonce}.{_sign(state, 'session', issued, nonce)}", MAX_AGE)
    response.delete_cookie(LOGIN_COOKIE, path="/admin", httponly=True, samesite="strict")


def end_session(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/admin", httponly=True, samesite="strict")


def session_nonce(request: Request) -> str | None:
    """The nonce of the request's valid, unexpired session cookie, else None."""
    return valid_nonce(request.app.state, request.cookies.get(SESSION_COOKIE, ""))


def cookie_nonce(state, cookie_header: str) -> str | None:
    """:func:`session_nonce` from a raw ``Cookie`` header (before the request is parsed)."""
    return valid_nonce(state, cookie_parser(cookie_header).get(SESSION_COOKIE, ""))


def valid_nonce(state, cookie: str) -> str | None:
    issued, _, rest = cookie.partition(".")
    nonce, _, signature = rest.partition(".")
    if not (issued.isascii() and issued.isdigit() and len(issued) <= 12 and nonce and signature):
        return None
    if not hmac.compare_digest(signature.encode("utf-8", "surrogatepass"),
                               _sign(state, "session", issued, nonce).encode()):
        return None
    age = state.settings.clock() - int(issued)
    return nonce if -60 <= age <= MAX_AGE else None


def require_session(request: Request) -> str:
    """FastAPI dependency of the organiser pages: the session's nonce, else a redirect to the login."""
    nonce = session_nonce(request)
    if nonce is None:
        raise HTTPException(303, "log in first", headers={"Location": "/admin/login"})
    return nonce


# ----- CSRF --------------------------------------------------------------------------------------
def csrf_token(request: Request, nonce: str, purpose: str = "csrf") -> str:
    """The CSRF token that forms of this session (or login cookie) carry."""
    return _sign(request.app.state, purpose, nonce)


def check_csrf(request: Request, form, nonce: str | None, purpose: str = "csrf") -> None:
    """403 unless the form's ``csrf`` field is this session's token."""
    sent = form.get("csrf")
    if not (nonce and isinstance(sent, str)
            and hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), csrf_token(request, nonce, purpose).encode())):
        raise HTTPException(403, "the form's CSRF token is missing or stale: reload the page and try again")


def form_name(form, what: str) -> str:
    """The form's ``name`` field, stripped and checked by :func:`~irbandits.service.validation.name_problem`
    (as the API checks names), else 422 naming ``what``."""
    from irbandits.service.validation import name_problem

    name = str(form.get("name", "")).strip()
    problem = name_problem(name)
    if problem is not None:
        raise HTTPException(422, f"{what} name: {problem}")
    return name


async def form_move(form, runtime, moves) -> IrbanditsError | None:
    """Move ``runtime`` (a campaign or an experiment) to the form's ``state``, one of ``moves``' keys:
    None when moved, else the refusal (an unknown state, or a move its state does not allow)."""
    state = form.get("state")
    try:
        if state not in moves:
            raise IrbanditsError(f"state: give one of {', '.join(moves)}, got {state!r}")
        await run_in_threadpool(runtime.set_state, state)
    except IrbanditsError as exc:
        return exc
    return None


def login_nonce(request: Request) -> str:
    """The nonce of the browser's login cookie, or a new one (set it with :func:`set_login_cookie`)."""
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    return nonce if len(nonce) >= 16 else secrets.token_urlsafe(16)


def set_login_cookie(request: Request, response: Response, nonce: str) -> None:
    _set(request, response, LOGIN_COOKIE, nonce, 3600)
