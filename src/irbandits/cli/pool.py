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


def _read(runs: Path, depth: int | None = None):
    """The runs of a directory or file (``-``: standard input), only each run's top ``depth`` documents of
    every topic when given (read file by file, so memory follows the pool); the readers' warnings
    (repeated documents) as one line each."""
    import warnings

    from rich.console import Console

    from irbandits.io import read_runs

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if runs.is_dir():
            table = read_runs(check_dir(runs, "--runs"), depth)
        else:
            with reading(runs, "--runs") as path:
                table = read_runs(path, depth)
    for w in caught:
        Console(stderr=True, soft_wrap=True).print(f"warning: {w.message}", markup=False, highlight=False)
    return table


def _pools(runs: Path, depth: int):
    """Depth-k pools of a run directory or file (``-``: standard input)."""
    from irbandits.pooling import depth_pools

    return depth_pools(_read(runs, depth), depth)


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
    pool: str = typer.Option("depth", help="pool construction: depth (the top --depth of every run), rrf "
                             "(reciprocal rank fusion), rbp-sum or rbp-max (rank-biased precision weights): "
                             "the --pool-size documents of each topic with the largest fused weight"),
    pool_size: Optional[int] = typer.Option(None, min=1, help="documents per topic of an rrf / rbp pool"),
    rrf_k: float = typer.Option(60, min=0, help="RRF constant k: weight 1 / (k + rank)"),
    rbp_p: float = typer.Option(0.8, min=0, max=1, help="RBP persistence p: weight (1 - p) p^(rank - 1)"),
    rank_runs: Optional[list[str]] = typer.Option(None, help="score the runs with each method's partial qrels "
                                                  "with this ir-measures measure (repeat or comma list; default: "
                                                  "nDCG@10, P@10, AP) and compare the run ranking with the full "
                                                  "qrels': tau, tau_ap, flips in table.csv, tau.png"),
    rank_budget: Optional[list[int]] = typer.Option(None, help="judgments per topic at which --rank-runs compares "
                                                    "(repeat; default: the table's levels and the whole pool)"),
    rank_repetitions: int = typer.Option(10, min=1, help="repetitions of each random method scored by --rank-runs"),
    alpha: float = typer.Option(0.05, min=0, max=1, help="level of the paired t-test whose separated run pairs "
                                "--rank-runs counts flips of"),
    condensed: bool = typer.Option(False, help="--rank-runs scores condensed lists (unjudged documents dropped) "
                                   "instead of unjudged = non-relevant"),
    budget: Optional[list[int]] = typer.Option(None, min=1, help="judgments over all topics (repeat); writes "
                                               "budget.csv: relevant found per method and --split"),
    split: Optional[list[str]] = typer.Option(None, help="how a --budget is spent: per-topic (N / topics) or global"
                                              "[:w=10,min=10] (a bandit over topics); repeat to compare"),
    stop: Optional[str] = typer.Option(None, help="stopping rule per topic, e.g. window:w=20,t=0.5; budget.csv "
                                       "gets the judgments saved and relevant documents lost"),
    jobs: int = JOBS,
    backend: str = BACKEND,
    address: Optional[str] = ADDRESS,
) -> None:
    """Relevant documents found after n judgments by every method: table, curves.parquet, curves.png.
    Only the topics the qrels judge are scored, as trec_eval does. With --rank-runs, table.csv holds a row
    per method, budget and measure: relevant found, and how the partial qrels rank the runs. With --budget,
    --split or --stop, budget.csv: per budget over all topics, method and split, the relevant found."""
    from irbandits.io import read_qrels
    from irbandits.pooling.base import method_specs
    from irbandits.pooling.budget import parse_split
    from irbandits.pooling.ranking import measure_list
    from irbandits.pooling.stopping import parse_stop
    from irbandits.pooling.study import PoolChoice, pool_study

    start = time.perf_counter()
    method = method_specs(method)
    splits = [parse_split(s) for s in split] if split else None
    stop_rule = parse_stop(stop)
    check_output(out, "--out", directory=True)
    jobs = worker_count(jobs)
    check_backend(backend, jobs, address)
    if str(runs) == str(qrels) == "-":
        raise IrbanditsError("--runs and --qrels cannot both be - (one standard input)")
    choice = PoolChoice(depth, pool, pool_size, rrf_k, rbp_p)
    measures = measure_list(rank_runs)
    if str(qrels) != "-":
        check_file(qrels, "--qrels")  # before the runs are read
    table_runs = _read(runs, choice.read_depth(measures, condensed))
    with reading(qrels, "--qrels") as path:
        judged = read_qrels(path)
    study = pool_study(
        table_runs, judged, out, choice, methods=method, relevant_grade=relevant_grade, repetitions=repetitions,
        seed=seed, include_unjudged=include_unjudged, measures=measures, rank_budgets=rank_budget,
        rank_repetitions=rank_repetitions, alpha=alpha, condensed=condensed, budgets=budget, splits=splits,
        stop=stop_rule, backend=backend, workers=jobs, address=address,
        say=lambda line: console.print(line, markup=False),
        show=lambda df, title: console.print(make_table(df, title)))
    console.print(f"wrote {', '.join(map(str, study.written))} ({time.perf_counter() - start:.1f} s in all with "
                  f"reading and writing)", markup=False)


