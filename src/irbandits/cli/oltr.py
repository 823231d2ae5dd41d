"""``irbandits oltr``: online learning to rank simulated on learning-to-rank data."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import (
    ADDRESS,
    BACKEND,
    JOBS,
    QUERY_FILE,
    check_file,
    check_output,
    console,
    make_table,
    parse_count,
    worker_count,
)
from irbandits.errors import IrbanditsError


def load_data(train: Path, test: Optional[Path], query_file: Optional[Path], test_query_file: Optional[Path],
              normalize: bool, top: int, by: int):
    """The training and test sets, normalised per query and cut to each query's ``top`` documents by
    feature ``by`` (1-based) as asked."""
    from irbandits.clicks.ltr import read_ltr
    from irbandits.oltr.data import normalize_queries, top_documents

    sets = [read_ltr(check_file(train, "--train"), query_file)]
    if test is not None:
        sets.append(read_ltr(check_file(test, "--test"), test_query_file))
        if sets[1].n_features != sets[0].n_features:
            raise IrbanditsError(f"--test {test} has {sets[1].n_features} features but --train {train} has "
                                 f"{sets[0].n_features}")
    if top:
        if not 1 <= by <= sets[0].n_features:
            raise IrbanditsError(f"--by must be a feature of --train (1-{sets[0].n_features}), got {by}")
        sets = [top_documents(d, by - 1, top) for d in sets]
    if normalize:
        sets = [normalize_queries(d) for d in sets]
    return sets[0], sets[-1]


def oltr(
    train: Optional[Path] = typer.Option(None, help="SVMlight / LETOR file the users' queries come from"),
    test: Optional[Path] = typer.Option(None, help="SVMlight / LETOR file offline NDCG@10 is measured on "
                                        "(default: --train)"),
    query_file: Optional[Path] = QUERY_FILE,
    test_query_file: Optional[Path] = typer.Option(None, help="the .query file of --test (default: TEST.query if "
                                                   "it exists)"),
    click_model: str = typer.Option("perfect", help="perfect, navigational, informational (or random, pbm, dcm), "
                                    "or a model fitted by grade (`irbandits clicks fit --by grade --out MODEL.json`)"),
    algorithm: Optional[list[str]] = typer.Option(
        None, "--algorithm", "-a", help="learner NAME or NAME:param=value,... (e.g. MGD:n=9); repeat for several; "
        "default DBGD, MGD:n=9 and PDGD; `--list` shows them all"),
    impressions: str = typer.Option("10000", help="impressions per run (1e4 is accepted)"),
    runs: int = typer.Option(5, min=1, help="independent runs per learner"),
    every: str = typer.Option("1000", help="offline NDCG@10 on --test after every this many impressions"),
    jobs: int = JOBS,
    backend: str = BACKEND,
    address: Optional[str] = ADDRESS,
    seed: int = typer.Option(0, help="master seed; run r of every learner has the same seed"),
    normalize: bool = typer.Option(True, help="min-max scale every feature within each query, as LETOR's "
                                   "QueryLevelNorm files the OLTR papers use (a no-op on such files)"),
    top: int = typer.Option(0, min=0, help="keep each query's N documents of highest --by feature (a first-stage "
                            "ranker's candidates); 0: all"),
    by: int = typer.Option(25, help="with --top: the 1-based feature to select by (25: BM25 of LETOR 3.0)"),
    out: Path = typer.Option(Path("oltr-results"), help="output directory: results.parquet, table.csv, "
                             "offline.png, online.png; the same command resumes there"),
    force: bool = typer.Option(False, help="replace results of other settings in --out (instead of refusing)"),
    progress: bool = typer.Option(True, help="show a progress bar"),
    list_: bool = typer.Option(False, "--list", help="list the learners and their parameters, and exit"),
) -> None:
    """Learn rankers online from simulated clicks: every impression a query of --train, the learner's
    list, a simulated user's clicks, an update; offline NDCG@10 on --test and online performance
    (discounted cumulative NDCG@10 of the lists shown, discount 0.9995)."""
    from irbandits.clicks.click_models import ClickModel
    from irbandits.oltr import list_learners
    from irbandits.oltr.runs import plot_learning, simulate_learners, summarize_learners
    from irbandits.tasks import Interrupted, check_backend

    if list_:
        console.print(make_table(list_learners(), "online learners to rank"))
        return
    if train is None:
        raise IrbanditsError("--train is missing: the SVMlight / LETOR file the users' queries come from")
    T, E = parse_count(impressions, "--impressions"), parse_count(every, "--every")
    jobs = worker_count(jobs)
    check_backend(backend, jobs, address)
    check_output(out, "--out", directory=True)
    specs = algorithm or ["DBGD", "MGD:n=9", "PDGD"]
    train_data, test_data = load_data(train, test, query_file, test_query_file, normalize, top, by)
    model = ClickModel.named(click_model, grades=train_data.grades)   # a bad name fails here, listing the names
    settings = dict(train=str(train.resolve()), test=str((test or train).resolve()), normalize=normalize,
                    top=top, by=by if top else None)
    console.print(f"{train_data.n_queries} training queries ({train}), {test_data.n_queries} test queries "
                  f"({test or train}), {train_data.n_features} features; {model.name} clicks; {T:,} impressions x "
                  f"{runs} runs of {', '.join(specs)}; {jobs} jobs, seed {seed}", markup=False)
    try:
        table = simulate_learners(specs, train_data, test_data, click_model, T, runs, E, seed, jobs, backend,
                                  address, out, force, progress and sys.stderr.isatty(), settings)
    except Interrupted as stop:
        typer.echo(f"interrupted: {stop.kept} of {stop.total} runs finished and kept in {out}; "
                   "run the same command again to resume", err=True)
        raise typer.Exit(130) from None
    summary = summarize_learners(table)
    summary.to_csv(out / "table.csv", index=False)
    shown = summary[["algorithm", "runs"]].copy()
    for col, name, digits in (("offline_ndcg", "offline NDCG@10", 4), ("online_ndcg", "online performance", 1)):
        shown[f"{name} (mean ± SE)"] = [f"{m:.{digits}f} ± {s:.{digits}f}" for m, s in
                                        zip(summary[f"{col}_mean"], summary[f"{col}_se"])]
    about = f"{model.name} clicks, {T:,} impressions, {runs} run{'s' if runs != 1 else ''}"
    plot_learning(table, "offline_ndcg", out / "offline.png", f"offline NDCG@10 on the test set ({about}; ± 1 SE)")
    plot_learning(table, "online_ndcg", out / "online.png", f"online performance ({about}; ± 1 SE)")
    console.print(make_table(shown, f"after {T:,} impressions ({model.name} clicks)"), markup=False)
    console.print(f"wrote {out / 'results.parquet'}, {out / 'table.csv'}, {out / 'offline.png'}, "
                  f"{out / 'online.png'}", markup=False)
