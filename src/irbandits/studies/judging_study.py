"""The thesis's simulation study (seed 000, chapter 4, Figure 4.1): every judging algorithm on
Case A (100 items, total order, 0.75) and Case B (items 0 and 1 tie and beat the rest by 0.75,
everything else 0.5), 1,000 runs each.

Per run: a random relabelling of the items (none for "PARWiS (index order)", which shows what the
original code's fixed initial order does on these cases), the algorithm's reported best item(s), the judgments
it used and its "assessors" (the most judgments of any one pair). Case A counts runs whose report
contains item 0; Case B runs whose report contains exactly one / both of items 0 and 1.

The extra final phase judges every pair of the final pool a second time and scores the final pool
on both rounds (thesis 4.4: "judges all pairs in the final pool a second time so that the algorithm
bases its final estimates on two comparisons of each pair"). Over 23 seeds x 1,000 runs (seeds 1-23)
it finds Case A's item 0 in 512.7 runs per 1,000 on average (published 510; sd across seeds 12),
item 1 in 306 (302) and item 2 in 181 (166); without it 481.8 (502), 323 (323), 216 (213). Seed 0,
the CLI default, draws a high 563 for the extra row (and 502 without it), about 3 binomial sd
above that average: chance, not a different process. The thesis's tie counts (497 and 290 of
1,000 runs "tied for best") equal the items reported beyond one per run, 1,000 x
(``mean_reported`` - 1) here (1,497 = 502 + 995 and 1,290 = 510 + 780 items in all), not the runs
reporting more than one item (about 354 and 224 per 1,000 here); see ``PUBLISHED_REPORTED``.

Beyond the thesis: the best-item (PAC) algorithms its section 3.2 reviews but did not simulate
(:mod:`irbandits.judging.pac_algorithms`: Knockout, Seq-Eliminate, Opt-Max, PLPAC, MallowsMPI,
Multisort; :data:`BEYOND_THESIS`), each fitted to the same budget, run by default after the nine
and marked in :func:`figure_4_1`'s ``in thesis`` column ("no"), their cells without a published
value.

>>> df = run_study(["SELECT"], runs=3, seed=1)
>>> sorted(df.case.unique()), int(df.judgments.max()), int(df.assessors.max())
(['A', 'B'], 990, 10)
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.judging import algorithms as alg
from irbandits.judging import pac_algorithms as pac
from irbandits.judging.topk import TopKProcess
from irbandits.studies.claims import Claim
from irbandits.studies.claims import claim_rows as rows
from irbandits.synthetic import case_a, case_b


def clarke(oracle: alg.Oracle, rng: np.random.Generator, extra: int = 0) -> list[int]:
    """The top-k process (n = 7, m = 9) run to the end on the oracle's answers; its best set."""
    K = len(oracle.P)
    proc = TopKProcess({"q": [str(i) for i in range(K)]}, extra=extra, seed=int(rng.integers(2**63)))
    while requests := proc.requests():
        for topic, left, right in requests:
            i, j = int(left), int(right)
            proc.add(topic, left, right, left if oracle.duels(i, j) else right)
    return [int(x) for x in proc.best()["q"]]


def clarke_extra(oracle: alg.Oracle, rng: np.random.Generator) -> list[int]:
    """:func:`clarke` with one extra finalization phase."""
    return clarke(oracle, rng, extra=1)


# name -> (Case A runner or None, Case B runner); each runner is (oracle, rng) -> best items
ALGORITHMS: dict[str, tuple[Callable | None, Callable]] = {
    "PARWiS": (alg.parwis, lambda o, r: alg.parwis(o, r, k=2)),
    "PARWiS (index order)": (lambda o, r: alg.parwis(o, r, shuffle=False),
                             lambda o, r: alg.parwis(o, r, k=2, shuffle=False)),
    "Active Ranking": (alg.active_ranking, lambda o, r: alg.active_ranking(o, r, k=2)),
    "SELECT": (alg.select, alg.select),
    "TOP-2": (None, lambda o, r: alg.top_k(o, r, k=2, m=5)),
    "Clarke et al. (extra final phase)": (clarke_extra, clarke_extra),
    "Clarke et al.": (clarke, clarke),
    "Round-Efficient": (alg.round_efficient, alg.round_efficient),
    "DTS": (alg.dts, alg.dts),
    "MergeDTS": (alg.merge_dts, alg.merge_dts),
}

