"""A live adjudication campaign: one method object per topic, saved atomically between calls.

The judging process asks :meth:`Campaign.next` for the document to judge next on each topic and
feeds judgments back with :meth:`Campaign.add` (qrels lines: ``topic iteration docno grade``). A
batch of judgments is checked in full before any is applied, and the state file is replaced
atomically (temporary file + ``os.replace``), so a bad line or a crash never leaves a half-updated
state. :func:`editing` holds an exclusive lock on the state while it is read, changed and written,
so two judging processes never overwrite each other's judgments. Judgments of documents other than the one offered are accepted (the assessor may judge out
of turn): they update every run that retrieved the document and are skipped by every run later.

A budget of judgments over all topics is split per topic or moved across topics by the global bandit
of :mod:`irbandits.pooling.budget`, and a stopping rule (:mod:`irbandits.pooling.stopping`) may stop a
topic early; :meth:`Campaign.next` offers only the topics that may be judged now (with the global
split, the topics the bandit has handed judgments to). Both are rebuilt from the judgments in order.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> runs = pd.DataFrame(dict(run=list("xxyy"), topic="1", docno=list("abcd"), rank=[1, 2, 1, 2]))
>>> c = Campaign(depth_pools(runs, depth=2), "MTF")
>>> c.next().docno.tolist()
['a']
>>> c.add(pd.DataFrame(dict(topic=["1"], docno=["a"], grade=[0]))).next().docno.tolist()
['c']
"""

from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.pooling.base import PoolingMethod, parse_method
from irbandits.pooling.budget import Ledger, split_label
from irbandits.pooling.pools import TopicPool

FORMAT = "irbandits-pool-state/1"


