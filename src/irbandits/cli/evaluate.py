"""``irbandits evaluate`` and ``irbandits compare-measures``: score TREC runs, compare measures."""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from irbandits.cli.common import (
    check_dir,
    check_file,
    check_output,
    check_table_output,
    console,
    make_table,
    write_table,
)
from irbandits.errors import IrbanditsError


def _measure_help() -> str:
    from irbandits.measures import MEASURES

    reads = {"prefs": "--prefs, or --qrels with source=qrels"}
    own = [f"{m.name} ({m.description}; reads {reads.get(m.labels, '--' + m.labels)})" for m in MEASURES.values()
           if m.name != "standard"]
    return ("; ".join(own) + "; NAME:p=0.9,depth=100 or ppref:k=5,pairs=implicit sets parameters; or any "
            "ir-measures / trec_eval name: "
            "nDCG@10, RR, AP, ndcg_cut_10, recip_rank, map, ...; repeat for several")


def _check(runs: list[Path], measure: list[str], labels: dict[str, Optional[Path]]) -> None:
    """Fail before reading anything: unknown measures, a measure whose labels option is missing,
    input paths that are not readable files (or run directories)."""
    from irbandits.measures import label_kind, parse_measure

    for m in measure:
        kind = label_kind(parse_measure(m))
        if kind == "best" and labels["qrels"] is None and labels["best"] is None:
            raise IrbanditsError(f"measure {m} needs --best or --qrels (best items: the top grade of the qrels)")
        if kind != "best" and labels[kind] is None:
            raise IrbanditsError(f"measure {m} needs --{kind}" + (" (or --prefs)" if kind == "judgments" else ""))
    for r in runs:
        check_dir(r, "--runs") if r.is_dir() else check_file(r, "--runs")
    for option, path in labels.items():
        if path is not None:
            check_file(path, f"--{option}")


def _load(runs: list[Path], measure: list[str], qrels: Optional[Path], judgments: Optional[Path],
          best: Optional[Path], include_unjudged: bool):
    """Read the inputs and evaluate; returns the per-topic table and the seconds each part took. Says
    in one line how many run topics no label judges (left out unless ``include_unjudged``)."""
    from irbandits.io import read_judgments, read_qrels, read_runs
    from irbandits.measures import evaluate

    start = time.perf_counter()
    table_runs = read_runs(runs)
    labels = {"qrels": read_qrels(qrels) if qrels else None,
              "judgments": read_judgments(judgments) if judgments else None,
              "best": read_qrels(best) if best else None}
    read = time.perf_counter() - start
    start = time.perf_counter()
    table = evaluate(table_runs, measure, include_unjudged=include_unjudged, **labels)
    answered, scored = table_runs["topic"].nunique(), table["topic"].nunique()
    if scored < answered and not include_unjudged:
        print(f"left out {answered - scored} of the {answered} run topics: no label judges them "
              f"(--include-unjudged scores them as 0)", file=sys.stderr)
    return table, read, time.perf_counter() - start


_RUNS = typer.Option(..., "--runs", help="a directory of run files, or run files; repeat for several")
_QRELS = typer.Option(None, help="qrels: graded, preference-valued or best-item (topic iteration docno value)")
_JUDGMENTS = typer.Option(None, "--judgments", "--prefs", help="pairwise preference judgments (topic left right "
                          "winner), for pgc, ppref, wpref, rpref and pref_ndcg (several judgments of a pair: the "
                          "majority; a tie states no preference)")
_BEST = typer.Option(None, help="best-item qrels for best_rr; default: the top grade of --qrels")
_INCLUDE_UNJUDGED = typer.Option(False, help="also score the run topics no label judges, as 0 (trec_eval leaves "
                                 "them out)")


