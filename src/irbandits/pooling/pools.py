"""Pools of TREC runs (depth-k, or the top documents by RRF or RBP weight), one :class:`TopicPool` per topic.

A pool's documents are indexed in docno order (so DocID adjudication is index order and every
document tie elsewhere goes to the smaller docno); runs are indexed in name order, the same for
every topic (a run that retrieved nothing for a topic is exhausted from the start).

>>> import pandas as pd
>>> runs = pd.DataFrame(dict(run=["x", "x", "y", "y"], topic="1", docno=["b", "a", "a", "c"], rank=[1, 2, 1, 2]))
>>> pool = depth_pools(runs, depth=2)["1"]
>>> pool.docnos.tolist(), pool.ranked.tolist()
(['a', 'b', 'c'], [[1, 0], [0, 2]])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError


@dataclass(frozen=True)
class TopicPool:
    """The depth-k pool of one topic: which run retrieved which pooled document at which rank.

    ``ranked[r, i]`` is the pool index of run ``r``'s document at rank ``i + 1`` (-1 past
    ``length[r]``); ``doc_ptr`` / ``doc_run`` / ``doc_rank`` list, for document ``d``, the runs that
    retrieved it and the 0-based rank at which they did (entries ``doc_ptr[d]:doc_ptr[d + 1]``).
    """

    topic: str
    docnos: np.ndarray
    runs: tuple[str, ...]
    ranked: np.ndarray
    length: np.ndarray = field(init=False)
    doc_ptr: np.ndarray = field(init=False)
    doc_run: np.ndarray = field(init=False)
    doc_rank: np.ndarray = field(init=False)

    def __post_init__(self):
        ranked = np.ascontiguousarray(self.ranked, dtype=np.int64)
        object.__setattr__(self, "ranked", ranked)
        object.__setattr__(self, "length", (ranked >= 0).sum(axis=1).astype(np.int64))
        run_of, rank_of = np.nonzero(ranked >= 0)
        docs = ranked[run_of, rank_of]
        order = np.lexsort((rank_of, run_of, docs))
        object.__setattr__(self, "doc_run", run_of[order].astype(np.int64))
        object.__setattr__(self, "doc_rank", rank_of[order].astype(np.int64))
        counts = np.bincount(docs, minlength=len(self.docnos))
        object.__setattr__(self, "doc_ptr", np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    @property
    def size(self) -> int:
        """Number of pooled documents."""
        return len(self.docnos)

    @property
    def depth(self) -> int:
        return self.ranked.shape[1]

    def index(self, docno: str) -> int:
        """Pool index of ``docno``, or -1 when it is not pooled."""
        i = int(np.searchsorted(self.docnos, docno))
        return i if i < len(self.docnos) and self.docnos[i] == docno else -1

    def relevance(self, qrels: pd.DataFrame, grade: float = 1) -> np.ndarray:
        """``int64`` vector: 1 where the qrels give the document a grade >= ``grade`` (unjudged: 0)."""
        q = qrels[qrels.topic == self.topic]
        rel = q.docno[q.grade >= grade]
        return np.isin(self.docnos, rel.to_numpy()).astype(np.int64)

    def unjudged(self, qrels: pd.DataFrame) -> int:
        """Number of pooled documents the qrels do not judge (simulations count them non-relevant)."""
        return int((~np.isin(self.docnos, qrels.docno[qrels.topic == self.topic].to_numpy())).sum())


def _build(top: pd.DataFrame, names: tuple[str, ...], width: int | None = None) -> dict[str, TopicPool]:
    """Pools of the rows ``top`` (``run, topic, docno``, each run's rows of a topic in rank order): each run's
    pooled documents at its ranks among them (ranks closed up over the documents left out); ``width``
    columns of ``ranked`` (default: the most any run pools)."""
    run_index = {name: i for i, name in enumerate(names)}
    position = top.groupby(["run", "topic"], sort=False).cumcount().to_numpy()
    top = top.assign(position=position)
    pools = {}
    for topic, t in top.groupby("topic", sort=True):
        docnos = np.array(sorted(t.docno.unique()))
        ranked = np.full((len(names), width or int(t.position.max()) + 1), -1, np.int64)
        ranked[t.run.map(run_index).to_numpy(), t.position.to_numpy()] = np.searchsorted(docnos, t.docno.to_numpy())
        pools[str(topic)] = TopicPool(str(topic), docnos, names, ranked)
    if not pools:
        raise IrbanditsError("the runs retrieve no documents, so every pool is empty")
    return pools


def _ranked(runs: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, tuple[str, ...]]:
    """The runs sorted by run, topic and rank; each row's 0-based position in its run and topic; the run names."""
    runs = runs.sort_values(["run", "topic", "rank"], kind="mergesort")
    return runs, runs.groupby(["run", "topic"]).cumcount().to_numpy(), tuple(sorted(runs.run.unique()))


def depth_pools(runs: pd.DataFrame, depth: int = 10) -> dict[str, TopicPool]:
    """The depth-``depth`` pool of every topic of a run table (as :func:`irbandits.io.read_runs` gives)."""
    if int(depth) < 1:
        raise IrbanditsError(f"the pool depth must be at least 1, got {depth}")
    runs, position, names = _ranked(runs)
    return _build(runs[position < int(depth)], names, int(depth))


def fused_pools(runs: pd.DataFrame, size: int, pool: str = "rrf", k: float = 60, p: float = 0.8) -> dict[str, TopicPool]:
    """Pools of the ``size`` documents of each topic with the largest fused weight over the runs (ties to the
    smaller docno), as trectools' ``make_pool`` builds them; a document at 0-based position ``i`` of a run
    weighs

    - ``rrf``: 1 / (k + i + 1) summed over the runs (reciprocal rank fusion, Cormack, Clarke and Buettcher,
      SIGIR 2009);
    - ``rbp-sum`` / ``rbp-max``: its rank-biased precision contribution (1 - p) p^i, summed over the runs or
      the largest (Moffat, Webber and Zobel, SIGIR 2007).

    Each run's row of a pool lists its pooled documents in rank order (ranks closed up).

    >>> runs = pd.DataFrame(dict(run=list("xxxyyy"), topic="1", docno=list("abcbcd"), rank=[1, 2, 3] * 2))
    >>> [fused_pools(runs, 2, pool, p=0.5)["1"].docnos.tolist() for pool in ("rrf", "rbp-sum", "rbp-max")]
    [['b', 'c'], ['a', 'b'], ['a', 'b']]
    """
    if int(size) < 1:
        raise IrbanditsError(f"the pool size must be at least 1 document per topic, got {size}")
    if pool not in POOLS or pool == "depth":
        raise IrbanditsError(f"unknown fused pool {pool!r}: use {', '.join(p for p in POOLS if p != 'depth')}")
    if pool == "rrf" and not k >= 0:
        raise IrbanditsError(f"the RRF constant k must be >= 0, got {k}")
    if pool != "rrf" and not 0 < p < 1:
        raise IrbanditsError(f"the RBP persistence p must be in (0, 1), got {p}")
    runs, position, names = _ranked(runs)
    weight = 1.0 / (k + position + 1) if pool == "rrf" else (1 - p) * p ** position.astype(float)
    fused = (pd.DataFrame(dict(topic=runs.topic.to_numpy(), docno=runs.docno.to_numpy(), weight=weight))
             .groupby(["topic", "docno"]).weight.agg("max" if pool == "rbp-max" else "sum").reset_index())
    fused = fused.sort_values(["topic", "weight", "docno"], ascending=[True, False, True], kind="mergesort")
    chosen = fused[fused.groupby("topic").cumcount().to_numpy() < int(size)]
    keep = pd.MultiIndex.from_frame(runs[["topic", "docno"]]).isin(pd.MultiIndex.from_frame(chosen[["topic", "docno"]]))
    return _build(runs[keep], names)


POOLS = ("depth", "rrf", "rbp-sum", "rbp-max")  # the pool constructions of `pool simulate --pool`


def judged_pools(pools: dict[str, TopicPool], qrels: pd.DataFrame) -> dict[str, TopicPool]:
    """The pools of the topics the qrels judge (any grade), as trec_eval scores only judged topics;
    a topic the runs answer but the qrels do not would otherwise count as having no relevant document.

    >>> runs = pd.DataFrame(dict(run="x", topic=["1", "2"], docno=["a", "b"], rank=1))
    >>> list(judged_pools(depth_pools(runs), pd.DataFrame(dict(topic=["2"], docno=["b"], grade=[0]))))
    ['2']
    """
    judged = set(qrels.topic.astype(str))
    return {t: p for t, p in pools.items() if t in judged}

