"""The ``irbandits`` command line: simulate, problems, algorithms."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from irbandits import cli_clicks, cli_experiment, cli_judge, cli_serve
from irbandits.cli_evaluate import compare_measures, evaluate
from irbandits.cli_pool import pool_app
from irbandits.cli_reproduce import reproduce
from irbandits.errors import IrbanditsError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Bandit algorithms for search evaluation.")
console = Console(width=None if sys.stdout.isatty() else 150)


def _fail(message: str) -> None:
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(2)


def _count(text: str, what: str) -> int:
    """Accept ``1e8``, ``100000000`` or ``100_000_000`` for step counts."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        _fail(f"{what} must be a number like 1e6, got {text!r}")
    if value < 1 or value != int(value):
        _fail(f"{what} must be a positive whole number, got {text!r}")
    return int(value)


def _load_problem(problem: Optional[str], matrix: Optional[Path]):
    from irbandits.problems import PreferenceMatrix, get_problem

    if problem and matrix:
        _fail("give either --problem or --matrix, not both")
    return PreferenceMatrix.load(matrix) if matrix else get_problem(problem or "arxiv")


def _table(df, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for col in df.columns:
        t.add_column(str(col), justify="left" if df[col].dtype == object else "right")
    for row in df.itertuples(index=False):
        t.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
    return t


@app.command()
def simulate(
    problem: Optional[str] = typer.Option(None, help="named problem (see `irbandits problems`); default arxiv"),
    matrix: Optional[Path] = typer.Option(None, help="preference matrix file (whitespace text or .npy)"),
    algorithm: Optional[list[str]] = typer.Option(
        None, "--algorithm", "-a",
        help="NAME, NAME:tuned or NAME:param=value,...; repeat for several; default: every algorithm",
    ),
    horizon: str = typer.Option("1e5", help="duels per run; 1e8 is accepted"),
    runs: int = typer.Option(10, min=1, help="independent runs per algorithm"),
    jobs: int = typer.Option(1, min=1, help="worker processes"),
    seed: int = typer.Option(0, help="master seed; per-run seeds derive from it"),
    out: Path = typer.Option(Path("results"), help="output directory (resumable)"),
    progress: bool = typer.Option(True, help="show a progress bar"),
    ltr: Optional[Path] = typer.Option(None, help="full simulation: every duel interleaves two features of this LTR file"),
    query_file: Optional[Path] = cli_clicks.QUERY_FILE,
    click_model: str = cli_clicks.CLICK_MODEL,
    interleaving: str = cli_clicks.INTERLEAVING,
    rankers: Optional[str] = cli_clicks.RANKERS,
    multileave: int = cli_clicks.MULTILEAVE,
) -> None:
    """Run dueling-bandit algorithms on a Bernoulli problem, or with --ltr on real interleaved
    comparisons (regret against --matrix, else a matrix estimated first), or with --multileave M
    on one multileaved comparison of M rankers per step; write a table and plots."""
    from irbandits.plots import plot_accuracy, plot_regret
    from irbandits.simulate import simulate as run_simulation
    from irbandits.simulate import summarize

    from irbandits.dueling import parse_spec

    T = _count(horizon, "--horizon")
    from irbandits.dueling import list_algorithms

    if multileave:
        specs = cli_clicks.multi_dueling_specs(algorithm, ltr, interleaving, multileave)
    else:
        specs = [parse_spec(a) for a in (algorithm or list_algorithms().name)]
    environment = cli_clicks.ltr_environment(ltr, query_file, click_model, interleaving, rankers)[1] if ltr else None
    if multileave:
        environment = cli_clicks.multileave_environment(environment, multileave)
    P = cli_clicks.reference_problem(environment, matrix, seed, ltr.name) if ltr else _load_problem(problem, matrix)
    winners = ", ".join(str(w) for w in P.winners)
    console.print(f"problem {P.name}: K={P.K}, {P.winner_type} winner(s) {winners}; "
                  f"horizon {T:,}, {runs} runs, {jobs} jobs, seed {seed}"
                  + (f"; {multileave} rankers per step ({environment.multileaving} "
                     f"{'interleaving' if multileave == 2 else 'multileaving'})" if multileave else ""),
                  markup=False)
    start = time.perf_counter()
    table = run_simulation(P, specs, horizon=T, runs=runs, seed=seed, jobs=jobs, out=out,
                           progress=progress and sys.stderr.isatty(), environment=environment)
    summary = summarize(table)
    summary.insert(2, "regret", [f"{m:.4g} ± {se:.2g}" for m, se in zip(summary.regret_mean, summary.regret_se)])
    summary = summary.drop(columns=["regret_mean", "regret_se"])
    plot_regret(table, out / "regret.png", title=f"{P.name}: cumulative Condorcet regret (mean, +-1 SE)")
    plot_accuracy(table, out / "accuracy.png", title=f"{P.name}: accuracy")
    console.print(_table(summary, f"after {T:,} steps ({time.perf_counter() - start:.1f} s in all)"))
    console.print(f"wrote {out / 'results.parquet'}, {out / 'regret.png'}, {out / 'accuracy.png'}")


@app.command()
def problems() -> None:
    """List the named problems with K and winner type."""
    from irbandits.problems import list_problems

    console.print(_table(list_problems(), "named problems"))


@app.command()
def algorithms() -> None:
    """List the algorithms, their parameters and named settings."""
    from irbandits.dueling import list_algorithms

    console.print(_table(list_algorithms()[["name", "description", "parameters", "settings"]], "algorithms"))


app.add_typer(pool_app, name="pool")
app.command()(evaluate)
app.command("compare-measures")(compare_measures)
app.add_typer(reproduce, name="reproduce")
app.command()(cli_clicks.matrix)
app.add_typer(cli_judge.app, name="judge")
app.command()(cli_serve.serve)
app.command("experiment-replay")(cli_experiment.experiment_replay)


def main() -> None:
    """Entry point: user mistakes become one clear line and exit code 2."""
    try:
        app()
    except IrbanditsError as exc:
        Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
