"""Zoghi thesis (seed 002) section 4.4, Figures 4.4 and 4.5: RUCB against Condorcet SAVAGE and BTM on
16, 32 and 64 rankers.

    irbandits reproduce rucb-vs-savage           # 10^6 steps, 20 runs
    irbandits reproduce rucb-vs-savage --full    # the thesis's 4.5 x 10^6 steps, 100 runs

As in the thesis (section 4.4.1), the rankers are the 64 feature rankers of LETOR NP2004 and p_ij
is estimated from 4,000 probabilistic-interleaving comparisons per pair under the navigational click
model (the one chapter 7 says chapter 4 used), here on the NP2004 fold 1 test queries in
``../shared/data`` (:func:`matrix`, seed :data:`MATRIX_SEED`, kept in the results directory). The
thesis drew its 16 and 32 rankers at random and used all 64; the 16 and 32 here are the first
draws from ``default_rng(0)`` that have a Condorcet winner (:func:`problems`; the report lists them).

RUCB (alpha = 0.51) is horizonless: one run per repetition, its curve at every checkpoint. SAVAGE
and BTM need the horizon T, so, as in the thesis, each marker of their curves is the final regret
of separate runs given that T (``BTM_T``, ``Condorcet-SAVAGE_T``): the markers are the checkpoints
nearest to 1, 2 and 5 x 10^k from 1,000 on, and the horizon (:func:`markers`). Accuracy (the
share of runs whose recommendation is the Condorcet winner) is compared at the same times, as in
Figure 4.5.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.clicks.ltr import read_ltr
from irbandits.errors import IrbanditsError
from irbandits.plots import plot_accuracy
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import checkpoints
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import (
    NP2004,
    draw_subset,
    final,
    growth,
    markdown_table,
    plot_problems,
    reference,
    run_problems,
)

DEFAULT = dict(horizon=10**6, runs=20)
FULL = dict(horizon=4_500_000, runs=100)
NAME = "rucb-vs-savage"
PAPER = "Zoghi thesis, section 4.4 (Figures 4.4-4.5)"  # the claims' source
PAPER_SCALE = "4,500,000 x 100"  # the paper's horizon x runs
SIZES = (16, 32, 64)
SEED = 0  # of the subset draws
MATRIX_SEED = 0  # of the interleaved comparisons that estimate the matrix
COMPARISONS = 4000  # per pair (thesis 4.4.1)
HORIZONLESS = ["RUCB"]
WITH_HORIZON = ["Condorcet-SAVAGE", "BTM"]
SAVAGE, BTM = (f"{a}_T" for a in WITH_HORIZON)
TITLES = {f"np2004-{K}": f"{K} NP2004 rankers" for K in SIZES}
TARGET = 0.8  # the accuracy the thesis times


def matrix(data: str | Path = NP2004, out: str | Path | None = None, comparisons: int = COMPARISONS) -> PreferenceMatrix:
    """The preference matrix of the 64 NP2004 feature rankers (:func:`~irbandits.studies.online.reference`
    with navigational clicks, ``comparisons`` per pair, seed :data:`MATRIX_SEED`; kept in ``out``)."""
    return reference(read_ltr(data).rankers(), MATRIX_SEED, out, comparisons)


def problems(full: PreferenceMatrix) -> dict[str, tuple[np.ndarray, PreferenceMatrix]]:
    """``np2004-K`` for K = 16, 32, 64: the rankers drawn (all of them for K = 64) and their sub-matrix,
    each with a Condorcet winner."""
    if full.condorcet_winner is None:
        raise IrbanditsError(f"{full.name}: the {full.K} rankers have no Condorcet winner, which section 4.4 needs")
    return {f"np2004-{K}": draw_subset(full, K, SEED, lambda p: p.condorcet_winner is not None, f"{full.name}-{K}-seed{SEED}")
            for K in SIZES}


def markers(horizon: int) -> np.ndarray:
    """The horizons SAVAGE and BTM are run for: the checkpoints of a ``horizon``-step run nearest to
    1, 2 and 5 x 10^k (from 1,000, below the horizon), and the horizon itself."""
    steps = checkpoints(horizon)
    targets = np.array([m * 10**k for k in range(3, 10) for m in (1, 2, 5) if m * 10**k < horizon])
    nearest = np.abs(np.log(steps)[:, None] - np.log(targets)).argmin(axis=0)
    return np.unique(np.append(steps[nearest], horizon))


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, data: str | Path = NP2004,
              comparisons: int = COMPARISONS) -> pd.DataFrame:
    """RUCB's curves, and the final rows of SAVAGE's and BTM's runs at each marker horizon (labelled
    ``NAME_T``), on the three problems; the tidy table with a ``problem`` column. ``table.attrs`` keeps
    what the report needs: the matrix (``p``), its rankers' names, the comparisons per pair and each
    problem's rankers."""
    full = matrix(data, out, comparisons)
    drawn = problems(full)
    probs = {k: p for k, (_, p) in drawn.items()}
    tables = [run_problems(probs, HORIZONLESS, horizon, runs, seed=seed, jobs=jobs, out=out, progress=progress)]
    for T in markers(int(horizon)):
        # starting worker processes costs ~10-20 s (they compile the loops): short marker runs stay here
        part = run_problems(probs, WITH_HORIZON, T, runs, seed=seed, jobs=jobs if T * runs >= 10**7 else 1,
                            out=None if out is None else Path(out) / f"T{T}", progress=progress)
        tables.append(part[part.step == T].assign(algorithm=part.algorithm + "_T"))
    table = pd.concat(tables, ignore_index=True)
    table.attrs.update(p=full.p.tolist(), rankers=full.arms, comparisons=comparisons,
                       problems={k: a.tolist() for k, (a, _) in drawn.items()})
    return table


