"""Losada, Parapar & Barreiro, "Feeling Lucky? Multi-armed Bandits for Ordering Judgements in
Pooling-based Evaluation" (SAC 2016, seed 003): every adjudication method on the 63 TREC 2021 DL
passage runs, and the paper's claims checked one by one.

The paper pools the runs of TREC 5-8 (ad hoc) to depth 100, judges each topic's pool in the order a
method chooses, reading relevance from the official qrels, and reports the mean over topics of the
relevant documents found after n judgments (Figure 1, Tables 2 and 3; a topic whose pool is smaller
than n counts with all its relevant documents). This study does the same with the thirteen methods of
:mod:`irbandits.pooling` (DocID, Rank, MoffatA/B/C, MTF, Random, eps-greedy, UCB1-Tuned, BLA, MM, BLA-NS,
MM-NS; the paper's parameters: eps-greedy c = 0.01, d = 0.1, RBP p = 0.8, non-stationary rate 0) and
``MM-NS:rate=0.5`` (MM-NS keeping half the older evidence) for the paper's choice of rate (section 3.3), through
:func:`~irbandits.pooling.simulate.simulate_pools`.

Where DL-2021 differs from the paper's collections (Table 1 there):

* depth 100 (the paper's depth, and the depth of the runs here): 1,068 pooled documents per topic
  (548-1,913; TREC 5-8: 1,445-2,674), but the official qrels judge only about the depth-10 pool, so
  47,492 of the 56,630 pooled documents (84 %) have no judgment and count as non-relevant. The paper's
  pools were judged whole. The relevant documents the methods can find are those the depth-10 pooling
  (and NIST's extra judging) found, which favours methods that judge the top ranks first.
* depth 10 (the pool the qrels judge whole, but for 84 documents): 140.5 documents per topic, 54 % of
  them relevant (TREC 5-8: 4-6 %), so every method finds relevant documents at almost every step and
  the judgment levels shrink to 10-100.
* relevance is graded (0-3); grade >= 1 counts as relevant (``relevant_grade``), the TREC DL convention
  for binary measures. There are 63 automatic runs (TREC 5-8: 31-101, up to 24 manual) and 53 topics.

``judged_only`` keeps only the documents the qrels judge in every run and pool (each run condensed to
its judged documents, ranks closed up), so every pool is judged whole, as the paper's were; a depth-100
pool then holds 172.4 documents per topic (80-266), so its claims are checked at a tenth of the paper's
levels (:data:`JUDGED_LEVELS`), the same share of a TREC8 pool (1,736.6 documents per topic).

``runs_sample`` and ``one_per_team`` pool a subset of the runs (:func:`select_runs`). :func:`paired` tests
the method pairs of the near-tie claims (:data:`PAIRS`) topic by topic at each claim level.

Claims are checked at the paper's judgment levels 100, 300, ..., 1100 at depth 100 (and 10, 20, 50, 100
at depth 10, given beside): "consistently" / "clearly" as "at every level", a plain "is the best" /
"outperforms" as "at most levels" (more than half), as Tables 2 and 3 themselves are not uniform. The
verdict is the depth-100 one.

>>> r = run_study(depths=(10,), topics=2, repetitions=2, methods=("DocID", "MM-NS"))
>>> sorted(r.curves.method.unique()), r.pools.depth.tolist()
(['DocID', 'MM-NS'], [10])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.studies.claims import Claim
from irbandits.studies.claims import claim_rows as rows

METHODS = (
    "DocID",
    "Rank",
    "MoffatA",
    "MoffatB",
    "MoffatC",
    "MTF",
    "Random",
    "eps-greedy",
    "UCB1-Tuned",
    "BLA",
    "MM",
    "BLA-NS",
    "MM-NS",
    "MM-NS:rate=0.5",
)
BASELINES = ("DocID", "Rank", "MoffatA", "MoffatB", "MoffatC", "MTF")  # section 3.1, Figure 1
TABLE2 = ("MTF", "BLA", "MM", "Random", "UCB1-Tuned", "eps-greedy")  # section 3.2, Table 2
TABLE3 = ("MTF", "BLA", "BLA-NS", "MM", "MM-NS")  # section 3.3, Table 3
DEPTHS = (100, 10)
LEVELS = {100: (100, 300, 500, 700, 900, 1100), 10: (10, 20, 50, 100)}  # judgments at which claims are checked
JUDGED_LEVELS = {100: (10, 30, 50, 70, 90, 110), 10: LEVELS[10]}  # the levels of judged-only pools
PAPER_LEVELS = (100, 300, 500, 700, 900, 1100, 2000)
RANK_MEASURES = ("nDCG@10", "AP")  # the run rankings compared under partial and full qrels
RANK_BUDGETS = (25, 50, 100)  # judgments per topic at which they are compared
# the near-tie claims' pairs, tested topic by topic (:func:`paired`)
PAIRS = (("eps-greedy", "BLA"), ("eps-greedy", "UCB1-Tuned"), ("MM", "UCB1-Tuned"), ("MM", "eps-greedy"),
         ("MoffatC", "MTF"), ("MoffatC", "MM"))
PAPER = "Losada, Parapar & Barreiro, SAC 2016 (seed 003), sections 3.1-4, Figure 1, Tables 2-3"
# Table 2 and 3 of the paper, TREC8 (Figure 1 shows TREC8 too): relevant found after 100 ... 2000 judgments
TREC8 = {
    "MTF": (34.06, 58.48, 71.78, 79.22, 84.5, 87.58, 93.22),
    "BLA": (27.14, 50.42, 64.9, 73.96, 80.36, 84.96, 93.36),
    "MM": (34.4, 59.34, 72.9, 80.82, 85.56, 88.8, 93.54),
    "Random": (26.94, 50.58, 63.9, 72.58, 79.28, 83.48, 92.58),
    "UCB1-Tuned": (29.86, 52.9, 65.92, 74.06, 80.52, 85.12, 93.4),
    "eps-greedy": (28.16, 53.66, 66.76, 74.88, 80.6, 84.88, 93.2),
    "BLA-NS": (27.12, 49.5, 63.68, 72.06, 77.56, 82.54, 92.42),
    "MM-NS": (36.96, 64.62, 77.3, 82.5, 86.34, 89.2, 93.6),
}


def claim_levels(depth: int, judged_only: bool = False) -> list[int]:
    """The judgment levels at which the claims are checked at ``depth`` (:data:`LEVELS`, :data:`JUDGED_LEVELS`)."""
    return list((JUDGED_LEVELS if judged_only else LEVELS).get(depth, PAPER_LEVELS[:6]))


@dataclass
class Result:
    """``curves``: depth, method, judgments (1 .. the largest pool), found (mean over topics of the mean
    over repetitions; a topic past its pool counts with all its relevant documents). ``pools``: per depth,
    topics, runs, the pool sizes, unjudged and relevant documents, ``relevant_share`` (mean over topics of
    the relevant share of the pool) and ``runs_per_doc`` (mean over topics of the runs that retrieved a
    pooled document). ``repetitions`` of the random methods; ``judged_only``, ``relevant_grade`` and
    ``subset`` (the runs pooled, in words; empty: all) as :func:`run_study` was given them. ``per_topic``:
    depth, method, topic, judgments (the claim levels), found (mean over repetitions). ``ranking``: depth, method,
    budget (judgments per topic), measure, tau, tau_ap, flips, pairs, repetitions: how each method's partial
    qrels rank the runs against the pool's full qrels (:func:`irbandits.pooling.ranking.rank_runs`)."""

    curves: pd.DataFrame
    pools: pd.DataFrame
    repetitions: int
    judged_only: bool = False
    relevant_grade: float = 1
    per_topic: pd.DataFrame | None = None
    subset: str = ""
    ranking: pd.DataFrame | None = None

    @property
    def levels(self) -> dict:
        """The judgment levels at which the claims are checked, per depth."""
        return JUDGED_LEVELS if self.judged_only else LEVELS

    def claim_levels(self, depth: int) -> list[int]:
        """The judgment levels at which the claims are checked at ``depth``."""
        return claim_levels(depth, self.judged_only)

    def found(self, depth: int, at) -> pd.DataFrame:
        """Methods (rows) by judgment counts ``at`` (columns) at ``depth``."""
        c = self.curves[self.curves.depth == depth]
        top = c.judgments.max()
        wide = c.pivot(index="method", columns="judgments", values="found")
        wide = wide.loc[[m for m in dict.fromkeys(c.method)]]
        return pd.DataFrame({n: wide[min(n, top)] for n in at}, index=wide.index)