class Campaign:
    """The adjudication state of every topic of a pool under one method."""

    def __init__(self, pools: dict[str, TopicPool], method: str = "MM-NS", relevant_grade: float = 1, seed: int = 0,
                 budget: int | None = None, split: str | None = None, stop: str | None = None, parallel: int = 1):
        """``budget``: judgments over all topics (None: every pooled document); ``split``: ``per-topic``
        (None) or ``global[:w=..,min=..]``; ``stop``: a stopping rule (``window:w=20,t=0.5``) or None;
        ``parallel``: with the global split, judgments handed out ahead (see :class:`~irbandits.pooling.budget.Ledger`)."""
        spec = parse_method(method)
        self.method, self.relevant_grade, self.seed = spec.label, relevant_grade, int(seed)
        self.topics: dict[str, PoolingMethod] = {
            topic: spec.make(pools[topic], np.random.SeedSequence(self.seed, spawn_key=(t,)))
            for t, topic in enumerate(sorted(pools))
        }
        self.log: list[list[Any]] = []
        self._ledger(budget, split, stop, parallel)

    def _ledger(self, budget, split, stop, parallel) -> None:
        self._index = {t: i for i, t in enumerate(self.topics)}
        self.ledger = Ledger([m.pool.size for m in self.topics.values()], budget, split, stop, parallel)
        self.budget = None if budget is None else int(budget)
        self.split = split_label(self.ledger.split)
        self.stop = None if self.ledger.stop is None else self.ledger.stop.label
        self.parallel = self.ledger.parallel

    def done(self, topic: str) -> bool:
        """Whether ``topic`` will be offered nothing more (pool judged, stopped, or its budget spent)."""
        self._method(topic)
        return self.ledger.done(self._index[topic])

    def open(self, topic: str) -> bool:
        """Whether ``topic`` may be judged now (its next document is offered by :meth:`next`)."""
        self._method(topic)
        return self.ledger.open(self._index[topic])

    def stopped(self, topic: str) -> bool:
        """Whether the stopping rule stopped ``topic``."""
        self._method(topic)
        return bool(self.ledger.stopped[self._index[topic]])

    def next(self, topics: list[str] | None = None) -> pd.DataFrame:
        """The document to judge next on each topic (or the given ones): ``topic, docno, run``.

        Topics whose pool is fully judged, whose budget is spent or that are stopped are left out (with the
        global split, every topic the bandit has handed no judgment to now); asking again before judging
        gives the same documents.
        """
        rows = []
        for topic in topics or self.topics:
            m = self._method(topic)
            docno = m.next() if self.ledger.open(self._index[topic]) else None
            if docno is not None:
                rows.append((topic, docno, m.offered_run or "-"))
        return pd.DataFrame(rows, columns=["topic", "docno", "run"])

    def add(self, judgments: pd.DataFrame, source: str = "judgments") -> "Campaign":
        """Apply judgments (``topic, docno, grade`` and optionally ``line``), all or none; returns self.

        Grades >= ``relevant_grade`` count as relevant. An unknown topic, a document outside the pool
        and a document judged before are errors naming ``source`` and the line.
        """
        seen: set[tuple[str, str]] = set()
        for i, row in enumerate(judgments.itertuples(index=False)):
            where = f"{source}, line {getattr(row, 'line', i + 1)}"
            topic, docno = str(row.topic), str(row.docno)
            if topic not in self.topics:
                raise IrbanditsError(f"{where}: topic {topic} is not in the pool")
            m = self.topics[topic]
            if m.pool.index(docno) < 0:
                raise IrbanditsError(f"{where}: document {docno} is not in the depth-{m.pool.depth} pool of topic {topic}")
            if m.is_judged(docno) or (topic, docno) in seen:
                raise IrbanditsError(f"{where}: document {docno} of topic {topic} is already judged")
            seen.add((topic, docno))
        for row in judgments.itertuples(index=False):
            grade = float(row.grade)
            self.topics[str(row.topic)].judge(str(row.docno), grade >= self.relevant_grade)
            self.ledger.record(self._index[str(row.topic)], grade >= self.relevant_grade)
            self.log.append([str(row.topic), str(row.docno), int(grade) if grade == int(grade) else grade])
        return self

    def progress(self) -> pd.DataFrame:
        """Per topic: judged documents, pool size, relevant documents found so far (and, with a budget, a
        split or a stopping rule, whether the topic is done and whether it was stopped)."""
        found = pd.DataFrame(self.log, columns=["topic", "docno", "grade"])
        relevant = found[found.grade >= self.relevant_grade].groupby("topic").size()
        plain = self.budget is None and self.split == "per-topic" and self.stop is None
        return pd.DataFrame([dict(topic=t, judged=m.judgments, pool=m.pool.size, relevant=int(relevant.get(t, 0)),
                                  **({} if plain else dict(done=self.done(t), stopped=self.stopped(t))))
                             for t, m in self.topics.items()])

    def _method(self, topic: str) -> PoolingMethod:
        if topic not in self.topics:
            raise IrbanditsError(f"topic {topic} is not in the pool")
        return self.topics[topic]

    # ----- persistence -----------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the whole state as JSON through a temporary file and ``os.replace``."""
        first = next(iter(self.topics.values()))
        data = dict(format=FORMAT, method=self.method, relevant_grade=self.relevant_grade, seed=self.seed,
                    budget=self.budget, split=self.split, stop=self.stop, parallel=self.parallel,
                    runs=list(first.pool.runs), judgments=self.log,
                    topics={t: dict(docnos=m.pool.docnos.tolist(), ranked=m.pool.ranked.tolist(), state=m.state)
                            for t, m in self.topics.items()})
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Campaign":
        """Read a state written by :meth:`save`."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
            obj = cls.__new__(cls)
            obj.method, obj.relevant_grade, obj.seed = data["method"], data["relevant_grade"], data["seed"]
            obj.log = data["judgments"]
            runs = tuple(data["runs"])
            obj.topics = {t: PoolingMethod.from_state(TopicPool(t, np.array(d["docnos"]), runs, np.array(d["ranked"])), d["state"])
                          for t, d in data["topics"].items()}
            obj._ledger(data.get("budget"), data.get("split"), data.get("stop"), data.get("parallel", 1))
            for topic, _, grade in obj.log:   # budget and stopping: a function of the judgments in order
                obj.ledger.record(obj._index[topic], float(grade) >= obj.relevant_grade)
        except FileNotFoundError:
            raise IrbanditsError(f"{path}: no such state file (create one with `irbandits pool init`)") from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IrbanditsError(f"{path}: not a pooling state ({exc})") from None
        return obj


@contextmanager
def editing(path: str | Path) -> Iterator[Campaign]:
    """Load the campaign at ``path`` under an exclusive lock and save it on leaving without error.

    The lock is an ``flock`` on ``path.lock``, held from reading to the atomic replace.
    """
    path = Path(path)
    if not path.is_file():
        raise IrbanditsError(f"{path}: no such state file (create one with `irbandits pool init`)")
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        campaign = Campaign.load(path)
        yield campaign
        campaign.save(path)
