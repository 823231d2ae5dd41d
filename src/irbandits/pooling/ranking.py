"""Do the partial qrels of a pooling method still rank the runs right?

After ``n`` judgments per topic, a method's partial qrels hold the first ``n`` documents it judged on each
topic (those the qrels judge, with their grades; every other document is unjudged). :func:`rank_runs`
scores the runs with them through ir-measures (unjudged = non-relevant, or condensed lists) and compares
the ranking of the runs with the one under the full qrels of the pool (every pooled document judged, as
after the whole pool) by Kendall's tau, tau-ap and the flipped significant pairs
(:mod:`irbandits.measures.agreement`). Losada, Parapar & Barreiro (IP&M 2017, "Multi-armed bandits for
adjudicating documents in pooling-based evaluation of information retrieval systems") report the same
for their methods: the bandits keep tau high with fewer judgments.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> from irbandits.pooling.simulate import simulate_pools
>>> runs = pd.DataFrame(dict(run=list("xxyy"), topic="1", docno=list("abca"), rank=[1, 2, 1, 2]))
>>> qrels = pd.DataFrame(dict(topic="1", docno=["a", "c"], grade=[1, 0]))
>>> pools = depth_pools(runs, 2)
>>> orders = {}
>>> _ = simulate_pools(pools, {"1": pools["1"].relevance(qrels)}, ["DocID"], orders=orders)
>>> rank_runs(pools, orders, runs, qrels, ["P@1"], [1, 3])[["method", "budget", "tau"]].values.tolist()
[['DocID', 1, 1.0], ['DocID', 3, 1.0]]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.measures.agreement import RunScorer, agreement
from irbandits.pooling.pools import TopicPool

DEFAULT_MEASURES = ("nDCG@10", "P@10", "AP")


def measure_list(texts) -> list[str]:
    """The measures of ``--rank-runs`` values (repeated, or comma lists; ``default``: nDCG@10, P@10, AP).

    >>> measure_list(["ndcg_cut_10,AP", "default"])
    ['ndcg_cut_10', 'AP', 'nDCG@10', 'P@10']
    """
    from irbandits.measures.standard import parse

    out: list[str] = []
    for text in texts or ():
        for name in (n.strip() for n in str(text).split(",")):
            for m in (DEFAULT_MEASURES if name == "default" else (name,) if name else ()):
                found = parse(m)
                if not found or len(found) != 1:
                    raise IrbanditsError(f"--rank-runs {m!r}: not one measure ir-measures knows (nDCG@10, P@10, "
                                         "AP, ndcg_cut_10, map, bpref, ...)")
                if m not in out:
                    out.append(m)
    return out


def pool_grades(pools: dict[str, TopicPool], qrels: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per topic, the qrels grade of every pooled document (NaN: unjudged)."""
    out = {}
    for topic, pool in pools.items():
        q = qrels[qrels.topic == topic]
        grade = pd.Series(q.grade.to_numpy(float), index=q.docno.to_numpy())
        out[topic] = grade.reindex(pool.docnos).to_numpy(float)
    return out


def _qrels(pools, grades, order_of, budget) -> dict[str, dict[str, int]]:
    """Topic -> docno -> grade of the first ``budget`` documents (a number, or a dict topic -> number) of
    each topic's judging order."""
    out = {}
    for topic, pool in pools.items():
        docs = order_of(topic)[:budget if isinstance(budget, (int, np.integer)) else budget.get(topic, 0)]
        g = grades[topic][docs]
        judged = ~np.isnan(g)
        out[topic] = dict(zip(pool.docnos[docs[judged]].tolist(), g[judged].astype(int).tolist()))
    return out


