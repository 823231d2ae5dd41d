"""MergeDTS paper (seed 001) section 6.5, Figure 4: MSLR-non-Condorcet, 32 rankers with no Condorcet
winner and two Copeland winners that each beat 30 of the other 31.

    irbandits reproduce mergedts-non-condorcet           # 10^6 steps, 20 runs
    irbandits reproduce mergedts-non-condorcet --full    # the paper's 10^7 steps, 100 runs

The paper's subset comes from Wu and Liu (2016) and is not in ``../shared/data``. Here it is the
first draw of 32 of MSLR-Navigational's 136 rankers from ``default_rng(0)`` with the paper's
conditions (:func:`subset`): no Condorcet winner and exactly two Copeland winners, each beating 30
rankers. That draw is MSLR rankers 2, 3, 9, 14, 16, 37, 43, 46, 49, 59, 64, 68, 70, 73, 77, 79, 84,
90, 94, 96, 102, 106, 107, 108, 115, 116, 117, 118, 122, 123, 127, 128; its Copeland winners are 115
and 108. As in the paper, one winner (115) beats the other and is beaten by a third ranker (64).

The algorithms are those of section 5.5 with the settings of the other MergeDTS studies (tuned
MergeDTS, mergeRUCB and DTS; the defaults of the others). Regret is Copeland regret (eq. 10:
zeta* - (zeta_i + zeta_j) / 2, scores normalised by K - 1). A run *fails* when it ends
recommending neither Copeland winner; for MergeDTS, which duels its last arm once it has eliminated
the others, that is a run that eliminated both winners (paper: 1 run in 100).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from irbandits.problems import PreferenceMatrix
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import (
    MSLR,
    draw_subset,
    final,
    markdown_table,
    plot_problems,
    run_problems,
    tail_share,
)

DEFAULT = dict(horizon=10**6, runs=20)
FULL = dict(horizon=10**7, runs=100)
NAME = "mergedts-non-condorcet"
PAPER = "MergeDTS paper, section 6.5 (Figure 4)"  # the claims' source
PAPER_SCALE = "10^7 x 100"  # the paper's horizon x runs
ALGORITHMS = ["MergeDTS:tuned", "mergeRUCB:tuned", "DTS:tuned", "Self-Sparring", "RMED1", "REX3"]
KEY = "mslr32-non-condorcet"
TITLE = "MSLR-non-Condorcet: 32 MSLR-Navigational rankers, two Copeland winners beating 30 each"


def two_copeland_winners(p: PreferenceMatrix) -> bool:
    """No Condorcet winner, and exactly two Copeland winners, each beating all but one of the others."""
    wins = (p.p > 0.5).sum(axis=1)
    return p.condorcet_winner is None and int((wins == p.K - 2).sum()) == 2


def subset(matrix: PreferenceMatrix, seed: int = 0, K: int = 32) -> tuple[np.ndarray, PreferenceMatrix]:
    """The first draw of ``K`` arms (sorted) from ``default_rng(seed)`` that satisfies :func:`two_copeland_winners`."""
    return draw_subset(matrix, K, seed, two_copeland_winners, f"{matrix.name}-{K}-non-condorcet")


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, matrix: str | Path = MSLR,
              algorithms=ALGORITHMS) -> pd.DataFrame:
    """Every algorithm on the subset; the tidy table with a ``problem`` column."""
    _, problem = subset(PreferenceMatrix.load(matrix, name="mslr-navigational"))
    return run_problems({KEY: problem}, algorithms, horizon, runs, seed=seed, jobs=jobs, out=out, progress=progress)


def describe(arms: np.ndarray, p: PreferenceMatrix) -> str:
    """The subset's winners in MSLR ranker numbers: who beats whom, by how much, and the closest margins."""
    a, b = p.copeland_winners if p.p[p.copeland_winners[0], p.copeland_winners[1]] > 0.5 else p.copeland_winners[::-1]
    x = int(np.flatnonzero(p.p[:, a] > 0.5)[0])

    def closest(i):
        won = np.sort(p.p[i][p.p[i] > 0.5]) - 0.5
        return ", ".join(f"{g:.4f}" for g in won[:2])

    return (f"MSLR rankers {arms.tolist()}. Copeland winners {arms[a]} and {arms[b]}: {arms[a]} beats {arms[b]} "
            f"({p.p[a, b]:.4f}) and loses to {arms[x]} ({p.p[x, a]:.4f}), which loses to {arms[b]} ({p.p[b, x]:.4f}). "
            f"Their two closest wins are by {closest(a)} ({arms[a]}) and {closest(b)} ({arms[b]}).")


