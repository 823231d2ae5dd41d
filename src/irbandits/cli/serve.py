"""``irbandits serve``: run the judging service (needs the ``service`` extra)."""

from __future__ import annotations

import os
from typing import Optional

import typer

from irbandits.cli.common import LLM_SPEC
from irbandits.errors import IrbanditsError


def serve(
    db: str = typer.Option("sqlite:///irbandits.db", help="database URL: sqlite:///FILE or "
                                                          "postgresql+psycopg://user@host/db"),
    host: str = typer.Option("127.0.0.1", help="address to listen on"),
    port: int = typer.Option(8000, min=1, max=65535, help="port to listen on"),
    lease: float = typer.Option(600, min=1, help="seconds a task stays leased to one assessor"),
    demo: bool = typer.Option(False, help="load small demo campaigns and an online experiment"),
    assessor: Optional[list[str]] = typer.Option(
        None, "--assessor", help="allow an automatic assessor: NAME=module:function (repeatable); requests "
                                 "name it, beside the built-in and installed ones (entry points irbandits.assessors)"),
    llm: Optional[list[str]] = typer.Option(
        None, "--llm", help=f"allow a language-model assessor (repeatable): {LLM_SPEC}"),
    scorer: Optional[list[str]] = typer.Option(
        None, "--scorer", help="allow a cross-encoder assessor (repeatable; needs the scorer extra): NAME=MODEL or "
                               "NAME=MODEL,margin=X, unsure when the scores differ by at most X (default 0)"),
    max_upload: int = typer.Option(64, min=1, help="MiB a campaign upload may have (organiser only); every "
                                                   "other request is held to 64 KiB"),
    secrets: Optional[str] = typer.Option(None, help="file (mode 0600) of the organiser token's hash and the "
                                                     "session key [default: beside a SQLite file, else "
                                                     "irbandits-DBNAME.secrets.json here]"),
    forwarded_allow_ips: str = typer.Option("127.0.0.1", help="proxies whose X-Forwarded-For / -Proto are "
                                                              "trusted (comma-separated, or *)"),
    ssl_certfile: Optional[str] = typer.Option(None, help="serve HTTPS directly with this certificate"),
    ssl_keyfile: Optional[str] = typer.Option(None, help="the certificate's private key"),
) -> None:
    """Run the judging service (one worker: the processes live in its memory); organiser token from
    IRBANDITS_ADMIN_TOKEN, else made at first start and printed once; session key from
    IRBANDITS_SESSION_SECRET, else kept in the secrets file."""
    import logging

    try:
        import uvicorn

        from irbandits.judging.assessors import parse_assessor_option
        from irbandits.judging.llm import parse_llm_spec
        from irbandits.judging.scorer import parse_scorer_spec
        from irbandits.service.app import create_app
        from irbandits.service.settings import Settings
    except ImportError as exc:
        raise IrbanditsError(f"irbandits serve needs the service extra ({exc.name} is missing): "
                             f"pip install 'irbandits[service]'") from None
    if (ssl_certfile is None) != (ssl_keyfile is None):
        raise IrbanditsError("--ssl-certfile and --ssl-keyfile go together")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)  # one line per plugin at start
    allowed = _allowed([parse_assessor_option(a) for a in assessor or []] + [parse_llm_spec(s) for s in llm or []]
                       + [parse_scorer_spec(s) for s in scorer or []])
    settings = Settings(db_url=db, lease_seconds=lease, admin_token=os.environ.get("IRBANDITS_ADMIN_TOKEN") or None,
                        session_secret=os.environ.get("IRBANDITS_SESSION_SECRET") or None, secrets_file=secrets,
                        max_upload_bytes=max_upload * 1024 * 1024, assessors=allowed)
    app = create_app(settings)
    links, experiment = {}, None
    if demo:
        from irbandits.service.demo import load_demo, load_demo_experiment

        links, experiment = load_demo(app), load_demo_experiment(app)
    if app.state.new_admin_token:
        typer.echo(f"organiser token (shown once, only its hash is stored): {app.state.new_admin_token}")
    url = f"{'https' if ssl_certfile else 'http'}://{host}:{port}"
    typer.echo(f"irbandits serve: {url}/ on {settings.db_url.split('://')[0]}")
    if demo:
        typer.echo(f"organiser pages: {url}/admin (log in with the organiser token)")
        for name, path in links.items():
            typer.echo(f"assessor page, {name}: {url}{path}")
        typer.echo(f"online experiment {experiment['id']}: {url}{experiment['url']} (front-end client token: "
                   f"{experiment['token']})")
    uvicorn.run(app, host=host, port=port, workers=1, access_log=False, log_level="info", proxy_headers=True,
                forwarded_allow_ips=forwarded_allow_ips, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile)


def _allowed(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``NAME -> module:function or assessor`` of --assessor, --llm and --scorer; a name given twice is an error."""
    allowed: dict[str, object] = {}
    for name, assessor in pairs:
        if name in allowed:
            raise IrbanditsError(f"the automatic assessor name {name!r} is given twice (--assessor, --llm, --scorer)")
        allowed[name] = assessor
    return allowed
