"""Budgets across topics: N judgments over all topics, split evenly or moved by a bandit over topics.

- ``per-topic``: every topic gets ``N // T`` judgments (the first ``N % T`` topics, in topic order, one
  more), spent by the within-topic method in its own order; what a topic's pool cannot take is not spent.
- ``global:w=10,min=10`` (:class:`GlobalSplit`): the topics are the arms of a second bandit, on top of any
  within-topic method (the method still chooses the document of the topic played). A topic's reward is
  the relevance of its next judgment, and its relevant rate only falls as it is judged (the method judges
  the likeliest documents first), which makes the topics a *rested rotting bandit*. The rule is the
  sliding-window average (SWA) of Levine, Koren & Shamir ("Rotting bandits", NeurIPS 2017): every topic
  first gets ``min`` judgments (round robin, fewest first, ties to the smaller topic index), then the
  next judgment goes to the topic with the largest relevant rate over its last ``w`` judgments, ties to
  the topic with fewer judgments, then to the smaller index. Deterministic: the same judgments give the
  same allocation. A topic leaves the game when its pool is judged or a stopping rule
  (:mod:`irbandits.pooling.stopping`) stops it, and its share goes to the others.

Losada, Parapar & Barreiro ("Multi-armed bandits for adjudicating documents in pooling-based evaluation",
IP&M 53(5), 2017; "When to stop making relevance judgments?", JASIST 70(1), 2019) adjudicate and stop
topic by topic and leave the split of a budget across topics open; the allocation here is that open
step, with the rotting-bandit rule above.

The simulation (:func:`walk_global`) and the live campaign (:class:`Ledger`, used by
:class:`irbandits.pooling.state.Campaign` and the service's graded campaigns) call the same kernel,
:func:`choose_topic`; a live campaign with ``parallel=1`` whose assessor judges what is offered makes the
simulation's choices.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> runs = pd.DataFrame(dict(run="x", topic=list("1122"), docno=list("abcd"), rank=[1, 2, 1, 2]))
>>> pools = depth_pools(runs, depth=2)
>>> rel = {"1": np.array([0, 0]), "2": np.array([1, 1])}
>>> topics, found = walk_global("Rank", pools, rel, budget=3, split="global:w=1,min=1")
>>> topics.tolist(), found.tolist()
([0, 1, 1], [0, 1, 2])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from numba import njit
from numba.typed import List

from irbandits.errors import IrbanditsError
from irbandits.params import Param, check_params, split_name
from irbandits.pooling.base import MethodSpec, method_specs, parse_method
from irbandits.pooling.pools import TopicPool
from irbandits.pooling.stopping import StopRule, never, parse_stop

PER_TOPIC = "per-topic"


class GlobalSplit:
    """The bandit over topics of the module docstring: sliding-window greedy after ``min`` judgments each."""

    name = "global"
    params = (
        Param("w", int, 10, "judgments in each topic's sliding window", lambda v: v >= 1, ">= 1"),
        Param("min", int, 10, "judgments every topic gets before the bandit chooses", lambda v: v >= 0, ">= 0"),
    )

    def __init__(self, **params):
        self.param_values = check_params("global", self.params, params)
        self.w, self.first = self.param_values["w"], self.param_values["min"]

    @property
    def label(self) -> str:
        return f"global:w={self.w},min={self.first}"

    def __repr__(self) -> str:
        return self.label


def parse_split(text: str | GlobalSplit | None) -> GlobalSplit | None:
    """``per-topic`` (None) or ``global`` / ``global:w=10,min=10`` (a :class:`GlobalSplit`)."""
    if text is None or isinstance(text, GlobalSplit):
        return text
    spec = split_name(text)
    if spec.name.lower() == PER_TOPIC and not spec.items:
        return None
    if spec.name.lower() != "global":
        raise IrbanditsError(f"unknown budget split {text!r}; known splits: per-topic, global[:w=10,min=10]")
    params = {}
    for key, value in spec.items:
        if value is None:
            raise IrbanditsError(f"global: expected param=value, got {key!r}")
        params[key] = value
    return GlobalSplit(**params)


def split_label(split: GlobalSplit | None) -> str:
    return PER_TOPIC if split is None else split.label


def per_topic_shares(budget: int | None, sizes: np.ndarray) -> np.ndarray:
    """The per-topic split: ``budget // T`` each, one more for the first ``budget % T``, at most the pool.

    >>> per_topic_shares(7, np.array([5, 5, 1])).tolist()
    [3, 2, 1]
    """
    sizes = np.asarray(sizes, np.int64)
    if budget is None:
        return sizes.copy()
    t = len(sizes)
    shares = np.full(t, budget // t, np.int64) + (np.arange(t) < budget % t)
    return np.minimum(shares, sizes)


# ----- kernels ----------------------------------------------------------------------------------
@njit(cache=True)
def choose_topic(found, offsets, count, allotted, active, w, first):
    """The topic to give the next judgment to (-1: none is active).

    ``found[offsets[t] + k]``: relevant documents among topic ``t``'s first ``k + 1`` judgments;
    ``count[t]``: its judgments; ``allotted[t]``: judgments given to it, made or not (``>= count[t]``);
    ``active[t]``: it may get more. Warm-up first (fewest allotted below ``first``), then the largest
    relevant rate over the last ``w`` judgments, ties to fewer allotted, then the smaller index.
    """
    arg = -1
    for t in range(count.shape[0]):
        if active[t] and allotted[t] < first and (arg < 0 or allotted[t] < allotted[arg]):
            arg = t
    if arg >= 0:
        return arg
    best = -1.0
    for t in range(count.shape[0]):
        if not active[t]:
            continue
        n = count[t]
        h = min(w, n)
        if h == 0:
            score = 1.0
        else:
            before = found[offsets[t] + n - h - 1] if n > h else 0
            score = (found[offsets[t] + n - 1] - before) / h
        if score > best or (score == best and allotted[t] < allotted[arg]):
            best, arg = score, t
    return arg


@njit(cache=True)
def record(found, offsets, count, t, rel):
    """Append judgment ``rel`` (0 or 1) to topic ``t``'s running count of relevant documents."""
    n = count[t]
    found[offsets[t] + n] = (found[offsets[t] + n - 1] if n > 0 else 0) + rel
    count[t] = n + 1


