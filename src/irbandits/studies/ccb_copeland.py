"""Zoghi thesis (seed 002) section 7.5, Figures 7.6-7.8: CCB against SCB, Copeland SAVAGE, PBR, RankEl and RUCB.

    irbandits reproduce ccb-copeland            # 10^6 steps, 10 runs, the two 5-arm problems
    irbandits reproduce ccb-copeland --full     # 10^7 steps, 30 runs, all three problems

Three problems, Copeland regret throughout (the chapter's regret):

- ``mslr5-copeland``: five rankers none of which beats the other four. The thesis's matrix (from
  its bit.ly link) is not in ``../shared/data``; this one is the first draw of 5 of MSLR-Navigational's
  136 rankers from ``default_rng(0)`` without a Condorcet winner (:func:`subset`). CCB, SCB,
  Copeland SAVAGE, PBR, RankEl and RUCB, the six of Figure 7.6.
- ``copeland-500``: the synthetic 500-arm problem (:mod:`irbandits.synthetic`: three cyclic
  Copeland winners of score 498, the others 0 .. 496); CCB and SCB. Only at ``--full`` (or with
  ``only``): 10^7 steps x 30 runs, about 0.4 core-hours for CCB (O(K) per step since issue 23).
- ``mslr5-condorcet``: five MSLR rankers with a Condorcet winner (first such draw from
  ``default_rng(0)``); CCB and RUCB.

Copeland SAVAGE, PBR and RankEl need the horizon: each gets the run's horizon (delta = 1/T, thesis
7.5), so its curve before T is that of runs tuned for T; the thesis reran them for each horizon. The
thesis gives no horizon or run count for these figures; SAVAGE's markers there reach 2 x 10^7.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.problems import PreferenceMatrix, get_problem
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

DEFAULT = dict(horizon=10**6, runs=10, only=("mslr5-copeland", "mslr5-condorcet"))
FULL = dict(horizon=10**7, runs=30)
NAME = "ccb-copeland"
PAPER = "Zoghi thesis, section 7.5 (Figures 7.6-7.8)"  # the claims' source
PAPER_SCALE = "not stated; SAVAGE's markers reach 2 x 10^7"  # the paper's horizon x runs
ALGORITHMS = {
    "mslr5-copeland": ["CCB", "SCB", "Copeland-SAVAGE", "PBR", "RankEl", "RUCB"],
    "copeland-500": ["CCB", "SCB"],
    "mslr5-condorcet": ["CCB", "RUCB"],
}
TITLES = {"mslr5-copeland": "5 MSLR rankers, no Condorcet winner", "copeland-500": "500 arms, three cyclic Copeland winners",
          "mslr5-condorcet": "5 MSLR rankers with a Condorcet winner"}


def subset(matrix: PreferenceMatrix, condorcet: bool, seed: int = 0, K: int = 5) -> tuple[np.ndarray, PreferenceMatrix]:
    """The first draw of ``K`` arms (sorted) from ``default_rng(seed)`` whose sub-matrix has (``condorcet``) or
    has not a Condorcet winner."""
    return draw_subset(matrix, K, seed, lambda p: (p.condorcet_winner is not None) == condorcet, f"{matrix.name}-{K}")


def problems(matrix: str | Path = MSLR) -> dict[str, tuple[np.ndarray | None, PreferenceMatrix]]:
    full = PreferenceMatrix.load(matrix, name="mslr-navigational")
    return {"mslr5-copeland": subset(full, False), "copeland-500": (None, get_problem("copeland-500")),
            "mslr5-condorcet": subset(full, True)}


def duels(algorithm: str, marks=(10**6, 3 * 10**6, 5 * 10**6, 6 * 10**6, 7 * 10**6, 8 * 10**6), seed: int = 1,
          matrix: str | Path = MSLR) -> list[tuple[int, float, np.ndarray]]:
    """One run of ``algorithm`` on ``mslr5-copeland`` (arms in problem order, not permuted) continued from
    its state to each step of ``marks``: per stretch, (end step, Copeland regret paid in it, duels of each
    pair i < j in it, from the win matrix). Shows which pairs an algorithm pays for, and when."""
    from irbandits.dueling import get_algorithm
    from irbandits.simulate import run_one

    marks = [int(m) for m in marks]
    problem = problems(matrix)["mslr5-copeland"][1]
    algo = get_algorithm(algorithm)(problem.K, seed=seed, horizon=max(marks))
    out, done, before = [], 0, np.zeros((problem.K, problem.K))
    for end in marks:
        paid = float(run_one(algo, problem, end - done, seed=seed * 10**9 + end).copeland_regret[-1])
        W = algo.state["arrays"]["W"].astype(float)
        played = W - before
        out.append((end, paid, np.triu(played + played.T, 1).astype(np.int64)))
        done, before = end, W
    return out


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, matrix: str | Path = MSLR,
              only: tuple[str, ...] = tuple(ALGORITHMS)) -> pd.DataFrame:
    """Each problem of ``only`` with its algorithms; the tidy table with a ``problem`` column."""
    probs = problems(matrix)
    return pd.concat([run_problems({k: probs[k][1]}, ALGORITHMS[k], horizon, runs, seed=seed, jobs=jobs, out=out,
                                   progress=progress) for k in only], ignore_index=True)


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    f = final(table, "copeland_regret").set_index(["problem", "algorithm"])["mean"]
    out = []
    present = set(f.index.get_level_values(0))
    if "mslr5-copeland" in present:
        m = f["mslr5-copeland"]
        best = m.idxmin()
        out.append(("5-arm Copeland problem: CCB has the lowest regret (Figure 7.6)",
                    "lowest: " + best + "; " + ", ".join(f"{a} {v:,.0f}" for a, v in m.items()), best == "CCB"))
        tail = tail_share(table[table.problem == "mslr5-copeland"], "copeland_regret")["mslr5-copeland"]
        out.append(("RUCB's regret grows linearly without a Condorcet winner",
                    "tail share " + ", ".join(f"{a} {100 * v:.0f} %" for a, v in tail.items())
                    + " (log-like ~2 %, linear 20 %)", tail["RUCB"] >= 0.1))
    if "copeland-500" in present:
        m = f["copeland-500"]
        out.append(("500 arms: SCB can outperform CCB (Figure 7.7)", f"SCB {m['SCB']:,.0f}, CCB {m['CCB']:,.0f}",
                    m["SCB"] < m["CCB"]))
    if "mslr5-condorcet" in present:
        m = f["mslr5-condorcet"]
        out.append(("Condorcet problem: CCB slightly below RUCB (Figure 7.8)",
                    f"CCB {m['CCB']:,.0f}, RUCB {m['RUCB']:,.0f} (ratio {m['CCB'] / m['RUCB']:.2f})",
                    0.6 <= m["CCB"] / m["RUCB"] < 1))
    return out


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], matrix: str | Path = MSLR,
         only: tuple[str, ...] = tuple(ALGORITHMS), **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`)."""
    probs = problems(matrix)
    return [Work(k, a, int(horizon), runs, dueling(probs[k][1], a, int(horizon))) for k in only for a in ALGORITHMS[k]]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    return rows(NAME, PAPER, claims(table),
                scale(table.step.max(), table.run.nunique(), PAPER_SCALE))


def report(table: pd.DataFrame) -> str:
    f = final(table, "copeland_regret")
    probs = problems()
    lines = [f"{int(table.step.max()):,} steps, {table.run.nunique()} runs per algorithm (the thesis gives neither); "
             "Copeland regret; arms permuted per run. Copeland SAVAGE, PBR and RankEl are given the horizon "
             "(delta = 1/T)."]
    for key, part in f.groupby("problem", sort=False):
        arms, p = probs[key]
        about = (f"MSLR rankers {arms.tolist()}; " if arms is not None else "") + (
            f"Condorcet winner {arms[p.condorcet_winner]}" if p.condorcet_winner is not None else
            f"Copeland winners {(p.copeland_winners if arms is None else arms[p.copeland_winners]).tolist()} "
            f"(score {round(p.copeland_scores.max() * (p.K - 1))} of {p.K - 1})")
        lines += ["", f"**{TITLES[key]}** ({about})", "", markdown_table(part, "copeland_regret")]
    lines += ["", markdown(claim_rows(table), "thesis (7.5)")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    return plot_problems(table, out, "ccb-copeland", TITLES, column="copeland_regret")
