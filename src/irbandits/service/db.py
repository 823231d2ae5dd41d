"""Engine, sessions and migrations: SQLite (WAL) by default, PostgreSQL through psycopg 3.

:func:`migrate` runs the Alembic migrations shipped in ``irbandits/service/migrations`` without an
``alembic.ini`` on disk, so the schema is created and upgraded by the service at start.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from irbandits.errors import IrbanditsError
from irbandits.service.credentials import create_private, sqlite_path

MIGRATIONS = Path(__file__).parent / "migrations"


def make_engine(url: str, schema: str | None = None) -> Engine:
    """An engine for ``url``; SQLite gets WAL, synchronous=NORMAL, foreign keys and a busy timeout.

    WAL with synchronous=NORMAL: a commit is in the WAL file (the OS's buffers) before the answer is
    acknowledged, so it survives the server being killed; only a power loss or OS crash can lose the
    last commits (FULL would fsync each commit for that). PostgreSQL keeps synchronous_commit on.

    ``schema`` (PostgreSQL only) becomes the connection's ``search_path``; it is created if missing.
    A new SQLite file is created with mode 0600 (SQLite gives its WAL and shared-memory files the same).
    """
    if url.startswith("sqlite"):
        path = sqlite_path(url)
        if path is not None:
            create_private(path)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON", "busy_timeout=30000"):
                cur.execute(f"PRAGMA {pragma}")
            cur.close()

        return engine
    if url.startswith("postgresql"):
        options = {"options": f"-csearch_path={schema}"} if schema else {}
        engine = create_engine(url, connect_args=options, pool_size=10, max_overflow=20, pool_pre_ping=True)
        if schema:
            with engine.begin() as conn:
                conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
        return engine
    raise IrbanditsError(f"--db: unsupported database URL {url.split(':', 1)[0]!r}; "
                         f"use sqlite:///FILE or postgresql+psycopg://user@host/db")


def sessions(engine: Engine) -> sessionmaker[Session]:
    """The session factory of ``engine`` (objects stay readable after commit)."""
    return sessionmaker(engine, expire_on_commit=False)


def migrate(engine: Engine) -> None:
    """Upgrade the database to the newest shipped migration (creates the schema on a new database)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
