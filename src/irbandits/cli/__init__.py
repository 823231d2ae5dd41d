"""The ``irbandits`` command line: builds the typer app from one module per command group.

Only this module imports the command modules; they share helpers through :mod:`irbandits.cli.common`.
"""

from __future__ import annotations

import sys

import typer

from irbandits.cli import clicks, evaluate, experiment_replay, judge, oltr, pool, reproduce, serve, simulate, sweep
from irbandits.cli.common import print_error
from irbandits.errors import IrbanditsError

app = typer.Typer(no_args_is_help=True, help="Bandit algorithms for search evaluation.")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"irbandits {version('irbandits')}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="print the version and exit")) -> None:
    """Bandit algorithms for search evaluation."""


app.command()(simulate.simulate)
app.command()(simulate.problems)
app.command()(simulate.algorithms)
app.add_typer(pool.app, name="pool")
app.command()(evaluate.evaluate)
app.command("compare-measures")(evaluate.compare_measures)
app.add_typer(reproduce.app, name="reproduce")
app.command()(clicks.matrix)
app.add_typer(judge.app, name="judge")
app.command()(serve.serve)
app.command("experiment-replay")(experiment_replay.experiment_replay)
app.add_typer(sweep.app, name="sweep")
app.add_typer(sweep.app, name=sweep.OLD_NAME, hidden=True)  # the old name of `sweep`, for one release
app.command("interleaving-report")(clicks.interleaving_report)
app.add_typer(clicks.fit_app, name="clicks")
app.command()(oltr.oltr)


def main() -> None:
    """Entry point: user mistakes become one clear line and exit code 2."""
    try:
        app()
    except IrbanditsError as exc:
        print_error(str(exc))
        sys.exit(2)