def judged_documents(pool, qrels: pd.DataFrame):
    """``pool`` with only the documents the qrels judge for its topic: each run keeps its judged documents
    in rank order, ranks closed up (a run left with none is exhausted from the start)."""
    from irbandits.pooling.pools import TopicPool

    keep = np.isin(pool.docnos, qrels.docno[qrels.topic == pool.topic].to_numpy())
    index = np.cumsum(keep) - 1
    ranked = np.full(pool.ranked.shape, -1, np.int64)
    for r, row in enumerate(pool.ranked):
        docs = row[row >= 0]
        docs = index[docs[keep[docs]]]
        ranked[r, : len(docs)] = docs
    return TopicPool(pool.topic, pool.docnos[keep], pool.runs, ranked)


def team(run: str) -> str:
    """The group of a DL-2021 run by its name (the run files name no team): the prefix before the first
    ``_`` or ``-``, or uog, wat, WLU, yorku for the runs named without one. 17 groups of the 63 runs."""
    for prefix in ("uog", "wat", "WLU", "yorku"):
        if run.startswith(prefix):
            return prefix
    return re.split("[_-]", run)[0]


def select_runs(names, sample: int | None = None, one_per_team: bool = False, seed: int = 0) -> list[str]:
    """Runs of ``names`` drawn with ``default_rng(seed)``: one per :func:`team` (``one_per_team``), in team
    order, then ``sample`` of those at random; all of them in name order when neither is given."""
    from irbandits.errors import IrbanditsError

    rng = np.random.default_rng(seed)
    names = sorted(set(names))
    if one_per_team:
        teams: dict[str, list[str]] = {}
        for name in names:
            teams.setdefault(team(name), []).append(name)
        names = sorted(str(rng.choice(group)) for _, group in sorted(teams.items()))
    if sample is not None:
        if not 1 <= sample <= len(names):
            raise IrbanditsError(f"cannot draw {sample} of {len(names)} runs")
        names = sorted(str(n) for n in rng.choice(names, sample, replace=False))
    return names