# Beyond the thesis (its section 3.2 reviews them; no Figure 4.1 row): name -> the paper
BEYOND_THESIS = {
    "Knockout": "Falahatgar et al., ICML 2017 (thesis [30])",
    "Seq-Eliminate": "Falahatgar et al., NeurIPS 2017 (thesis [28])",
    "Opt-Max": "Falahatgar et al., ICML 2018 (thesis [29])",
    "PLPAC": "Szörényi et al., NeurIPS 2015 (thesis [76])",
    "MallowsMPI": "Busa-Fekete et al., ICML 2014 (thesis [11])",
    "Multisort": "Maystre & Grossglauser, ICML 2017 (thesis [62])",
}
# each reports one best item, in Case B too (as SELECT); fitted to the budget (pac_algorithms' fit=True)
ALGORITHMS.update({
    "Knockout": (pac.knockout, pac.knockout),
    "Seq-Eliminate": (pac.seq_eliminate, pac.seq_eliminate),
    "Opt-Max": (pac.opt_max, pac.opt_max),
    "PLPAC": (pac.plpac, pac.plpac),
    "MallowsMPI": (pac.mallows_mpi, pac.mallows_mpi),
    "Multisort": (pac.multisort, pac.multisort),
})

# Figure 4.1 (1,000 runs): A found, A judgments, A assessors, B one, B both, B judgments, B assessors
PUBLISHED = {
    "PARWiS": (537, "1000", "17-68", 686, 287, "1000", "7-83"),
    "PARWiS (index order)": (537, "1000", "17-68", 686, 287, "1000", "7-83"),
    "Active Ranking": (175, "1000", "3-11", 405, 545, "1000", "3-11"),
    "SELECT": (715, "990", "10", 905, 0, "990", "10"),
    "TOP-2": (None, "-", "-", 588, 277, "980", "5"),
    "Clarke et al. (extra final phase)": (510, "624-781", "3-6", 733, 81, "616-795", "3-6"),
    "Clarke et al.": (502, "599-759", "2-5", 666, 94, "592-764", "2-5"),
    "Round-Efficient": (141, "1000", "2-5", 680, 89, "1000", "2-5"),
    "DTS": (124, "1000", "4-24", 710, 7, "1000", "4-20"),
    "MergeDTS": (108, "1000", "31-93", 581, 58, "1000", "28-81"),
}

# Items reported in all over 1,000 runs (thesis 4.4 text): Case A item 0 found + other items;
# Case B one + 2 x both + other items
PUBLISHED_REPORTED = {
    "Clarke et al.": {"A": 502 + 995, "B": 666 + 2 * 94 + 729},
    "Clarke et al. (extra final phase)": {"A": 510 + 780, "B": 733 + 2 * 81 + 430},
}

CASES = (("A", case_a), ("B", case_b))
CHUNK = 25


def run_chunk(name: str, c: int, runs: range, seed: int, budget: int) -> list[dict]:
    """Runs ``runs`` of one algorithm on case ``c``: each run's rng is SeedSequence(seed, (c, r))."""
    case, make = CASES[c]
    P = make().p
    runner = ALGORITHMS[name][c]
    unbudgeted = name.startswith("Clarke")
    rows = []
    for r in runs:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(c, r)))
        perm = rng.permutation(len(P))
        if name.endswith("(index order)"):  # the item labels as given: item 0 starts the chain
            perm = np.arange(len(P))
        oracle = alg.Oracle(P[np.ix_(perm, perm)], 10**9 if unbudgeted else budget, rng)
        best = sorted(int(perm[i]) for i in runner(oracle, rng))
        rows.append(dict(algorithm=name, case=case, run=r, best=best,
                         judgments=oracle.judgments, assessors=oracle.assessors))
    return rows


def _chunk_task(context, task: tuple) -> list[dict]:
    return run_chunk(*task)


