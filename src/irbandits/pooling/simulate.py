"""Simulated adjudication on judged pools: relevant documents found after n judgments, per method.

For every method, topic and (for random methods) seeded repetition, one compiled loop judges the
whole pool with the method's own kernels, reading relevance from the qrels, and records the number
of relevant documents found after each judgment. Repetition ``i`` of topic ``t`` is seeded with
``SeedSequence(seed, spawn_key=(t, i))`` for every method, so random methods are paired.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> runs = pd.DataFrame(dict(run=list("xxyy"), topic="1", docno=list("abcd"), rank=[1, 2, 1, 2]))
>>> pools = depth_pools(runs, depth=2)
>>> rel = {"1": np.array([0, 0, 1, 1])}
>>> curves = simulate_pools(pools, rel, ["DocID", "MTF"])
>>> curves[curves.method == "MTF"].relevant_found.tolist()
[0, 1, 2, 2]
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit

from irbandits.errors import IrbanditsError
from irbandits.pooling.base import MethodSpec, method_specs
from irbandits.pooling.pools import TopicPool


@njit
def _walk(select, update, ps, own, rng, rel, found, order):
    """Judge the whole pool in the method's order; ``found[n]`` = relevant found after n + 1 judgments,
    ``order[n]`` = the pool index of the (n + 1)-th document judged."""
    n = 0
    total = 0
    while True:
        doc = select(ps, own, rng)
        if doc < 0:
            return n
        total += rel[doc]
        update(ps, own, rng, doc, rel[doc])
        found[n] = total
        order[n] = doc
        n += 1


def walk(method, rel: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Run ``method`` (a fresh :class:`~irbandits.pooling.base.PoolingMethod`) to the end of its pool;
    the judging order goes to ``order`` (an ``int64`` array of the pool's size) when given."""
    found = np.zeros(method.pool.size, np.int64)
    order = np.zeros(method.pool.size, np.int64) if order is None else order
    n = _walk(type(method)._select, type(method)._update, *method.kernel_state, rel, found, order)
    if n != method.pool.size:
        raise RuntimeError(f"{method.name} judged {n} of {method.pool.size} documents")
    return found


@dataclass
class Timing:
    """Seconds spent compiling the loops and running them."""

    compile_s: float = 0.0
    run_s: float = 0.0


def _topic_curves(context: tuple, task: tuple) -> tuple[np.ndarray, np.ndarray | None]:
    """Every repetition of one method on one topic: arrays (repetitions, pool size) of relevant found and
    (the first ``keep`` repetitions) of the judging order."""
    pools, relevance, seed, keep = context
    spec, t, topic, reps = task
    orders = np.zeros((min(reps, keep), pools[topic].size), np.int64)
    found = np.stack([walk(spec.make(pools[topic], np.random.SeedSequence(seed, spawn_key=(t, i))), relevance[topic],
                           orders[i] if i < keep else None) for i in range(reps)])
    return found, (orders if keep else None)


def simulate_pools(
    pools: dict[str, TopicPool],
    relevance: dict[str, np.ndarray],
    methods: list[str | MethodSpec] | None = None,
    repetitions: int = 100,
    seed: int = 0,
    timing: Timing | None = None,
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
    orders: dict | None = None,
    keep_orders: int = 1,
) -> pd.DataFrame:
    """Curves of every method on every topic: columns ``method, topic, repetition, judgments, relevant_found``.

    ``relevance[topic]`` is the 0/1 vector of :meth:`TopicPool.relevance`; deterministic methods get
    repetition 0 only, random ones ``repetitions`` seeded repetitions. Each (method, topic) is a task
    of :func:`irbandits.tasks.run_tasks` on ``backend`` with ``workers`` (``"ray"``: the cluster
    at ``address``); the curves do not depend on where they ran. Given a dict ``orders``, the judging
    orders go there too: ``orders[(method label, topic)]`` is an ``int64`` array (repetitions, pool size)
    of pool indices, of the first ``keep_orders`` repetitions.
    """
    from irbandits.tasks import Failed, run_tasks

    if repetitions < 1:
        raise IrbanditsError(f"repetitions must be at least 1, got {repetitions}")
    specs = method_specs(methods)
    timing = timing if timing is not None else Timing()
    topics = sorted(pools)
    bad = [t for t in topics if t not in relevance or len(relevance[t]) != pools[t].size]
    if bad:
        raise IrbanditsError(f"no relevance vector of the pool's size for topic {bad[0]}")
    relevance = {t: np.ascontiguousarray(relevance[t], dtype=np.int64) for t in topics}
    for spec in specs:
        start = time.perf_counter()
        walk(spec.make(pools[topics[0]]), relevance[topics[0]])  # compile
        timing.compile_s += time.perf_counter() - start
    tasks = [(spec, t, topic, repetitions if spec.cls.random else 1) for spec in specs for t, topic in enumerate(topics)]
    frames: list = [None] * len(tasks)
    start = time.perf_counter()
    keep = max(int(keep_orders), 1) if orders is not None else 0
    for outcome in run_tasks(_topic_curves, tasks, (pools, relevance, seed, keep), backend=backend, workers=workers,
                             address=address, progress=False):
        if isinstance(outcome, Failed):
            raise RuntimeError(f"pool simulation of {tasks[outcome.index][0].label} on topic "
                               f"{tasks[outcome.index][2]} failed: {outcome.error}")
        spec, _, topic, reps = tasks[outcome.index]
        size = pools[topic].size
        found, order = outcome.value
        if orders is not None:
            orders[(spec.label, topic)] = order
        frames[outcome.index] = pd.DataFrame(dict(
            method=spec.label, topic=topic, repetition=np.repeat(np.arange(reps), size),
            judgments=np.tile(np.arange(1, size + 1), reps), relevant_found=found.ravel()))
    timing.run_s += time.perf_counter() - start
    table = pd.concat(frames, ignore_index=True)
    table["method"] = pd.Categorical(table.method, categories=[s.label for s in specs])
    return table