def claims(table: pd.DataFrame, arms: np.ndarray, p: PreferenceMatrix) -> list[tuple[str, str, bool]]:
    """(the paper's claim, this run's numbers, whether they agree) for section 6.5 on the subset ``p`` of
    the MSLR rankers ``arms``."""
    f = final(table, "copeland_regret").set_index("algorithm")
    last = table[table.step == table.step.max()]
    out = []
    best = f["mean"].idxmin()
    out.append(("MergeDTS has the lowest cumulative regret", "lowest: " + best + "; " +
                ", ".join(f"{a} {v:,.0f}" for a, v in f["mean"].items()), best == "MergeDTS:tuned"))
    if "MergeDTS:tuned" in f.index:
        mdts = last[last.algorithm == "MergeDTS:tuned"]
        failed = int((~mdts.correct).sum())
        pvalue = binomtest(failed, len(mdts), 0.01).pvalue
        ends = ", ".join(f"{int((mdts.recommended == w).sum())} on {arms[w]}" for w in p.copeland_winners)
        out.append(("MergeDTS eliminates both Copeland winners in 1 run of 100, and ends on one of them in the other 99",
                    f"{failed} of {len(mdts)} runs end on neither ({ends}; binomial p = {pvalue:.2f} at rate 1 %)",
                    pvalue >= 0.05))
    if "DTS:tuned" in f.index:
        tail = tail_share(table, "copeland_regret")[KEY, "DTS:tuned"]
        ok = f.loc["DTS:tuned"]
        out.append(("DTS converges to the Copeland winners within 10^7 steps",
                    f"{ok.correct} of {ok.runs} runs end on a Copeland winner; tail share {100 * tail:.0f} % "
                    "(log-like ~2 %, linear 20 %)", ok.correct == ok.runs and tail < 0.1))
    return out


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], matrix: str | Path = MSLR,
         algorithms=ALGORITHMS, **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`)."""
    _, problem = subset(PreferenceMatrix.load(matrix, name="mslr-navigational"))
    return [Work(KEY, a, int(horizon), runs, dueling(problem, a, int(horizon))) for a in algorithms]


def claim_rows(table: pd.DataFrame, matrix: str | Path = MSLR) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    arms, p = subset(PreferenceMatrix.load(matrix, name="mslr-navigational"))
    return rows(NAME, PAPER, claims(table, arms, p),
                scale(table.step.max(), table.run.nunique(), PAPER_SCALE))


def report(table: pd.DataFrame, matrix: str | Path = MSLR) -> str:
    """Markdown: the subset, the table of Copeland regret, then the paper's claims beside this run's numbers."""
    arms, p = subset(PreferenceMatrix.load(matrix, name="mslr-navigational"))
    f = final(table, "copeland_regret")
    tails = tail_share(table, "copeland_regret")[KEY]
    lines = [f"{int(table.step.max()):,} steps, {table.run.nunique()} runs per algorithm (paper: 10^7 steps, 100 runs); "
             "Copeland regret; arms permuted per run. The paper's subset (Wu and Liu, 2016) is not in the shared data: "
             "this one is the first draw of 32 rankers from `default_rng(0)` with its conditions.", "",
             describe(arms, p), "", f"**{TITLE}**", "", markdown_table(f, "copeland_regret"), "",
             "Tail share of the mean Copeland regret (last ~20 % of the steps; log-like ~2 %, linear 20 %): "
             + "; ".join(f"{a} {100 * v:.0f} %" for a, v in tails.items()),
             "", markdown(claim_rows(table, matrix), "paper (section 6.5)")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    return plot_problems(table, out, "mergedts-non-condorcet", {KEY: TITLE}, column="copeland_regret")