def topic_pools(runs: pd.DataFrame, qrels: pd.DataFrame, depth: int, topics: int | None = None,
                judged_only: bool = False) -> dict:
    """The depth-``depth`` pools of the first ``topics`` judged topics (:func:`judged_documents` of each
    with ``judged_only``)."""
    from irbandits.pooling import depth_pools
    from irbandits.pooling.pools import judged_pools

    pools = judged_pools(depth_pools(runs, depth), qrels)
    pools = {t: pools[t] for t in sorted(pools)[:topics]}
    return {t: judged_documents(p, qrels) for t, p in pools.items()} if judged_only else pools


def run_study(
    depths=DEPTHS,
    repetitions: int = 100,
    seed: int = 0,
    topics: int | None = None,
    methods=METHODS,
    relevant_grade: float = 1,
    judged_only: bool = False,
    data: str | Path = "../shared/data/trec-dl-2021-passage",
    runs_sample: int | None = None,
    one_per_team: bool = False,
    runs_seed: int = 0,
    rank_measures=(),
    rank_budgets=RANK_BUDGETS,
    rank_repetitions: int = 10,
    rank_split: str | None = "global",
) -> Result:
    """Every method of ``methods`` on the depth-k pools of the DL-2021 runs for each k of ``depths``
    (``topics``: only the first that many judged topics in topic order; ``judged_only``: only the judged
    documents, :func:`judged_documents`; ``runs_sample``, ``one_per_team``, ``runs_seed``: only the runs
    :func:`select_runs` draws), grade >= ``relevant_grade`` relevant, ``repetitions`` seeded repetitions
    of each random method (paired across methods, :func:`simulate_pools`). With ``rank_measures`` (e.g.
    :data:`RANK_MEASURES`; ten minutes on two busy cores at both depths) the runs are then scored with each
    method's partial qrels after ``rank_budgets`` judgments per topic with each measure, the random
    methods' first ``rank_repetitions`` repetitions, against the full qrels of the pool
    (:func:`irbandits.pooling.ranking.rank_runs`), as the follow-up paper asks whether the bandits' cheaper
    qrels still rank the systems right; with ``rank_split`` (a split of :mod:`irbandits.pooling.budget`) the
    same budgets spent over all topics by that split too, as rows of split ``rank_split``."""
    from irbandits.io import read_qrels, read_runs
    from irbandits.pooling.ranking import rank_runs
    from irbandits.pooling.simulate import found_at, simulate_pools

    data = Path(data)
    runs, qrels = read_runs(data / "runs"), read_qrels(data / "qrels.txt")
    subset = ""
    if runs_sample is not None or one_per_team:
        names = select_runs(runs.run.unique(), runs_sample, one_per_team, runs_seed)
        subset = (f"{len(names)} of the {runs.run.nunique()} runs" + (" (one per team)" if one_per_team else "")
                  + f" drawn with seed {runs_seed}")
        runs = runs[runs.run.isin(names)]
    curves, stats, per_topic, ranking = [], [], [], []
    for depth in depths:
        pools = topic_pools(runs, qrels, depth, topics, judged_only)
        relevance = {t: p.relevance(qrels, relevant_grade) for t, p in pools.items()}
        sizes = np.array([p.size for p in pools.values()])
        stats.append(
            dict(
                depth=depth,
                topics=len(pools),
                runs=len(next(iter(pools.values())).runs),
                mean_size=sizes.mean(),
                min_size=sizes.min(),
                max_size=sizes.max(),
                pooled=sizes.sum(),
                unjudged=sum(p.unjudged(qrels) for p in pools.values()),
                relevant=sum(int(r.sum()) for r in relevance.values()),
                relevant_share=np.mean([r.mean() for r in relevance.values()]),
                runs_per_doc=np.mean([np.diff(p.doc_ptr).mean() for p in pools.values()]),
            )
        )
        grid = list(range(1, sizes.max() + 1))
        at = claim_levels(depth, judged_only)
        for method in methods:  # one method at a time: the curves of 100 repetitions are large
            orders: dict | None = {} if rank_measures else None
            sim = simulate_pools(pools, relevance, [method], repetitions=repetitions, seed=seed, orders=orders,
                                 keep_orders=rank_repetitions)
            if rank_measures:
                scored = runs[runs.topic.isin(list(pools))]
                ranking.append(rank_runs(pools, orders, scored, qrels, rank_measures, rank_budgets)
                               .assign(depth=depth, split="per-topic"))
                if rank_split:
                    ranking.append(rank_runs(pools, orders, scored, qrels, rank_measures, rank_budgets,
                                             allocate=_allocation(pools, relevance, rank_split, seed))
                                   .assign(depth=depth, split=rank_split))
            mean = found_at(sim, grid).drop(columns="all").iloc[0].to_numpy()
            curves.append(pd.DataFrame(dict(depth=depth, method=method, judgments=grid, found=mean)))
            for topic, c in sim.groupby("topic", sort=True):
                found = found_at(c, at).iloc[0, :-1].to_numpy()
                per_topic.append(pd.DataFrame(dict(depth=depth, method=method, topic=topic, judgments=at, found=found)))
    ranked = pd.concat(ranking, ignore_index=True) if ranking else None
    if ranked is not None:
        ranked = ranked[["depth", "split", *[c for c in ranked.columns if c not in ("depth", "split")]]]
    return Result(pd.concat(curves, ignore_index=True), pd.DataFrame(stats), repetitions, judged_only, relevant_grade,
                  pd.concat(per_topic, ignore_index=True), subset, ranked)


