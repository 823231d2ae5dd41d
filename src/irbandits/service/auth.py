"""Tokens and roles: ``Authorization: Bearer TOKEN`` on every ``/api/`` call.

Tokens come from :func:`secrets.token_urlsafe` and are stored as SHA-256 hashes only; the organiser
token is checked with :func:`hmac.compare_digest`, an assessor token is looked up by its hash.
Missing, unknown or revoked tokens get 401, a token of the wrong role 403. Assessors found by their
hash are kept in memory (:class:`AssessorCache`), so a request costs no database read; any write to
the assessors table through the service's engine empties that cache, so a revoke holds at once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request
from sqlalchemy import bindparam, event, select
from sqlalchemy.engine import Engine

from irbandits.service.models import AdminCredential, Assessor


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The SHA-256 hex digest under which a token is stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def admin_hash(session, clock, token: str | None) -> tuple[str, str | None]:
    """The organiser token's hash, stored on first start; returns ``(hash, token to print once)``.

    A ``token`` given (from ``IRBANDITS_ADMIN_TOKEN``) replaces the stored hash; with none, the stored
    hash is kept, or a new token is made and returned so that the caller prints it once.
    """
    row = session.scalars(select(AdminCredential).order_by(AdminCredential.id)).first()
    fresh = None
    if token is None and row is None:
        token = fresh = new_token()
    if token is not None:
        if row is None:
            row = AdminCredential(token_hash=token_hash(token), created_at=clock())
            session.add(row)
        else:
            row.token_hash = token_hash(token)
        session.commit()
    return row.token_hash, fresh


_BY_HASH = select(Assessor.id, Assessor.campaign_id, Assessor.name, Assessor.token_hash,
                  Assessor.revoked).where(Assessor.token_hash == bindparam("digest"))


@dataclass(frozen=True)
class Assessed:
    """The assessor a request comes from."""

    id: int
    campaign_id: int
    name: str


class AssessorCache:
    """Assessor rows by token hash, read once from ``engine`` and dropped on any write to ``assessors``.

    A connection that writes the table (UPDATE or DELETE, by any code on this engine) empties the
    cache when it runs the statement and again when it goes back to the pool (after its commit or
    rollback); while such a write is open, rows read are not cached, so no row read before the write
    commits stays in the cache after it.
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        self.rows: dict[str, Any] = {}
        self.writing = 0                        # connections with an uncommitted write to assessors
        self.generation = 0                     # bumped each time the cache is emptied
        self.lock = threading.Lock()
        event.listen(engine, "before_cursor_execute", self._executed)
        event.listen(engine.pool, "checkin", self._checked_in)

    def _executed(self, conn, cursor, statement: str, parameters, context, executemany) -> None:
        head = statement.lstrip()[:6].upper()
        if head in ("UPDATE", "DELETE") and "assessors" in statement and not conn.info.get("writes_assessors"):
            conn.info["writes_assessors"] = True
            with self.lock:
                self.writing += 1
                self._clear()

    def _checked_in(self, dbapi_conn, record) -> None:
        if record is not None and record.info.pop("writes_assessors", False):
            with self.lock:
                self.writing -= 1
                self._clear()

    def _clear(self) -> None:
        self.rows.clear()
        self.generation += 1

    def get(self, digest: str):
        """The row ``(id, campaign_id, name, token_hash, revoked)`` of a token hash, or None."""
        row = self.rows.get(digest)
        if row is not None:
            return row
        with self.lock:
            generation, writing = self.generation, self.writing
        with self.engine.connect() as conn:
            row = conn.execute(_BY_HASH, {"digest": digest}).first()
        with self.lock:
            if row is not None and writing == 0 and self.generation == generation:
                self.rows[digest] = row
        return row


def bearer(request: Request) -> str:
    """The bearer token of a request; 401 when there is none."""
    return bearer_token(request.headers.get("authorization", ""))


def bearer_token(authorization: str) -> str:
    """The token of an ``Authorization`` header's value; 401 when it names none."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise HTTPException(401, "missing bearer token (Authorization: Bearer TOKEN)",
                            headers={"WWW-Authenticate": "Bearer"})
    return token.strip()


def _assessor(request: Request, token: str) -> Assessed | None:
    digest = token_hash(token)
    row = request.app.state.assessor_cache.get(digest)
    if row is None or not hmac.compare_digest(row.token_hash, digest):
        return None
    if row.revoked:
        raise HTTPException(401, "this assessor token is revoked", headers={"WWW-Authenticate": "Bearer"})
    return Assessed(row.id, row.campaign_id, row.name)


def _is_admin(request: Request, token: str) -> bool:
    return hmac.compare_digest(token_hash(token), request.app.state.admin_hash)


def require_admin(request: Request) -> None:
    """FastAPI dependency: the organiser token, else 401 (unknown) or 403 (an assessor's)."""
    token = bearer(request)
    if _is_admin(request, token):
        return
    if _assessor(request, token) is not None:
        raise HTTPException(403, "this endpoint needs the organiser token")
    raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})


def require_assessor(request: Request) -> Assessed:
    """FastAPI dependency: an assessor token, else 401 (unknown, revoked) or 403 (the organiser's)."""
    token = bearer(request)
    who = _assessor(request, token)
    if who is not None:
        return who
    if _is_admin(request, token):
        raise HTTPException(403, "this endpoint needs an assessor token")
    raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})
