"""``irbandits judge init|requests|add|status|qrels``: run the top-k preference process from files."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import _table, check_file, check_output, console, reading, source_name, writing
from irbandits.errors import IrbanditsError

app = typer.Typer(no_args_is_help=True,
                  help="Find each topic's best items with pairwise preference judgments (top-k process).")
STATE = typer.Option(..., "--state", help="judging state file (JSON, written atomically)")
OUT = typer.Option(Path("-"), help="output file; - is standard output")


def _load(state: Path):
    from irbandits.judging.topk import TopKProcess

    return TopKProcess.load(check_file(state, "--state"))


@app.command()
def init(
    qrels: Path = typer.Argument(..., help="graded qrels (topic iteration docno grade); - is standard input"),
    state: Path = STATE,
    minimum: int = typer.Option(5, help="add grades top-down until a pool has this many items"),
    n: int = typer.Option(7, help="pairs per item in a pruning phase"),
    m: int = typer.Option(9, help="pools of at most m items go to the final phase"),
    extra: int = typer.Option(0, help="extra finalization phases"),
    k: int = typer.Option(5, help="depth of the preference qrels (extended for ties)"),
    keep: str = typer.Option("wins", help="pruning rule: wins (wins > n // 2) or borda (wins / pairs >= 0.5)"),
    seed: int = typer.Option(0, help="seeds the pairings and left / right placement"),
    texts: Optional[Path] = typer.Option(None, help="docno<TAB>text file: report exact duplicates in each pool"),
    merge_duplicates: bool = typer.Option(False, help="judge one item per group of exact duplicates"),
    force: bool = typer.Option(False, help="overwrite an existing state file"),
) -> None:
    """Build judging pools from graded qrels and start the process."""
    from irbandits.io import read_qrels
    from irbandits.judging.duplicates import find_duplicates, merge_duplicates as merge, read_texts
    from irbandits.judging.pools import build_pools, pool_sizes
    from irbandits.judging.topk import TopKProcess

    if check_output(state, "--state").exists() and not force:
        raise IrbanditsError(f"{state} exists; use --force to start over")
    if merge_duplicates and texts is None:
        raise IrbanditsError("--merge-duplicates needs --texts")
    with reading(qrels, "QRELS") as path:
        pools = build_pools(read_qrels(path), minimum)
    aliases = None
    if texts is not None:
        groups = find_duplicates(pools, read_texts(check_file(texts, "--texts")))
        n_dup = sum(len(g) for gs in groups.values() for g in gs)
        console.print(f"exact duplicates: {n_dup} items in {sum(map(len, groups.values()))} groups "
                      f"over {len(groups)} topics", markup=False)
        for topic, gs in groups.items():
            for g in gs:
                console.print(f"  {topic}: {' = '.join(g)}", markup=False)
        if merge_duplicates:
            pools, aliases = merge(pools, groups)
            console.print("merged: one item per group is judged", markup=False)
    proc = TopKProcess(pools, n=n, m=m, extra=extra, k=k, keep=keep, seed=seed, aliases=aliases)
    proc.save(state)
    s = pool_sizes(pools)["size"]
    console.print(f"{len(s)} topics, pool sizes {s.min()}-{s.max()} (median {s.median():g}, mean {s.mean():.1f}); "
                  f"{len(proc.requests())} judgments requested; wrote {state}", markup=False)


@app.command()
def requests(state: Path = STATE, out: Path = OUT) -> None:
    """Write the judgments needed next, one `topic left right` line each."""
    check_output(out, "--out", dash=True)
    pairs = _load(state).requests()
    with writing(out, "--out") as fh:
        fh.writelines(f"{topic} {left} {right}\n" for topic, left, right in pairs)


@app.command()
def add(
    judgments: Path = typer.Argument(..., help="answers file (`topic left right winner`, the winner a docno); "
                                     "- is standard input"),
    state: Path = STATE,
    allow_unrequested: bool = typer.Option(False, help="keep answers no open or past phase asked for, and "
                                           "answers beyond a pair's requests, for later phases"),
) -> None:
    """Add answers: `topic left right winner` lines, the pair as `judge requests` wrote it and, as the
    winner, the docno of the preferred item. Any order, partial; all or none are recorded. An answer
    to a pair that no phase requested, or one answer too many for a pair (the same file added twice),
    is refused naming the line, unless --allow-unrequested."""
    from irbandits.io import read_judgments

    proc = _load(state)
    before = {r["topic"]: (r["phase"], r["kind"]) for r in proc.status()}
    with reading(judgments, "JUDGMENTS") as path:
        table = read_judgments(path)
    for row in table.itertuples(index=False):
        try:
            proc.add(row.topic, row.left, row.right, row.winner, unrequested=allow_unrequested)
        except IrbanditsError as exc:
            hint = "; --allow-unrequested keeps it" if "asked for" in str(exc) else ""
            raise IrbanditsError(f"{source_name(judgments)}, line {row.line}: {exc}{hint}") from None
    proc.save(state)
    moved = sum((r["phase"], r["kind"]) != before[r["topic"]] for r in proc.status())
    console.print(f"added {len(table)} judgments; {moved} topics moved to a new phase; "
                  f"{len(proc.requests())} judgments requested", markup=False)


@app.command()
def status(state: Path = STATE) -> None:
    """Per topic: pool size, phase, judgments outstanding and received."""
    import pandas as pd

    df = pd.DataFrame(_load(state).status())
    console.print(_table(df, f"{(df.kind == 'done').sum()} of {len(df)} topics done"))


@app.command()
def qrels(
    state: Path = STATE,
    best: bool = typer.Option(False, help="only the best set of each topic (value 1)"),
    final: Optional[list[int]] = typer.Option(None, help="score only these final phases (1 = first); "
                                                         "default all"),
    out: Path = OUT,
) -> None:
    """Preference qrels of the finished topics: `topic Q0 docno value`, higher preferred."""
    check_output(out, "--out", dash=True)
    top = _load(state).top(final, best=best)
    with writing(out, "--out") as fh:
        for topic, items in top.items():
            fh.writelines(f"{topic} Q0 {docno} {1 if best else f'{value:.6g}'}\n" for docno, value in items.items())
