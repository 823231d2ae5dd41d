"""Zoghi thesis (seed 002) sections 5.2.2-5.2.3, Figures 5.2 and 5.3: RCS against RUCB on 10-armed
ranker-evaluation problems at alpha = 0.501, and the alpha = 0.1 stability test.

    irbandits reproduce rcs-vs-rucb            # 50,000 steps, 30 runs
    irbandits reproduce rcs-vs-rucb --full     # the thesis's 50,000 steps, 90 runs

The thesis took 10 feature rankers from each of three datasets (MSLR, Yahoo! and one more); only
MSLR is in ``../shared/data``, so the three problems here are 10-ranker subsets of
MSLR-Navigational drawn from seeds 0, 1 and 2 (:func:`subset`: the first draw of 10 of the 136
rankers that has a Condorcet winner). The stability test (30 runs in the thesis) runs both
algorithms at alpha = 0.1 and 0.501 on the first subset. Its report gives the runs that do not end
on the Condorcet winner and the *tail share* of the mean regret curve: the part of the final mean
regret gained over the last checkpoint interval (the last ~20 % of the steps). A curve growing
like log t gains about 2 % there, a straight line 20 %.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

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

DEFAULT = dict(horizon=50_000, runs=30)
FULL = dict(horizon=50_000, runs=90)
NAME = "rcs-vs-rucb"
PAPER = "Zoghi thesis, sections 5.2.2-5.2.3 (Figures 5.2-5.3)"  # the claims' source
PAPER_SCALE = "50,000 x 90; stability test 30"  # the paper's horizon x runs
ALGORITHMS = ["RUCB:alpha=0.501", "RCS:alpha=0.501"]
STABILITY = ["RUCB:alpha=0.1", "RCS:alpha=0.1", "RUCB:alpha=0.501", "RCS:alpha=0.501"]


def subset(matrix: PreferenceMatrix, seed: int, K: int = 10) -> tuple[np.ndarray, PreferenceMatrix]:
    """The first draw of ``K`` arms (sorted) from ``default_rng(seed)`` whose sub-matrix has a Condorcet winner."""
    return draw_subset(matrix, K, seed, lambda p: p.condorcet_winner is not None, f"{matrix.name}-{K}-seed{seed}")


def problems(matrix: str | Path = MSLR) -> dict[str, tuple[np.ndarray, PreferenceMatrix]]:
    full = PreferenceMatrix.load(matrix, name="mslr-navigational")
    return {f"mslr10-seed{s}": subset(full, s) for s in range(3)}


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, matrix: str | Path = MSLR) -> pd.DataFrame:
    """RUCB and RCS at alpha = 0.501 on the three subsets, and the stability test (``problem`` = "stability")."""
    subs = {k: p for k, (_, p) in problems(matrix).items()}
    main = run_problems(subs, ALGORITHMS, horizon, runs, seed=seed, jobs=jobs, out=out, progress=progress)
    stab = run_problems({"stability": subs["mslr10-seed0"]}, STABILITY, horizon, runs, seed=seed, jobs=jobs, out=out,
                        progress=progress)
    return pd.concat([main, stab], ignore_index=True)


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    f = final(table).set_index(["problem", "algorithm"])["mean"]
    out = []
    ratios = [f[p, "RCS:alpha=0.501"] / f[p, "RUCB:alpha=0.501"] for p in f.index.levels[0] if p.startswith("mslr10")]
    if ratios:
        out.append(("alpha = 0.501: RCS's regret is roughly a third below RUCB's (ratio about 0.67)",
                    "ratio RCS / RUCB " + ", ".join(f"{r:.2f}" for r in ratios), all(0.5 <= r <= 0.8 for r in ratios)))
        diffs = [f[p, "RUCB:alpha=0.501"] - f[p, "RCS:alpha=0.501"] for p in f.index.levels[0] if p.startswith("mslr10")]
        out.append(("the plateaus differ by about 200", "RUCB - RCS " + ", ".join(f"{d:,.0f}" for d in diffs),
                    all(100 <= d <= 400 for d in diffs)))
    if "stability" in f.index.levels[0]:
        tail = tail_share(table)["stability"]
        ok = final(table).set_index(["problem", "algorithm"]).loc["stability"]
        for name, claim, agree in (
                ("RUCB:alpha=0.1", "alpha = 0.1: RUCB's mean regret grows linearly (2 of 30 runs never settle)",
                 lambda t, miss: t >= 0.1 and miss > 0),
                ("RCS:alpha=0.1", "alpha = 0.1: RCS stays stable, its curve flattens", lambda t, miss: t < 0.1)):
            miss = int(ok.loc[name, "runs"] - ok.loc[name, "correct"])
            out.append((claim, f"tail share {100 * tail[name]:.0f} % (log-like ~2 %, linear 20 %); {miss} of "
                               f"{int(ok.loc[name, 'runs'])} runs not ending on the winner", agree(tail[name], miss)))
        r = f["stability", "RCS:alpha=0.1"] / f["stability", "RCS:alpha=0.501"]
        out.append(("RCS at alpha = 0.1 has almost twice its regret at 0.501", f"ratio {r:.2f}", 1.3 <= r <= 2.5))
    return out


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], matrix: str | Path = MSLR, **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`)."""
    subs = {k: p for k, (_, p) in problems(matrix).items()}
    works = [Work(k, a, int(horizon), runs, dueling(p, a, int(horizon))) for k, p in subs.items() for a in ALGORITHMS]
    return works + [Work("stability", a, int(horizon), runs, dueling(subs["mslr10-seed0"], a, int(horizon)))
                    for a in STABILITY]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    return rows(NAME, PAPER, claims(table),
                scale(table.step.max(), table.run.nunique(), PAPER_SCALE))


def report(table: pd.DataFrame) -> str:
    f = final(table)
    subs = problems()
    lines = [f"{int(table.step.max()):,} steps, {table.run.nunique()} runs per algorithm (thesis: 50,000 steps, 90 runs; "
             "30 for the stability test); arms permuted per run. The thesis's three datasets are replaced by three "
             "10-ranker subsets of MSLR-Navigational (only MSLR is in the shared data)."]
    for key, part in f.groupby("problem", sort=False):
        if key in subs:
            arms, p = subs[key]
            cw = p.condorcet_winner
            title = (f"{key}: MSLR rankers {arms.tolist()}, Condorcet winner {arms[cw]} (beats the others by "
                     f"{np.delete(p.p[cw], cw).mean():.3f} on average; smallest gap {np.delete(p.p[cw], cw).min() - 0.5:.3f})")
        else:
            title = "stability test on mslr10-seed0 (alpha = 0.1 against 0.501)"
        lines += ["", f"**{title}**", "", markdown_table(part)]
    lines += ["", "Tail share of the mean regret (last ~20 % of the steps; log-like ~2 %, linear 20 %): " + "; ".join(
        f"{p} {a} {100 * v:.0f} %" for (p, a), v in tail_share(table).items())]
    lines += ["", markdown(claim_rows(table), "thesis (5.2.2-5.2.3)")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    return plot_problems(table, out, "rcs-vs-rucb", {"stability": "RUCB and RCS at alpha = 0.1 and 0.501"})