def evaluate(
    runs: list[Path] = _RUNS,
    measure: list[str] = typer.Option(..., "--measure", "-m", help=_measure_help()),
    qrels: Optional[Path] = _QRELS,
    judgments: Optional[Path] = _JUDGMENTS,
    best: Optional[Path] = _BEST,
    per_topic: bool = typer.Option(False, "--per-topic", help="also print every topic's value"),
    fmt: str = typer.Option("table", "--format", help="table or csv (rows run,topic,measure,value)"),
    out: Optional[Path] = typer.Option(None, help="also write the per-topic and mean rows to this file: "
                                       ".csv, .tsv, .parquet or .json"),
    include_unjudged: bool = _INCLUDE_UNJUDGED,
) -> None:
    """Score every run with every measure: mean over topics per run (topic 'all'), optionally per topic.
    Only the topics the labels judge are scored, as trec_eval does."""
    import pandas as pd

    from irbandits.measures import mean_over_topics

    if fmt not in ("table", "csv"):
        raise IrbanditsError(f"--format must be table or csv, got {fmt!r}")
    if out:
        check_table_output(out, "--out")
    _check(runs, measure, {"qrels": qrels, "judgments": judgments, "best": best})
    table, read, took = _load(runs, measure, qrels, judgments, best, include_unjudged)
    rows = pd.concat([mean_over_topics(table), table], ignore_index=True)
    if out:
        write_table(rows, out)
    shown = rows if per_topic else rows[rows["topic"] == "all"]
    if fmt == "csv":
        shown.to_csv(sys.stdout, index=False, float_format="%.6g")
    else:
        wide = shown.pivot_table(index=["run", "topic"], columns="measure", values="value", sort=False)
        wide = wide[[m for m in dict.fromkeys(rows["measure"])]].reset_index()
        console.print(make_table(wide, f"{wide['run'].nunique()} runs, {table['topic'].nunique()} topics"))
    sys.stdout.flush()
    print(f"read in {read:.2f} s, evaluated {table['run'].nunique()} runs x {len(measure)} measures in {took:.2f} s",
          file=sys.stderr)
    if out:
        print(f"wrote {out}", file=sys.stderr)


def compare_measures(
    runs: list[Path] = _RUNS,
    measure: list[str] = typer.Option(..., "--measure", "-m", help="at least two; " + _measure_help()),
    qrels: Optional[Path] = _QRELS,
    judgments: Optional[Path] = _JUDGMENTS,
    best: Optional[Path] = _BEST,
    samples: int = typer.Option(1000, min=10, help="topic-bootstrap samples for the interval"),
    seed: int = typer.Option(0, help="bootstrap seed"),
    interval: str = typer.Option("BCa", help="bootstrap interval: BCa or percentile"),
    plot: Optional[Path] = typer.Option(Path("compare-measures.png"), help="scatter plot, one panel per pair"),
    include_unjudged: bool = _INCLUDE_UNJUDGED,
) -> None:
    """Kendall's tau and tau-ap between every pair of measures over the runs, with a scatter plot."""
    import pandas as pd

    from irbandits.measures import mean_over_topics
    from irbandits.measures.correlation import compare
    from irbandits.measures.figures import scatter

    if interval not in ("BCa", "percentile"):
        raise IrbanditsError(f"--interval must be BCa or percentile, got {interval!r}")
    if len(dict.fromkeys(measure)) < 2:
        raise IrbanditsError("compare-measures needs at least two different --measure")
    if plot:
        check_output(plot, "--plot")
    _check(runs, measure, {"qrels": qrels, "judgments": judgments, "best": best})
    table, _, took = _load(runs, list(dict.fromkeys(measure)), qrels, judgments, best, include_unjudged)
    pairs = list(itertools.combinations(dict.fromkeys(measure), 2))
    result = pd.DataFrame([compare(table, a, b, samples=samples, seed=seed, method=interval)
                           for a, b in pairs])
    result["95% CI"] = [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(result.tau_low, result.tau_high)]
    console.print(make_table(result[["a", "b", "runs", "tau", "95% CI", "tau_ap"]],
                         f"Kendall's tau-b over runs; {interval} interval from {samples} topic-bootstrap samples"))
    if plot:
        means = mean_over_topics(table).pivot(index="run", columns="measure", values="value")
        scatter(means, pairs, plot, [f"tau = {t:.4f}" for t in result.tau], ncols=min(3, len(pairs)))
        console.print(f"wrote {plot}")
    console.print(f"evaluated {table['run'].nunique()} runs x {len(dict.fromkeys(measure))} measures in {took:.2f} s")
