"""``irbandits pool ...``: simulate adjudication methods on judged runs, or drive a live campaign."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import (
    ADDRESS,
    BACKEND,
    JOBS,
    check_dir,
    check_file,
    check_output,
    console,
    make_table,
    reading,
    source_name,
    worker_count,
    writing,
)
from irbandits.errors import IrbanditsError
from irbandits.tasks import check_backend

app = typer.Typer(no_args_is_help=True, help="Choose which pooled document an assessor judges next.")
RUNS = typer.Option(..., help="directory of TREC run files (plain or .gz), or one run file; - is standard input")


def _pools(runs: Path, depth: int):
    """Depth-k pools of a run directory or file (``-``: standard input); the readers' warnings
    (repeated documents) as one line each."""
    import warnings

    from rich.console import Console

    from irbandits.io import read_runs
    from irbandits.pooling import depth_pools

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if runs.is_dir():
            table = read_runs(check_dir(runs, "--runs"))
        else:
            with reading(runs, "--runs") as path:
                table = read_runs(path)
    for w in caught:
        Console(stderr=True, soft_wrap=True).print(f"warning: {w.message}", markup=False, highlight=False)
    return depth_pools(table, depth)


@app.command()
def simulate(
    runs: Path = RUNS,
    qrels: Path = typer.Option(..., help="qrels judging the pooled documents; - is standard input"),
    depth: int = typer.Option(10, min=1, help="pool depth k: the top k documents of every run"),
    relevant_grade: float = typer.Option(1, help="grades >= this count as relevant"),
    method: Optional[list[str]] = typer.Option(None, "--method", "-m",
                                               help="NAME or NAME:param=value; repeat; default all"),
    repetitions: int = typer.Option(100, min=1, help="seeded repetitions of each random method"),
    seed: int = typer.Option(0, help="master seed of the random methods"),
    out: Path = typer.Option(Path("pool-results"), help="output directory"),
    include_unjudged: bool = typer.Option(False, help="also score the run topics the qrels do not judge "
                                          "(as having no relevant document)"),
    jobs: int = JOBS,
    backend: str = BACKEND,
    address: Optional[str] = ADDRESS,
) -> None:
    """Relevant documents found after n judgments by every method: table, curves.parquet, curves.png.
    Only the topics the qrels judge are scored, as trec_eval does."""
    from irbandits.io import read_qrels
    from irbandits.pooling.base import method_specs
    from irbandits.pooling.pools import judged_pools
    from irbandits.pooling.simulate import Timing, found_at, levels, plot_curves, simulate_pools

    start = time.perf_counter()
    method = method_specs(method)
    check_output(out, "--out", directory=True)
    jobs = worker_count(jobs)
    check_backend(backend, jobs, address)
    if str(runs) == str(qrels) == "-":
        raise IrbanditsError("--runs and --qrels cannot both be - (one standard input)")
    if str(qrels) != "-":
        check_file(qrels, "--qrels")  # before the runs are read
    pools = _pools(runs, depth)
    with reading(qrels, "--qrels") as path:
        judged = read_qrels(path)
    if not include_unjudged:
        answered, pools = len(pools), judged_pools(pools, judged)
        if not pools:
            raise IrbanditsError(f"--qrels {source_name(qrels)} judges none of the {answered} topics the runs answer")
        if len(pools) < answered:
            console.print(f"left out {answered - len(pools)} of the {answered} run topics: the qrels do not judge "
                          f"them (--include-unjudged scores them as having no relevant document)", markup=False)
    relevance = {t: p.relevance(judged, relevant_grade) for t, p in pools.items()}
    sizes = [p.size for p in pools.values()]
    unjudged = sum(p.unjudged(judged) for p in pools.values())
    console.print(f"{len(pools)} topics, {len(next(iter(pools.values())).runs)} runs, depth {depth}: pools of "
                  f"{min(sizes)}-{max(sizes)} documents (mean {sum(sizes) / len(sizes):.1f}); relevant: grade >= "
                  f"{relevant_grade:g}; {unjudged} pooled documents without a judgment count as non-relevant", markup=False)
    timing = Timing()
    curves = simulate_pools(pools, relevance, method, repetitions=repetitions, seed=seed, timing=timing,
                            backend=backend, workers=jobs, address=address)
    table = found_at(curves, levels(max(sizes)))
    out.mkdir(exist_ok=True)
    curves.to_parquet(out / "curves.parquet", index=False)
    table.round(2).to_csv(out / "table.csv")
    title = (f"{len(pools)} topics, {len(next(iter(pools.values())).runs)} runs, depth-{depth} pools, "
             f"relevant = grade >= {relevant_grade:g}")
    plot_curves(curves, out / "curves.png", title=title)
    console.print(make_table(table.round(2).reset_index(), f"mean relevant documents found after n judgments ({title})"))
    random = list(curves.method[curves.repetition > 0].unique())
    console.print(f"simulated {curves.method.nunique()} methods on {len(pools)} topics ({repetitions} repetitions of "
                  f"{', '.join(random) or 'no random method'}): {timing.compile_s + timing.run_s:.1f} s "
                  f"({timing.compile_s:.1f} s compiling, {timing.run_s:.1f} s judging); "
                  f"{time.perf_counter() - start:.1f} s in all with reading and writing", markup=False)
    console.print(f"wrote {out / 'curves.parquet'}, {out / 'table.csv'}, {out / 'curves.png'}", markup=False)


@app.command()
def init(
    runs: Path = RUNS,
    state: Path = typer.Option(..., help="state file to create"),
    depth: int = typer.Option(10, min=1, help="pool depth k"),
    method: str = typer.Option("MM-NS", help="NAME or NAME:param=value (see `irbandits pool methods`)"),
    relevant_grade: float = typer.Option(1, help="grades >= this count as relevant"),
    seed: int = typer.Option(0, help="seed of a random method"),
    force: bool = typer.Option(False, help="overwrite an existing state file"),
) -> None:
    """Create the adjudication state of a new assessment campaign."""
    from irbandits.pooling.base import parse_method
    from irbandits.pooling.state import Campaign

    parse_method(method)
    if check_output(state, "--state").exists() and not force:
        raise IrbanditsError(f"{state} exists; pass --force to start the campaign again")
    pools = _pools(runs, depth)
    campaign = Campaign(pools, method, relevant_grade, seed)
    campaign.save(state)
    console.print(f"{state}: {campaign.method} on {len(pools)} topics, "
                     f"{sum(m.pool.size for m in campaign.topics.values())} pooled documents", markup=False)


@app.command("next")
def next_(
    state: Path = typer.Option(..., help="state file (see `irbandits pool init`)"),
    topic: Optional[list[str]] = typer.Option(None, help="only these topics (repeat); default every topic"),
    out: Path = typer.Option(Path("-"), help="output file; - is standard output"),
) -> None:
    """Write `topic docno run` for the document to judge next on each topic not yet finished."""
    from irbandits.pooling.state import editing

    check_output(out, "--out", dash=True)
    with editing(check_file(state, "--state")) as campaign:
        chosen = campaign.next(topic)
    with writing(out, "--out") as fh:
        fh.writelines(f"{row.topic} {row.docno} {row.run}\n" for row in chosen.itertuples(index=False))


@app.command()
def add(
    judgments: Path = typer.Argument(..., help="qrels-format judgments: topic iteration docno grade; "
                                     "- is standard input"),
    state: Path = typer.Option(..., help="state file (see `irbandits pool init`)"),
) -> None:
    """Record judgments (all or none); print the progress of every topic they touch."""
    from irbandits.io import read_qrels
    from irbandits.pooling.state import editing

    with reading(judgments, "JUDGMENTS") as path:
        batch = read_qrels(path, lines=True)
    with editing(check_file(state, "--state")) as campaign:
        campaign.add(batch, source=source_name(judgments))
    progress = campaign.progress()
    progress = progress[progress.topic.isin(batch.topic.astype(str))]
    console.print(make_table(progress, f"{len(batch)} judgments added to {state}"))


@app.command()
def methods() -> None:
    """List the adjudication methods and their parameters."""
    from irbandits.pooling import list_methods

    console.print(make_table(list_methods()[["name", "description", "parameters", "random"]], "pooling methods"))
