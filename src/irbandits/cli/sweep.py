"""``irbandits sweep run|report``: sweep specs (TOML grids of simulations) run on local processes or a
Ray cluster.

``irbandits experiment run|report``, the group's old name, is kept as a hidden alias (for one release).
(``irbandits experiment-replay``, the online-experiments service replay, lives in
:mod:`irbandits.cli.experiment_replay`.)"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import (
    ADDRESS,
    BACKEND,
    check_dir,
    check_file,
    check_output,
    console,
    format_number,
    make_table,
)
from irbandits.tasks import check_backend

app = typer.Typer(no_args_is_help=True, help="Sweeps: grids of simulations in a TOML spec, run on local processes "
                  "or a Ray cluster into a resumable result store.")
OLD_NAME = "experiment"  # the group's old name, registered as a hidden alias (for one release)

WORKERS = typer.Option(1, min=1, help="local worker processes, or the CPUs of a local Ray runtime "
                       "(ignored with --address: the cluster's CPUs are used)")


def _note_old_names(ctx: typer.Context, spec=None) -> None:
    """One line on standard error for each old name used: the command group's, the spec's table."""
    if ctx.parent is not None and ctx.parent.info_name == OLD_NAME:
        typer.echo(f"note: `irbandits {OLD_NAME} {ctx.info_name}` is now `irbandits sweep {ctx.info_name}`; "
                   "the old name goes in a later release", err=True)
    if spec is not None and spec.table != "sweep":
        typer.echo(f"note: {spec.path}: the table [{spec.table}] is now [sweep]; the old name goes in a later "
                   "release", err=True)


@app.command()
def run(
    ctx: typer.Context,
    spec: Path = typer.Argument(..., help="sweep spec (TOML)"),
    out: Path = typer.Option(..., help="result store directory; the same command resumes there"),
    backend: str = BACKEND,
    workers: int = WORKERS,
    address: Optional[str] = ADDRESS,
    force: bool = typer.Option(False, help="replace results of another horizon, seed or matrix in --out"),
    progress: bool = typer.Option(True, help="show a progress bar"),
) -> None:
    """Run every (problem, algorithm setting, run) of SPEC not yet in --out, streaming results there."""
    from irbandits.sweeps import TasksFailed, load_spec, run_sweep
    from irbandits.tasks import Interrupted

    check_backend(backend, workers, address)
    spec_ = load_spec(check_file(spec, "SPEC"))
    _note_old_names(ctx, spec_)
    check_output(out, "--out", directory=True)
    tasks = len(spec_.tasks())
    where = f"Ray cluster {address}" if address else (f"a local Ray runtime of {workers} CPUs" if backend == "ray"
                                                      else f"{workers} local process{'es' * (workers > 1)}")
    console.print(f"{spec_.name}: {len(spec_.problems)} problems x {len(spec_.settings)} algorithm settings x "
                  f"{spec_.runs} runs = {tasks:,} tasks of {spec_.horizon:,} steps, seed {spec_.seed}; on {where}",
                  markup=False)
    start = time.perf_counter()
    try:
        table = run_sweep(spec_, out, backend=backend, workers=workers, address=address,
                          progress=progress and sys.stderr.isatty(), force=force)
    except Interrupted as stop:
        typer.echo(f"interrupted: {stop.kept} of {stop.total} tasks finished and kept in {out}; "
                   "run the same command again to resume", err=True)
        raise typer.Exit(130) from None
    except TasksFailed as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    console.print(f"{tasks:,} tasks, {len(table):,} rows in {out / 'results.parquet'} ({time.perf_counter() - start:.1f} s "
                  f"this time); `irbandits sweep report {out}` draws them", markup=False)


@app.command()
def report(
    ctx: typer.Context,
    out: Path = typer.Argument(..., help="result store of `irbandits sweep run`"),
) -> None:
    """Per problem: regret and accuracy figures, a summary table, and a heat map of final regret per grid."""
    from irbandits.sweeps.report import report as make_report

    _note_old_names(ctx)

    check_dir(out, "DIR")
    check_output(out, "DIR", directory=True)
    for page in make_report(out):
        summary = page["summary"]
        shown = summary.assign(**{"regret (mean ± SE)": [f"{format_number(m)} ± {format_number(se, 2)}" for m, se in
                                                         zip(summary.regret_mean, summary.regret_se)]})
        shown = shown[["algorithm", "runs", "regret (mean ± SE)", "copeland_regret_mean", "accuracy",
                       "seconds_per_run"]]
        partial = "" if page["finished"] == page["expected"] else \
            f" (partial: {page['finished']} of {page['expected']} runs finished)"
        console.print(make_table(shown, f"{page['problem']}: after {page['horizon']:,} steps; regret: mean ± "
                                    f"standard error over runs{partial}"), markup=False)
        for family, (params, cells) in page["grids"].items():
            best = cells.loc[cells.regret_mean.idxmin()]
            console.print(f"{family} grid over {', '.join(params)}: best {best.algorithm} "
                          f"(final regret {format_number(best.regret_mean)}, accuracy {best.accuracy:.2f})", markup=False)
        console.print("wrote " + ", ".join(str(f) for f in page["files"]), markup=False)