def _allocation(pools: dict, relevance: dict, split: str, seed: int):
    """``allocate(method, budget, repetition)`` of :func:`~irbandits.pooling.ranking.rank_runs`: the judgments
    per topic when ``budget`` times the topics are spent by ``split`` over all topics (the within-topic methods
    seeded as the simulation seeds them, so their orders are the simulation's)."""
    from irbandits.pooling.budget import walk_global

    topics = sorted(pools)

    def allocate(method: str, budget: int, repetition: int) -> dict[str, int]:
        chosen, _ = walk_global(method, pools, relevance, budget=budget * len(topics), split=split, seed=seed,
                                repetition=repetition)
        return dict(zip(topics, np.bincount(chosen, minlength=len(topics)).tolist()))

    return allocate


def tau_table(result: Result, depth: int, measure: str, column: str = "tau") -> pd.DataFrame:
    """Methods (rows; a split over topics other than per-topic as ``METHOD + SPLIT``) by judgments per topic
    (columns): ``column`` (tau, tau_ap, flips) of ``measure`` at ``depth``."""
    r = result.ranking
    if r is None:
        raise ValueError("the study ran without rank_measures")
    r = r[(r.depth == depth) & (r.measure == measure)]
    label = r.method.where(r.split == "per-topic", r.method + " + " + r.split)
    r = r.assign(method=label)
    wide = r.pivot(index="method", columns="budget", values=column)
    return wide.loc[list(dict.fromkeys(r.method))]


