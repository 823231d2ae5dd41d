"""MergeDTS paper (seed 001) sections 6.1-6.3, Figures 1 and 2 (MSLR) and Table 2: the large-scale
experiments on MSLR-Navigational and MSLR-Perfect.

    irbandits reproduce mergedts-large-scale           # 10^6 steps, 10 runs, DTS left out
    irbandits reproduce mergedts-large-scale --full    # the paper's 10^8 steps, 50 runs, all six

136 rankers (the features of MSLR-WEB30K), Bernoulli proxy from the authors' preference matrices
(400,000 probabilistic-interleaving comparisons per pair under the navigational and the perfect
click model). The algorithms of section 5.5 with the tuned settings of section 5.6 (MergeDTS:
alpha = 0.8^6, M = 16, C = 4,000,000; mergeRUCB: alpha = 0.8^6, M = 8, C = 400,000; DTS: alpha =
0.8^7) and the defaults of Self-Sparring, RMED1 and REX3.

DTS samples a K x K matrix every step: at K = 136 one 10^6-step run takes about 4 minutes on one
(loaded) core, so the default scale leaves it out (``algorithms``); ``--full`` runs it (the paper:
5.23 days per 10^8-step run). With the tuned settings both merge algorithms now and then eliminate
the Condorcet winner (about 1 run in 100 at 10^7 steps) and then gain regret linearly, 0.6-1.5
million by 10^8, so one such run moves a 50-run mean by 12,000-29,000: the report also gives the
mergeRUCB / MergeDTS ratio over the runs that end on the Condorcet winner.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from irbandits.problems import PreferenceMatrix
from irbandits.simulate import summarize
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import final, growth, markdown_table, plot_problems, run_problems, tail_share

DATA = Path("../shared/data/preference-matrices")
MATRICES = {"navigational": "mslr-navigational", "perfect": "mslr-perfect"}
ALGORITHMS = ("MergeDTS:tuned", "mergeRUCB:tuned", "DTS:tuned", "Self-Sparring", "RMED1", "REX3")
DEFAULT = dict(horizon=10**6, runs=10, algorithms=tuple(a for a in ALGORITHMS if a != "DTS:tuned"))
FULL = dict(horizon=10**8, runs=50)
NAME = "mergedts-large-scale"
PAPER = "MergeDTS paper, sections 6.1-6.3 (Figures 1-2)"  # the claims' source
PAPER_SCALE = "10^8 x 50"  # the paper's horizon x runs
PAPER_DAYS = {"MergeDTS:tuned": 0.08, "mergeRUCB:tuned": 0.08, "Self-Sparring": 0.18, "DTS:tuned": 5.23, "RMED1": 0.36,
              "REX3": 0.25}  # Table 2: days per 10^8-step run on MSLR, one core of a 2 GHz Xeon
TITLES = {"navigational": "MSLR-Navigational (136 rankers)", "perfect": "MSLR-Perfect (136 rankers)"}
MDTS, MRUCB = "MergeDTS:tuned", "mergeRUCB:tuned"


def problems(data: str | Path = DATA) -> dict[str, PreferenceMatrix]:
    """The two MSLR matrices, keyed by click model."""
    return {k: PreferenceMatrix.load(Path(data) / f"{name}.txt", name=name) for k, name in MATRICES.items()}


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, data: str | Path = DATA,
              algorithms=ALGORITHMS) -> pd.DataFrame:
    """Every algorithm on both matrices; the tidy table with a ``problem`` column (navigational, perfect)."""
    return run_problems(problems(data), list(algorithms), horizon, runs, seed=seed, jobs=jobs, out=out, progress=progress)


def merge_ratio(table: pd.DataFrame, problem: str) -> tuple[float, float | None, int, int]:
    """mergeRUCB / MergeDTS on ``problem`` at the last step: the ratio of the means, the ratio over the runs
    that end on the Condorcet winner (None if an algorithm has none) and those runs' numbers."""
    last = table[(table.step == table.step.max()) & (table.problem == problem)]
    regret = {a: last[last.algorithm == a] for a in (MDTS, MRUCB)}
    ok = {a: r[r.correct].regret for a, r in regret.items()}
    on_winner = ok[MRUCB].mean() / ok[MDTS].mean() if len(ok[MDTS]) and len(ok[MRUCB]) else None
    return regret[MRUCB].regret.mean() / regret[MDTS].regret.mean(), on_winner, len(ok[MDTS]), len(ok[MRUCB])


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """(the paper's claim, this run's numbers, whether they agree) for sections 6.1-6.3 on MSLR."""
    f = final(table).set_index(["problem", "algorithm"])["mean"]
    slopes = growth(table)
    out = []
    for key in f.index.unique(0):
        m = f[key]
        name = TITLES.get(key, key).split(" (")[0]
        if key == "navigational" and {MDTS, MRUCB} <= set(m.index):
            ratio, on_winner, n_mdts, n_mrucb = merge_ratio(table, key)
            more = "" if on_winner is None else f"; {on_winner:.2f} over the runs ending on the winner ({n_mdts}, {n_mrucb})"
            out.append((f"{name}: mergeRUCB's regret is about twice MergeDTS's", f"ratio of means {ratio:.2f}{more}",
                        1.5 <= ratio <= 2.5))
        rivals = [a for a in ("DTS:tuned", "Self-Sparring") if a in m.index]
        if MDTS in m.index and rivals:
            out.append((f"{name}: MergeDTS beats " + " and ".join(a.split(":")[0] for a in rivals),
                        ", ".join(f"{a} {m[a]:,.0f}" for a in (MDTS, *rivals)), all(m[MDTS] < m[a] for a in rivals)))
        if MDTS in m.index:
            out.append((f"{name}: MergeDTS has the lowest regret of the algorithms", "lowest: " + m.idxmin(),
                        m.idxmin() == MDTS))
        if "REX3" in m.index:
            b = slopes[key, "REX3"]
            out.append((f"{name}: REX3's regret grows like sqrt(T)", f"grows like t^{b:.2f} over the last decade",
                        0.35 <= b <= 0.65))
    if all((k, a) in f.index for k in ("navigational", "perfect") for a in ("Self-Sparring", MDTS)):
        nav, perf = (f[k, "Self-Sparring"] / f[k, MDTS] for k in ("navigational", "perfect"))
        out.append(("Self-Sparring suffers more from noise than MergeDTS: its gap to MergeDTS grows from perfect "
                    "to navigational clicks", f"Self-Sparring / MergeDTS {perf:.2f} (perfect), {nav:.2f} (navigational)",
                    nav > perf))
    return out