@njit
def _walk_global(select, update, estimate, states, rels, found, offsets, sizes, budget, w, first,
                 stop_params, stop_t, topic_of, rel_of):
    """Judge up to ``budget`` documents, each in the topic :func:`choose_topic` picks; returns the number judged."""
    nt = sizes.shape[0]
    count = np.zeros(nt, np.int64)
    active = sizes > 0
    k = 0
    while k < budget:
        t = choose_topic(found, offsets, count, count, active, w, first)
        if t < 0:
            break
        ps, own, rng = states[t]
        doc = select(ps, own, rng)
        if doc < 0:
            active[t] = False
            continue
        r = rels[t][doc]
        update(ps, own, rng, doc, r)
        record(found, offsets, count, t, r)
        topic_of[k] = t
        rel_of[k] = r
        k += 1
        n = count[t]
        if n == sizes[t] or estimate(found[offsets[t]:offsets[t] + sizes[t]], n, sizes[t] - n, stop_params) < stop_t:
            active[t] = False
    return k


def _stop_args(stop: StopRule | None) -> tuple[Any, np.ndarray, float]:
    return (never, np.zeros(1), 0.0) if stop is None else (stop.kernel, stop.values, stop.t)


def walk_global(method: str | MethodSpec, pools: dict[str, TopicPool], relevance: dict[str, np.ndarray],
                budget: int | None = None, split: str | GlobalSplit | None = "global", stop: str | StopRule | None = None,
                seed: int = 0, repetition: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One global-split run: the topic index (topics in sorted order) of every judgment and the running total
    of relevant documents found. Topic ``t``'s method is seeded ``SeedSequence(seed, spawn_key=(t, repetition))``
    as in :func:`~irbandits.pooling.simulate.simulate_pools`, so the methods are paired across splits."""
    spec = method if isinstance(method, MethodSpec) else parse_method(method)
    split = parse_split(split) or GlobalSplit()
    stop = parse_stop(stop)
    topics = sorted(pools)
    sizes = np.array([pools[t].size for t in topics], np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    states, rels = List(), List()
    for i, topic in enumerate(topics):
        m = spec.make(pools[topic], np.random.SeedSequence(seed, spawn_key=(i, repetition)))
        states.append(m.kernel_state)
        rels.append(np.ascontiguousarray(relevance[topic], dtype=np.int64))
    total = int(sizes.sum())
    budget = total if budget is None else min(int(budget), total)
    topic_of, rel_of = np.zeros(budget, np.int64), np.zeros(budget, np.int64)
    estimate, stop_params, stop_t = _stop_args(stop)
    n = _walk_global(spec.cls._select, spec.cls._update, estimate, states, rels, np.zeros(total, np.int64), offsets,
                     sizes, budget, split.w, split.first, stop_params, stop_t, topic_of, rel_of)
    return topic_of[:n], np.cumsum(rel_of[:n])


# ----- budget tables ----------------------------------------------------------------------------
def _at(found: np.ndarray, n: int) -> int:
    return int(found[n - 1]) if n > 0 else 0


def _per_topic(context: tuple, task: tuple) -> list[dict]:
    """Rows of the per-topic split of one method and repetition, from its curves (one per topic)."""
    curves, sizes, budgets, stop = context
    label, rep = task
    rows = []
    for budget in budgets:
        shares = per_topic_shares(None if budget == sizes.sum() else budget, sizes)  # the whole pool: every topic's
        judged = found = judged_all = found_all = 0
        for t, curve in enumerate(curves[(label, rep)]):
            n = stop.stop_point(curve, sizes[t], shares[t]) if stop is not None else shares[t]
            judged, found = judged + n, found + _at(curve, n)
            judged_all, found_all = judged_all + shares[t], found_all + _at(curve, shares[t])
        rows.append(dict(budget=budget, judged=judged, relevant_found=found, saved=judged_all - judged,
                         lost=found_all - found))
    return rows


def _global(context: tuple, task: tuple) -> list[dict]:
    """Rows of one global split of one method and repetition."""
    pools, relevance, budgets, stop, seed = context
    spec, split, rep = task
    top = max(budgets)
    _, found = walk_global(spec, pools, relevance, top, split, stop, seed, rep)
    _, found_all = walk_global(spec, pools, relevance, top, split, None, seed, rep) if stop is not None else (None, found)
    rows = []
    for budget in budgets:
        judged, judged_all = min(budget, len(found)), min(budget, len(found_all))
        rows.append(dict(budget=budget, judged=judged, relevant_found=_at(found, judged),
                         saved=judged_all - judged, lost=_at(found_all, judged_all) - _at(found, judged)))
    return rows


def budget_table(
    pools: dict[str, TopicPool],
    relevance: dict[str, np.ndarray],
    curves: pd.DataFrame,
    budgets: list[int] | None = None,
    splits: list[str | GlobalSplit | None] | None = None,
    stop: str | StopRule | None = None,
    methods: list[str | MethodSpec] | None = None,
    repetitions: int = 100,
    seed: int = 0,
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
) -> pd.DataFrame:
    """Relevant documents found with ``budget`` judgments over all topics, per method and split.

    ``curves`` is :func:`~irbandits.pooling.simulate.simulate_pools`'s table for these pools, methods,
    repetitions and seed (the per-topic split is read from it); ``budgets`` are totals over all topics
    (default: every pooled document). Columns: ``method, split, budget, per_topic`` (budget / topics),
    ``judged``, ``relevant_found`` (totals over the topics, mean over the repetitions of a random method),
    ``per_topic_found`` (relevant_found / topics) and, with a stopping rule, ``saved`` and ``lost``: the
    judgments the rule saved and the relevant documents it lost against the same split without it.
    """
    from irbandits.tasks import Failed, run_tasks

    specs = method_specs(methods)
    stop = parse_stop(stop)
    parsed = [parse_split(s) for s in (splits or [PER_TOPIC])]
    if len({split_label(s) for s in parsed}) != len(parsed):
        raise IrbanditsError("the same budget split is given twice")
    topics = sorted(pools)
    sizes = np.array([pools[t].size for t in topics], np.int64)
    budgets = sorted({int(sizes.sum()) if b is None else int(b) for b in (budgets or [None])})
    if budgets[0] < 1:
        raise IrbanditsError(f"--budget must be at least 1, got {budgets[0]}")
    reps = {s.label: repetitions if s.cls.random else 1 for s in specs}
    rows: list[dict] = []

    def collect(fn, tasks, context, keys):
        for outcome in run_tasks(fn, tasks, context, backend=backend, workers=workers, address=address, progress=False):
            if isinstance(outcome, Failed):
                raise RuntimeError(f"budget simulation {keys(tasks[outcome.index])} failed: {outcome.error}")
            rows.extend({**keys(tasks[outcome.index]), **row} for row in outcome.value)

    if None in parsed:
        order = {t: i for i, t in enumerate(topics)}
        table = curves.sort_values(["method", "repetition", "topic", "judgments"], kind="mergesort")
        per_curve = {}
        for (label, rep, topic), group in table.groupby(["method", "repetition", "topic"], observed=True, sort=False):
            per_curve.setdefault((str(label), int(rep)), [None] * len(topics))[order[topic]] = \
                group.relevant_found.to_numpy(np.int64)
        tasks = [(s.label, r) for s in specs for r in range(reps[s.label])]
        collect(_per_topic, tasks, ({k: v for k, v in per_curve.items()}, sizes, budgets, stop),
                lambda task: dict(method=task[0], split=PER_TOPIC, repetition=task[1]))
    for split in (s for s in parsed if s is not None):
        tasks = [(s, split, r) for s in specs for r in range(reps[s.label])]
        collect(_global, tasks, (pools, relevance, budgets, stop, seed),
                lambda task: dict(method=task[0].label, split=task[1].label, repetition=task[2]))
    frame = pd.DataFrame(rows)
    out = frame.groupby(["method", "split", "budget"], sort=False).mean(numeric_only=True).drop(columns="repetition")
    out = out.reset_index()
    out.insert(3, "per_topic", out.budget / len(topics))
    out["per_topic_found"] = out.relevant_found / len(topics)
    out["method"] = pd.Categorical(out.method, categories=[s.label for s in specs])
    out["split"] = pd.Categorical(out.split, categories=[split_label(s) for s in parsed])
    out = out.sort_values(["budget", "method", "split"], kind="mergesort").reset_index(drop=True)
    if stop is None:
        out = out.drop(columns=["saved", "lost"])
    return out[[c for c in ("method", "split", "budget", "per_topic", "judged", "relevant_found", "per_topic_found",
                            "saved", "lost") if c in out]]


# ----- live campaigns ---------------------------------------------------------------------------
class Ledger:
    """Which topics a live campaign may judge now: budget and stopping, rebuilt from the judgments in order.

    ``sizes``: pool sizes (topics in campaign order); ``budget``: judgments over all topics (None: every
    pooled document); ``split``: None (per-topic) or a :class:`GlobalSplit`; ``stop``: a stopping rule or
    None; ``parallel``: with the global split, how many judgments are handed out ahead (one per assessor
    working at once; 1 makes the simulation's choices). A judgment is recorded with :meth:`record`.
    """

    def __init__(self, sizes, budget: int | None = None, split: str | GlobalSplit | None = None,
                 stop: str | StopRule | None = None, parallel: int = 1):
        self.sizes = np.asarray(sizes, np.int64)
        self.split, self.stop = parse_split(split), parse_stop(stop)
        self.budget = int(self.sizes.sum()) if budget is None else int(budget)
        self.parallel = max(1, int(parallel))
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.found = np.zeros(int(self.sizes.sum()), np.int64)
        self.count = np.zeros(len(self.sizes), np.int64)
        self.stopped = np.zeros(len(self.sizes), np.bool_)
        self.shares = per_topic_shares(budget, self.sizes)
        self.allotted = np.zeros(len(self.sizes), np.int64)
        self._refill()

    def _active(self) -> np.ndarray:
        return ~self.stopped & (self.allotted < self.sizes)

    def _refill(self) -> None:
        if self.split is None:
            return
        while (self.allotted - self.count)[~self.stopped].sum() < self.parallel and self.allotted.sum() < self.budget:
            t = choose_topic(self.found, self.offsets, self.count, self.allotted, self._active(), self.split.w,
                             self.split.first)
            if t < 0:
                return
            self.allotted[t] += 1

    def record(self, t: int, relevant: bool) -> None:
        """Topic ``t`` got a judgment (relevant or not): update its count, stop it if the rule says so, hand out more."""
        record(self.found, self.offsets, self.count, t, int(bool(relevant)))
        n = self.count[t]
        if self.stop is not None and not self.stopped[t] and n < self.sizes[t]:   # not when the pool is judged
            self.stopped[t] = self.stop.stops(self.found[self.offsets[t]:self.offsets[t] + n], self.sizes[t] - n)
        self.allotted[t] = n if self.stopped[t] else max(self.allotted[t], n)
        self._refill()

    def open(self, t: int) -> bool:
        """Whether topic ``t`` has a judgment to hand out now."""
        if self.stopped[t] or self.count[t] >= self.sizes[t]:
            return False
        return bool(self.count[t] < (self.shares[t] if self.split is None else self.allotted[t]))

    def done(self, t: int) -> bool:
        """Whether topic ``t`` will get no more judgments (stopped, pool judged, or its share of the budget spent)."""
        if self.open(t) or self.split is None:
            return not self.open(t)
        return not (self._active()[t] and self.allotted.sum() < self.budget)
