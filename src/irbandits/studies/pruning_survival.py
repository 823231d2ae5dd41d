"""Yan thesis Figure 3.1: the chance that a Borda winner survives a pruning phase of the top-k process.

In a pruning phase every item meets ``n`` random opponents once; the thesis (section 3.3.4) takes an
item to proceed when it wins at least half of them, so a Borda winner whose Borda score (chance of
beating a random other item) is ``b`` proceeds with the binomial survival probability

    P(n, b) = sum_{k = ceil(n / 2)}^{n} C(n, k) b^k (1 - b)^(n - k),

which grows with ``n``: the reason the study's n = 7 (with m = 9). This study draws the curves and
checks them against the process itself: :class:`~irbandits.judging.topk.TopKProcess` runs one pruning
phase on many pools of ``K = 12`` items in which item ``w`` beats every other with probability ``b`` and
the others are even, and counts how often ``w`` is still in the pool. Two things separate the process
from the formula: Clarke et al.'s pairing gives some items ``n + 1`` opponents, and its keep rule
(``keep="wins"``: wins > n // 2) asks for more than half when ``n`` is even, where the thesis's
listing (``keep="borda"``: wins / pairs >= 1/2) asks for half.

>>> float(round(survival(7, 0.75), 4))
0.9294
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.judging.topk import TopKProcess
from irbandits.studies.claims import Claim
from irbandits.studies.claims import claim_rows as rows

NS = tuple(range(1, 10))
SCORES = tuple(np.round(np.arange(0.5, 0.951, 0.05), 2))
POOL = 12  # items per pool: more than the study's m = 9, so the first phase prunes; at least n + 1


def survival(n: int, b: float) -> float:
    """P(n, b): the chance of at least ceil(n / 2) wins in n duels won with probability b (thesis 3.3.4)."""
    return float(sum(math.comb(n, k) * b**k * (1 - b) ** (n - k) for k in range(math.ceil(n / 2), n + 1)))


def kept(wins: int, pairs: int, n: int, keep: str) -> bool:
    """The process's keep rules (:class:`~irbandits.judging.topk.TopKProcess`): ``wins`` (wins > n // 2,
    the original code) or ``borda`` (wins / pairs >= 1/2, the thesis's listing)."""
    return wins > n // 2 if keep == "wins" else 2 * wins >= pairs


def expected(n: int, b: float, keep: str, extra: float) -> float:
    """The survival chance the process should show when a share ``extra`` of the winners meets n + 1
    opponents (Clarke et al.'s pairing) and the rest n."""
    def p(pairs):
        return sum(math.comb(pairs, k) * b**k * (1 - b) ** (pairs - k) for k in range(pairs + 1)
                   if kept(k, pairs, n, keep))
    return float((1 - extra) * p(n) + extra * p(n + 1))


def simulated(n: int, b: float, keep: str, pools: int, seed: int) -> tuple[float, float]:
    """Over ``pools`` pools, one pruning phase of the top-k process each (``n`` pairs per item, ``keep``
    rule, answers drawn from ``b`` and 1/2): the share in which the Borda winner ``w`` survives, and the
    share in which it met n + 1 opponents."""
    items = ["w", *(f"d{i}" for i in range(1, POOL))]
    process = TopKProcess({str(t): items for t in range(pools)}, n=n, m=9, keep=keep, seed=seed)
    rng = np.random.default_rng(seed)
    requests = process.requests()
    for topic, left, right in requests:
        p = b if left == "w" else 1 - b if right == "w" else 0.5
        process.add(topic, left, right, left if rng.random() < p else right)
    extra = sum(1 for _, left, right in requests if "w" in (left, right)) / pools - n
    return float(np.mean(["w" in t.pool for t in process.topics.values()])), extra


def run_study(pools: int = 400, seed: int = 0) -> pd.DataFrame:
    """One row per (n, b): the formula and the process's survival share under both keep rules."""
    rows = []
    for i, n in enumerate(NS):
        for j, b in enumerate(SCORES):
            row = dict(n=n, borda=b, formula=survival(n, b), pools=pools)
            for keep in ("wins", "borda"):
                share, extra = simulated(n, b, keep, pools, seed + 1000 * i + j)
                row[f"process_{keep}"], row[f"expected_{keep}"] = share, expected(n, b, keep, extra)
            rows.append(row)
    return pd.DataFrame(rows)


def _p(share: float, p: float, pools: int) -> float:
    """Two-sided exact binomial p-value of ``share`` of ``pools`` under probability ``p``."""
    from scipy.stats import binomtest

    return float(binomtest(round(share * pools), pools, min(max(p, 1e-12), 1 - 1e-12)).pvalue)


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The thesis's statements about Figure 3.1, and the formula beside the process it describes (exact
    binomial tests; with 50 points a smallest p-value above 10^-4 is what chance gives 99.5 % of the time)."""
    pools = int(table.pools.iloc[0])
    odd, even = table[table.n % 2 == 1], table[table.n % 2 == 0]
    wide = odd.pivot(index="borda", columns="n", values="formula")
    rising = bool((wide.diff(axis=1).iloc[:, 1:][wide.index > 0.5] > 0).all().all())
    at = table[(table.n == 7) & (table.borda == 0.75)].iloc[0]
    p_formula = min(_p(r.process_wins, r.formula, pools) for r in odd.itertuples())
    p_expected = min(_p(r.process_wins, r.expected_wins, pools) for r in odd.itertuples())
    p_even = {keep: min(_p(r[f"process_{keep}"], r.formula, pools) for _, r in even.iterrows())
              for keep in ("wins", "borda")}
    triples = [
        ("a Borda winner proceeds more often as n grows (Figure 3.1)",
         f"P(n, b) rises from n = 1 to 9 (odd n) at every b in 0.55-0.95: {'yes' if rising else 'no'}", rising),
        ("with the study's n = 7 a Borda winner of score 0.75 proceeds with P(7, 0.75)",
         f"formula {at.formula:.3f}; the top-k process {at.process_wins:.3f} ({pools} pools; "
         f"p = {_p(at.process_wins, at.formula, pools):.2g})", _p(at.process_wins, at.formula, pools) > 1e-3),
        ("the formula is the process's chance of keeping the Borda winner (odd n)",
         f"smallest p-value {p_formula:.2g} over {len(odd)} (n, b) points; Clarke et al.'s pairing gives some items "
         f"n + 1 opponents, which lifts the chance near b = 1/2 (with that counted: {p_expected:.2g})",
         p_formula > 1e-4),
        ("(even n) an item proceeds when it wins at least half of its n duels",
         f"the thesis's listing (keep borda, wins / pairs >= 1/2) follows the formula (smallest p-value "
         f"{p_even['borda']:.2g}); the original code (keep wins, wins > n // 2) asks for more "
         f"(smallest p-value {p_even['wins']:.2g})", None),
    ]
    return rows("pruning-survival", "Yan thesis, section 3.3.4 and Figure 3.1", triples,
                f"{pools} pools of {POOL} items per (n, b) (paper: the formula only)")


def plot(table: pd.DataFrame, path: str | Path) -> Path:
    """Figure 3.1: the formula's curve per n, with the process's shares (keep wins) as points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.4))
    grid = np.linspace(0.5, 1.0, 101)
    for i, n in enumerate(n for n in NS if n % 2):
        color = f"C{i}"
        ax.plot(grid, [survival(n, b) for b in grid], color=color, label=f"n = {n}")
        sub = table[table.n == n]
        ax.plot(sub.borda, sub.process_wins, "o", color=color, ms=4)
    ax.set_xlabel("Borda score b of the Borda winner")
    ax.set_ylabel("P(the Borda winner proceeds)")
    ax.set_title("Yan thesis Figure 3.1 (odd n): lines the formula, points the top-k process\n"
                 f"({int(table.pools.iloc[0])} pools of {POOL} items each)", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