def at_markers(table: pd.DataFrame) -> pd.DataFrame:
    """The rows at the marker steps (RUCB's checkpoints there and the marker runs)."""
    return table[table.step.isin(table[table.algorithm == SAVAGE].step.unique())]


def accuracy(table: pd.DataFrame) -> pd.Series:
    """Per problem, algorithm and marker step: the share of runs recommending the Condorcet winner."""
    return at_markers(table).groupby(["problem", "algorithm", "step"], sort=False).correct.mean()


def time_to(table: pd.DataFrame, target: float = TARGET) -> pd.Series:
    """Per problem and algorithm: the first marker step at which the share of runs recommending the winner
    reaches ``target`` (NaN if none does)."""
    acc = accuracy(table)

    def first(a: pd.Series) -> float:
        steps = a[a >= target].index.get_level_values("step")
        return float(steps.min()) if len(steps) else np.nan

    return acc.groupby(level=["problem", "algorithm"], sort=False).apply(first)


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """(the thesis's claim, this run's numbers, whether they agree) for section 4.4, per problem."""
    last = table[table.step == table.step.max()]
    slopes, reach = growth(at_markers(table)), time_to(table)
    out = []
    for key in table.problem.unique():
        rucb, savage = (last[(last.problem == key) & (last.algorithm == a)].regret for a in ("RUCB", SAVAGE))
        ratio = rucb.mean() / savage.mean()
        out.append((f"{key}: RUCB's mean regret is less than half of Condorcet SAVAGE's", f"ratio {ratio:.2f}",
                    ratio < 0.5))
        out.append((f"{key}: RUCB's worst run has considerably less regret than SAVAGE's best",
                    f"worst RUCB {rucb.max():,.0f}, best SAVAGE {savage.min():,.0f}", rucb.max() < savage.min()))
        b = slopes[key, BTM]
        out.append((f"{key}: BTM's regret grows linearly with T", f"R_T ~ T^{b:.2f} over the last decade", b >= 0.8))
        r, s = reach[key, "RUCB"], reach[key, SAVAGE]
        text = ", ".join(f"{a} {'not within the horizon' if np.isnan(v) else f'{v:,.0f}'}"
                         for a, v in (("RUCB", r), ("Condorcet-SAVAGE", s)))
        out.append((f"{key}: RUCB reaches {TARGET:.0%} accuracy almost twice as fast as SAVAGE",
                    f"{TARGET:.0%} reached at: {text}", bool(not np.isnan(r) and (np.isnan(s) or s / r >= 1.5))))
    return out


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], data: str | Path = NP2004,
         out: str | Path | None = None, probe_comparisons: int = 300, **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`): RUCB
    for the horizon, SAVAGE and BTM once per marker horizon (their steps: the sum of the markers). The matrix
    is the one kept in ``out`` if there is one, else a quick estimate from ``probe_comparisons`` per pair (the
    probes need its size, not its precision); nothing is written."""
    kept = None if out is None or not (Path(out) / f"reference-seed{MATRIX_SEED}.txt").is_file() else out
    probs = {k: p for k, (_, p) in problems(matrix(data, kept, COMPARISONS if kept else probe_comparisons)).items()}
    T, marks = int(horizon), markers(int(horizon))
    works = [Work(k, a, T, runs, dueling(p, a, T)) for k, p in probs.items() for a in HORIZONLESS]
    return works + [Work(k, f"{a}_T", int(marks.sum()), runs, dueling(p, a, T)) for k, p in probs.items()
                    for a in WITH_HORIZON]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    return rows(NAME, PAPER, claims(table),
                scale(table.step.max(), table.run.nunique(), PAPER_SCALE))


def report(table: pd.DataFrame) -> str:
    """Markdown: the matrix and the subsets, each problem's table at the horizon and its accuracy at the
    markers, then the thesis's claims beside this run's numbers (the matrix and subsets from ``table.attrs``)."""
    P, names = np.array(table.attrs["p"]), table.attrs["rankers"]
    f = final(table)
    acc = accuracy(table).sort_index()
    T = int(table.step.max())
    lines = [f"{T:,} steps, {table.run.nunique()} runs per algorithm and horizon (thesis: 4.5 x 10^6 steps, 100 runs); "
             f"arms permuted per run. SAVAGE and BTM are rerun for every marker horizon "
             f"({', '.join(f'{t:,}' for t in markers(T))}). The matrix of the {len(names)} NP2004 feature rankers: "
             f"{table.attrs['comparisons']:,} probabilistic-interleaving comparisons per pair, navigational clicks, "
             f"top-10 lists, seed {MATRIX_SEED} (thesis: 4,000 per pair); the 16 and 32 rankers are the first draws "
             f"from `default_rng({SEED})` with a Condorcet winner."]
    for key, part in f.groupby("problem", sort=False):
        arms = table.attrs["problems"][key]
        cw = PreferenceMatrix(P[np.ix_(arms, arms)]).condorcet_winner
        gaps = np.delete(P[arms[cw], arms], cw) - 0.5
        drawn = "all" if len(arms) == len(names) else ", ".join(names[a] for a in arms)
        lines += ["", f"**{TITLES.get(key, key)}**: {drawn}; Condorcet winner "
                      f"{names[arms[cw]]} (gaps "
                      f"{gaps.min():.4f} to {gaps.max():.4f}, mean {gaps.mean():.3f})", "", markdown_table(part), "",
                  "Accuracy at the markers: " + "; ".join(
                      f"{a.split('_')[0]} " + " ".join(f"{v:.2f}" for v in acc[key, a].to_numpy())
                      for a in ("RUCB", SAVAGE, BTM) if (key, a) in acc.index.droplevel(2))]
    lines += ["", markdown(claim_rows(table), "thesis (4.4)")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    """Per problem: the regret (RUCB's curve, SAVAGE's and BTM's markers joined) and the accuracy at the markers."""
    paths = plot_problems(table, out, "rucb-vs-savage", TITLES)
    for key, part in at_markers(table).groupby("problem", sort=False):
        paths.append(plot_accuracy(part, Path(out) / f"rucb-vs-savage-accuracy-{key}.png", window=1,
                                   title=f"accuracy at the SAVAGE / BTM horizons, {TITLES.get(key, key)} "
                                         f"({part.run.nunique()} runs)"))
    return paths
