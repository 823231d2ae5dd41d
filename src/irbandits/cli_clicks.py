"""``irbandits matrix``: a preference matrix from learning-to-rank data, clicks and interleaving;
and the ``--ltr`` environment of ``irbandits simulate``."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from irbandits.errors import IrbanditsError

LTR = typer.Option(..., "--ltr", help="SVMlight / LETOR file (plain or .gz); every feature is a ranker")
QUERY_FILE = typer.Option(None, help="LightGBM-style .query file (documents per query) for files without qid:")
CLICK_MODEL = typer.Option("navigational", help="perfect, navigational, informational, random, pbm or dcm")
INTERLEAVING = typer.Option("probabilistic", help="team-draft, balanced, probabilistic or probabilistic-assignment")
RANKERS = typer.Option(None, help="features to use as rankers, 1-based, e.g. 1-10,15; default all")
MULTILEAVE = typer.Option(0, min=0, help="with --ltr: show M rankers per step in one team-draft or probabilistic "
                          "multileaved list (multi-dueling algorithms only, e.g. Self-Sparring; 2 = interleaving)")


def parse_rankers(text: Optional[str]) -> list[int] | None:
    """``"1-3,7"`` -> ``[0, 1, 2, 6]`` (0-based feature columns)."""
    if not text:
        return None
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, _, hi = part.partition("-")
        try:
            out.extend(range(int(lo) - 1, int(hi or lo)))
        except ValueError:
            raise IrbanditsError(f"--rankers: {part!r} is not a feature number or range like 1-10") from None
    return out


def ltr_environment(ltr: Path, query_file: Optional[Path], click_model: str, interleaving: str,
                    rankers: Optional[str] = None):
    from irbandits.clicks.click_models import ClickModel
    from irbandits.clicks.environment import ClickEnvironment
    from irbandits.clicks.interleaving import get_method
    from irbandits.clicks.ltr import read_ltr

    get_method(interleaving), ClickModel.named(click_model), parse_rankers(rankers)  # fail before reading
    data = read_ltr(ltr, query_file)
    return data, ClickEnvironment(data.rankers(parse_rankers(rankers)), click_model, interleaving)


def multi_dueling_specs(algorithm: Optional[list[str]], ltr: Optional[Path], interleaving: str, m: int):
    """The algorithms of ``simulate --multileave M``, checked before any data is read: default
    every multi-dueling algorithm; an algorithm that compares only two arms is an error."""
    from irbandits.clicks.interleaving import get_method
    from irbandits.clicks.multileaving import METHODS
    from irbandits.dueling import list_algorithms, parse_spec
    from irbandits.dueling.base import get_algorithm, require_multi_dueling

    if not ltr:
        raise IrbanditsError("--multileave needs --ltr: a multileaved comparison is of rankers on clicks")
    if m < 2:
        raise IrbanditsError(f"--multileave must be at least 2 (rankers per list), got {m}")
    if get_method(interleaving).name not in METHODS:
        raise IrbanditsError(f"--multileave needs --interleaving {' or '.join(METHODS)} (the methods that "
                             f"multileave), got {interleaving}")
    names = algorithm or [n for n in list_algorithms().name if get_algorithm(n).multi_dueling]
    specs = [parse_spec(a) for a in names]
    for s in specs:
        require_multi_dueling(s.cls)
    return specs


def multileave_environment(env, m: int):
    """The ``--ltr`` environment with ``m`` rankers per multileaved comparison."""
    from irbandits.clicks.multidueling import MultileaveEnvironment

    if m > env.K:
        raise IrbanditsError(f"--multileave {m} is more than the {env.K} rankers")
    return MultileaveEnvironment(env.rankers, env.model, env.interleaving, per_step=m)


def reference_problem(env, matrix: Optional[Path], seed: int, label: str):
    """The matrix regret is measured against in a full simulation: loaded, or estimated (4,000
    comparisons per pair); named so that full-simulation results never mix with proxy results."""
    from irbandits.problems import PreferenceMatrix

    if matrix:
        P = PreferenceMatrix.load(matrix)
        if P.K != env.K:
            raise IrbanditsError(f"{matrix} has K={P.K} but the environment has {env.K} rankers")
    else:
        P = env.estimate(4000, seed=seed).matrix
    return PreferenceMatrix(P.p, name=f"{label}-{env.model.name}-{env.interleaving}-full")


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
    from irbandits.cli import _count, console

    n = _count(comparisons, "--comparisons")
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
        est = env.estimate(n, seed=seed, jobs=jobs or None, progress=progress and sys.stderr.isatty())
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
