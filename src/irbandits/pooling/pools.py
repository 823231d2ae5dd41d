"""Depth-k pools of TREC runs, one :class:`TopicPool` per topic, and their relevance vectors.

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


def depth_pools(runs: pd.DataFrame, depth: int = 10) -> dict[str, TopicPool]:
    """The depth-``depth`` pool of every topic of a run table (as :func:`irbandits.io.read_runs` gives)."""
    if int(depth) < 1:
        raise IrbanditsError(f"the pool depth must be at least 1, got {depth}")
    depth = int(depth)
    names = tuple(sorted(runs.run.unique()))
    run_index = {name: i for i, name in enumerate(names)}
    runs = runs.sort_values(["run", "topic", "rank"], kind="mergesort")
    position = runs.groupby(["run", "topic"]).cumcount().to_numpy()
    top = runs[position < depth].assign(position=position[position < depth])
    pools = {}
    for topic, t in top.groupby("topic", sort=True):
        docnos = np.array(sorted(t.docno.unique()))
        ranked = np.full((len(names), depth), -1, np.int64)
        ranked[t.run.map(run_index).to_numpy(), t.position.to_numpy()] = np.searchsorted(docnos, t.docno.to_numpy())
        pools[str(topic)] = TopicPool(str(topic), docnos, names, ranked)
    if not pools:
        raise IrbanditsError("the runs retrieve no documents, so every pool is empty")
    return pools


def judged_pools(pools: dict[str, TopicPool], qrels: pd.DataFrame) -> dict[str, TopicPool]:
    """The pools of the topics the qrels judge (any grade), as trec_eval scores only judged topics;
    a topic the runs answer but the qrels do not would otherwise count as having no relevant document.

    >>> runs = pd.DataFrame(dict(run="x", topic=["1", "2"], docno=["a", "b"], rank=1))
    >>> list(judged_pools(depth_pools(runs), pd.DataFrame(dict(topic=["2"], docno=["b"], grade=[0]))))
    ['2']
    """
    judged = set(qrels.topic.astype(str))
    return {t: p for t, p in pools.items() if t in judged}

