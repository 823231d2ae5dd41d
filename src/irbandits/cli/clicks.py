"""``irbandits matrix``: a preference matrix from learning-to-rank data, clicks and interleaving;
``irbandits interleaving-report``: the statistics of a comparison log."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from irbandits.cli.common import (
    ADDRESS,
    BACKEND,
    CLICK_MODEL,
    INTERLEAVING,
    LENGTH,
    LTR,
    QUERY_FILE,
    RANKERS,
    check_output,
    console,
    ltr_environment,
    parse_count,
    worker_count,
)
from irbandits.errors import IrbanditsError
from irbandits.tasks import check_backend


def matrix(
    ltr: Path = LTR,
    query_file: Optional[Path] = QUERY_FILE,
    click_model: str = CLICK_MODEL,
    interleaving: str = INTERLEAVING,
    comparisons: str = typer.Option("4000", help="interleaved comparisons per pair (4e5 is accepted)"),
    rankers: Optional[str] = RANKERS,
    seed: int = typer.Option(0, help="master seed; every pair's generator derives from it"),
    multileave: int = typer.Option(0, min=0, help="multileave this many random rankers per comparison "
                                   "(the --interleaving method's multileaving) instead of interleaving pairs"),
    length: str = LENGTH,
    jobs: int = typer.Option(0, min=0, help="threads (0: all cores), or a local Ray runtime's CPUs; the result "
                             "does not depend on it"),
    backend: str = BACKEND,
    address: Optional[str] = ADDRESS,
    out: Path = typer.Option(Path("matrix.txt"), help="matrix file; standard errors go to NAME.se.txt"),
    progress: bool = typer.Option(True, help="show a progress bar"),
) -> None:
    """Estimate every p_ij by interleaved comparisons on random queries under a click model."""
    n = parse_count(comparisons, "--comparisons")
    check_output(out, "--out")
    check_backend(backend, worker_count(jobs), address)
    if multileave and backend != "local":
        raise IrbanditsError("--multileave runs on this machine only; leave out --backend")
    data, env = ltr_environment(ltr, query_file, click_model, interleaving, rankers, length)
    pairs = env.K * (env.K - 1) // 2
    if multileave:
        from irbandits.clicks.multileaving import METHODS, estimate_by_multileaving, multileave_steps

        method = (env.interleaving if env.interleaving in METHODS
                  else "probabilistic" if env.interleaving.startswith("probabilistic") else "team-draft")
        m = min(multileave, env.K)
        work, count = f"{method} multileaving of {m} rankers per list", multileave_steps(env.K, m, n)
    else:
        work, count = f"{env.interleaving} interleaving", n * pairs
    console.print(f"{ltr}: {env.K} rankers, {data.n_queries} queries, {data.grades} grades; {env.model.name} clicks, "
                  f"{work}; lists of {env.length}; {n:,} comparisons per pair", markup=False)
    start = time.perf_counter()
    if multileave:
        est = estimate_by_multileaving(env.rankers, env.model, method, n, m, seed, length=env.length)
    else:
        est = env.estimate(n, seed=seed, jobs=worker_count(jobs), progress=progress and sys.stderr.isatty(), backend=backend,
                           address=address)
    seconds = time.perf_counter() - start
    m_path, se_path = est.save(out)
    P = est.matrix
    if P.condorcet_winner is not None:
        w = P.condorcet_winner
        verdict = (f"Condorcet winner: {est.names[w]} (row {w}; beats every other ranker, "
                   f"the closest with p = {np.delete(P.p[w], w).min():.4f})")
    else:
        names = ", ".join(f"{est.names[w]} (row {w})" for w in P.copeland_winners)
        verdict = f"no Condorcet winner; Copeland winner(s): {names}, score {P.copeland_scores.max():.3f}"
    console.print(verdict, markup=False)
    console.print(f"{count:,} {'lists' if multileave else 'comparisons'} in {seconds:.1f} s "
                  f"({count / seconds:,.0f} per second); max standard error {est.se.max():.4f}; "
                  f"wrote {m_path} and {se_path}", markup=False)


def interleaving_report(
    log: Path = typer.Argument(..., help="comparison log: JSON lines with rankers, teams and clicks (plain or .gz; "
                               "`simulate --ltr ... --log-comparisons` writes one)"),
    format: str = typer.Option("table", "--format", help="table, or csv (two CSV tables: pairs, then rankers, "
                               "each after a '# name' line)"),
    effect: float = typer.Option(0.01, help="the win-share effect (win share - 1/2) the power line is about"),
    alpha: float = typer.Option(0.05, help="sign-test level for the power analysis"),
    power: float = typer.Option(0.8, help="power for the power analysis"),
    samples: int = typer.Option(1000, min=10, help="bootstrap samples per pair (Bradley-Terry: a tenth of them)"),
    seed: int = typer.Option(0, help="bootstrap seed"),
) -> None:
    """Per pair wins, losses, ties, win share (ties as half), sign test and bootstrap interval; per
    ranker Bradley-Terry score with interval and clicks; and a power analysis."""
    from irbandits.cli.common import make_table, reading, source_name
    from irbandits.clicks.stats import impressions_needed, pair_stats, ranker_stats, read_comparison_log

    if format not in ("table", "csv"):
        raise IrbanditsError(f"--format must be table or csv, got {format!r}")
    with reading(log, "LOG") as path:
        counts = read_comparison_log(path)
    pairs = pair_stats(counts.names, counts.wins, counts.ties, samples, seed, alpha, power)
    rankers = ranker_stats(counts, max(10, samples // 10), seed)
    tie_rate = float(pairs.ties.sum() / pairs.comparisons.sum())
    if not 0 < effect < 0.5 * (1 - tie_rate):
        raise IrbanditsError(f"--effect must be in (0, {0.5 * (1 - tie_rate):g}) at this log's tie rate "
                             f"{tie_rate:.3f}, got {effect}")
    needed = impressions_needed(effect, alpha, power, tie_rate)
    if format == "csv":
        for name, df in (("pairs", pairs), ("rankers", rankers)):
            sys.stdout.write(f"# {name}\n")
            df.to_csv(sys.stdout, index=False, float_format="%.6g")
        return
    about = f"{source_name(log)}: {counts.lines:,} comparisons of {len(counts.names)} rankers"
    console.print(make_table(pairs, f"{about}; per pair (a against b): win share with ties as half, sign-test "
                                "p-value, 95 % bootstrap interval, effect detectable at this count"), markup=False)
    console.print(make_table(rankers, "per ranker: Bradley-Terry score with 95 % bootstrap interval, clicks on its "
                                  "team"), markup=False)
    console.print(f"power: detecting a win share of {0.5 + effect:g} (effect {effect:g}) at alpha {alpha:g} with power "
                  f"{power:g} needs {needed:,} impressions per pair (tie rate {tie_rate:.3f})", markup=False)


fit_app = typer.Typer(no_args_is_help=True, help="Click models fitted to click logs.")


@fit_app.command("fit")
def fit(
    log: Path = typer.Argument(..., help="click log: JSON lines with query, docs, clicks (positions) and, for --by "
                               "grade, grades (plain or .gz)"),
    model: str = typer.Option("dbn", help="pbm, ubm, dbn, sdbn or dcm"),
    out: Path = typer.Option(Path("click-model.json"), help="the fitted model (JSON); with --by grade usable as "
                             "--click-model"),
    by: str = typer.Option("document", help="parameters per document (query, document) or per grade"),
    test: float = typer.Option(0.25, min=0.0, max=0.9, help="share of sessions held out for evaluation (0: none)"),
    seed: int = typer.Option(0, help="seed of the held-out split"),
    iterations: int = typer.Option(500, min=3, help="most EM rounds"),
) -> None:
    """Fit a click model by EM; report log-likelihood and perplexity per rank on held-out sessions
    (and, with --by grade, the simulator's presets beside it)."""
    import pandas as pd

    from irbandits.cli.common import make_table, reading, source_name
    from irbandits.clicks.click_models import ClickModel
    from irbandits.clicks.fitting import evaluate_click_model, fit_click_model, read_click_log

    check_output(out, "--out")
    with reading(log, "LOG") as path:
        data = read_click_log(path, by)
    train, held = data.split(test, seed) if test else (data, data)
    start = time.perf_counter()
    fitted = fit_click_model(train, model, iterations)
    seconds = time.perf_counter() - start
    fitted.save(out)
    rows = {f"{fitted.model} (fitted)": fitted.evaluate(held)}
    if by == "grade" and len(data.items) <= 5:       # the presets cover 2 or 5 grades
        for name in ("navigational", "informational", "perfect", "pbm", "dcm"):
            rows[name] = evaluate_click_model(ClickModel.named(name, 2 if len(data.items) <= 2 else 5), held)
    table = pd.DataFrame([dict(model=k, sessions=v["sessions"], loglik=v["loglik"], perplexity=v["perplexity"],
                               **{f"@{r + 1}": p for r, p in enumerate(v["perplexity_at_rank"])})
                          for k, v in rows.items()])
    where = f"{held.sessions:,} held-out sessions" if test else f"the {held.sessions:,} training sessions"
    console.print(f"{source_name(log)}: {data.sessions:,} sessions, {len(data.items):,} items ({by}); fitted "
                  f"{fitted.model} on {train.sessions:,} in {seconds:.1f} s ({fitted.iterations} EM rounds)",
                  markup=False)
    console.print(make_table(table, f"on {where}: log-likelihood per session, perplexity (mean over ranks and at "
                                "each rank)"), markup=False)
    console.print(f"wrote {out}", markup=False)