def paired(result: Result, depth: int) -> pd.DataFrame:
    """Each pair of :data:`PAIRS` at each claim level at ``depth``: the means over topics and the p-value
    of the two-sided Wilcoxon signed-rank test over topics of the per-topic means (1 where the two methods
    never differ). Columns depth, a, b, level, mean_a, mean_b, p."""
    from scipy.stats import wilcoxon

    t = result.per_topic[result.per_topic.depth == depth]
    wide = t.pivot(index=["judgments", "topic"], columns="method", values="found")
    out = []
    for a, b in PAIRS:
        if a not in wide or b not in wide:
            continue
        for n in result.claim_levels(depth):
            x, y = wide.loc[n, a].to_numpy(), wide.loc[n, b].to_numpy()
            p = wilcoxon(x, y).pvalue if np.any(x != y) else 1.0
            out.append(dict(depth=depth, a=a, b=b, level=n, mean_a=x.mean(), mean_b=y.mean(), p=p))
    return pd.DataFrame(out, columns=["depth", "a", "b", "level", "mean_a", "mean_b", "p"])


# ----- the claims ------------------------------------------------------------------------------------
def _wins(t: pd.DataFrame, a: str, others) -> int:
    """Levels (columns of ``t``) at which ``a`` finds at least as many as every one of ``others``."""
    return int((t.loc[a] >= t.loc[list(others)].max()).sum())


