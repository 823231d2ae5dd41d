"""The organiser's browser session: a signed cookie, CSRF tokens, and the server secret behind both.

- The secret is made once (256 random bits) and kept in the ``server_secrets`` table, so sessions
  survive a restart. The signing key is ``HMAC(secret, organiser token hash)``: changing the
  organiser token ends every session.
- The session cookie is ``issued.nonce.signature`` (HttpOnly, SameSite=Strict, Path=/admin), valid
  for :data:`MAX_AGE` seconds; it holds no token.
- A form's CSRF token is ``HMAC(key, purpose, nonce)``: the session's nonce on the organiser pages,
  and on the login form the nonce of a short-lived login cookie (a double-submit token that the
  server can check without state). A POST without the matching token is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import HTTPException, Request, Response
from sqlalchemy import Float, String, select
from sqlalchemy.orm import Mapped, mapped_column

from irbandits.service.models import Base

SESSION_COOKIE = "irbandits_admin"
LOGIN_COOKIE = "irbandits_login"
MAX_AGE = 12 * 3600


class ServerSecret(Base):
    """A named random secret of this service instance (hex)."""

    __tablename__ = "server_secrets"
    name: Mapped[str] = mapped_column(String(50), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[float] = mapped_column(Float)


def load_secret(sessions, clock, name: str = "session") -> bytes:
    """The secret ``name``, made and stored at the first start."""
    with sessions() as session:
        row = session.get(ServerSecret, name)
        if row is None:
            row = ServerSecret(name=name, value=secrets.token_hex(32), created_at=clock())
            session.add(row)
            session.commit()
        return bytes.fromhex(row.value)


def _key(request: Request) -> bytes:
    state = request.app.state
    return hmac.new(state.web_secret, state.admin_hash.encode(), hashlib.sha256).digest()


def _sign(request: Request, *parts: str) -> str:
    return hmac.new(_key(request), "|".join(parts).encode(), hashlib.sha256).hexdigest()


def _set(response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(name, value, max_age=max_age, path="/admin", httponly=True, samesite="strict",
                        secure=False)


# ----- the session -------------------------------------------------------------------------------
def start_session(request: Request, response: Response) -> None:
    """Give the browser a fresh signed session cookie (after a correct organiser token)."""
    issued, nonce = str(int(request.app.state.settings.clock())), secrets.token_urlsafe(16)
    _set(response, SESSION_COOKIE, f"{issued}.{nonce}.{_sign(request, 'session', issued, nonce)}", MAX_AGE)
    response.delete_cookie(LOGIN_COOKIE, path="/admin", httponly=True, samesite="strict")


def end_session(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/admin", httponly=True, samesite="strict")


def session_nonce(request: Request) -> str | None:
    """The nonce of a valid, unexpired session cookie, else None."""
    issued, _, rest = request.cookies.get(SESSION_COOKIE, "").partition(".")
    nonce, _, signature = rest.partition(".")
    if not (issued.isdigit() and nonce and signature):
        return None
    if not hmac.compare_digest(signature, _sign(request, "session", issued, nonce)):
        return None
    age = request.app.state.settings.clock() - int(issued)
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
    return _sign(request, purpose, nonce)


def check_csrf(request: Request, form, nonce: str | None, purpose: str = "csrf") -> None:
    """403 unless the form's ``csrf`` field is this session's token."""
    sent = form.get("csrf")
    if not (nonce and isinstance(sent, str) and hmac.compare_digest(sent, csrf_token(request, nonce, purpose))):
        raise HTTPException(403, "the form's CSRF token is missing or stale: reload the page and try again")


def login_nonce(request: Request) -> str:
    """The nonce of the browser's login cookie, or a new one (set it with :func:`set_login_cookie`)."""
    nonce = request.cookies.get(LOGIN_COOKIE, "")
    return nonce if len(nonce) >= 16 else secrets.token_urlsafe(16)


def set_login_cookie(response: Response, nonce: str) -> None:
    _set(response, LOGIN_COOKIE, nonce, 3600)
