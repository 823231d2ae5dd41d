"""``irbandits pool simulate`` as one library call: from judged runs to the curves, the run ranking under
each method's partial qrels and the budgets over all topics, written to a directory.

:class:`PoolChoice` says how the pools are built and how deep the runs must be read for them;
:func:`pool_study` simulates every method on the judged topics and writes ``curves.parquet``,
``table.csv``, ``curves.png`` and, when asked, ``tau.png`` and ``budget.csv``.

>>> import pandas as pd, tempfile
>>> runs = pd.DataFrame(dict(run=list("xxyy"), topic="1", docno=list("abcd"), rank=[1, 2, 1, 2]))
>>> qrels = pd.DataFrame(dict(topic="1", docno=list("cd"), grade=[1, 1]))
>>> with tempfile.TemporaryDirectory() as out:
...     study = pool_study(runs, qrels, out, PoolChoice(depth=2), methods=["DocID", "MTF"])
>>> study.curves[study.curves.method == "MTF"].relevant_found.tolist()
[0, 1, 2, 2]
>>> [p.name for p in study.written]
['curves.parquet', 'table.csv', 'curves.png']
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.pooling.pools import POOLS, TopicPool, depth_pools, fused_pools, judged_pools
from irbandits.pooling.simulate import Timing, found_at, levels, plot_curves, simulate_pools


@dataclass(frozen=True)
class PoolChoice:
    """How every topic's pool is built: the top ``depth`` of every run (``pool="depth"``) or the ``size``
    documents of largest fused weight (``rrf`` with constant ``rrf_k``, ``rbp-sum`` / ``rbp-max`` with
    persistence ``rbp_p``)."""

    depth: int = 10
    pool: str = "depth"
    size: int | None = None
    rrf_k: float = 60
    rbp_p: float = 0.8

    def __post_init__(self):
        if self.pool not in POOLS:
            raise IrbanditsError(f"--pool {self.pool!r}: use {', '.join(POOLS)}")
        if self.pool != "depth" and self.size is None:
            raise IrbanditsError(f"--pool {self.pool} needs --pool-size (documents per topic)")

    @property
    def fused(self) -> bool:
        return self.pool != "depth"

    def read_depth(self, measures: list[str] | None = None, condensed: bool = False) -> int | None:
        """How deep every run must be read (None: whole) to build the pools and score ``measures`` (on
        condensed lists with ``condensed``): fused weights and a measure without a cutoff read whole runs."""
        cutoff = _cutoff(measures, condensed)
        return None if self.fused or (measures and cutoff is None) else max(self.depth, cutoff or 0)

    def build(self, runs: pd.DataFrame) -> dict[str, TopicPool]:
        if self.fused:
            return fused_pools(runs, self.size, self.pool, self.rrf_k, self.rbp_p)
        return depth_pools(runs, self.depth)

    def label(self) -> str:
        return f"depth-{self.depth}" if not self.fused else f"{self.pool} ({self.size} documents)"


@dataclass
class PoolStudy:
    """What :func:`pool_study` computed and wrote."""

    pools: dict[str, TopicPool]
    curves: pd.DataFrame
    table: pd.DataFrame  # mean relevant found after n judgments (found_at)
    title: str
    timing: Timing
    ranking: pd.DataFrame | None = None
    spent: pd.DataFrame | None = None
    written: list[Path] = field(default_factory=list)


def _quiet(*_) -> None:
    pass


def _cutoff(measures: list[str] | None, condensed: bool) -> int | None:
    """The ranks the measures read (None: whole runs, or no measure); condensed lists read whole runs."""
    from irbandits.measures.agreement import RunScorer

    return RunScorer.depth(measures) if measures and not condensed else None


def pool_study(
    runs: pd.DataFrame,
    judged: pd.DataFrame,
    out,
    choice: PoolChoice = PoolChoice(),
    *,
    methods: list | None = None,
    relevant_grade: float = 1,
    repetitions: int = 100,
    seed: int = 0,
    include_unjudged: bool = False,
    measures: list[str] | None = None,
    rank_budgets: list[int] | None = None,
    rank_repetitions: int = 10,
    alpha: float = 0.05,
    condensed: bool = False,
    budgets: list[int] | None = None,
    splits: list | None = None,
    stop=None,
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
    say: Callable[[str], None] = _quiet,
    show: Callable[[pd.DataFrame, str], None] = _quiet,
) -> PoolStudy:
    """Simulate ``methods`` on the pools ``choice`` builds from ``runs`` (read deep enough:
    :meth:`PoolChoice.read_depth`), judged by the qrels ``judged``, and write the results to ``out``.

    Only topics the qrels judge are scored unless ``include_unjudged``. With ``measures`` (ir-measures
    names), the runs are also ranked under each method's partial qrels at ``rank_budgets`` judgments per
    topic (:func:`~irbandits.pooling.ranking.rank_runs`); with ``budgets``, ``splits`` or ``stop``, the
    relevant documents found with budgets over all topics (:func:`~irbandits.pooling.budget.budget_table`).
    ``say`` gets the progress lines, ``show`` every table with its title.
    """
    from irbandits.pooling.budget import budget_table
    from irbandits.pooling.ranking import plot_tau, rank_runs

    out = Path(out)
    pools = choice.build(runs)
    cutoff = _cutoff(measures, condensed)
    scored = runs[runs["rank"] <= cutoff] if measures and cutoff else runs
    if not include_unjudged:
        answered, pools = len(pools), judged_pools(pools, judged)
        if not pools:
            raise IrbanditsError(f"--qrels: the qrels judge none of the {answered} topics the runs answer")
        if len(pools) < answered:
            say(f"left out {answered - len(pools)} of the {answered} run topics: the qrels do not judge them "
                f"(--include-unjudged scores them as having no relevant document)")
    relevance = {t: p.relevance(judged, relevant_grade) for t, p in pools.items()}
    sizes = [p.size for p in pools.values()]
    runs_n = len(next(iter(pools.values())).runs)
    unjudged = sum(p.unjudged(judged) for p in pools.values())
    described = f"depth {choice.depth}" if not choice.fused else f"{choice.pool} pools of {choice.size} documents"
    say(f"{len(pools)} topics, {runs_n} runs, {described}: pools of {min(sizes)}-{max(sizes)} documents (mean "
        f"{sum(sizes) / len(sizes):.1f}); relevant: grade >= {relevant_grade:g}; {unjudged} pooled documents "
        f"without a judgment count as non-relevant")
    timing = Timing()
    orders: dict | None = {} if measures else None
    curves = simulate_pools(pools, relevance, methods, repetitions=repetitions, seed=seed, timing=timing,
                            backend=backend, workers=workers, address=address, orders=orders,
                            keep_orders=rank_repetitions)
    study = PoolStudy(pools, curves, found_at(curves, levels(max(sizes))), timing=timing,
                      title=f"{len(pools)} topics, {runs_n} runs, {choice.label()} pools, "
                            f"relevant = grade >= {relevant_grade:g}")
    out.mkdir(exist_ok=True)
    curves.to_parquet(out / "curves.parquet", index=False)
    study.written = [out / "curves.parquet", out / "table.csv", out / "curves.png"]
    if measures:
        ranking_start = time.perf_counter()
        at = sorted(set(rank_budgets or [*levels(max(sizes)), max(sizes)]))
        ranking = rank_runs(pools, orders, scored, judged, measures, at, alpha, condensed)
        found = found_at(curves, at).drop(columns="all").rename_axis("method").reset_index().melt(
            "method", var_name="budget", value_name="relevant_found").astype({"budget": "int64"})
        study.ranking = found.merge(ranking, on=["method", "budget"])
        study.ranking.round(4).to_csv(out / "table.csv", index=False)
        plot_tau(study.ranking, out / "tau.png", title=f"{study.title}; unjudged = "
                 f"{'left out (condensed lists)' if condensed else 'non-relevant'}")
        study.written.append(out / "tau.png")
        show(study.ranking.round(3), f"run ranking under each method's partial qrels against the full pool's "
             f"(tau, tau_ap; flips of the {int(study.ranking.pairs.iloc[0])} pairs a paired t-test separates at "
             f"alpha {alpha:g}) ({study.title})")
        say(f"ranked the runs with {', '.join(measures)} at {len(at)} budgets: "
            f"{time.perf_counter() - ranking_start:.1f} s")
    else:
        study.table.round(2).to_csv(out / "table.csv")
    plot_curves(curves, out / "curves.png", title=study.title)
    show(study.table.round(2).reset_index(), f"mean relevant documents found after n judgments ({study.title})")
    random = list(curves.method[curves.repetition > 0].unique())
    say(f"simulated {curves.method.nunique()} methods on {len(pools)} topics ({repetitions} repetitions of "
        f"{', '.join(random) or 'no random method'}): {timing.compile_s + timing.run_s:.1f} s "
        f"({timing.compile_s:.1f} s compiling, {timing.run_s:.1f} s judging)")
    if budgets or splits or stop is not None:
        study.spent = budget_table(pools, relevance, curves, budgets, splits, stop, methods,
                                   repetitions=repetitions, seed=seed, backend=backend, workers=workers,
                                   address=address)
        study.spent.round(2).to_csv(out / "budget.csv", index=False)
        study.written.append(out / "budget.csv")
        about = f"; stopping rule {stop.label}" if stop is not None else ""
        show(study.spent.round(2), f"relevant documents found with a budget over all {len(pools)} topics{about}")
    return study
