"""What the online reproduction studies share: their data, runs on several problems, their summary table in
markdown, and one regret figure per problem.

An online study module defines ``DEFAULT`` and ``FULL`` (the ``horizon`` and ``runs`` of the small
default scale and of the paper's, and any other keyword its ``run_study`` takes at that scale), ``run_study(horizon, runs, seed, jobs, out, progress)`` returning
the tidy table of :func:`irbandits.simulate.simulate` with a ``problem`` column, ``report(table)``
(markdown that puts the paper's claims beside this run's numbers), ``claim_rows(table)`` (the same claims as
:class:`~irbandits.studies.claims.Claim` rows, which ``report`` renders), ``figures(table, out)`` and
``plan(horizon, runs, **scale)`` (its runs for ``--dry-run``, :mod:`irbandits.studies.estimate`).
``irbandits reproduce NAME [--full]`` runs it and writes ``out/NAME.md``, ``out/claims.csv`` and its figures;
``--dry-run`` prints the estimate instead and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import Rankers
from irbandits.dueling.base import AlgorithmSpec
from irbandits.errors import IrbanditsError
from irbandits.plots import plot_regret
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import simulate

NP2004 = Path("../shared/data/ltr/letor3-np2004-fold1/test.txt.gz")  # LETOR 3.0 NP2004, fold 1: 15 queries, 64 features
MSLR = Path("../shared/data/preference-matrices/mslr-navigational.txt")  # MSLR-Navigational: 136 rankers


def reference(rankers: Rankers, seed: int = 0, out: str | Path | None = None, comparisons: int = 4000,
              click_model: str = "navigational") -> PreferenceMatrix:
    """The rankers' preference matrix from ``comparisons`` probabilistic-interleaving comparisons per
    pair under ``click_model`` (thesis section 4.4.1: 4,000 per pair, navigational clicks), arms named
    after the rankers; read from ``out/reference-seed<seed>.txt`` when an earlier run kept it there."""
    name = f"np2004-{click_model}-pi"
    path = None if out is None else Path(out) / f"reference-seed{seed}.txt"
    if path is not None and path.is_file():
        return PreferenceMatrix.load(path, name=name)
    est = ClickEnvironment(rankers, click_model, "probabilistic").estimate(comparisons, seed=seed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        est.save(path)
    return PreferenceMatrix(est.matrix.p, name=name, arms=est.names)


def draw_subset(matrix: PreferenceMatrix, K: int, seed: int, accept: Callable[[PreferenceMatrix], bool], name: str,
                tries: int = 100_000) -> tuple[np.ndarray, PreferenceMatrix]:
    """The first draw of ``K`` of the matrix's arms (sorted) from ``default_rng(seed)`` whose sub-matrix
    (called ``name``) satisfies ``accept``: the arms and the sub-matrix. A deterministic search, so a
    study's problem is fixed by its seed; no hit in ``tries`` draws is an error."""
    rng = np.random.default_rng(seed)
    for _ in range(tries):
        arms = np.sort(rng.choice(matrix.K, K, replace=False))
        sub = PreferenceMatrix(matrix.p[np.ix_(arms, arms)], name=name)
        if accept(sub):
            return arms, sub
    raise IrbanditsError(f"no draw of {K} of the {matrix.K} arms of {matrix.name} with seed {seed} is accepted "
                         f"in {tries:,} tries")


def run_problems(problems: dict[str, PreferenceMatrix], algorithms: Sequence[str | AlgorithmSpec], horizon: int,
                 runs: int, seed: int = 0, jobs: int = 1, out: str | Path | None = None,
                 progress: bool = False) -> pd.DataFrame:
    """:func:`~irbandits.simulate.simulate` on each problem (results in ``out/<key>``, resumable), one
    table with a ``problem`` column (the keys of ``problems``)."""
    tables = []
    for key, problem in problems.items():
        table = simulate(problem, algorithms, horizon=int(horizon), runs=runs, seed=seed, jobs=jobs,
                         out=None if out is None else Path(out) / key, progress=progress)
        tables.append(table.assign(problem=key))
    return pd.concat(tables, ignore_index=True)


def final(table: pd.DataFrame, column: str = "regret") -> pd.DataFrame:
    """Per problem and algorithm at the last step: runs, ``column``'s mean, standard error and median,
    and the runs that end on a winner (``correct``)."""
    last = table[table.step == table.step.max()]
    g = last.groupby(["problem", "algorithm"], sort=False)
    out = g[column].agg(["size", "mean", "std", "median"])
    out["se"] = out["std"].fillna(0.0) / np.sqrt(out["size"])
    out["correct"] = g.correct.sum()
    return out.drop(columns="std").rename(columns={"size": "runs"}).reset_index()


def tail_share(table: pd.DataFrame, column: str = "regret") -> pd.Series:
    """Per problem and algorithm: the share of the final mean ``column`` gained after the last-but-one
    checkpoint (the last ~20 % of the steps with the default checkpoints): about 2 % for a curve growing
    like log t, 20 % for a straight line."""
    steps = np.sort(table.step.unique())
    mean = table[table.step.isin(steps[-2:])].groupby(["problem", "algorithm", "step"], sort=False)[column].mean()
    last, before = mean.xs(steps[-1], level=2), mean.xs(steps[-2], level=2)
    return (last - before) / last


def growth(table: pd.DataFrame, column: str = "regret") -> pd.Series:
    """Per problem and algorithm: the exponent b of mean ``column`` ~ t^b between the last step and the last
    step at or before a tenth of it, else the first (about 0 for a curve growing like log t late on, 0.5 for
    sqrt(t), 1 for a straight line)."""
    steps = np.sort(table.step.unique())
    t1 = steps[-1]
    t0 = steps[max(np.searchsorted(steps, t1 / 10, side="right") - 1, 0)]
    mean = table[table.step.isin([t0, t1])].groupby(["problem", "algorithm", "step"], sort=False)[column].mean()
    return np.log(mean.xs(t1, level=2) / mean.xs(t0, level=2)) / np.log(t1 / t0)


def markdown_table(frame: pd.DataFrame, column: str = "regret") -> str:
    """``frame`` of :func:`final` as markdown rows: algorithm, mean +- SE, median, runs on a winner."""
    rows = [f"| algorithm | cumulative {column.replace('_', ' ')} (mean +- SE) | median | runs ending on a winner |",
            "|---|---|---|---|"]
    rows += [f"| {r.algorithm} | {r['mean']:,.0f} +- {r.se:,.0f} | {r['median']:,.0f} | {r.correct} / {r.runs} |"
             for _, r in frame.iterrows()]
    return "\n".join(rows)


def verdict(agree: bool) -> str:
    return "**agrees**" if agree else "**disagrees**"


def plot_problems(table: pd.DataFrame, out: str | Path, stem: str, titles: dict[str, str],
                  column: str = "regret") -> list[Path]:
    """One regret figure per problem, ``out/<stem>-<problem>.png``."""
    paths = []
    for key, part in table.groupby("problem", sort=False):
        about = f"{int(part.step.max()):,} steps, {part.run.nunique()} runs; mean ± 1 SE"
        paths.append(plot_regret(part, Path(out) / f"{stem}-{key}.png", column=column,
                                 title=f"{titles.get(key, key)} ({about})"))
    return paths
