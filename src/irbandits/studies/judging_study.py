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

from pathlib import Path
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

# The per-algorithm text (thesis 4.1-4.4), 1,000 runs: (case, column of summarize) -> count. single: runs
# reporting exactly one item; others: items reported in all that are no best item (A: not 0; B: neither 0 nor 1);
# others_both: Case B's others plus one per run reporting both 0 and 1 (the thesis's arithmetic for Clarke et al.:
# items reported - runs with one - runs with both, so 1,489 - 666 - 94 = 729 from its own totals);
# item1 / item2: runs reporting item 1 / item 2
PUBLISHED_TEXT = {
    "DTS": {("A", "single"): 959, ("A", "others"): 922, ("B", "others"): 357},
    "MergeDTS": {("A", "others"): 1503, ("B", "others"): 914},
    "Round-Efficient": {("A", "single"): 559, ("A", "others"): 1632, ("B", "others"): 606},
    "Clarke et al.": {("A", "item1"): 323, ("A", "item2"): 213, ("A", "others"): 995, ("B", "others_both"): 729},
    "Clarke et al. (extra final phase)": {("A", "item1"): 302, ("A", "item2"): 166, ("A", "others"): 780,
                                          ("B", "others_both"): 430},
}
# Items reported in all over 1,000 runs: Case A item 0 found + other items; Case B one + both + others_both
PUBLISHED_REPORTED = {name: {"A": PUBLISHED[name][0] + PUBLISHED_TEXT[name][("A", "others")],
                             "B": PUBLISHED[name][3] + PUBLISHED[name][4] + PUBLISHED_TEXT[name][("B", "others_both")]}
                      for name in ("Clarke et al.", "Clarke et al. (extra final phase)")}

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
    """Per algorithm and case: found (A: item 0; B: exactly one / both of 0 and 1), the ranges of judgments
    and assessors, items reported per run, and the counts of :data:`PUBLISHED_TEXT` (``others_sd``: the
    standard deviation across runs of a run's other items)."""
    out = []
    for (name, case), g in df.groupby(["algorithm", "case"], sort=False):
        hits = g.best.map(lambda b: (0 in b) + (1 in b) if case == "B" else int(0 in b))
        others = g.best.map(len) - hits
        out.append(dict(algorithm=name, case=case, runs=len(g), one=int((hits == 1).sum()),
                        both=int((hits == 2).sum()),
                        judgments=_range(g.judgments), assessors=_range(g.assessors),
                        mean_reported=g.best.map(len).mean(), single=int((g.best.map(len) == 1).sum()),
                        others=int(others.sum()), others_sd=others.std(ddof=0),
                        others_both=int((others + (hits == 2)).sum()), others_both_sd=(others + (hits == 2)).std(ddof=0),
                        item1=int(g.best.map(lambda b: 1 in b).sum()), item2=int(g.best.map(lambda b: 2 in b).sum())))
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


PAPER = "Yan thesis, chapter 4 (Figure 4.1, sections 4.1-4.8)"
LEVEL = 0.01  # a count disagrees when a two-sided test against the published count (of 1,000 runs) rejects at this level
# the thesis's rows of Figure 4.1 (PARWiS (index order) is this study's variant of the same row)
THESIS = [name for name in PUBLISHED if name != "PARWiS (index order)"]
WHAT = {"single": "runs return exactly one item", "item1": "runs return item 1", "item2": "runs return item 2"}


def _share_test(ours: int, runs: int, published: int) -> tuple[str, bool]:
    """Two-proportion z-test of ``ours`` of ``runs`` against ``published`` of 1,000: (measured, agrees)."""
    from scipy.stats import norm

    pooled = (ours + published) / (runs + 1000)
    se = np.sqrt(pooled * (1 - pooled) * (1 / runs + 1 / 1000))
    p = 1.0 if se == 0 else float(2 * norm.sf(abs(ours / runs - published / 1000) / se))
    return f"{ours:,} of {runs:,} (p = {p:.2g})", p >= LEVEL


