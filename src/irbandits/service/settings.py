"""The service's settings: one dataclass, filled by ``irbandits serve`` or by tests."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable


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
        Request bodies over this size get 413.
    admin_token
        The organiser token (from ``IRBANDITS_ADMIN_TOKEN``); when None the stored hash is used, or
        a token is made, stored as a hash and printed once at first start.
    schema
        PostgreSQL schema to use (tests isolate runs with a fresh one); None for the default.
    clock
        Seconds since the epoch; tests pass a fake clock to expire leases.
    """

    db_url: str = "sqlite:///irbandits.db"
    lease_seconds: float = 600.0
    max_body_bytes: int = 64 * 1024 * 1024
    admin_token: str | None = None
    schema: str | None = None
    clock: Callable[[], float] = field(default=time.time, repr=False)
