"""MergeDTS paper (seed 001) section 6.4, Figure 3: the Cycle and Cycle2 problems.

    irbandits reproduce mergedts-cycles            # 10^6 steps, 10 runs
    irbandits reproduce mergedts-cycles --full     # the paper's 10^7 steps, 100 runs

Both problems have 20 arms: arm 0 is the Condorcet winner (0.51 over every arm in Cycle, 0.6 in
Cycle2) and the other 19 sit at a round table, each beating the 9 to its left (with probability 1
in Cycle, 0.51 in Cycle2; :mod:`irbandits.synthetic`). The algorithms are those of section 5.5 with
the tuned settings of section 5.6 (MergeDTS, mergeRUCB, DTS) and the defaults of the others.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from irbandits.problems import get_problem
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import final, markdown_table, plot_problems, run_problems

DEFAULT = dict(horizon=10**6, runs=10)
FULL = dict(horizon=10**7, runs=100)
NAME = "mergedts-cycles"
PAPER = "MergeDTS paper, section 6.4 (Figure 3)"  # the claims' source
PAPER_SCALE = "10^7 x 100"  # the paper's horizon x runs
ALGORITHMS = ["MergeDTS:tuned", "mergeRUCB:tuned", "DTS:tuned", "Self-Sparring", "RMED1", "REX3"]
TITLES = {"cycle": "Cycle (winner by 0.51, round table of 1.0)", "cycle2": "Cycle2 (winner by 0.6, round table of 0.51)"}


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, algorithms=ALGORITHMS) -> pd.DataFrame:
    """Every algorithm on Cycle and Cycle2; the tidy table with a ``problem`` column."""
    problems = {name: get_problem(name) for name in ("cycle", "cycle2")}
    return run_problems(problems, algorithms, horizon, runs, seed=seed, jobs=jobs, out=out, progress=progress)


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """(the paper's claim, this run's numbers, whether they agree) for each claim of section 6.4."""
    f = final(table).set_index(["problem", "algorithm"])
    mean = f["mean"]
    out = []

    def has(*names):
        return all((p, a) in f.index for p, a in names)

    if has(("cycle", "Self-Sparring"), ("cycle", "MergeDTS:tuned")):
        ratio = mean["cycle", "Self-Sparring"] / mean["cycle", "MergeDTS:tuned"]
        out.append(("Cycle: Self-Sparring's regret is an order of magnitude above MergeDTS's",
                    f"ratio {ratio:.1f}", ratio >= 5))
    others = [a for p, a in f.index if p == "cycle" and a != "MergeDTS:tuned"]
    if others and has(("cycle", "MergeDTS:tuned")):
        below = [a for a in others if mean["cycle", a] < mean["cycle", "MergeDTS:tuned"]]
        out.append(("Cycle: only RMED1 and mergeRUCB have lower regret than MergeDTS",
                    "lower: " + (", ".join(below) or "none"), sorted(below) == ["RMED1", "mergeRUCB:tuned"]))
    if has(("cycle", "mergeRUCB:tuned"), ("cycle", "MergeDTS:tuned")):
        ratio = mean["cycle", "mergeRUCB:tuned"] / mean["cycle", "MergeDTS:tuned"]
        out.append(("Cycle: mergeRUCB slightly below MergeDTS (\"the gap is small\")", f"ratio {ratio:.2f}",
                    0.5 <= ratio < 1))
    if has(("cycle2", "RMED1"), ("cycle2", "MergeDTS:tuned")):
        ratio = mean["cycle2", "RMED1"] / mean["cycle2", "MergeDTS:tuned"]
        out.append(("Cycle2: RMED1 has higher regret than MergeDTS", f"ratio RMED1 / MergeDTS {ratio:.2f}", ratio > 1))
    if has(("cycle2", "Self-Sparring"), ("cycle", "Self-Sparring")):
        a, b = mean["cycle2", "Self-Sparring"], mean["cycle", "Self-Sparring"]
        out.append(("Self-Sparring performs well on Cycle2 (large Borda gaps), badly on Cycle",
                    f"regret {a:,.0f} on Cycle2 vs {b:,.0f} on Cycle", a < b / 5))
    merge = [(p, a) for p, a in f.index if a in ("MergeDTS:tuned", "mergeRUCB:tuned")]
    if merge:
        ok = sum(f.loc[k, "correct"] for k in merge)
        total = sum(f.loc[k, "runs"] for k in merge)
        out.append(("Merge-style algorithms converge to the Condorcet winner within 10^6 steps",
                    f"{ok} / {total} runs end on it at step {int(table.step.max()):,}", ok == total))
    return out


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], algorithms=ALGORITHMS, **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`)."""
    problems = {name: get_problem(name) for name in ("cycle", "cycle2")}
    return [Work(k, a, int(horizon), runs, dueling(p, a, int(horizon))) for k, p in problems.items() for a in algorithms]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    return rows(NAME, PAPER, claims(table),
                scale(table.step.max(), table.run.nunique(), PAPER_SCALE))


def report(table: pd.DataFrame) -> str:
    """Markdown: each problem's table, then the paper's claims beside this run's numbers."""
    f = final(table)
    parts = [f"{int(table.step.max()):,} steps, {table.run.nunique()} runs per algorithm (paper: 10^7 steps, "
             f"100 runs); arms permuted per run."]
    for key, part in f.groupby("problem", sort=False):
        parts += ["", f"**{TITLES.get(key, key)}**", "", markdown_table(part)]
    parts += ["", markdown(claim_rows(table), "paper (section 6.4)")]
    return "\n".join(parts)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    return plot_problems(table, out, "mergedts-cycles", TITLES)
