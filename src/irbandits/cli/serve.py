"""``irbandits serve``: run the judging service (needs the ``service`` extra)."""

from __future__ import annotations

import os
from typing import Optional

import typer

from irbandits.errors import IrbanditsError


def serve(
    db: str = typer.Option("sqlite:///irbandits.db", help="database URL: sqlite:///FILE or "
                                                          "postgresql+psycopg://user@host/db"),
    host: str = typer.Option("127.0.0.1", help="address to listen on"),
    port: int = typer.Option(8000, min=1, max=65535, help="port to listen on"),
    lease: float = typer.Option(600, min=1, help="seconds a task stays leased to one assessor"),
    demo: bool = typer.Option(False, help="load small demo campaigns and an online experiment"),
) -> None:
    """Run the judging service (one worker: the processes live in its memory); organiser token from
    IRBANDITS_ADMIN_TOKEN, else made at first start and printed once."""
    import logging

    try:
        import uvicorn

        from irbandits.service.app import create_app
        from irbandits.service.settings import Settings
    except ImportError as exc:
        raise IrbanditsError(f"irbandits serve needs the service extra ({exc.name} is missing): "
                             f"pip install 'irbandits[service]'") from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)  # one line per plugin at start
    settings = Settings(db_url=db, lease_seconds=lease, admin_token=os.environ.get("IRBANDITS_ADMIN_TOKEN") or None)
    app = create_app(settings)
    links, experiment = {}, None
    if demo:
        from irbandits.service.demo import load_demo, load_demo_experiment

        links, experiment = load_demo(app), load_demo_experiment(app)
    if app.state.new_admin_token:
        typer.echo(f"organiser token (shown once, only its hash is stored): {app.state.new_admin_token}")
    url = f"http://{host}:{port}"
    typer.echo(f"irbandits serve: {url}/ on {settings.db_url.split('://')[0]}")
    if demo:
        typer.echo(f"organiser pages: {url}/admin (log in with the organiser token)")
        for name, path in links.items():
            typer.echo(f"assessor page, {name}: {url}{path}")
        typer.echo(f"online experiment {experiment['id']}: {url}{experiment['url']} (front-end client token: "
                   f"{experiment['token']})")
    uvicorn.run(app, host=host, port=port, workers=1, access_log=False, log_level="info")