def timing(table: pd.DataFrame) -> str:
    """Seconds per run here beside the paper's days per 10^8-step run (Table 2)."""
    s = pd.concat([summarize(part).assign(problem=k) for k, part in table.groupby("problem", sort=False)])
    rows = ["| algorithm | " + " | ".join(f"s / run, {k}" for k in s.problem.unique()) + " | paper: days / 10^8-step run (MSLR) |",
            "|---|" + "---|" * (s.problem.nunique() + 1)]
    for a, part in s.groupby("algorithm", sort=False):
        rows.append(f"| {a} | " + " | ".join(f"{v:,.1f}" for v in part.seconds_per_run) + f" | {PAPER_DAYS.get(a, '')} |")
    return "\n".join(rows)


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], data: str | Path = DATA,
         algorithms=ALGORITHMS, **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`)."""
    return [Work(k, a, int(horizon), runs, dueling(p, a, int(horizon))) for k, p in problems(data).items()
            for a in algorithms]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    return rows(NAME, PAPER, claims(table),
                scale(table.step.max(), table.run.nunique(), PAPER_SCALE))


def report(table: pd.DataFrame, data: str | Path = DATA) -> str:
    """Markdown: each matrix's table, the growth of the curves, the times, then the paper's claims beside
    this run's numbers."""
    f = final(table)
    probs = problems(data)
    parts = [f"{int(table.step.max()):,} steps, {table.run.nunique()} runs per algorithm (paper: 10^8 steps, 50 runs); "
             "arms permuted per run; runs ending on a winner: those recommending the Condorcet winner."]
    for key, part in f.groupby("problem", sort=False):
        parts += ["", f"**{TITLES.get(key, key)}** (Condorcet winner: ranker {probs[key].condorcet_winner})", "",
                  markdown_table(part)]
    tails, slopes = tail_share(table), growth(table)
    parts += ["", "Growth of the mean regret at the end: " + "; ".join(
        f"{p} {a} t^{slopes[p, a]:.2f} over the last decade, tail share {100 * v:.0f} %" for (p, a), v in tails.items()),
        "(tail share: the part of the final mean gained over the last ~20 % of the steps; log-like ~2 %, linear 20 %)",
        "", f"Run time (one core each, {int(table.step.max()):,} steps, runs of merge algorithms finished in closed form "
        "once one arm is left):", "", timing(table)]
    parts += ["", markdown(claim_rows(table), "paper (sections 6.1-6.3)")]
    return "\n".join(parts)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    return plot_problems(table, out, "mergedts-large-scale", TITLES)