def levels(max_size: int) -> list[int]:
    """Judgment counts to report, up to ``max_size``: 10, 20, 50, 100, 200, 500, ... and the paper's 100, 300, ..., 1100, 2000.

    >>> levels(1200)
    [10, 20, 50, 100, 200, 300, 500, 700, 900, 1000, 1100]
    """
    ones = [m * 10**e for e in range(1, 8) for m in (1, 2, 5)]
    paper = [100, 300, 500, 700, 900, 1100, 2000]
    return sorted({n for n in ones + paper if n <= max_size})


def found_at(curves: pd.DataFrame, at: list[int]) -> pd.DataFrame:
    """Mean over topics (of the mean over repetitions) of relevant documents found after each of ``at`` judgments.

    ``curves`` is a table of :func:`simulate_pools` (each curve's rows together, judgments 1, 2, ...).
    A topic whose pool is smaller than n counts with all its relevant documents, as in the paper's
    tables; the column ``all`` is the mean number of relevant documents in the pools.
    """
    judgments, found = curves.judgments.to_numpy(), curves.relevant_found.to_numpy()
    starts = np.flatnonzero(judgments == 1)
    sizes = np.diff(np.append(starts, len(judgments)))
    ns = np.array([*at, sizes.max()], dtype=np.int64)
    values = pd.DataFrame(found[starts[:, None] + np.minimum(ns[None, :], sizes[:, None]) - 1],
                          columns=[*map(str, at), "all"])
    keys = curves.iloc[starts]
    values["method"], values["topic"] = keys.method.to_numpy(), keys.topic.to_numpy()
    per_topic = values.groupby(["method", "topic"], observed=True, sort=False).mean()
    return per_topic.groupby("method", observed=True, sort=False).mean()


FAMILIES = {  # the panels of plot_curves: methods that choose alike
    "baselines": ("DocID", "Rank", "Random"),
    "rank-biased contributions": ("MoffatA", "MoffatB", "MoffatC"),
    "bandits": ("eps-greedy", "UCB1-Tuned", "BLA", "MM"),
    "MoveToFront and non-stationary bandits": ("MTF", "BLA-NS", "MM-NS"),
}


def _family(label: str) -> str:
    name = label.split(":")[0]
    return next((family for family, names in FAMILIES.items() if name in names), "other methods")


def plot_curves(curves: pd.DataFrame, path, title: str = ""):
    """Relevant documents found against judgments (mean over topics); the title is ``title``, then the
    horizon in judgments and the repetitions of the random methods. Left: every method. Right: the gain
    over Random (over the first method when Random was not simulated); of more than four methods, one
    panel per family (:data:`FAMILIES`) with the other methods grey behind. Every method keeps its
    colour and line style (:func:`irbandits.plots.style`) in every panel, and every panel has a
    legend. Topics past their pool keep their total."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from irbandits.plots import style

    grid = np.arange(1, curves.judgments.max() + 1)
    mean = found_at(curves, list(grid)).drop(columns="all")
    baseline = "Random" if "Random" in mean.index else mean.index[0]
    gain = mean - mean.loc[baseline].to_numpy()
    styles = {method: style(k) for k, method in enumerate(mean.index)}
    families: dict[str, list[str]] = {}
    for method in mean.index:
        families.setdefault(_family(method) if len(mean) > 4 else f"gain over {baseline}", []).append(method)
    rows = 2 if len(families) > 1 else 1
    cols = -(-len(families) // rows)
    fig = plt.figure(figsize=(6.5 + 4.6 * cols, 4.2 * rows + 0.8))
    spec = fig.add_gridspec(rows, cols + 1, width_ratios=[1.45] + [1] * cols)
    overview = fig.add_subplot(spec[:, 0])
    for method, row in mean.iterrows():
        overview.plot(grid, row.to_numpy(), label=method, lw=1.4, **styles[method])
    overview.set_ylabel("relevant documents found (mean over topics)")
    overview.set_title("every method", fontsize="medium")
    overview.legend(fontsize="small", ncol=2 if len(mean) > 8 else 1, loc="lower right")
    axes = [overview]
    for k, (family, members) in enumerate(families.items()):
        ax = fig.add_subplot(spec[k // cols, 1 + k % cols], sharey=axes[1] if len(axes) > 1 else None)
        for method, row in gain.iterrows():
            if method not in members:
                ax.plot(grid, row.to_numpy(), color="0.82", lw=0.7)
        for method in members:
            ax.plot(grid, gain.loc[method].to_numpy(), label=method, lw=1.8, **styles[method])
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(family, fontsize="medium")
        ax.set_ylabel(f"found minus {baseline}'s", fontsize="small")
        ax.legend(fontsize="small")
        axes.append(ax)
    for ax in axes:
        ax.set_xlabel("judgments", fontsize="small")
        ax.grid(alpha=0.3)
    random = sorted(set(curves.method[curves.repetition > 0].astype(str)))
    reps = int(curves.repetition.max()) + 1
    about = f"up to {int(grid[-1]):,} judgments per topic" + (
        f"; random methods ({', '.join(random)}): mean of {reps} repetitions" if random else "")
    fig.suptitle(f"{title}\n{about}" if title else about, fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
