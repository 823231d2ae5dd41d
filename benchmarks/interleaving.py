"""Interleaved comparisons per second per core, and the projected time of an MSLR-sized matrix.

    python benchmarks/interleaving.py                       # LightGBM sample, 20 rankers, navigational
    python benchmarks/interleaving.py --ltr ../shared/data/ltr/letor3-np2004-fold1/test.txt.gz

One comparison is what `irbandits matrix` does per sample: draw a query, build both rankers'
top-10 lists (ties broken at random), interleave, simulate one navigational user, credit. Timed on
one numba thread in CPU seconds (so other jobs on a shared machine do not count against it), then
on all cores in wall-clock seconds; compile time excluded. Target (issue 3): >= 1,000,000
team-draft comparisons per second per core. The projection is for 136 rankers (MSLR-WEB30K
features) at 400,000 comparisons per pair, the MergeDTS paper's matrix. The methods that solve a
linear program per comparison (optimized, roughly-optimized) run ``--lp-comparisons`` per pair.

Then, side by side at lengths 10 and 50, one comparison at a time as a live system makes it
(interleave two fixed rankings, credit one click; team-draft and probabilistic): the kernels in a
compiled loop (the ceiling: no Python at all), the kernels called from Python with buffers the
caller keeps, the reusable :class:`~irbandits.clicks.interleaving.Interleaver`, and the old one-off
``interleave()`` call (a new list, then ``credit``). Target (issue 16): the Interleaver within 2x of
the kernels called from Python.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit

from irbandits.clicks.interleaving import METHODS, Interleaver, get_method, interleave
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


@njit
def _kernel_loop(interleave_k, credit_k, a, b, rng, shown, assign, prob, clicks, n):
    total = 0.0
    for _ in range(n):
        m = interleave_k(a, len(a), b, len(b), rng, shown, assign, prob)
        clicks[:] = False
        clicks[m // 2] = True
        total += credit_k(a, len(a), b, len(b), shown, m, assign, prob, clicks)
    return total


def live_rates(method: str, length: int, seconds: float = 1.0) -> tuple[float, float, float, float]:
    """Comparisons per second: the kernels in a compiled loop, the kernels called from Python with
    preallocated buffers, the Interleaver, the old interleave() (given a generator)."""
    gen = np.random.default_rng(0)
    a, b = gen.permutation(2 * length)[:length], gen.permutation(2 * length)[:length]
    m = get_method(method)
    from irbandits.rng import new_rng

    bufs = (new_rng(0), np.empty(length, np.int64), np.empty(length, np.int64), np.empty(length),
            np.zeros(length, np.bool_))
    _kernel_loop(m.interleave, m.credit, a, b, *bufs, 10)
    n = 200_000
    start = time.process_time()
    _kernel_loop(m.interleave, m.credit, a, b, *bufs, n)
    kernels = n / (time.process_time() - start)

    def timed(step) -> float:
        step()
        count, start = 0, time.process_time()
        while time.process_time() - start < seconds:
            for _ in range(200):
                step()
            count += 200
        return count / (time.process_time() - start)

    rng, shown, assign, prob, clicks = bufs
    ik, ck, na = m.interleave, m.credit, len(a)

    def raw():
        k = ik(a, na, b, na, rng, shown, assign, prob)
        clicks[:] = False
        clicks[k // 2] = True
        ck(a, na, b, na, shown, k, assign, prob, clicks)

    il, click = Interleaver(method, length), [length // 2]

    def reusable():
        il.interleave(a, b)
        il.credit(click)

    al, bl = a.tolist(), b.tolist()
    old = timed(lambda: interleave(method, al, bl, rng=rng, length=length).credit(click))
    return kernels, timed(raw), timed(reusable), old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ltr", default=str(DATA / "lightgbm-lambdarank-sample" / "rank.train"))
    ap.add_argument("--rankers", type=int, default=20, help="the first N features are the rankers")
    ap.add_argument("--comparisons", type=float, default=2e4, help="per pair")
    ap.add_argument("--lp-comparisons", type=float, default=500, help="per pair, for the methods with an LP")
    args = ap.parse_args()
    data = read_ltr(args.ltr)
    rankers = data.rankers(range(min(args.rankers, data.n_features)))
    cores = numba.config.NUMBA_NUM_THREADS
    print(f"{args.ltr}: {rankers.K} rankers, {data.n_queries} queries, {data.grades} grades; navigational clicks, "
          f"top-10 lists; {int(args.comparisons):,} comparisons per pair ({int(args.lp_comparisons):,} with an LP); "
          f"{cores} cores")
    print(f"{'method':<26}{'per s, 1 core':>15}{'target':>9}{f'per s, {cores} cores':>18}   MSLR 136 x 136 at 400k/pair")
    for name in METHODS:
        n = int(args.lp_comparisons if "optimized" in name else args.comparisons)
        one = rate(rankers, name, n, 1, clock=time.process_time)
        allc = rate(rankers, name, n, cores)
        verdict = ("ok" if one >= TARGET else "MISSED") if name == "team-draft" else ""
        hours = MSLR_COMPARISONS / allc / 3600
        print(f"{name:<26}{one:>15,.0f}{verdict:>9}{allc:>18,.0f}   "
              f"{MSLR_COMPARISONS / one / 3600:.2f} core-hours, {hours:.2f} h on these {cores} cores")
    print("\none comparison at a time (interleave + credit one click), per second on one core:")
    print(f"{'method':<15}{'length':>7}{'compiled loop':>15}{'kernels':>10}{'Interleaver':>13}"
          f"{'interleave()':>14}{'kernels/Interleaver':>21}")
    for name in ("team-draft", "probabilistic"):
        for length in (10, 50):
            loop, k, r, old = live_rates(name, length)
            print(f"{name:<15}{length:>7}{loop:>15,.0f}{k:>10,.0f}{r:>13,.0f}{old:>14,.0f}{k / r:>19.1f}x"
                  f"{'  ok' if k / r <= 2 else '  MISSED'}")

if __name__ == "__main__":
    main()
