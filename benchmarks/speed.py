"""Steps per second of every online algorithm, and one full 10^8-step MergeDTS run on MSLR.

    python benchmarks/speed.py                  # all algorithms, K=136 (MSLR), 500 (copeland-500), 700 (bt-700)
    python benchmarks/speed.py --full-run       # also one 10^8-step MergeDTS (tuned) run on MSLR
    python benchmarks/speed.py --full-run --no-fast-forward -a MergeDTS --only-k 136  # ... step by step
    python benchmarks/speed.py -a RUCB -a DTS --steps 200000
    python benchmarks/speed.py -a DTS --only-k 136 --warmup 1e6
    python benchmarks/speed.py -a DTS -a Self-Sparring --only-k 136 --steps 1e5 --whole-run 1e7
    python benchmarks/speed.py -a CCB --only-k 136 --only-k 500 --steps 1e5 --warmup 1e5

Each figure is one compiled run on one core (compile time excluded), after a warm-up that takes
the algorithm past its first exploratory steps. Targets (issue 2): RUCB >= 200,000 steps/s at
K=136, DTS >= 50,000 at K=136, Self-Sparring >= 20,000 at K=700, MergeDTS 10^8 steps on MSLR
in < 60 s step by step; issue 13: < 2 s with fast-forward (the run is finished in closed form once
one arm is left, as :func:`irbandits.simulate.simulate` does by default). The baseline is duelpy (pure Python): about 5-9k duels/s at K=10 and ~250 at K=136.
The column ``x RUCB`` is the algorithm's time per step over RUCB's on the same problem, both timed in
the same run (RUCB is timed once per problem even when not asked for); issue 23's targets are ratios
(CCB within 5x at K=136 and K=500).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from irbandits.dueling import get_algorithm, list_algorithms
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.simulate import run_one

MSLR = Path(__file__).resolve().parents[2] / "shared" / "data" / "preference-matrices" / "mslr-navigational.txt"
TARGETS = {("RUCB", 136): 200_000, ("DTS", 136): 50_000, ("Self-Sparring", 700): 20_000}
DUELPY = {136: 250}
RATIO_TARGETS = {("CCB", 136): 5, ("CCB", 500): 5}  # issue 23: at most this many times RUCB's time per step


def _make(name: str, K: int):
    cls = get_algorithm(name)
    return cls.tuned(K, seed=1, horizon=10**8) if "tuned" in cls.settings else cls(K, seed=1, horizon=10**8)


def steps_per_second(name: str, problem: PreferenceMatrix, steps: int, warmup: int) -> float:
    algo = _make(name, problem.K)
    run_one(algo, problem, warmup, seed=1)
    r = run_one(algo, problem, steps, seed=2)
    return steps / r.seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-a", "--algorithm", action="append", help="algorithm name (repeat); default all")
    ap.add_argument("--steps", type=float, default=1e6, help="timed steps per figure")
    ap.add_argument("--warmup", type=float, default=1e5, help="steps before timing")
    ap.add_argument("--only-k", type=int, choices=(136, 500, 700), action="append",
                    help="only the MSLR (136), copeland-500 (500) or bt-700 (700) problem (repeat for several)")
    ap.add_argument("--full-run", action="store_true", help="time one 10^8-step MergeDTS (tuned) run on MSLR")
    ap.add_argument("--no-fast-forward", action="store_true", help="run --full-run step by step to the end")
    ap.add_argument("--whole-run", type=float, metavar="T",
                    help="also time one T-step run from scratch per algorithm on MSLR (average steps/s, warm-up included)")
    args = ap.parse_args()
    names = args.algorithm or list(list_algorithms().name)
    problems = [PreferenceMatrix.load(MSLR, name="mslr-navigational"), get_problem("copeland-500"), get_problem("bt-700")]
    problems = [P for P in problems if args.only_k is None or P.K in args.only_k]
    rucb = {}  # RUCB's steps/s per K, timed in this run
    print(f"{'algorithm':<15}{'K':>5}{'steps/s':>14}{'target':>10}{'vs duelpy':>11}{'x RUCB':>8}{'target':>8}")
    for name in names:
        for P in problems:
            sps = steps_per_second(name, P, int(args.steps), int(args.warmup))
            if name == "RUCB":
                rucb[P.K] = sps
            elif P.K not in rucb:
                rucb[P.K] = steps_per_second("RUCB", P, int(args.steps), int(args.warmup))
            target = TARGETS.get((name, P.K))
            verdict = "" if target is None else ("ok" if sps >= target else "MISSED")
            ratio = f"{sps / DUELPY[P.K]:.0f}x" if P.K in DUELPY else ""
            slower, most = rucb[P.K] / sps, RATIO_TARGETS.get((name, P.K))
            verdict2 = "" if most is None else f"{most}x " + ("ok" if slower <= most else "MISSED")
            print(f"{name:<15}{P.K:>5}{sps:>14,.0f}{(f'{target:,}' if target else ''):>10} {verdict:<6}{ratio:>5}"
                  f"{slower:>8.1f}  {verdict2}", flush=True)
    if args.whole_run:
        P = PreferenceMatrix.load(MSLR, name="mslr-navigational")
        for name in names:
            r = run_one(_make(name, P.K), P, int(args.whole_run), seed=1)
            print(f"{name}: one {args.whole_run:.0e}-step run on MSLR from scratch: {r.seconds:.1f} s, "
                  f"{args.whole_run / r.seconds:,.0f} steps/s on average", flush=True)
    if args.full_run:
        P = PreferenceMatrix.load(MSLR, name="mslr-navigational")
        algo = get_algorithm("MergeDTS").tuned(P.K, seed=1, horizon=10**8)
        run_one(algo.clone(), P, 10, seed=1, fast_forward=not args.no_fast_forward)  # compile first
        start, cpu = time.perf_counter(), time.process_time()
        r = run_one(algo, P, 10**8, seed=1, fast_forward=not args.no_fast_forward)
        how = (f"fast-forwarded after step {r.absorbed_at:,}; target < 2 s" if r.absorbed_at else
               "step by step; target < 60 s")
        print(f"MergeDTS (tuned), 10^8 steps on MSLR: {time.perf_counter() - start:.2f} s wall, "
              f"{time.process_time() - cpu:.2f} s CPU ({how}; paper "
              f"0.08 days), regret {r.regret[-1]:.0f}, recommended {r.recommended[-1]}")


if __name__ == "__main__":
    main()
