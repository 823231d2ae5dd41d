"""Case A of thesis Figure 4.1 for the top-k process, with and without the extra final phase, over
many master seeds: how far one 1,000-run row (such as the CLI default seed 0) strays from the average.

    PYTHONPATH=src python benchmarks/clarke_seeds.py --seeds 1-23 --runs 1000

Per seed and row: runs whose best set contains item 0 / item 1 / item 2, runs reporting more than
one item, items reported in all; then the mean and sd across seeds. The thesis (1,000 runs) reports
502 / 323 / 213 and 1,497 items without, 510 / 302 / 166 and 1,290 items with the extra phase.
"""

from __future__ import annotations

import argparse

import numpy as np

from irbandits.studies.judging_study import run_chunk

ROWS = ("Clarke et al.", "Clarke et al. (extra final phase)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1-23", help="first-last master seeds")
    ap.add_argument("--runs", type=int, default=1000)
    args = ap.parse_args()
    lo, hi = map(int, args.seeds.split("-"))
    for name in ROWS:
        stats = []
        for seed in range(lo, hi + 1):
            best = [r["best"] for r in run_chunk(name, 0, range(args.runs), seed, 1000)]
            row = [sum(i in b for b in best) for i in (0, 1, 2)] + [sum(len(b) > 1 for b in best),
                                                                   sum(map(len, best))]
            stats.append(row)
            print(name, seed, *row, flush=True)
        a = np.array(stats, float)
        print(f"{name}: mean over {len(a)} seeds: item 0 {a[:, 0].mean():.1f} (sd {a[:, 0].std(ddof=1):.1f}), "
              f"item 1 {a[:, 1].mean():.1f}, item 2 {a[:, 2].mean():.1f}, runs tied {a[:, 3].mean():.1f}, "
              f"items {a[:, 4].mean():.1f}")


if __name__ == "__main__":
    main()