def _total_test(ours: int, sd: float, runs: int, published: int) -> tuple[str, bool]:
    """z-test of a total of items over ``runs`` (per-run sd ``sd``) against ``published`` over 1,000 runs, the
    published runs taken to vary as ours do: (measured, agrees)."""
    from scipy.stats import norm

    se = sd * np.sqrt(1 / runs + 1 / 1000)
    p = 1.0 if se == 0 else float(2 * norm.sf(abs(ours / runs - published / 1000) / se))
    return f"{ours:,} over {runs:,} runs (p = {p:.2g})", p >= LEVEL


def _figure_claims(s: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """Figure 4.1's counts: per algorithm, Case A's runs finding item 0 and Case B's finding one / both."""
    out = []
    for name, pub in PUBLISHED.items():
        for case, column, index, what in (("A", "one", 0, "find item 0 in Case A"),
                                          ("B", "one", 3, "find exactly one of items 0 and 1 in Case B"),
                                          ("B", "both", 4, "find both items 0 and 1 in Case B")):
            row = s[(s.algorithm == name) & (s.case == case)]
            if pub[index] is None or row.empty:
                continue
            measured, agrees = _share_test(int(row[column].iat[0]), int(row.runs.iat[0]), pub[index])
            out.append((f"{name}: {pub[index]} of 1,000 runs {what}", measured, agrees))
    return out


def _text_claims(s: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """The counts of the per-algorithm text (:data:`PUBLISHED_TEXT`)."""
    out = []
    for name, counts in PUBLISHED_TEXT.items():
        for (case, column), pub in counts.items():
            row = s[(s.algorithm == name) & (s.case == case)]
            if row.empty:
                continue
            r = row.iloc[0]
            if column == "others":
                best = "item 0" if case == "A" else "items 0 and 1"
                claim = f"{name}: {pub:,} items other than {best} returned over 1,000 runs in Case {case}"
                measured, agrees = _total_test(int(r.others), r.others_sd, int(r.runs), pub)
            elif column == "others_both":
                claim = (f"{name}: {pub:,} other items returned over 1,000 runs in Case {case} (the thesis's count: "
                         "items reported - runs with one of items 0 and 1 - runs with both)")
                measured, agrees = _total_test(int(r.others_both), r.others_both_sd, int(r.runs), pub)
            else:
                claim = f"{name}: {pub} of 1,000 {WHAT[column]} in Case {case}"
                measured, agrees = _share_test(int(r[column]), int(r.runs), pub)
            out.append((claim, measured, agrees))
    return out


def _discussion_claims(s: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """Section 4.5 and 4.8's comparisons, when every thesis row ran: the spread of Case A and Case B over
    the algorithms, SELECT against all and against Clarke et al., and the extra final phase's effect."""
    if not set(THESIS) <= set(s.algorithm):
        return []
    t = s[s.algorithm.isin(THESIS)].set_index(["algorithm", "case"])
    a = t.xs("A", level="case")
    b = t.xs("B", level="case")
    b_any = b.one + b.both
    out = []
    for counts, lo, hi, what in ((a.one, 108, 715, "Case A: between 10.8% and 71.5% of runs find the single winner"),
                                 (b_any, 639, 973, "Case B: between 63.9% and 97.3% of runs find at least one "
                                                   "of the two winners")):
        share = counts / t.runs.max()
        low, high = share.idxmin(), share.idxmax()
        (m_lo, ok_lo), (m_hi, ok_hi) = (_share_test(int(counts[n]), int(t.runs.max()), p)
                                        for n, p in ((low, lo), (high, hi)))
        out.append((f"{what} (the thesis's rows)", f"{share[low]:.1%} ({low}: {m_lo}) to {share[high]:.1%} "
                    f"({high}: {m_hi})", ok_lo and ok_hi))
    rest = a.one.drop("SELECT")
    out.append(("SELECT finds Case A's winner more often than every other algorithm (715 of 1,000)",
                f"SELECT {a.one['SELECT']:,}, next {rest.idxmax()} {rest.max():,}", bool(a.one["SELECT"] > rest.max())))
    clarke = ["Clarke et al.", "Clarke et al. (extra final phase)"]
    out.append(("SELECT finds the winner (Case A) or one of the winners (Case B) more often than Clarke et al.",
                f"Case A: SELECT {a.one['SELECT']:,}, Clarke et al. {' / '.join(f'{a.one[n]:,}' for n in clarke)}; "
                f"Case B: {b_any['SELECT']:,} against {' / '.join(f'{b_any[n]:,}' for n in clarke)} (without / "
                "with the extra phase)", bool(a.one["SELECT"] > a.one[clarke].max() and
                                              b_any["SELECT"] > b_any[clarke].max())))
    plain, extra = t.loc[clarke[0]], t.loc[clarke[1]]
    out.append(("Clarke et al.: with the extra final phase there are fewer ties and incorrect results",
                "items reported per run " + ", ".join(f"Case {c} {plain.mean_reported[c]:.3f} -> "
                                                      f"{extra.mean_reported[c]:.3f}" for c in "AB")
                + "; other items " + ", ".join(f"{plain.others[c]:,} -> {extra.others[c]:,}" for c in "AB"),
                bool((extra.mean_reported < plain.mean_reported).all() and (extra.others < plain.others).all())))
    return out


def claim_rows(s: pd.DataFrame) -> list[Claim]:
    """Chapter 4's claims beside this run's (rows of ``claims.csv``), from :func:`summarize`'s table: Figure
    4.1's counts per algorithm, the per-algorithm text's counts (:data:`PUBLISHED_TEXT`) and, when every thesis
    row ran, the discussion's comparisons. A count agrees unless a two-sided test of this run's share (or
    items per run) against the published one of 1,000 runs rejects at :data:`LEVEL`."""
    triples = _figure_claims(s) + _text_claims(s) + _discussion_claims(s)
    runs = int(s.runs.max()) if len(s) else 0
    return rows("judging-study", PAPER, triples, f"{runs:,} runs per algorithm and case (paper: 1,000)")


def plot(s: pd.DataFrame, path: str | Path) -> Path:
    """Per algorithm, the share of runs finding Case A's winner and one / both of Case B's winners: this run's
    bars beside the published ones (Figure 4.1), the algorithms beyond the thesis below without."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(figure_4_1(s).algorithm)
    y = np.arange(len(names))
    fig, axes = plt.subplots(1, 2, figsize=(12, 0.42 * len(names) + 1.8), sharey=True)
    for ax, case in zip(axes, "AB"):
        part = s[s.case == case].set_index("algorithm").reindex(names)
        pub = pd.DataFrame([PUBLISHED.get(n, (None,) * 7) for n in names], index=names).iloc[:, [0, 3, 4]]
        pub.columns = ["one_a", "one", "both"]
        ours = [part.one / part.runs, part.both / part.runs] if case == "B" else [part.one / part.runs]
        theirs = [pub.one / 1000, pub.both / 1000] if case == "B" else [pub.one_a / 1000]
        labels = ["one winner", "both winners"] if case == "B" else ["the winner"]
        for offset, values, alpha, who in ((-0.2, ours, 1.0, "this run"), (0.2, theirs, 0.4, "published")):
            left = np.zeros(len(names))
            for k, (v, label) in enumerate(zip(values, labels)):
                v = v.astype(float).fillna(0).to_numpy()
                ax.barh(y + offset, v, height=0.38, left=left, color=f"C{k}", alpha=alpha,
                        label=f"{label}, {who}")
                left += v
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of runs")
        ax.set_title(f"Case {case}: runs finding " + ("one / both winners (items 0, 1)" if case == "B"
                                                     else "the winner (item 0)"), fontsize="medium")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.07), ncol=2)
    axes[0].set_yticks(y, [n + ("" if n in PUBLISHED else " *") for n in names], fontsize="small")
    axes[0].invert_yaxis()
    runs = int(s.runs.max())
    fig.suptitle(f"Yan thesis Figure 4.1: {runs:,} runs per algorithm and case (dark) beside the published "
                 "1,000 (light); * beyond the thesis", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return Path(path)
