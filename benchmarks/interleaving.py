"""Interleaved comparisons per second per core, and the projected time of an MSLR-sized matrix.

    python benchmarks/interleaving.py                       # LightGBM sample, 20 rankers, navigational
    python benchmarks/interleaving.py --ltr ../shared/data/ltr/letor3-np2004-fold1/test.txt.gz

One comparison is what `irbandits matrix` does per sample: draw a query, build both rankers'
top-10 lists (ties broken at random), interleave, simulate one navigational user, credit. Timed on
one numba thread in CPU seconds (so other jobs on a shared machine do not count against it), then
on all cores in wall-clock seconds; compile time excluded. Target (issue 3): >= 1,000,000
team-draft comparisons per second per core. The projection is for 136 rankers (MSLR-WEB30K
features) at 400,000 comparisons per pair, the MergeDTS paper's matrix.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numba

from irbandits.clicks.interleaving import METHODS
from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.matrix import estimate_matrix

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ltr"
TARGET = 1_000_000
MSLR_COMPARISONS = 136 * 135 // 2 * 400_000


def rate(rankers, method: str, comparisons: int, jobs: int, clock=time.perf_counter) -> float:
    estimate_matrix(rankers, "navigational", method, 10, jobs=jobs, progress=False)  # compile
    pairs = rankers.K * (rankers.K - 1) // 2
    start = clock()
    estimate_matrix(rankers, "navigational", method, comparisons, jobs=jobs, progress=False)
    return pairs * comparisons / (clock() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ltr", default=str(DATA / "lightgbm-lambdarank-sample" / "rank.train"))
    ap.add_argument("--rankers", type=int, default=20, help="the first N features are the rankers")
    ap.add_argument("--comparisons", type=float, default=2e4, help="per pair")
    args = ap.parse_args()
    data = read_ltr(args.ltr)
    rankers = data.rankers(range(min(args.rankers, data.n_features)))
    cores = numba.config.NUMBA_NUM_THREADS
    print(f"{args.ltr}: {rankers.K} rankers, {data.n_queries} queries, {data.grades} grades; navigational clicks, "
          f"top-10 lists; {int(args.comparisons):,} comparisons per pair; {cores} cores")
    print(f"{'method':<26}{'per s, 1 core':>15}{'target':>9}{f'per s, {cores} cores':>18}   MSLR 136 x 136 at 400k/pair")
    for name in METHODS:
        one = rate(rankers, name, int(args.comparisons), 1, clock=time.process_time)
        allc = rate(rankers, name, int(args.comparisons), cores)
        verdict = ("ok" if one >= TARGET else "MISSED") if name == "team-draft" else ""
        hours = MSLR_COMPARISONS / allc / 3600
        print(f"{name:<26}{one:>15,.0f}{verdict:>9}{allc:>18,.0f}   "
              f"{MSLR_COMPARISONS / one / 3600:.2f} core-hours, {hours:.2f} h on these {cores} cores")


if __name__ == "__main__":
    main()