def _checks(t: pd.DataFrame) -> list[tuple[str, bool]]:
    """(measured, holds) of every claim on one depth's table ``t`` (methods by the claim levels)."""
    n = t.shape[1]
    first = t.columns[0]
    most = n // 2 + 1  # "at most levels": more than half

    def at(m):
        return f"{m} {t.loc[m, first]:.2f}"

    def fmt(k, *names):
        return f"{k} of {n} levels (after {first}: " + ", ".join(at(m) for m in names) + ")"

    def best(names, but=()):
        return max((m for m in names if m not in but and m in t.index), key=lambda m: t.loc[m, first])

    out = []
    others = [m for m in BASELINES if m != "MTF"]
    k = _wins(t, "MTF", others)
    out.append((fmt(k, "MTF", best(others)), k == n))
    k = int((t.loc["DocID"] <= t.loc[[m for m in BASELINES if m != "DocID"]].min()).sum())
    worst = min(others[1:], key=lambda m: t.loc[m, first])
    out.append((fmt(k, "DocID", worst), k >= most))
    k = _wins(t, "MoffatC", ("MoffatA", "MoffatB"))
    out.append((fmt(k, "MoffatC", "MoffatA", "MoffatB"), k >= most))
    k = int((t.loc["Random"] <= t.loc[[m for m in TABLE2 if m != "Random"]].min()).sum())
    worst = min((m for m in TABLE2 if m != "Random"), key=lambda m: t.loc[m, first])
    out.append((fmt(k, "Random", worst), k >= most))
    top = best(TABLE2)
    share = t.loc["Random", first] / t.loc[top, first]
    out.append(
        (
            f"Random finds {100 * share:.0f} % of the best Table 2 method's count after {first} judgments "
            f"({at('Random')}, {at(top)})",
            bool(share >= 0.75),
        )
    )
    k = _wins(t, "eps-greedy", ("BLA", "UCB1-Tuned"))
    out.append((fmt(k, "eps-greedy", "BLA", "UCB1-Tuned"), k >= most))
    rest = [m for m in TABLE2 if m not in ("MM", "MTF")]
    k = int((t.loc[["MM", "MTF"]].min() >= t.loc[rest].max()).sum())
    out.append((fmt(k, "MM", "MTF", best(rest)), k >= most))
    k = _wins(t, "MM", ("MTF",))
    out.append((fmt(k, "MM", "MTF"), k >= most))
    k = _wins(t, "MM", ("UCB1-Tuned", "eps-greedy"))
    out.append((fmt(k, "MM", "UCB1-Tuned", "eps-greedy"), k >= most))
    k = _wins(t, "MM-NS", [m for m in TABLE3 if m != "MM-NS"])
    out.append((fmt(k, "MM-NS", best(TABLE3, ("MM-NS",))), k >= most))
    k = _wins(t, "MM-NS", ("MTF",))
    out.append((fmt(k, "MM-NS", "MTF"), k >= most))
    early = list(t.columns[:2])
    k = int((t.loc["MM-NS", early] > t.loc["MM", early]).sum())
    said = ", ".join(f"{c}: MM-NS {t.loc['MM-NS', c]:.2f}, MM {t.loc['MM', c]:.2f}" for c in early)
    out.append((f"{k} of the 2 first levels ({said})", k == 2))
    rates = [m for m in ("MM-NS", "MM-NS:rate=0.5", "MM") if m in t.index]
    k = _wins(t, "MM-NS", rates[1:])
    out.append((fmt(k, *rates), k >= most))
    bandits = [m for m in ("Random", "eps-greedy", "UCB1-Tuned", "BLA", "MM", "BLA-NS", "MM-NS") if m in t.index]
    k = int((t.loc[bandits].max() >= t.loc[list(BASELINES)].max()).sum())
    out.append((fmt(k, best(bandits), best(BASELINES)), k >= most))
    moffat = best(("MoffatA", "MoffatB", "MoffatC"))
    lead = best(("MTF", *bandits))
    out.append(
        (
            f"after {first} judgments: best Moffat {at(moffat)}, best of MTF and the bandits {at(lead)}",
            bool(t.loc[moffat, first] < t.loc[lead, first]),
        )
    )
    return out


CLAIMS = (
    "MTF is a clear winner among the baselines, consistently superior to DocID, Rank and Moffat's A, B, C "
    "(section 3.1, Figure 1)",
    "judging in DocID order is the worst of the baselines (section 3.1, Figure 1)",
    "Moffat et al.'s method C is superior to A and B (section 3.1, Figure 1)",
    "Random is the worst of the Table 2 strategies (section 3.2, Table 2)",
    "Random's counts are not disproportionately low (section 3.2; checked as: at least 75 % of the best "
    "Table 2 method at the first level)",
    "eps_n-greedy looks slightly superior to BLA and UCB (section 3.2, Table 2)",
    "MM and MTF are the best performing methods of Table 2 (section 3.2)",
    "MM outperforms MTF (3 of 4 collections; section 3.2, Table 2)",
    "exploiting (MM) beats the exploring UCB1-Tuned and eps_n-greedy (section 4)",
    "in nearly all cases MM-NS is the best of MTF, BLA, BLA-NS, MM, MM-NS (section 3.3, Table 3)",
    "MM-NS is superior to MTF (sections 3.3 and 4, Table 3)",
    "MM-NS finds more relevant documents early than MM (section 4, Table 3)",
    "rate = 0 is the best rate of the Bayesian bandits (section 3.3; MM with rate 0, 0.5, 1)",
    "simple bandit models are superior to all previous adjudication strategies, MTF included (abstract, section 1)",
    "methods aggregating evidence from all rankings (Moffat's) are not optimal at finding relevant "
    "documents early (section 4)",
)


