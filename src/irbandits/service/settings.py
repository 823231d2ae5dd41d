"""The service's settings: one dataclass, filled by ``irbandits serve`` or by tests."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from irbandits.judging.assessors import Assessor


@dataclass
class Settings:
    """Configuration of one service instance.

    Parameters
    ----------
    db_url
        SQLAlchemy URL: ``sqlite:///FILE`` (WAL mode) or ``postgresql+psycopg://user@host/db``.
    lease_seconds
        How long a task stays leased to the assessor it was given to before it may be re-issued.
    max_body_bytes
        Request bodies over this size get 413, on every route but the organiser's campaign uploads.
    max_impression_bytes
        The limit of an experiment's impressions (``POST /api/experiments/{EID}/impressions``), whose
        body holds a learner's candidate documents and their features (about 1,000 documents of 64
        features fit in the default).
    max_upload_bytes
        The limit of the campaign uploads (``POST /api/campaigns``, the creation form), after the
        organiser's token or session was checked (``irbandits serve --max-upload``).
    admin_token
        The organiser token (from ``IRBANDITS_ADMIN_TOKEN``); when None the stored hash is used, or
        a token is made, stored as a hash and printed once at first start.
    session_secret
        The key that signs organiser sessions (from ``IRBANDITS_SESSION_SECRET``); when None it is
        made once and kept in the secrets file.
    secrets_file
        Where the organiser token's hash and the session key are kept (mode 0600); None: beside a
        SQLite database, else ``irbandits-DBNAME.secrets.json`` (:mod:`irbandits.service.credentials`).
    assessors
        Automatic assessors that whoever starts the server allows: ``NAME -> module:function``
        (``irbandits serve --assessor NAME=module:function``) or ``NAME -> assessor`` (a ready one:
        ``--llm``, ``--scorer``), beside the built-in and installed ones
        (:class:`irbandits.judging.assessors.AssessorRegistry`).
    schema
        PostgreSQL schema to use (tests isolate runs with a fresh one); None for the default.
    clock
        Seconds since the epoch; tests pass a fake clock to expire leases.
    """

    db_url: str = "sqlite:///irbandits.db"
    lease_seconds: float = 600.0
    max_body_bytes: int = 64 * 1024
    max_upload_bytes: int = 64 * 1024 * 1024
    max_impression_bytes: int = 4 * 1024 * 1024
    admin_token: str | None = None
    session_secret: str | None = field(default=None, repr=False)
    secrets_file: str | None = None
    assessors: dict[str, "str | Assessor"] = field(default_factory=dict)
    schema: str | None = None
    clock: Callable[[], float] = field(default=time.time, repr=False)
