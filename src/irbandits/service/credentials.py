"""The service's two secrets, kept out of the database: the organiser token's hash and the key that
signs session cookies and CSRF tokens.

They live in a JSON file of mode 0600 (:func:`secrets_path`: beside a SQLite file, else named after
the PostgreSQL database in the working directory, or ``irbandits serve --secrets FILE``), or come from
the environment: ``IRBANDITS_ADMIN_TOKEN`` (the organiser token itself; its hash replaces the stored
one) and ``IRBANDITS_SESSION_SECRET`` (at least 32 characters). A copy of the database therefore
opens nothing. A file that others may read is refused at start, naming the ``chmod`` that fixes it.

Databases of earlier versions kept both secrets in tables (``admin_credentials``,
``server_secrets``): :func:`load_credentials` moves them to the file before the migration that drops
those tables runs, so the organiser's token and open sessions survive the upgrade.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.engine import Engine, make_url

from irbandits.errors import IrbanditsError


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """The SHA-256 hex digest under which a token is stored."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Credentials:
    """The organiser token's hash, the session-signing secret, and a token made at this start (print it
    once) or None."""

    admin_hash: str
    session_secret: bytes
    new_admin_token: str | None = None


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///FILE`` URL (None for another database or an in-memory one)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def secrets_path(db_url: str, given: str | None = None) -> Path:
    """Where the secrets of the database ``db_url`` are kept: ``given``, else ``FILE.secrets.json`` beside
    a SQLite ``FILE``, else ``irbandits-DBNAME.secrets.json`` in the working directory.

    >>> secrets_path("sqlite:///data/irbandits.db").as_posix()
    'data/irbandits.db.secrets.json'
    >>> secrets_path("postgresql+psycopg://judge@db.example/trec").as_posix()
    'irbandits-trec.secrets.json'
    """
    if given:
        return Path(given)
    db_file = sqlite_path(db_url)
    if db_file is not None:
        return db_file.with_name(db_file.name + ".secrets.json")
    return Path(f"irbandits-{make_url(db_url).database or 'default'}.secrets.json")


def create_private(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist (a new SQLite database file)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise IrbanditsError(f"--db: the folder of {path} does not exist") from None


def _read(path: Path) -> dict:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise IrbanditsError(f"secrets file {path}: others may read it (mode {mode:04o}); run: chmod 600 {path}")
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise IrbanditsError(f"secrets file {path}: not the JSON this service writes; move it away to start "
                             f"with new secrets (every organiser session ends)") from None
    if not isinstance(stored, dict):
        raise IrbanditsError(f"secrets file {path}: not the JSON this service writes")
    return stored


def _write(path: Path, stored: dict) -> None:
    """Write ``stored`` to ``path`` atomically, the file created 0600 before any secret is in it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(stored, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _legacy(engine: Engine) -> dict:
    """The secrets that versions before 0005 kept in the database, if it has them."""
    found, tables = {}, set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        if "admin_credentials" in tables:
            row = conn.execute(text("SELECT token_hash FROM admin_credentials ORDER BY id")).first()
            if row is not None:
                found["admin_hash"] = row[0]
        if "server_secrets" in tables:
            row = conn.execute(text("SELECT value FROM server_secrets WHERE name = 'session'")).first()
            if row is not None:
                found["session"] = row[0]
    return found


def load_credentials(engine: Engine, path: Path, admin_token: str | None = None,
                     session_secret: str | None = None) -> Credentials:
    """The service's credentials: from the environment's values (``admin_token``, ``session_secret``),
    the file at ``path``, or (first start after an upgrade) the database's old tables; what is missing
    is made and written to ``path`` (mode 0600)."""
    if session_secret is not None and len(session_secret) < 32:
        raise IrbanditsError("IRBANDITS_SESSION_SECRET: give at least 32 characters (e.g. openssl rand -hex 32)")
    stored = _read(path) if path.exists() else _legacy(engine)
    wanted, fresh = dict(stored), None
    if admin_token is not None:
        wanted["admin_hash"] = token_hash(admin_token)
    elif not isinstance(wanted.get("admin_hash"), str):
        fresh = new_token()
        wanted["admin_hash"] = token_hash(fresh)
    if session_secret is None and not isinstance(wanted.get("session"), str):
        wanted["session"] = secrets.token_hex(32)
    from_environment = admin_token is not None and session_secret is not None
    if not from_environment and (wanted != stored or not path.exists()):
        _write(path, wanted)
    key = session_secret.encode() if session_secret is not None else bytes.fromhex(wanted["session"])
    return Credentials(wanted["admin_hash"], key, fresh)
