"""The app's shared parts: migrations match the models, the organiser credential, logs without
secrets, and ``irbandits serve`` as a user starts it (or is told how to install it)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time

import httpx
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from irbandits.service.app import create_app
from irbandits.service.credentials import secrets_path, token_hash
from irbandits.service.models import Base

from .conftest import SCRIPT, preference_body


def test_migrations_create_exactly_the_models(service):
    with service.app.state.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []


def test_organiser_token_made_once_and_its_hash_kept_outside_the_database(settings):
    settings.admin_token = None
    first = create_app(settings)
    token = first.state.new_admin_token
    assert token and len(token) >= 40
    path = secrets_path(settings.db_url, settings.secrets_file)
    assert json.loads(path.read_text())["admin_hash"] == token_hash(token) and path.stat().st_mode & 0o777 == 0o600
    with first.state.engine.connect() as conn:   # no table of the database holds it
        tables = inspect(conn).get_table_names()
        assert "admin_credentials" not in tables and "server_secrets" not in tables
    first.state.engine.dispose()
    second = create_app(settings)                    # a restart prints nothing and keeps the token
    assert second.state.new_admin_token is None and second.state.admin_hash == token_hash(token)
    second.state.engine.dispose()
    settings.admin_token = "from-the-environment"     # IRBANDITS_ADMIN_TOKEN replaces it
    third = create_app(settings)
    assert third.state.admin_hash == token_hash("from-the-environment")
    third.state.engine.dispose()


def test_logs_carry_no_token_and_no_passage_text(service, caplog):
    caplog.set_level(logging.INFO, logger="irbandits.service")
    cid = service.campaign(**preference_body())
    a = service.assessor(cid)
    token = a["Authorization"].split()[1]
    task = service.next(a).json()
    service.answer(a, task["task"], "left", "c1")
    service.client.get(f"/a/{token}")
    text = caplog.text
    assert "GET /a/*** " in text and "GET /api/next 200" in text and "POST /api/campaigns 201" in text
    assert token not in text and "organiser-token" not in text and SCRIPT not in text and "passage" not in text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_irbandits_serve_starts_prints_the_token_once_and_answers(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "IRBANDITS_ADMIN_TOKEN"}
    proc = subprocess.Popen([sys.executable, "-m", "irbandits.cli", "serve", "--db", f"sqlite:///{tmp_path / 's.db'}",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=tmp_path, env=env)
    try:
        line = ""
        deadline = time.time() + 60
        while "organiser token" not in line and time.time() < deadline:
            line = proc.stdout.readline()
        token = line.rsplit(" ", 1)[-1].strip()
        while time.time() < deadline:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/api/campaigns", headers={"Authorization": f"Bearer {token}"})
                break
            except httpx.ConnectError:
                time.sleep(0.2)
        assert r.status_code == 200 and r.json() == []
        assert (tmp_path / "s.db").exists()
    finally:
        proc.kill()
        proc.wait()


def test_serve_without_the_extra_says_how_to_install_it_and_the_rest_does_not_need_it():
    code = ("import sys; sys.modules['uvicorn'] = None; sys.modules['fastapi'] = None; sys.modules['sqlalchemy'] = None\n"
            "import irbandits, irbandits.cli, irbandits.judging.topk\n"
            "sys.argv = ['irbandits', 'serve']; irbandits.cli.main()")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 2 and "pip install 'irbandits[service]'" in r.stderr and "Traceback" not in r.stderr
