"""``irbandits simulate``, ``irbandits problems``, ``irbandits algorithms``: online evaluation."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import (
    CLICK_MODEL,
    INTERLEAVING,
    JOBS,
    LENGTH,
    MULTILEAVE,
    QUERY_FILE,
    RANKERS,
    check_output,
    console,
    load_problem,
    ltr_environment,
    make_table,
    multi_dueling_specs,
    multileave_environment,
    parse_count,
    problem_by_name_or_file,
    reference_problem,
    worker_count,
)
from irbandits.errors import IrbanditsError

REGRET = typer.Option("auto", help="regret to record, tabulate and plot: condorcet, copeland, borda, von-neumann "
                      "(against the von Neumann winner of `problems --describe`), weak (Yue et al.: the lesser gap "
                      "of the two arms), strong (the larger gap of the two), or auto (condorcet, or "
                      "copeland when the problem has no Condorcet winner); see docs/api/simulate.md")


def simulate(
    problem: Optional[str] = typer.Option(None, help="named problem (see `irbandits problems`); default arxiv"),
    matrix: Optional[Path] = typer.Option(None, help="preference matrix file (whitespace text or .npy)"),
    algorithm: Optional[list[str]] = typer.Option(
        None, "--algorithm", "-a",
        help="NAME, NAME:tuned or NAME:param=value,...; repeat for several; default: every algorithm",
    ),
    horizon: str = typer.Option("1e5", help="duels per run; 1e8 is accepted"),
    runs: int = typer.Option(10, min=1, help="independent runs per algorithm"),
    jobs: int = JOBS,
    seed: int = typer.Option(0, help="master seed; per-run seeds derive from it"),
    out: Path = typer.Option(Path("results"), help="output directory; the same command resumes an interrupted "
                             "simulation there"),
    force: bool = typer.Option(False, help="replace results of other settings in --out (instead of refusing)"),
    progress: bool = typer.Option(True, help="show a progress bar"),
    ltr: Optional[Path] = typer.Option(None, help="full simulation: every duel interleaves two features of this LTR file"),
    query_file: Optional[Path] = QUERY_FILE,
    click_model: str = CLICK_MODEL,
    interleaving: str = INTERLEAVING,
    rankers: Optional[str] = RANKERS,
    multileave: int = MULTILEAVE,
    length: str = LENGTH,
    regret: str = REGRET,
    fast_forward: bool = typer.Option(True, help="finish a run in closed form once its algorithm's choices can no "
                                      "longer change (MergeDTS, mergeRUCB down to one arm); results are identical"),
    log_comparisons: Optional[Path] = typer.Option(
        None, help="with --ltr: write every interleaved (with --multileave, multileaved) comparison to this file, "
        "one JSON line each (rankers, teams, clicks; see `irbandits interleaving-report`); replaced if it exists; "
        "runs resumed from --out are not run again, so not logged"),
) -> None:
    """Run dueling-bandit algorithms on a Bernoulli problem, or with --ltr on real interleaved
    comparisons (regret against --matrix, else a matrix estimated first), or with --multileave M
    on one multileaved comparison of M rankers per step; write a table and plots."""
    from irbandits.cli.common import format_number
    from irbandits.dueling import parse_spec
    from irbandits.plots import plot_accuracy, plot_regret
    from irbandits.simulate import regret_kind, summarize
    from irbandits.simulate import simulate as run_simulation
    from irbandits.tasks import Interrupted

    T = parse_count(horizon, "--horizon")
    jobs = worker_count(jobs)
    check_output(out, "--out", directory=True)
    from irbandits.dueling import list_algorithms

    if multileave:
        specs = multi_dueling_specs(algorithm, ltr, interleaving, multileave)
    else:
        specs = [parse_spec(a) for a in (algorithm or list_algorithms().name)]
    if log_comparisons and not ltr:
        raise IrbanditsError("--log-comparisons needs --ltr (interleaved or multileaved comparisons of rankers)")
    if log_comparisons:
        check_output(log_comparisons, "--log-comparisons")
    environment = ltr_environment(ltr, query_file, click_model, interleaving, rankers, length)[1] if ltr else None
    if multileave:
        environment = multileave_environment(environment, multileave)
    P = reference_problem(environment, matrix, seed, ltr.name) if ltr else load_problem(problem, matrix)
    chosen = regret_kind(regret, P, "--regret")
    column, kind = chosen.column, chosen.title
    winners = ", ".join(P.arms[w] for w in P.winners)
    console.print(f"problem {P.name}: K={P.K}, {P.winner_type} winner(s) {winners}; "
                  f"horizon {T:,}, {runs} runs, {jobs} jobs, seed {seed}"
                  + (f"; {multileave} rankers per step ({environment.multileaving} "
                     f"{'interleaving' if multileave == 2 else 'multileaving'})" if multileave else ""),
                  markup=False)
    if log_comparisons:
        log_comparisons.write_text("")   # the runs append to it
        environment.log = log_comparisons
    start = time.perf_counter()
    try:
        table = run_simulation(P, specs, horizon=T, runs=runs, seed=seed, jobs=jobs, out=out, force=force,
                               progress=progress and sys.stderr.isatty(), environment=environment,
                               fast_forward=fast_forward, regret=chosen.name)
    except Interrupted as stop:
        typer.echo(f"interrupted: {stop.kept} of {stop.total} runs finished and kept in {out}; "
                   "run the same command again to resume", err=True)
        raise typer.Exit(130) from None
    summary = summarize(table)
    # the other regret column: Copeland beside any other kind, Condorcet (what `regret` holds) beside Copeland
    other, other_kind = ("copeland_regret", "Copeland") if column == "regret" else ("regret", "Condorcet")
    summary.insert(2, f"{kind} regret (mean ± SE)", [f"{format_number(m)} ± {format_number(se, 2)}" for m, se in
                                                     zip(summary[f"{column}_mean"], summary[f"{column}_se"])])
    summary = summary.drop(columns=[f"{column}_mean", f"{column}_se", f"{other}_se"])
    summary = summary.rename(columns={f"{other}_mean": f"{other_kind} regret (mean)"})
    about = f"{P.name}, horizon {T:,}, {runs} runs"
    plot_regret(table, out / "regret.png", column=column, title=f"cumulative {kind} regret ({about}; mean ± 1 SE)",
                kind=kind)
    plot_accuracy(table, out / "accuracy.png", title=f"accuracy: recommending a {P.winner_type} winner ({about})")
    console.print(make_table(summary, f"after {T:,} steps ({time.perf_counter() - start:.1f} s in all); {kind} regret "
                                  f"(the problem has {'a' if P.winner_type == 'Condorcet' else 'no'} Condorcet winner): "
                                  f"mean ± standard error over {runs} runs; seconds_per_run: mean"), markup=False)
    console.print(f"wrote {out / 'results.parquet'}, {out / 'regret.png'}, {out / 'accuracy.png'}"
                  + (f", {log_comparisons}" if log_comparisons else ""), markup=False)


def problems(
    describe: Optional[str] = typer.Option(None, metavar="NAME|FILE", help="describe one problem (a name or a matrix "
                                           "file): its winners of every kind, L_C, smallest gaps, transitivity"),
) -> None:
    """List the named problems with K and winner type, or describe one."""
    import pandas as pd

    from irbandits.problems import list_problems

    if describe is None:
        console.print(make_table(list_problems(), "named problems"))
        return
    P = problem_by_name_or_file(describe, "--describe")
    console.print(make_table(pd.DataFrame(P.describe(), columns=["property", "value"]), f"problem {P.name}"), markup=False)


def algorithms() -> None:
    """List the algorithms, their parameters and named settings."""
    from irbandits.dueling import list_algorithms

    console.print(make_table(list_algorithms()[["name", "description", "parameters", "settings"]], "algorithms"))
