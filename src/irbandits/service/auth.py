"""Tokens and roles: ``Authorization: Bearer TOKEN`` on every ``/api/`` call.

Tokens come from :func:`irbandits.service.credentials.new_token` and are stored as SHA-256 hashes
only (the organiser's outside the database); the organiser token is checked with
:func:`hmac.compare_digest`, an assessor token is looked up by its hash.
Missing, unknown or revoked tokens get 401, a token of the wrong role 403. Assessors found by their
hash are kept in memory (:class:`AssessorCache`), so a request costs no database read; any write to
the assessors table through the service's engine empties that cache, so a revoke holds at once.
"""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from sqlalchemy import bindparam, event, select
from sqlalchemy.engine import Engine

from irbandits.errors import Forbidden, Unauthorized
from irbandits.service.credentials import token_hash
from irbandits.service.guard import MISSING, NOT_ORGANISER, bearer_of
from irbandits.service.models import Assessor

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
    token = bearer_of(authorization)
    if token is None:
        raise Unauthorized(MISSING)
    return token


def _assessor(request: Request, token: str) -> Assessed | None:
    digest = token_hash(token)
    row = request.app.state.assessor_cache.get(digest)
    if row is None or not hmac.compare_digest(row.token_hash, digest):
        return None
    if row.revoked:
        raise Unauthorized("this assessor token is revoked")
    return Assessed(row.id, row.campaign_id, row.name)


def _is_admin(request: Request, token: str) -> bool:
    return hmac.compare_digest(token_hash(token), request.app.state.admin_hash)


def require_admin(request: Request) -> None:
    """FastAPI dependency: the organiser token, else 401 (unknown) or 403 (an assessor's)."""
    token = bearer(request)
    if _is_admin(request, token):
        return
    if _assessor(request, token) is not None:
        raise Forbidden(NOT_ORGANISER)
    raise Unauthorized("unknown token")


def require_assessor(request: Request) -> Assessed:
    """FastAPI dependency: an assessor token, else 401 (unknown, revoked) or 403 (the organiser's)."""
    token = bearer(request)
    who = _assessor(request, token)
    if who is not None:
        return who
    if _is_admin(request, token):
        raise Forbidden("this endpoint needs an assessor token")
    raise Unauthorized("unknown token")