@app.command()
def init(
    runs: Path = RUNS,
    state: Path = typer.Option(..., help="state file to create"),
    depth: int = typer.Option(10, min=1, help="pool depth k"),
    method: str = typer.Option("MM-NS", help="NAME or NAME:param=value (see `irbandits pool methods`)"),
    relevant_grade: float = typer.Option(1, help="grades >= this count as relevant"),
    seed: int = typer.Option(0, help="seed of a random method"),
    budget: Optional[int] = typer.Option(None, min=1, help="judgments over all topics (default: the whole pool)"),
    split: str = typer.Option("per-topic", help="per-topic (budget / topics each) or global[:w=10,min=10] "
                              "(a bandit over topics: `pool next` offers the topic it chose)"),
    stop: Optional[str] = typer.Option(None, help="stopping rule per topic, e.g. window:w=20,t=0.5"),
    force: bool = typer.Option(False, help="overwrite an existing state file"),
) -> None:
    """Create the adjudication state of a new assessment campaign."""
    from irbandits.pooling.base import parse_method
    from irbandits.pooling.budget import parse_split
    from irbandits.pooling.state import Campaign
    from irbandits.pooling.stopping import parse_stop

    parse_method(method)
    parse_split(split)
    parse_stop(stop)
    if check_output(state, "--state").exists() and not force:
        raise IrbanditsError(f"{state} exists; pass --force to start the campaign again")
    pools = _pools(runs, depth)
    campaign = Campaign(pools, method, relevant_grade, seed, budget, split, stop)
    campaign.save(state)
    extra = [f"budget {budget or 'whole pool'} ({campaign.split})" if budget or campaign.split != "per-topic" else "",
             f"stopping rule {campaign.stop}" if campaign.stop else ""]
    console.print(f"{state}: {campaign.method} on {len(pools)} topics, "
                     f"{sum(m.pool.size for m in campaign.topics.values())} pooled documents"
                     f"{''.join(', ' + e for e in extra if e)}", markup=False)


@app.command("next")
def next_(
    state: Path = typer.Option(..., help="state file (see `irbandits pool init`)"),
    topic: Optional[list[str]] = typer.Option(None, help="only these topics (repeat); default every topic"),
    out: Path = typer.Option(Path("-"), help="output file; - is standard output"),
) -> None:
    """Write `topic docno run` for the document to judge next on each topic not yet finished (with a global
    budget split, on each topic the bandit over topics has handed a judgment to)."""
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