def run_study(algorithms: Iterable[str] | None = None, runs: int = 1000, seed: int = 0,
              budget: int = 1000, jobs: int = 1, progress: bool = False, backend: str = "local",
              address: str | None = None) -> pd.DataFrame:
    """One row per (algorithm, case, run): ``best`` (original labels), ``judgments``, ``assessors``.

    Run r of every algorithm sees the same relabelling and seeds (paired comparisons), whatever
    ``jobs`` (worker processes) or ``backend`` (``"ray"``: chunks of runs on the Ray cluster at
    ``address``, see :func:`irbandits.tasks.run_tasks`) is. The top-k process has no budget:
    it runs to its end.
    """
    from irbandits.tasks import Failed, run_tasks

    names = list(algorithms or ALGORITHMS)
    for name in names:
        if name not in ALGORITHMS:
            raise IrbanditsError(f"unknown judging algorithm {name!r}; known: {', '.join(ALGORITHMS)}")
    tasks = [(name, c, range(r, min(r + CHUNK, runs)), seed, budget)
             for c in range(len(CASES)) for name in names if ALGORITHMS[name][c] is not None
             for r in range(0, runs, CHUNK)]
    chunks: list = [None] * len(tasks)
    for outcome in run_tasks(_chunk_task, tasks, backend=backend, workers=jobs, address=address, progress=progress,
                             label="judging-study: chunks of runs"):
        if isinstance(outcome, Failed):
            raise RuntimeError(f"judging-study chunk {tasks[outcome.index][:3]} failed: {outcome.error}")
        chunks[outcome.index] = outcome.value
    return pd.DataFrame([row for chunk in chunks for row in chunk])


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm and case: found (A: item 0; B: exactly one / both of 0 and 1) and ranges."""
    out = []
    for (name, case), g in df.groupby(["algorithm", "case"], sort=False):
        hits = g.best.map(lambda b: (0 in b) + (1 in b) if case == "B" else int(0 in b))
        out.append(dict(algorithm=name, case=case, runs=len(g), one=int((hits == 1).sum()),
                        both=int((hits == 2).sum()),
                        judgments=_range(g.judgments), assessors=_range(g.assessors),
                        mean_reported=g.best.map(len).mean()))
    return pd.DataFrame(out)


def _range(s: pd.Series) -> str:
    return f"{s.min()}" if s.min() == s.max() else f"{s.min()}-{s.max()}"


def figure_4_1(s: pd.DataFrame) -> pd.DataFrame:
    """The Figure 4.1 table from :func:`summarize`'s table, each cell ``ours (published)``; the
    algorithms beyond the thesis (``in thesis``: "no") after its nine, their cells ``ours`` only."""
    rows = []
    names = list(dict.fromkeys(s.algorithm))
    for name in sorted(names, key=lambda n: (n in BEYOND_THESIS, names.index(n))):
        pub = PUBLISHED.get(name)
        a = s[(s.algorithm == name) & (s.case == "A")]
        b = s[(s.algorithm == name) & (s.case == "B")].iloc[0]
        cell = (lambda ours, p: f"{ours} ({p})") if pub else (lambda ours, p: f"{ours}")
        pub = pub or (None,) * 7
        rows.append({
            "algorithm": name,
            "in thesis": "no" if name in BEYOND_THESIS else "yes",
            "A best found": cell(a.one.iat[0], pub[0]) if len(a) else "-",
            "A judgments": cell(a.judgments.iat[0], pub[1]) if len(a) else "-",
            "A assessors": cell(a.assessors.iat[0], pub[2]) if len(a) else "-",
            "B one found": cell(b.one, pub[3]),
            "B both found": cell(b.both, pub[4]),
            "B judgments": cell(b.judgments, pub[5]),
            "B assessors": cell(b.assessors, pub[6]),
        })
    return pd.DataFrame(rows)


PAPER = "Yan thesis, section 4.4 (Figure 4.1)"
LEVEL = 0.01  # a count disagrees when a two-proportion test against the published count rejects at this level


def claim_rows(s: pd.DataFrame) -> list[Claim]:
    """Figure 4.1's counts beside this run's (rows of ``claims.csv``), from :func:`summarize`'s table: per
    thesis algorithm, Case A's runs finding item 0 and Case B's runs finding one / both of items 0 and 1.
    A count agrees unless a two-sided two-proportion z-test of this run's share against the published
    share of 1,000 runs rejects at :data:`LEVEL`."""
    from scipy.stats import norm

    def test(ours: int, runs: int, published: int) -> tuple[str, bool]:
        pooled = (ours + published) / (runs + 1000)
        se = np.sqrt(pooled * (1 - pooled) * (1 / runs + 1 / 1000))
        p = 1.0 if se == 0 else float(2 * norm.sf(abs(ours / runs - published / 1000) / se))
        return f"{ours} of {runs} (p = {p:.2g})", p >= LEVEL

    triples = []
    for name, pub in PUBLISHED.items():
        for case, column, index, what in (("A", "one", 0, "find item 0 in Case A"),
                                          ("B", "one", 3, "find exactly one of items 0 and 1 in Case B"),
                                          ("B", "both", 4, "find both items 0 and 1 in Case B")):
            row = s[(s.algorithm == name) & (s.case == case)]
            if pub[index] is None or row.empty:
                continue
            measured, agrees = test(int(row[column].iat[0]), int(row.runs.iat[0]), pub[index])
            triples.append((f"{name}: {pub[index]} of 1,000 runs {what}", measured, agrees))
    runs = int(s.runs.max()) if len(s) else 0
    return rows("judging-study", PAPER, triples, f"{runs:,} runs per algorithm and case (paper: 1,000)")
