"""The assignment engine: who gets which request next, leases, answers, and the replay at start.

Rules (spec ``service.md``):

- a task is one request (a pair, or one document) leased to one assessor for ``lease_seconds``;
  ``GET /api/next`` gives an assessor their own open lease first, so a reload shows the same task;
- preference: a request needs ``assessors_per_pair`` answers from different assessors, and an
  assessor never gets a pair (of that topic) they answered before, in any phase; graded: one lease
  per topic at a time, on the document the pooling method offers;
- a lease not answered in time expires, its request goes to the next assessor who asks, and an
  answer to it gets 409;
- an answer is committed to the judgments table before it is applied and acknowledged, and a
  ``client_id`` sent again by the same assessor gets the same reply without a second record.

Each campaign has one lock, held from the read of its state through the commit to the application of
the answer, so answers reach the process in the order of the judgments table, the order a restart
replays them in.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from fastapi import HTTPException
from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.engine import Engine

from irbandits.service.campaigns import answer_value, make_judge
from irbandits.service.models import Assessor, CampaignRow, Judgment, Task
from irbandits.service.settings import Settings

# the statements of the hot paths, built once (each is compiled once and cached by SQLAlchemy)
_NEW_TASK = insert(Task)
_NEW_JUDGMENT = insert(Judgment)
_ANSWERED = update(Task).where(Task.id == bindparam("task")).values(answered=True)


@dataclass
class Lease:
    id: int
    assessor: int
    topic: str
    left: str
    right: str | None
    expires_at: float


class CampaignRuntime:
    """One campaign in memory: its judge (the process), open leases and who answered what."""

    def __init__(self, row: CampaignRow, settings: Settings, engine: Engine):
        self.engine = engine
        self.id, self.kind, self.name, self.options = row.id, row.kind, row.name, row.options
        self.topics, self.texts = row.topics, row.texts
        self.settings = settings
        self.lock = threading.Lock()
        self.judge = make_judge(row.kind, row.pools, row.options)
        self.leases: dict[int, Lease] = {}                   # open leases by task id (some may be expired)
        self.mine: dict[int, int] = {}                       # assessor -> their open lease
        self.seen: dict[int, set[tuple]] = defaultdict(set)  # assessor -> request keys answered
        self.per_topic: Counter = Counter()                  # answers recorded per topic
        self.clients: set[tuple[int, str]] = set()           # (assessor, client_id) of every answer

    # ----- state from the log ------------------------------------------------------------------
    def apply(self, j: Judgment | SimpleNamespace) -> None:
        """Apply one recorded answer to the process and the bookkeeping (live, or replaying)."""
        self.judge.apply(j.topic, j.left, j.right, answer_value(j))
        self.seen[j.assessor_id].add(self.judge.key(j.topic, j.left, j.right))
        self.per_topic[j.topic] += 1
        self.clients.add((j.assessor_id, j.client_id))
        lease = self.leases.pop(j.task_id, None)
        if lease is not None and self.mine.get(lease.assessor) == lease.id:
            del self.mine[lease.assessor]

    def hold(self, task: Task | SimpleNamespace) -> Lease:
        lease = Lease(task.id, task.assessor_id, task.topic, task.left, task.right, task.expires_at)
        self.leases[lease.id] = lease
        self.mine[lease.assessor] = lease.id
        return lease

    # ----- next --------------------------------------------------------------------------------
    def _expire(self, now: float) -> None:
        for lease in [x for x in self.leases.values() if x.expires_at <= now]:
            del self.leases[lease.id]
            if self.mine.get(lease.assessor) == lease.id:
                del self.mine[lease.assessor]

    def _choose(self, assessor: int) -> tuple[str, str, str | None] | None:
        """The request to lease to ``assessor`` now, or None."""
        if self.kind == "graded":
            busy = {x.topic for x in self.leases.values()}
            for topic in self.judge.process.topics:
                if topic not in busy:
                    docno = self.judge.offer(topic)
                    if docno is not None:
                        return topic, docno, None
            return None
        held = Counter(self.judge.key(x.topic, x.left, x.right) for x in self.leases.values())
        seen, r = self.seen[assessor], self.judge.per_pair
        for topic, left, right in self.judge.requests():
            key = self.judge.key(topic, left, right)
            if key not in seen and self.judge.answered(key) + held[key] < r:
                return topic, left, right
        return None

    def next_task(self, assessor: int) -> Lease | None:
        """The assessor's open lease, else a new one, else None (nothing for them now)."""
        with self.lock:
            now = self.settings.clock()
            self._expire(now)
            if assessor in self.mine:
                return self.leases[self.mine[assessor]]
            chosen = self._choose(assessor)
            if chosen is None:
                return None
            topic, left, right = chosen
            task = dict(campaign_id=self.id, assessor_id=assessor, topic=topic, left=left, right=right,
                        issued_at=now, expires_at=now + self.settings.lease_seconds, answered=False)
            with self.engine.begin() as conn:
                task_id = conn.execute(_NEW_TASK, task).inserted_primary_key[0]
            return self.hold(SimpleNamespace(id=task_id, **task))

    def task_json(self, lease: Lease) -> dict[str, Any]:
        """The body of ``GET /api/next`` for a lease."""
        docnos = [lease.left] if lease.right is None else [lease.left, lease.right]
        body = dict(task=lease.id, campaign=self.id, topic=lease.topic, query=self.topics[lease.topic],
                    items=[dict(docno=d, text=self.texts[d]) for d in docnos])
        if self.kind == "graded":
            body["grades"] = self.judge.grades
        return body

    # ----- answers -----------------------------------------------------------------------------
    def answer(self, assessor: int, task_id: int, answer: Any, client_id: str) -> None:
        """Record an answer (committed, then applied); raises HTTPException 404 / 409 / 422."""
        with self.lock:
            if (assessor, client_id) in self.clients:
                return
            now = self.settings.clock()
            lease = self.leases.get(task_id)
            if lease is None or lease.assessor != assessor or lease.expires_at <= now:
                self._refuse(assessor, task_id)
            value = self._value(lease, answer)
            judgment = dict(campaign_id=self.id, task_id=task_id, assessor_id=assessor, topic=lease.topic,
                            left=lease.left, right=lease.right, winner=None, grade=None, client_id=client_id,
                            created_at=now) | value
            with self.engine.begin() as conn:
                conn.execute(_NEW_JUDGMENT, judgment)
                conn.execute(_ANSWERED, {"task": task_id})
            self.apply(SimpleNamespace(**judgment))

    def _refuse(self, assessor: int, task_id: int) -> None:
        """Why a task is not open to ``assessor``: 404 (not theirs), 409 (answered or expired)."""
        with self.engine.connect() as conn:
            task = conn.execute(select(Task.assessor_id, Task.answered).where(Task.id == task_id)).first()
        if task is None or task.assessor_id != assessor:
            raise HTTPException(404, f"no task {task_id} for this assessor")
        if task.answered:
            raise HTTPException(409, f"task {task_id} is already answered")
        raise HTTPException(409, f"the lease on task {task_id} expired; GET /api/next for a new task")

    def _value(self, task: Lease, answer: Any) -> dict[str, Any]:
        if task.right is not None:
            if answer not in ("left", "right"):
                raise HTTPException(422, f'answer: a preference answer is "left" or "right", got {answer!r}')
            return dict(winner=task.left if answer == "left" else task.right)
        grades = self.judge.grades
        if isinstance(answer, bool) or answer not in grades:
            raise HTTPException(422, f"answer: a grade is one of {grades}, got {answer!r}")
        return dict(grade=float(answer))

    # ----- progress ----------------------------------------------------------------------------
    def progress(self) -> dict[str, Any]:
        """The body of ``GET /api/campaigns/{CID}``."""
        with self.lock:
            topics = [dict(topic=t, judgments=self.per_topic[t], done=self.judge.done(t)) for t in self.topics]
            open_requests = 0 if self.kind == "graded" else sum(1 for _ in self.judge.requests())
        return dict(id=self.id, name=self.name, kind=self.kind, options=self.options, topics=topics,
                    judgments=sum(self.per_topic.values()), done=all(t["done"] for t in topics),
                    requests=open_requests)


