"""The arena measurement: votes until the best of 20 Bradley-Terry systems is identified and settled.

Each run draws 20 strengths ``s ~ N(0, 1)`` from its seed and lifts the best to ``max(rest) + GAP``
(a clear best: it beats the runner-up with probability 1 / (1 + e^-GAP)). A vote between i and j
goes to i with probability ``e^s_i / (e^s_i + e^s_j)``. Three ways of choosing the pairs:

- MergeDTS (``MergeDTS:tuned``) and RUCB: the library's objects through ``select()`` / ``update()``;
- uniform: a uniformly random pair of different systems per vote (what public arenas do), the votes
  fed to a RUCB object only to keep its counts and bounds.

Stopping rule for all three: the service's :func:`irbandits.service.experiment_runtime.settled` (one arm
left, or the confidence bounds put the recommendation above 1/2 against every other system) with
the recommendation being the true best, checked every ``--every`` votes. Prints medians and the
ratios to uniform; saves a figure (``docs/figures/arena.png``).

    python benchmarks/arena.py --runs 50
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

K, GAP = 20, 1.0
METHODS = ("MergeDTS:tuned", "RUCB", "uniform")


def strengths(seed: int) -> np.ndarray:
    s = np.random.default_rng(seed).normal(size=K)
    best = int(np.argmax(s))
    s[best] = np.delete(s, best).max() + GAP
    return s


def votes_needed(method: str, seed: int, every: int, cap: int) -> int:
    """Votes until the recommendation is the best and settled (``cap`` if never)."""
    from irbandits.dueling import parse_spec
    from irbandits.service.experiment_runtime import settled

    s = strengths(seed)
    best = int(np.argmax(s))
    rng = np.random.default_rng([seed, 1])
    algo = parse_spec("RUCB" if method == "uniform" else method).make(K, seed=seed)
    for t in range(1, cap + 1):
        if method == "uniform":
            c, d = rng.choice(K, 2, replace=False)
        else:
            c, d = algo.select()
        algo.update(int(c), int(d), bool(rng.random() < 1.0 / (1.0 + np.exp(s[d] - s[c]))))
        if t % every == 0 and algo.recommend() == best and settled(algo)[0]:
            return t
    return cap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--every", type=int, default=25, help="check the stopping rule every this many votes")
    ap.add_argument("--cap", type=int, default=400_000, help="give up after this many votes")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--figure", type=Path, default=Path(__file__).parents[1] / "docs" / "figures" / "arena.png")
    args = ap.parse_args()
    start = time.perf_counter()
    tasks = [(m, seed, args.every, args.cap) for m in METHODS for seed in range(args.runs)]
    with ProcessPoolExecutor(args.jobs) as pool:
        got = list(pool.map(votes_needed, *zip(*tasks)))
    need = {m: np.array(got[i * args.runs:(i + 1) * args.runs]) for i, m in enumerate(METHODS)}
    uniform = np.median(need["uniform"])
    print(f"arena: K={K} Bradley-Terry systems, best ahead by {GAP} (beats the runner-up with p = "
          f"{1 / (1 + np.exp(-GAP)):.2f}), {args.runs} runs, checked every {args.every} votes "
          f"({time.perf_counter() - start:.0f} s)")
    print(f"| pairs chosen by | median votes | 25%-75% | ratio to uniform | runs capped at {args.cap:,} |")
    print("|---|---:|---:|---:|---:|")
    for m in METHODS:
        q1, med, q3 = np.percentile(need[m], [25, 50, 75])
        print(f"| {m} | {med:,.0f} | {q1:,.0f}-{q3:,.0f} | {med / uniform:.2f} | {(need[m] >= args.cap).sum()} |")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.boxplot([need[m] for m in METHODS], orientation="horizontal", tick_labels=list(METHODS))
    ax.set_xscale("log")
    ax.set_xlabel("votes until the best system is identified and settled")
    ax.set_title(f"Arena of {K} Bradley-Terry systems, {args.runs} runs each")
    fig.tight_layout()
    args.figure.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.figure, dpi=120)
    print(f"wrote {args.figure}")


if __name__ == "__main__":
    main()