def claim_rows(result: Result) -> list[Claim]:
    """The paper's claims method by method, each checked at depth 100 (the verdict) and depth 10 (in the
    measured text), at the levels of :data:`LEVELS`."""
    depths = list(result.pools.depth)
    checks = {d: _checks(result.found(d, result.claim_levels(d))) for d in depths}
    main = 100 if 100 in depths else depths[0]
    triples = []
    for i, claim in enumerate(CLAIMS):
        measured, holds = checks[main][i]
        text = f"depth {main}: {measured}"
        for d in depths:
            if d != main:
                text += f"; depth {d}: {'holds' if checks[d][i][1] else 'fails'}, {checks[d][i][0]}"
        triples.append((claim, text, holds))
    p = result.pools.set_index("depth")
    about = ", ".join(f"depth {d}: {p.loc[d, 'topics']} topics x {p.loc[d, 'runs']} runs" for d in depths)
    if result.judged_only:
        about += ", judged documents only"
    if result.subset:
        about += f", {result.subset}"
    if result.relevant_grade != 1:
        about += f", relevant: grade >= {result.relevant_grade:g}"
    return rows(
        "pooling-losada",
        PAPER,
        triples,
        f"{about}; {result.repetitions} repetitions of the random methods (paper: depth 100, 50 topics "
        "x 31-101 runs, TREC 5-8)",
    )


def table(result: Result, depth: int) -> pd.DataFrame:
    """The paper's Tables 2 and 3 at ``depth``: mean relevant found after the paper's judgment levels
    (depth 100) or 10, 20, 50, 100 (depth 10; judged-only pools: :data:`JUDGED_LEVELS`), and ``all``."""
    if result.judged_only:
        at = list(JUDGED_LEVELS.get(depth, LEVELS[10]))
    else:
        at = list(PAPER_LEVELS) if depth >= 100 else list(LEVELS[10])
    t = result.found(depth, at)
    t.columns = [str(n) for n in at]
    t["all"] = result.found(depth, [10**9]).iloc[:, 0]
    return t


def plot(result: Result, path: str | Path) -> Path:
    """One row per depth: the baselines of Figure 1 (relevant found against judgments), then the Table 2
    methods' and the Table 3 methods' gain over Random."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from irbandits.plots import style

    depths = list(result.pools.depth)
    methods = list(dict.fromkeys(result.curves.method))
    styles = {m: style(k) for k, m in enumerate(methods)}
    fig, axes = plt.subplots(len(depths), 3, figsize=(16, 4.6 * len(depths)), squeeze=False)
    for row, depth in zip(axes, depths):
        c = result.curves[result.curves.depth == depth]
        stop = min(1100, c.judgments.max()) if depth >= 100 else c.judgments.max()
        c = c[c.judgments <= stop]
        wide = c.pivot(index="judgments", columns="method", values="found")
        base = wide["Random"] if "Random" in wide else wide[methods[0]]
        panels = [
            ("Figure 1: the baselines", BASELINES, False),
            ("Table 2: bandits and MTF, minus Random", TABLE2, True),
            ("Table 3: non-stationary bandits, minus Random", TABLE3 + ("MM-NS:rate=0.5",), True),
        ]
        for ax, (title, members, gain) in zip(row, panels):
            for m in members:
                if m in wide:
                    ax.plot(wide.index, wide[m] - base if gain else wide[m], label=m, lw=1.5, **styles[m])
            if gain:
                ax.axhline(0, color="black", lw=0.6)
            ax.set_title(f"depth {depth}: {title}", fontsize="medium")
            ax.set_xlabel("judgments per topic")
            ax.set_ylabel("found minus Random's" if gain else "relevant found (mean over topics)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="small")
    p = result.pools.set_index("depth")
    fig.suptitle(
        f"Losada et al. (SAC 2016) on the {p.runs.iloc[0]} TREC 2021 DL passage runs, "
        f"{p.topics.iloc[0]} topics; random methods: mean of {result.repetitions} repetitions",
        fontsize="medium",
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)