class Registry:
    """Every campaign's runtime, rebuilt at start by replaying the judgments table in order."""

    def __init__(self, sessions, settings: Settings):
        self.sessions, self.settings = sessions, settings
        self.engine = sessions.kw["bind"]
        self.campaigns: dict[int, CampaignRuntime] = {}
        self.lock = threading.Lock()

    @classmethod
    def load(cls, sessions, settings: Settings) -> "Registry":
        registry = cls(sessions, settings)
        with sessions() as session:
            for row in session.scalars(select(CampaignRow).order_by(CampaignRow.id)):
                registry.campaigns[row.id] = runtime = CampaignRuntime(row, settings, registry.engine)
                for j in session.scalars(select(Judgment).where(Judgment.campaign_id == row.id).order_by(Judgment.id)):
                    runtime.apply(j)
                for task in session.scalars(select(Task).where(Task.campaign_id == row.id, Task.answered.is_(False),
                                                               Task.expires_at > settings.clock())):
                    runtime.hold(task)
        return registry

    def create(self, fields: dict[str, Any]) -> CampaignRuntime:
        """Store a checked campaign (see :func:`irbandits.service.campaigns.check_campaign`) and start it."""
        with self.lock, self.sessions() as session:
            row = CampaignRow(created_at=self.settings.clock(), **fields)
            session.add(row)
            session.commit()
            self.campaigns[row.id] = runtime = CampaignRuntime(row, self.settings, self.engine)
        return runtime

    def get(self, campaign_id: int) -> CampaignRuntime:
        runtime = self.campaigns.get(campaign_id)
        if runtime is None:
            raise HTTPException(404, f"no campaign {campaign_id}")
        return runtime

    def judgment_counts(self, campaign_id: int) -> dict[int, int]:
        """Answers recorded per assessor of a campaign."""
        with self.sessions() as session:
            rows = session.execute(select(Judgment.assessor_id, func.count()).where(Judgment.campaign_id == campaign_id)
                                   .group_by(Judgment.assessor_id))
            return dict(rows.all())

    def assessors(self, campaign_id: int) -> list[Assessor]:
        with self.sessions() as session:
            return list(session.scalars(select(Assessor).where(Assessor.campaign_id == campaign_id).order_by(Assessor.id)))
