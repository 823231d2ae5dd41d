"""The MergeDTS paper's headline on MSLR-Navigational: MergeRUCB's regret is about twice MergeDTS's.

    irbandits reproduce mergedts-study                                  # 10^8 steps, 5 runs, 2 processes
    irbandits reproduce mergedts-study --horizon 1e7 --runs 20 --out /tmp/mdts-1e7

The paper (seed 001, section 6.1, Figure 1) runs both algorithms with their tuned parameters
(MergeDTS: alpha = 0.8^6, M = 16, C = 4,000,000; MergeRUCB: alpha = 0.8^6, M = 8, C = 400,000) for
10^8 steps, 50 runs, on the 136-ranker MSLR-Navigational preference matrix. Results go to ``out``
as they finish; rerunning with the same ``out`` skips the runs already there.

With the tuned settings both algorithms occasionally eliminate the Condorcet winner (about 1 run
in 100 each at 10^7 steps: mergeRUCB 3 of 300, MergeDTS 1 of 90) and then accumulate regret
linearly (0.6-1.5 million by 10^8), so one such run moves a 50-run mean by 12,000-29,000: the
ratio of means over a few dozen runs is dominated by whether a failure is among them. The report
therefore also gives the ratio over the runs that end on the Condorcet winner (about 1.43).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.problems import PreferenceMatrix
from irbandits.simulate import simulate, summarize

MSLR = Path("../shared/data/preference-matrices/mslr-navigational.txt")
ALGORITHMS = ["MergeDTS:tuned", "mergeRUCB:tuned"]


def run_study(matrix: str | Path = MSLR, horizon: int = 10**8, runs: int = 5, seed: int = 0, jobs: int = 2,
              out: str | Path = "reproduce-mergedts", progress: bool = False) -> pd.DataFrame:
    """Both tuned algorithms on the matrix; the tidy result table of :func:`irbandits.simulate.simulate`."""
    problem = PreferenceMatrix.load(matrix, name="mslr-navigational")
    return simulate(problem, ALGORITHMS, horizon=int(horizon), runs=runs, seed=seed, jobs=jobs, out=Path(out),
                    progress=progress)


def report(table: pd.DataFrame) -> str:
    """Mean and median regret per algorithm, the ratio beside the paper's, and the runs that lost the winner."""
    summary = summarize(table).set_index("algorithm")
    last = table[table.step == table.step.max()]
    lines = [f"{'algorithm':<17}{'regret mean':>13}{'+- se':>10}{'median':>11}{'accuracy':>10}{'s/run':>8}"]
    for name in ALGORITHMS:
        s = summary.loc[name]
        median = last[last.algorithm == name].regret.median()
        lines.append(f"{name:<17}{s.regret_mean:>13,.0f}{s.regret_se:>10,.0f}{median:>11,.0f}{s.accuracy:>10.2f}"
                     f"{s.seconds_per_run:>8.1f}")
    mdts, mrucb = (summary.loc[n] for n in ALGORITHMS)
    medians = [last[last.algorithm == n].regret.median() for n in ALGORITHMS]
    lines.append(f"\nratio mergeRUCB / MergeDTS: mean {mrucb.regret_mean / mdts.regret_mean:.2f} "
                 f"(paper: about 2), median {medians[1] / medians[0]:.2f}")
    ok = [last[(last.algorithm == n) & last.correct].regret for n in ALGORITHMS]
    if all(len(o) for o in ok):
        lines.append(f"ratio over the runs that end on the Condorcet winner: mean {ok[1].mean() / ok[0].mean():.2f} "
                     f"({len(ok[0])} and {len(ok[1])} runs); a run that eliminates it adds ~0.5-1.5 M regret by 10^8")
    for name in ALGORITHMS:
        runs = last[last.algorithm == name]
        failed = runs[~runs.correct].run.tolist()
        if failed:
            lines.append(f"{name}: runs {failed} do not recommend the Condorcet winner at the end "
                         f"(final regrets {np.round(runs[~runs.correct].regret.to_numpy()).astype(int).tolist()})")
    return "\n".join(lines)
