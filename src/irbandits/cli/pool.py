"""``irbandits pool ...``: simulate adjudication methods on judged runs, or drive a live campaign."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import _table, console
from irbandits.errors import IrbanditsError

app = typer.Typer(no_args_is_help=True, help="Choose which pooled document an assessor judges next.")


def _pools(runs: Path, depth: int):
    """Depth-k pools of a run directory; the readers' warnings (repeated documents) as one line each."""
    import warnings

    from rich.console import Console

    from irbandits.io import read_runs
    from irbandits.pooling import build_pools

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = read_runs(runs)
    for w in caught:
        Console(stderr=True, soft_wrap=True).print(f"warning: {w.message}", markup=False, highlight=False)
    return build_pools(table, depth)


@app.command()
def simulate(
    runs: Path = typer.Option(..., help="directory of TREC run files (plain or .gz), or one run file"),
    qrels: Path = typer.Option(..., help="qrels judging every pooled document"),
    depth: int = typer.Option(10, min=1, help="pool depth k: the top k documents of every run"),
    relevant_grade: float = typer.Option(1, help="grades >= this count as relevant"),
    method: Optional[list[str]] = typer.Option(None, "--method", "-m",
                                               help="NAME or NAME:param=value; repeat; default all"),
    repetitions: int = typer.Option(100, min=1, help="seeded repetitions of each random method"),
    seed: int = typer.Option(0, help="master seed of the random methods"),
    out: Path = typer.Option(Path("pool-results"), help="output directory"),
) -> None:
    """Relevant documents found after n judgments by every method: table, curves.parquet, curves.png."""
    from irbandits.io import read_qrels
    from irbandits.pooling.simulate import Timing, found_at, levels, plot_curves, simulate_pools

    start = time.perf_counter()
    pools = _pools(runs, depth)
    judged = read_qrels(qrels)
    relevance = {t: p.relevance(judged, relevant_grade) for t, p in pools.items()}
    sizes = [p.size for p in pools.values()]
    unjudged = sum(p.unjudged(judged) for p in pools.values())
    console.print(f"{len(pools)} topics, {len(next(iter(pools.values())).runs)} runs, depth {depth}: pools of "
                  f"{min(sizes)}-{max(sizes)} documents (mean {sum(sizes) / len(sizes):.1f}); relevant: grade >= "
                  f"{relevant_grade:g}; {unjudged} pooled documents without a judgment count as non-relevant", markup=False)
    timing = Timing()
    curves = simulate_pools(pools, relevance, method, repetitions=repetitions, seed=seed, timing=timing)
    table = found_at(curves, levels(max(sizes)))
    out.mkdir(parents=True, exist_ok=True)
    curves.to_parquet(out / "curves.parquet", index=False)
    table.round(2).to_csv(out / "table.csv")
    title = (f"{len(pools)} topics, {len(next(iter(pools.values())).runs)} runs, depth-{depth} pools, "
             f"relevant = grade >= {relevant_grade:g}")
    plot_curves(curves, out / "curves.png", title=title)
    console.print(_table(table.round(2).reset_index(), f"mean relevant documents found after n judgments ({title})"))
    random = list(curves.method[curves.repetition > 0].unique())
    console.print(f"simulated {curves.method.nunique()} methods on {len(pools)} topics ({repetitions} repetitions of "
                  f"{', '.join(random) or 'no random method'}): {timing.compile_s + timing.run_s:.1f} s "
                  f"({timing.compile_s:.1f} s compiling, {timing.run_s:.1f} s judging); "
                  f"{time.perf_counter() - start:.1f} s in all with reading and writing", markup=False)
    console.print(f"wrote {out / 'curves.parquet'}, {out / 'table.csv'}, {out / 'curves.png'}", markup=False)


@app.command()
def init(
    runs: Path = typer.Option(..., help="directory of TREC run files (plain or .gz), or one run file"),
    state: Path = typer.Option(..., help="state file to create"),
    depth: int = typer.Option(10, min=1, help="pool depth k"),
    method: str = typer.Option("MM-NS", help="NAME or NAME:param=value (see `irbandits pool methods`)"),
    relevant_grade: float = typer.Option(1, help="grades >= this count as relevant"),
    seed: int = typer.Option(0, help="seed of a random method"),
    force: bool = typer.Option(False, help="overwrite an existing state file"),
) -> None:
    """Create the adjudication state of a new assessment campaign."""
    from irbandits.pooling.state import Campaign

    if state.exists() and not force:
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
) -> None:
    """Print `topic docno run` for the document to judge next on each topic not yet finished."""
    from irbandits.pooling.state import editing

    with editing(state) as campaign:
        chosen = campaign.next(topic)
    for row in chosen.itertuples(index=False):
        typer.echo(f"{row.topic} {row.docno} {row.run}")


@app.command()
def add(
    judgments: Path = typer.Argument(..., help="qrels-format judgments: topic iteration docno grade"),
    state: Path = typer.Option(..., help="state file (see `irbandits pool init`)"),
) -> None:
    """Record judgments (all or none); print the progress of every topic they touch."""
    from irbandits.io import read_qrels
    from irbandits.pooling.state import editing

    batch = read_qrels(judgments, lines=True)
    with editing(state) as campaign:
        campaign.add(batch, source=str(judgments))
    progress = campaign.progress()
    progress = progress[progress.topic.isin(batch.topic.astype(str))]
    console.print(_table(progress, f"{len(batch)} judgments added to {state}"))


@app.command()
def methods() -> None:
    """List the adjudication methods and their parameters."""
    from irbandits.pooling import list_methods

    console.print(_table(list_methods()[["name", "description", "parameters", "random"]], "pooling methods"))
