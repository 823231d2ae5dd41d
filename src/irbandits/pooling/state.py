"""A live adjudication campaign: one method object per topic, saved atomically between calls.

The judging process asks :meth:`Campaign.next` for the document to judge next on each topic and
feeds judgments back with :meth:`Campaign.add` (qrels lines: ``topic iteration docno grade``). A
batch of judgments is checked in full before any is applied, and the state file is replaced
atomically (temporary file + ``os.replace``), so a bad line or a crash never leaves a half-updated
state. :func:`editing` holds an exclusive lock on the state while it is read, changed and written,
so two judging processes never overwrite each other's judgments. Judgments of documents other than the one offered are accepted (the assessor may judge out
of turn): they update every run that retrieved the document and are skipped by every run later.

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
from irbandits.pooling.pools import TopicPool

FORMAT = "irbandits-pool-state/1"


class Campaign:
    """The adjudication state of every topic of a pool under one method."""

    def __init__(self, pools: dict[str, TopicPool], method: str = "MM-NS", relevant_grade: float = 1, seed: int = 0):
        spec = parse_method(method)
        self.method, self.relevant_grade, self.seed = spec.label, relevant_grade, int(seed)
        self.topics: dict[str, PoolingMethod] = {
            topic: spec.make(pools[topic], np.random.SeedSequence(self.seed, spawn_key=(t,)))
            for t, topic in enumerate(sorted(pools))
        }
        self.log: list[list[Any]] = []

    def next(self, topics: list[str] | None = None) -> pd.DataFrame:
        """The document to judge next on each topic (or the given ones): ``topic, docno, run``.

        Topics whose pool is fully judged are left out; asking again before judging gives the same documents.
        """
        rows = []
        for topic in topics or self.topics:
            m = self._method(topic)
            docno = m.next()
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
            self.log.append([str(row.topic), str(row.docno), int(grade) if grade == int(grade) else grade])
        return self

    def progress(self) -> pd.DataFrame:
        """Per topic: judged documents, pool size, relevant documents found so far."""
        found = pd.DataFrame(self.log, columns=["topic", "docno", "grade"])
        relevant = found[found.grade >= self.relevant_grade].groupby("topic").size()
        return pd.DataFrame([dict(topic=t, judged=m.judgments, pool=m.pool.size, relevant=int(relevant.get(t, 0)))
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
