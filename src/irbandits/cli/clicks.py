"""``irbandits matrix``: a preference matrix from learning-to-rank data, clicks and interleaving."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from irbandits.cli.common import (CLICK_MODEL, INTERLEAVING, LTR, QUERY_FILE, RANKERS, _count, _jobs, check_output,
                                  console, ltr_environment)


def matrix(
    ltr: Path = LTR,
    query_file: Optional[Path] = QUERY_FILE,
    click_model: str = CLICK_MODEL,
    interleaving: str = INTERLEAVING,
    comparisons: str = typer.Option("4000", help="interleaved comparisons per pair (4e5 is accepted)"),
    rankers: Optional[str] = RANKERS,
    seed: int = typer.Option(0, help="master seed; every pair's generator derives from it"),
    multileave: int = typer.Option(0, min=0, help="multileave this many random rankers per comparison "
                                   "(team-draft or probabilistic multileaving) instead of interleaving pairs"),
    jobs: int = typer.Option(0, min=0, help="threads (0: all cores); the result does not depend on it"),
    out: Path = typer.Option(Path("matrix.txt"), help="matrix file; standard errors go to NAME.se.txt"),
    progress: bool = typer.Option(True, help="show a progress bar"),
) -> None:
    """Estimate every p_ij by interleaved comparisons on random queries under a click model."""
    n = _count(comparisons, "--comparisons")
    check_output(out, "--out")
    data, env = ltr_environment(ltr, query_file, click_model, interleaving, rankers)
    pairs = env.K * (env.K - 1) // 2
    if multileave:
        from irbandits.clicks.multileaving import estimate_by_multileaving, multileave_steps

        method, m = ("probabilistic" if interleaving.startswith("probabilistic") else "team-draft"), min(multileave, env.K)
        work, count = f"{method} multileaving of {m} rankers per list", multileave_steps(env.K, m, n)
    else:
        work, count = f"{env.interleaving} interleaving", n * pairs
    console.print(f"{ltr}: {env.K} rankers, {data.n_queries} queries, {data.grades} grades; {env.model.name} clicks, "
                  f"{work}; {n:,} comparisons per pair", markup=False)
    start = time.perf_counter()
    if multileave:
        est = estimate_by_multileaving(env.rankers, env.model, method, n, m, seed)
    else:
        est = env.estimate(n, seed=seed, jobs=_jobs(jobs), progress=progress and sys.stderr.isatty())
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
