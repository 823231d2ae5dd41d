"""Quick per-run look at tuned MergeDTS / mergeRUCB on MSLR-Navigational (issue 2 investigation).

    python benchmarks/merge_runs.py rucb 100 1e7                 # runs 0..99 of mergeRUCB:tuned
    OFF=100 python benchmarks/merge_runs.py dts 30 1e7           # runs 100..129 of MergeDTS:tuned
    python benchmarks/merge_runs.py rucb 40 1e7 '{"merge_single": 1}'   # extra parameters

Run r uses arm permutation default_rng(1000 + r), algorithm seed r and environment seed 500 + r,
and prints the final regret, the regret at 10^6 (both algorithms have converged by then, so the
two agree unless the Condorcet winner was eliminated) and whether the run ends on the Condorcet
winner; the last line gives mean, standard error and median over the runs.
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from irbandits.dueling import MergeDTS, MergeRUCB
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import run_one

MSLR = Path(__file__).resolve().parents[2] / "shared" / "data" / "preference-matrices" / "mslr-navigational.txt"

def main() -> None:
    P = PreferenceMatrix.load(MSLR)
    which, runs, H = sys.argv[1], int(sys.argv[2]), int(float(sys.argv[3]))
    extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}  # a JSON object of parameter overrides
    OFF = int(os.environ.get("OFF", "0"))
    cls = MergeDTS if which == "dts" else MergeRUCB
    regs = []
    for r in range(OFF, OFF + runs):
        perm = np.random.default_rng(1000 + r).permutation(P.K)
        a = cls.tuned(P.K, seed=r, horizon=H, **extra)
        t0 = time.time()
        res = run_one(a, P, H, seed=500 + r, perm=perm)
        regs.append(res.regret[-1])
        i6 = min(np.searchsorted(res.steps, 10**6), len(res.steps) - 1)
        print(f"{which} {extra} run {r}: regret {res.regret[-1]:.0f} (at 1e6: {res.regret[i6]:.0f}) "
              f"correct {res.correct[-1]} {time.time() - t0:.1f}s", flush=True)
    regs = np.array(regs)
    se = regs.std(ddof=1) / np.sqrt(len(regs)) if len(regs) > 1 else 0.0
    print(f"{which} {extra} mean {regs.mean():.0f} se {se:.0f} median {np.median(regs):.0f}")


if __name__ == "__main__":
    main()