def rank_runs(pools: dict[str, TopicPool], orders: dict, runs: pd.DataFrame, qrels: pd.DataFrame,
              measures=DEFAULT_MEASURES, budgets=(25, 50, 100), alpha: float = 0.05,
              condensed: bool = False, allocate=None) -> pd.DataFrame:
    """Agreement of every method's partial qrels with the pool's full qrels, at every budget.

    Parameters
    ----------
    pools, orders
        The pools and the judging orders :func:`~irbandits.pooling.simulate.simulate_pools` filled
        (``orders[(method, topic)]``: repetitions x pool size).
    runs, qrels
        The runs (each run's top documents to the measures' deepest cutoff, :meth:`RunScorer.depth`) and
        the qrels; only the pooled documents' judgments count, so a budget of the largest pool gives the
        full qrels and tau 1.
    measures
        ir-measures names (``nDCG@10``, ``P@10``, ``AP``, ``ndcg_cut_10``, ``bpref``, ...).
    budgets
        Judgments per topic (a topic whose pool is smaller is judged whole).
    alpha
        Level of the two-sided paired t-test over topics that decides which run pairs the full qrels separate.
    condensed
        Score condensed lists (unjudged documents dropped from the runs) instead of unjudged = non-relevant;
        the full qrels are scored the ordinary way.
    allocate
        ``allocate(method, budget, repetition)`` -> dict topic -> judgments: how a budget of ``budget`` per
        topic is spent over the topics (e.g. by a bandit over topics); default ``budget`` on every topic.
        Each topic's judgments are the first of its judging order in ``orders``.

    Returns
    -------
    Columns ``method, budget, measure, tau, tau_ap, flips, pairs, repetitions``: the means over the
    repetitions whose orders were kept; ``pairs`` the run pairs the full qrels separate.
    """
    if not 0 < alpha < 1:
        raise IrbanditsError(f"alpha must be in (0, 1), got {alpha}")
    budgets = sorted({int(b) for b in budgets})
    if not budgets or budgets[0] < 1:
        raise IrbanditsError(f"budgets must be at least 1 judgment per topic, got {budgets}")
    if not pd.api.types.is_integer_dtype(qrels["grade"]):
        raise IrbanditsError("ranking runs with ir-measures needs whole-number qrels grades")
    topics = sorted(pools)
    measures = list(measures)
    scorer = RunScorer(runs, measures, topics)
    grades = pool_grades(pools, qrels)
    size = max(p.size for p in pools.values())
    reference = scorer.score([_qrels(pools, grades, lambda t: np.arange(pools[t].size), size)])[0]
    methods = list(dict.fromkeys(method for method, _ in orders))
    rows = []
    for method in methods:
        kept = len(orders[(method, topics[0])])
        for budget in budgets:
            sets = [_qrels(pools, grades, lambda t, r=r: orders[(method, t)][r],
                           budget if allocate is None else allocate(method, budget, r)) for r in range(kept)]
            scores = scorer.score(sets, condensed=condensed)
            for m, name in enumerate(measures):
                agree = pd.DataFrame([agreement(reference[m], scores[r, m], alpha) for r in range(kept)])
                rows.append(dict(method=method, budget=budget, measure=name, **agree.mean().to_dict(),
                                 repetitions=kept))
    table = pd.DataFrame(rows, columns=["method", "budget", "measure", "tau", "tau_ap", "flips", "pairs",
                                        "repetitions"])
    return table.astype({"pairs": "int64"})


def plot_tau(table: pd.DataFrame, path, title: str = ""):
    """Kendall's tau against judgments per topic, one panel per measure, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from irbandits.plots import style

    measures = list(dict.fromkeys(table.measure))
    methods = list(dict.fromkeys(table.method))
    fig, axes = plt.subplots(1, len(measures), figsize=(5.2 * len(measures) + 1.5, 4.4), squeeze=False)
    for ax, measure in zip(axes[0], measures):
        part = table[table.measure == measure]
        for k, method in enumerate(methods):
            line = part[part.method == method]
            ax.plot(line.budget, line.tau, marker="o", ms=3, label=method, lw=1.4, **style(k))
        ax.set_title(measure, fontsize="medium")
        ax.set_xlabel("judgments per topic")
        ax.set_ylabel("Kendall's tau with the full qrels")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize="small", loc="lower right", ncol=2 if len(methods) > 8 else 1)
    fig.suptitle(title or "run ranking under partial qrels", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
