"""``irbandits judge init|requests|add|status|qrels``: run the top-k preference process from files."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from irbandits.cli.common import _table, console
from irbandits.errors import IrbanditsError

app = typer.Typer(no_args_is_help=True,
                  help="Find each topic's best items with pairwise preference judgments (top-k process).")
STATE = typer.Option(..., "--state", help="judging state file (JSON, written atomically)")


def _load(state: Path):
    from irbandits.judging.topk import TopKProcess

    return TopKProcess.load(state)


@app.command()
def init(
    qrels: Path = typer.Argument(..., help="graded qrels (topic iteration docno grade)"),
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

    if state.exists() and not force:
        raise IrbanditsError(f"{state} exists; use --force to start over")
    if merge_duplicates and texts is None:
        raise IrbanditsError("--merge-duplicates needs --texts")
    pools = build_pools(read_qrels(qrels), minimum)
    aliases = None
    if texts is not None:
        groups = find_duplicates(pools, read_texts(texts))
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
def requests(state: Path = STATE) -> None:
    """Print the judgments needed next, one `topic left right` line each."""
    for topic, left, right in _load(state).requests():
        print(topic, left, right)


@app.command()
def add(judgments: Path = typer.Argument(..., help="`topic left right winner` lines"), state: Path = STATE) -> None:
    """Add judgments (any order, partial or extra); all or none are recorded."""
    from irbandits.io import read_judgments

    proc = _load(state)
    before = {r["topic"]: r["phase"] for r in proc.status()}
    table = read_judgments(judgments)
    for row in table.itertuples(index=False):
        try:
            proc.add(row.topic, row.left, row.right, row.winner)
        except IrbanditsError as exc:
            raise IrbanditsError(f"{judgments}, line {row.line}: {exc}") from None
    proc.save(state)
    moved = sum(r["phase"] != before[r["topic"]] for r in proc.status())
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
) -> None:
    """Preference qrels of the finished topics: `topic Q0 docno value`, higher preferred."""
    proc = _load(state)
    for topic, items in proc.top(final, best=best).items():
        for docno, value in items.items():
            print(topic, "Q0", docno, 1 if best else f"{value:.6g}")
