"""One campaign's assignment engine: who gets which request next, leases, answers (applied live and by
the replay at start, :class:`~irbandits.service.campaigns.Campaigns`), quality and the lifecycle.

Rules (spec ``service.md``):

- a task is one request (a pair, or one document) leased to one assessor for ``lease_seconds``;
  ``GET /api/next`` gives an assessor their own open lease first, so a reload shows the same task;
- preference: a request needs ``assessors_per_pair`` answers from different assessors, and an
  assessor never gets a pair (of that topic) they answered before, in any phase; graded: one lease
  per topic at a time, on the document the pooling method offers;
- a lease not answered in time expires, its request goes to the next assessor who asks, and an
  answer to it gets 409;
- an answer is committed to the judgments table before it is applied and acknowledged, and a
  ``client_id`` sent again by the same assessor gets the same reply without a second record;
- an assessor may skip the task they hold ("can't judge", or a problem report: :data:`SKIP_REASONS`):
  a "skip" row is logged like an answer, the request goes back to the others and never again to
  them, and nothing reaches the process or the quality signals;
- a campaign is running, paused, closed or archived (:data:`MOVES`, stored in ``campaigns.state``):
  only a running one hands out work; a paused one still records answers to the leases it gave
  (:meth:`CampaignRuntime.answer` says why); a closed one refuses new answers (409) but its exports
  work; an archived one is read-only too; only a closed or archived one can be deleted
  (:meth:`~irbandits.service.campaigns.Campaigns.delete`).

Each campaign has one lock, held from the read of its state through the commit to the application of
the answer, so answers reach the process in the order of the judgments table, the order a restart
replays them in.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Engine

from irbandits.errors import Conflict, IrbanditsError, NotFound, Unauthorized
from irbandits.service.crowd import CrowdState
from irbandits.service.hybrid import HybridState
from irbandits.service.judges import answer_value, judgments_text, make_judge
from irbandits.service.models import Assessor, CampaignRow, Judgment, Task
from irbandits.service.quality import Signals, Votes, agreement, flag_reason
from irbandits.service.settings import Settings
from irbandits.service.validation import in_range

log = logging.getLogger("irbandits.service")

# the statements of the hot paths, built once (each is compiled once and cached by SQLAlchemy)
_NEW_TASK = insert(Task)
_NEW_JUDGMENT = insert(Judgment)
_ANSWERED = update(Task).where(Task.id == bindparam("task")).values(answered=True)

# why an assessor skips a task: they cannot judge it, or they report a problem with it
SKIP_REASONS = ("cant-judge", "broken", "language", "other")

# the lifecycle: each state and the states the organiser may move a campaign to from it
MOVES = {"running": ("paused", "closed"), "paused": ("running", "closed"), "closed": ("archived",),
         "archived": ("closed",)}


@dataclass
class Lease:
    id: int
    assessor: int
    topic: str
    left: str
    right: str | None
    expires_at: float
    issued_at: float = 0.0
    kind: str = "answer"  # "answer" (a request of the process), "test" or "repeat" (quality checks)


def same_answer(recorded, task_id: int, answer: Any) -> bool:
    """Whether ``answer`` to ``task_id`` is what the judgments row ``recorded`` holds (a retried answer)."""
    if recorded.kind in ("retract", "skip") or recorded.task_id != task_id:
        return False
    if recorded.right is not None:
        return answer in ("left", "right") and recorded.winner == (recorded.left if answer == "left" else recorded.right)
    return not isinstance(answer, (bool, str)) and answer == recorded.grade


class CampaignRuntime:
    """One campaign in memory: its judge (the process), open leases, who answered what, and quality."""

    def __init__(self, row: CampaignRow, settings: Settings, engine: Engine):
        self.engine = engine
        self.id, self.kind, self.name, self.options = row.id, row.kind, row.name, row.options
        self.topics, self.texts, self.pools = row.topics, row.texts, row.pools
        self.notes = row.notes or {}                         # topic -> its description and narrative
        self.settings = settings
        self.lock = threading.Lock()
        self.judge = make_judge(row.kind, row.pools, row.options)
        self.leases: dict[int, Lease] = {}                   # open leases by task id (some may be expired)
        self.mine: dict[int, int] = {}                       # assessor -> their open lease
        self.seen: dict[int, set[tuple]] = defaultdict(set)  # assessor -> request keys answered
        self.per_topic: Counter = Counter()                  # answers fed to the process per topic
        self.clients: dict[tuple[int, str], Any] = {}        # (assessor, client_id) -> the row it recorded
        self.revoked: set[int] = set()                       # assessors whose token is revoked: no more work
        # quality (module irbandits.service.quality)
        self.tests = row.tests or []
        self.test_answer = {self.judge.key(t, a, b): a for t, a, b in self.tests}
        self.flagged: set[int] = set()
        self.trusted: set[int] = set()
        self.reasons: dict[int, str] = {}
        self.signals: dict[int, Signals] = {}
        self.votes = Votes()
        self.log: list = []                                  # every judgments row, in order
        self.by_id: dict[int, Any] = {}
        self.retracted: set[int] = set()
        self.last: dict[int, Any] = {}                       # assessor -> their latest answer or check
        self.own: dict[int, dict[tuple, Any]] = defaultdict(dict)  # assessor -> key -> their target answer
        self.test_order: dict[int, list[int]] = defaultdict(list)  # assessor -> test pairs left in this round
        self.checks_skipped: Counter = Counter()             # assessor -> checks they skipped
        self.latest: dict[str, int] = {}                     # graded: topic -> id of its latest fed answer
        self.rng = random.Random(row.id)
        self.changed = threading.Event()                     # set by every applied row: automatic assessors wake
        self.state = row.state or "running"                  # a key of MOVES
        self.removed = False                                 # deleted: its automatic assessors stop
        self.crowd = CrowdState(row.crowd, row.id)           # guidelines, practice, bundles, quotas
        self.rejected: set[int] = set()                      # answers of bundles rejected by the checks
        self.hybrid = HybridState(row.options, row.id)       # automatic assessors first (service.hybrid)

    # ----- state from the log ------------------------------------------------------------------
    def apply(self, j: Judgment | SimpleNamespace, issued_at: float | None = None) -> None:
        """Apply one recorded row to the process and the bookkeeping (live, or replaying)."""
        self.log.append(j)
        self.by_id[j.id] = j
        self.changed.set()
        self.clients[(j.assessor_id, j.client_id)] = j
        if j.kind == "retract":
            self._retract(self.by_id[j.retracts])
            return
        lease = self.leases.pop(j.task_id, None)
        if lease is not None and self.mine.get(lease.assessor) == lease.id:
            del self.mine[lease.assessor]
        key = self.judge.key(j.topic, j.left, j.right)
        scored = self.hybrid.applied(j, key)
        if j.kind == "skip":   # not a judgment: the request is free for the others, never again for them
            self.seen[j.assessor_id].add(key)
            if key in self.test_answer or key in self.own[j.assessor_id]:   # a check skipped: still a check
                self.checks_skipped[j.assessor_id] += 1
            return
        if j.kind == "practice":   # a known-answer pair before the work: feedback only
            j.feedback = self.crowd.practised(j)
            return
        if j.kind == "test":
            j.correct = j.winner == self.test_answer.get(key)
        self._count(j, key, 1)
        if issued_at is not None:
            self.signals[j.assessor_id].seconds.append(j.created_at - issued_at)
        self.last[j.assessor_id] = j
        if j.kind == "answer":
            self.seen[j.assessor_id].add(key)
            self.own[j.assessor_id][key] = j
            self._feed(j)
        elif j.kind == "audit":   # an automatic assessor's answer checked by a person: theirs counts
            self.seen[j.assessor_id].add(key)
        j.scored = scored
        rejected = self.crowd.counted(j)
        if rejected:   # a bundle below the checks' pass share: its answers leave the process
            self.rejected.update(rejected)
            self.rebuild()

    def _count(self, j, key: tuple, sign: int) -> None:
        """Add (1) or take back (-1) ``j``'s share of its assessor's signals and of its pair's votes."""
        expected = (self.test_answer.get(key) if j.kind == "test"
                    else getattr(self.own[j.assessor_id].get(key), "winner", None))
        self.signals.setdefault(j.assessor_id, Signals()).count(j.kind, j.right is not None, j.winner == j.left,
                                                                j.winner == expected, sign)
        if j.right is not None and j.kind != "repeat":
            (self.votes.add if sign > 0 else self.votes.remove)(key, j.assessor_id, j.winner, self.signals)

    def _feed(self, j) -> None:
        """Feed a target answer to the process, unless its assessor is flagged or cut off before it, or it
        was retracted or rejected."""
        if (j.assessor_id in self.flagged or j.id in self.retracted or j.id in self.rejected
                or not self.hybrid.counts(j)):
            return
        if self.kind == "preference":
            j.phase = self.judge.phase(j.topic)
        else:
            self.latest[j.topic] = j.id
        self.judge.apply(j.topic, j.left, j.right, answer_value(j))
        self.per_topic[j.topic] += 1

    def rebuild(self) -> None:
        """The process state from the log again: target answers of unflagged assessors, not retracted."""
        self.judge = make_judge(self.kind, self.pools, self.options)
        self.per_topic, self.latest = Counter(), {}
        for j in self.log:
            if j.kind == "answer":
                self._feed(j)

    def undoable(self, j) -> str | None:
        """Why ``j`` cannot be retracted now (its phase is closed), or None."""
        if self.crowd.sealed(j):
            return "its bundle is finished"
        if j.kind != "answer" or j.assessor_id in self.flagged:
            return None
        if self.kind == "graded":
            return None if self.latest.get(j.topic) == j.id else "the topic has moved on since"
        if self.judge.done(j.topic) or self.judge.phase(j.topic) != getattr(j, "phase", None):
            return "the phase that asked for it is closed"
        return None

    def _retract(self, j) -> None:
        """Take ``j`` back: out of the process (its phase is open), the signals and the assessor's pairs."""
        self.retracted.add(j.id)
        self.crowd.uncounted(j)
        fed = j.kind == "answer" and j.assessor_id not in self.flagged
        key = self.judge.key(j.topic, j.left, j.right)
        self._count(j, key, -1)
        if j.kind == "answer":
            self.seen[j.assessor_id].discard(key)
            self.own[j.assessor_id].pop(key, None)
            if fed and self.kind == "preference":
                self.judge.retract(j.topic, j.left, j.right, j.winner)
                self.per_topic[j.topic] -= 1
            elif fed:
                self.rebuild()

    def hold(self, task: Task | SimpleNamespace) -> Lease:
        lease = Lease(task.id, task.assessor_id, task.topic, task.left, task.right, task.expires_at,
                      task.issued_at, task.kind)
        self.leases[lease.id] = lease
        self.mine[lease.assessor] = lease.id
        return lease

    # ----- next --------------------------------------------------------------------------------
    def _expire(self, now: float) -> None:
        for lease in [x for x in self.leases.values() if x.expires_at <= now]:
            del self.leases[lease.id]
            if self.mine.get(lease.assessor) == lease.id:
                del self.mine[lease.assessor]

    def _choose(self, assessor: int) -> tuple[str, str, str | None, str] | None:
        """The request to lease to ``assessor`` now (topic, left, right, kind), or None. A quality
        check comes instead of a target request while the assessor's checks are below ``test_rate``
        of their answers (and only while a target request is waiting for them)."""
        target = self._target(assessor)
        if target is None or self.kind == "graded":
            return target
        due = self.crowd.check_due(assessor)
        if due is not None:   # bundles: the checks at their places of the bundle, tests only
            return self._test(assessor) if due else target
        s = self.signals.get(assessor) or Signals()
        checks = s.tests + s.repeats + self.checks_skipped[assessor]
        if self.tests and checks < self.options["test_rate"] * (s.answers + 1):
            return self._check(assessor, checks) or target
        return target

    def _target(self, assessor: int) -> tuple[str, str, str | None, str] | None:
        if self.kind == "graded":
            busy = {x.topic for x in self.leases.values()}
            for topic in self.judge.process.topics:
                if topic not in busy:
                    docno = self.judge.offer(topic)
                    if docno is not None and (topic, docno) not in self.seen[assessor]:  # they skipped it
                        return topic, docno, None, "answer"
            return None
        held = Counter(self.judge.key(x.topic, x.left, x.right) for x in self.leases.values() if x.kind == "answer")
        seen, r = self.seen[assessor], self.judge.per_pair
        automatic = assessor in self.hybrid.automatic   # it never takes an audit: those go to people
        first = set() if automatic else self.hybrid.active(self.flagged | self.revoked)
        for topic, left, right in self.judge.requests():
            key = self.judge.key(topic, left, right)
            if (key not in seen and self.judge.answered(key) + held[key] < r
                    and not (automatic and key in self.hybrid.waiting)
                    and (not first or self.hybrid.passed(key, first, self.seen))):
                return topic, left, right, "answer"
        return None

    def _check(self, assessor: int, checks: int) -> tuple[str, str, str, str] | None:
        """A quality check: every third one a repeat of one of the assessor's latest 64 target pairs
        (sides swapped), the others the next test pair of a random order of them all, drawn anew once
        every pair was shown (so one assessor sees each test pair once before any again; left / right
        at random)."""
        own = self.own[assessor]
        if own and checks % 3 == 2:
            j = self._recent(own)
            return j.topic, j.right, j.left, "repeat"
        return self._test(assessor)

    def _test(self, assessor: int) -> tuple[str, str, str, str]:
        """The assessor's next test pair (see :meth:`_check`)."""
        order = self.test_order[assessor]
        if not order:  # every test pair shown once more: a new random order
            order.extend(self.rng.sample(range(len(self.tests)), len(self.tests)))
        topic, better, worse = self.tests[order.pop()]
        return (topic, better, worse, "test") if self.rng.random() < 0.5 else (topic, worse, better, "test")

    def _recent(self, own: dict) -> Any:
        """One of the assessor's latest 64 target answers (a dict keeps insertion order)."""
        keys = list(itertools.islice(reversed(own), 64))
        return own[self.rng.choice(keys)]

    def next_task(self, assessor: int) -> Lease | None:
        """The assessor's open lease, else a new one, else None (nothing for them now, revoked, or the
        campaign is not running: a paused campaign keeps its leases but shows none of them)."""
        with self.lock:
            if assessor in self.revoked or assessor in self.hybrid.cut or self.state != "running":
                return None
            now = self.settings.clock()
            self._expire(now)
            if assessor in self.mine:
                return self.leases[self.mine[assessor]]
            stage = self.crowd.stage(assessor, now, False)
            if stage == "consent":
                raise Conflict("agree to the campaign's consent first (POST /api/consent)")
            if stage == "practice":
                return self._lease(assessor, *self.crowd.next_practice(assessor), now=now)
            chosen = self._choose(assessor) if stage == "work" else None
            if chosen is None:
                return None
            return self._lease(assessor, *chosen, now=now)

    def _lease(self, assessor: int, topic: str, left: str, right: str | None, kind: str, now: float) -> Lease:
        task = dict(campaign_id=self.id, assessor_id=assessor, topic=topic, left=left, right=right,
                    issued_at=now, expires_at=now + self.settings.lease_seconds, answered=False, kind=kind)
        with self.engine.begin() as conn:
            task_id = conn.execute(_NEW_TASK, task).inserted_primary_key[0]
        person = self.crowd.people[assessor]
        person.started = now if person.started is None else person.started
        return self.hold(SimpleNamespace(id=task_id, **task))

    def task_json(self, lease: Lease) -> dict[str, Any]:
        """The body of ``GET /api/next`` for a lease."""
        docnos = [lease.left] if lease.right is None else [lease.left, lease.right]
        body = dict(task=lease.id, campaign=self.id, topic=lease.topic, query=self.topics[lease.topic],
                    items=[dict(docno=d, text=self.texts[d]) for d in docnos])
        body.update(self.notes.get(lease.topic, {}))  # "description", "narrative": only those the topic has
        if self.kind == "graded":
            body["grades"] = self.judge.grades
        return body

    # ----- answers -----------------------------------------------------------------------------
    def answer(self, assessor: int, task_id: int, answer: Any, client_id: str,
               usage: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Record an answer (committed, then applied); raises :class:`Unauthorized` (revoked meanwhile),
        :class:`NotFound`, :class:`Conflict` or :class:`IrbanditsError` (a malformed answer). A ``client_id`` sent again with the same answer is recorded once; with another
        answer it gets 409.

        A closed or archived campaign refuses new answers (409 "campaign CID is closed"); a retried one
        it recorded before still gets its reply. A paused campaign records an answer to a lease it
        gave before the pause: the assessor has read the pair and decided (often while the organiser
        pressed Pause), and refusing would lose that judgment; pausing stops new work only. The
        lease expires as usual, so after a resume an unexpired one is shown to its assessor again.

        An automatic assessor's answer may be logged as an audit, and carries its call's ``usage``
        (:mod:`irbandits.service.hybrid`).

        Returns a practice answer's feedback (:meth:`irbandits.service.crowd.CrowdState.practised`), else None."""
        with self.lock:
            held = self._held(assessor, task_id, client_id, lambda r: same_answer(r, task_id, answer),
                              "another answer", "answer")
            if held is None:
                return getattr(self.clients[(assessor, client_id)], "feedback", None)
            lease, now = held
            value = self._value(lease, answer)
            judgment = dict(campaign_id=self.id, task_id=task_id, assessor_id=assessor, topic=lease.topic,
                            left=lease.left, right=lease.right, winner=None, grade=None, client_id=client_id,
                            created_at=now, kind=self.hybrid.kind(assessor, lease.kind), retracts=None, reason=None,
                            comment=None, usage=usage) | value
            with self.engine.begin() as conn:
                judgment["id"] = conn.execute(_NEW_JUDGMENT, judgment).inserted_primary_key[0]
                conn.execute(_ANSWERED, {"task": task_id})
            row = SimpleNamespace(**judgment)
            self.apply(row, lease.issued_at)
            if lease.kind == "practice":
                return row.feedback
            for auto in row.scored + ([assessor] if row.kind == "test" else []):
                self._check_cut(auto, row.id)
            if lease.kind != "answer" or self.signals[assessor].answers % 5 == 0:  # the signals that moved
                self._check_flag(assessor)
            return None

    def _held(self, assessor: int, task_id: int, client_id: str, same: Callable[[Any], bool], other: str,
              what: str) -> tuple[Lease, float] | None:
        """Under the lock, before an answer or a skip is recorded: the lease ``assessor`` holds for
        ``task_id`` and the time, or None when ``client_id`` already recorded the same (``same``); raises
        :class:`Unauthorized` (revoked), :class:`Conflict` (``client_id`` recorded ``other``, or the
        campaign closed) or what :meth:`_refuse` raises (no such lease of theirs, or expired)."""
        if assessor in self.revoked:
            raise Unauthorized("this assessor token is revoked")
        recorded = self.clients.get((assessor, client_id))
        if recorded is not None:
            if not same(recorded):
                raise Conflict(f"client_id {client_id!r} already recorded {other} (task {recorded.task_id}); "
                               f"send a new client_id for a new {what}")
            return None
        if self.state in ("closed", "archived"):
            raise Conflict(f"campaign {self.id} is {self.state}")
        now = self.settings.clock()
        lease = self.leases.get(task_id)
        if lease is None or lease.assessor != assessor or lease.expires_at <= now:
            self._refuse(assessor, task_id)
        return lease, now

    def skip(self, assessor: int, task_id: int, reason: str, comment: str | None, client_id: str,
             usage: dict[str, Any] | None = None) -> None:
        """Record that ``assessor`` skips the task they hold (``reason``: one of :data:`SKIP_REASONS`,
        ``comment``: their words or None): a "skip" row is committed, then the lease is closed and the
        request goes back to the others, never again to this assessor. The process, the answer counts
        and the quality signals do not change. Errors and the campaign's states as for :meth:`answer`;
        a ``client_id`` sent again with the same skip is recorded once, with anything else it gets 409."""
        with self.lock:
            held = self._held(assessor, task_id, client_id, lambda r: (r.kind, r.task_id, r.reason, r.comment) ==
                              ("skip", task_id, reason, comment), "something else", "skip")
            if held is None:
                return
            lease, now = held
            row = dict(campaign_id=self.id, task_id=task_id, assessor_id=assessor, topic=lease.topic, left=lease.left,
                       right=lease.right, winner=None, grade=None, client_id=client_id, created_at=now, kind="skip",
                       retracts=None, reason=reason, comment=comment, usage=usage)
            with self.engine.begin() as conn:
                row["id"] = conn.execute(_NEW_JUDGMENT, row).inserted_primary_key[0]
                conn.execute(_ANSWERED, {"task": task_id})
            self.apply(SimpleNamespace(**row))

    def set_crowd(self, crowd: dict[str, Any] | None) -> None:
        """Replace the crowd settings (checked by :func:`irbandits.service.crowd.check_crowd`), stored
        first; :class:`Conflict` when the practice pairs or bundles would change after work was logged."""
        self.editable()
        with self.lock:
            problem = self.crowd.change_problem(crowd, bool(self.log))
            if problem is not None:
                raise Conflict(problem)
            with self.engine.begin() as conn:
                conn.execute(update(CampaignRow).where(CampaignRow.id == self.id).values(crowd=crowd))
            self.crowd.configure(crowd)
            self.changed.set()

    def reports(self) -> list[dict[str, Any]]:
        """The skips and problem reports, in log order: what ``GET /api/campaigns/{CID}/reports`` lists."""
        with self.lock:
            return [dict(id=j.id, task=j.task_id, topic=j.topic, docnos=[j.left] if j.right is None else [j.left, j.right],
                         reason=j.reason, comment=j.comment, assessor=j.assessor_id, time=j.created_at)
                    for j in self.log if j.kind == "skip"]

    def undo(self, assessor: int, client_id: str) -> Lease:
        """Retract the assessor's latest answer (an appended "retract" row) and lease its request to
        them again; raises :class:`Conflict` when there is nothing to undo or its phase is closed."""
        with self.lock:
            if (assessor, client_id) in self.clients:  # the same undo sent again
                return self.leases[self.mine[assessor]] if assessor in self.mine else None
            if self.state != "running":   # an undo leases the pair again: that is new work
                raise Conflict(f"campaign {self.id} is {self.state}" +
                               ("; undo when it runs again" if self.state == "paused" else ""))
            j = self.last.get(assessor)
            if j is None or j.id in self.retracted:
                raise Conflict("nothing to undo: no answer since the last undo")
            why = self.undoable(j)
            if why is not None:
                raise Conflict(f"too late to undo: {why}")
            now = self.settings.clock()
            event = dict(campaign_id=self.id, task_id=j.task_id, assessor_id=assessor, topic=j.topic, left=j.left,
                         right=j.right, winner=j.winner, grade=j.grade, client_id=client_id, created_at=now,
                         kind="retract", retracts=j.id, reason=None, comment=None)
            with self.engine.begin() as conn:
                event["id"] = conn.execute(_NEW_JUDGMENT, event).inserted_primary_key[0]
            self.apply(SimpleNamespace(**event))
            if assessor in self.mine:  # the task shown after the answer goes back to the others
                del self.leases[self.mine.pop(assessor)]
            return self._lease(assessor, j.topic, j.left, j.right, j.kind, now)

    def set_revoked(self, assessor: int, revoked: bool) -> None:
        """Stop (or resume) giving ``assessor`` work; a revoked assessor's open lease goes back to the others."""
        with self.lock:
            if not revoked:
                self.revoked.discard(assessor)
                return
            self.revoked.add(assessor)
            lease = self.mine.pop(assessor, None)
            if lease is not None:
                self.leases.pop(lease, None)
            self.changed.set()

    # ----- quality -----------------------------------------------------------------------------
    def _check_flag(self, assessor: int) -> None:
        """Flag ``assessor`` (stored, process rebuilt without them) when the flag rule says so (not an
        automatic assessor: :meth:`_check_cut` is its rule)."""
        if assessor in self.flagged or assessor in self.trusted or assessor in self.hybrid.automatic:
            return
        reason = flag_reason(self.signals[assessor], self.options.get("threshold", 0.75),
                             self.options.get("min_agreement", 0.5))
        if reason is not None:
            with self.engine.begin() as conn:
                conn.execute(update(Assessor).where(Assessor.id == assessor).values(flagged=True))
            self.reasons[assessor] = reason
            self.flagged.add(assessor)
            self.rebuild()

    def _check_cut(self, assessor: int, after: int) -> None:
        """Cut automatic ``assessor`` off (stored; answers after row ``after`` stop counting; it gets no
        more work) when the hybrid rule says so (:mod:`irbandits.service.hybrid`)."""
        if assessor in self.hybrid.cut or assessor in self.trusted:
            return
        signals = self.signals.setdefault(assessor, Signals())
        reason = self.hybrid.verdict(assessor, signals)
        if reason is not None:
            right, scored = self.hybrid.score(assessor, signals)
            cut = dict(after=after, at=self.settings.clock(), reason=reason, right=right, scored=scored)
            with self.engine.begin() as conn:
                conn.execute(update(Assessor).where(Assessor.id == assessor).values(cutoff=cut))
            self.hybrid.cut[assessor] = cut
            self.changed.set()
            log.warning("campaign %s: automatic assessor %s cut off after judgment %s: %s", self.id, assessor,
                        after, reason)

    def set_flag(self, assessor: int, flagged: bool) -> None:
        """The organiser's decision: flag, or clear (and trust) an assessor (an automatic one's cut-off
        is lifted too); the process is rebuilt."""
        self.editable()
        with self.lock:
            with self.engine.begin() as conn:
                conn.execute(update(Assessor).where(Assessor.id == assessor)
                             .values(flagged=flagged, trusted=not flagged, **({} if flagged else {"cutoff": None})))
            if not flagged:
                self.hybrid.cut.pop(assessor, None)
                self.changed.set()
            if flagged:
                self.flagged.add(assessor)
                self.trusted.discard(assessor)
                self.reasons[assessor] = "flagged by the organiser"
            else:
                self.flagged.discard(assessor)
                self.trusted.add(assessor)
                self.reasons.pop(assessor, None)
            self.rebuild()

    def quality(self) -> dict[int, dict[str, Any]]:
        """Per assessor: their signals and, when flagged, why."""
        with self.lock:
            return {a: s.as_json() | dict(reason=self.reasons.get(a)) for a, s in self.signals.items()}

    def hybrid_summary(self, assessor: int, failed: bool) -> dict[str, Any]:
        """Automatic ``assessor`` under the hybrid rule (:meth:`irbandits.service.hybrid.HybridState.summary`),
        its ``status`` one of answering, cut off, flagged, revoked, failed or stopped."""
        with self.lock:
            status = ("failed" if failed else "revoked" if assessor in self.revoked else "flagged"
                      if assessor in self.flagged else "cut off" if assessor in self.hybrid.cut else "answering"
                      if assessor in self.hybrid.working else "stopped")
            return self.hybrid.summary(assessor, self.signals.get(assessor, Signals()), status)

    def _refuse(self, assessor: int, task_id: int) -> None:
        """Why a task is not open to ``assessor``: 404 (not theirs), 409 (answered or expired)."""
        if not in_range(task_id):
            raise NotFound(f"no task {task_id} for this assessor")
        with self.engine.connect() as conn:
            task = conn.execute(select(Task.assessor_id, Task.answered).where(Task.id == task_id)).first()
        if task is None or task.assessor_id != assessor:
            raise NotFound(f"no task {task_id} for this assessor")
        if task.answered:
            raise Conflict(f"task {task_id} is already answered")
        raise Conflict(f"the lease on task {task_id} expired; GET /api/next for a new task")

    def _value(self, task: Lease, answer: Any) -> dict[str, Any]:
        if task.right is not None:
            if answer not in ("left", "right"):
                raise IrbanditsError(f'answer: a preference answer is "left" or "right", got {answer!r}')
            return dict(winner=task.left if answer == "left" else task.right)
        grades = self.judge.grades
        if isinstance(answer, bool) or answer not in grades:
            raise IrbanditsError(f"answer: a grade is one of {grades}, got {answer!r}")
        return dict(grade=float(answer))

    # ----- lifecycle ---------------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        """Move the campaign to ``state`` (stored first); a move :data:`MOVES` does not allow gets
        :class:`Conflict` naming the current state. Automatic assessors wake to see the change."""
        with self.lock:
            if state not in MOVES[self.state]:
                raise Conflict(f"campaign {self.id} is already {state}" if state == self.state else
                               f"campaign {self.id} is {self.state}: it can move to "
                               f"{' or '.join(MOVES[self.state])}, not to {state}")
            with self.engine.begin() as conn:
                conn.execute(update(CampaignRow).where(CampaignRow.id == self.id).values(state=state))
            self.state = state
            self.changed.set()

    def editable(self) -> None:
        """Raise :class:`Conflict` when the campaign is archived (read-only until moved back to closed)."""
        if self.state == "archived":
            raise Conflict(f"campaign {self.id} is archived (read-only); move it back to closed to change it")

    # ----- progress ----------------------------------------------------------------------------
    def progress(self) -> dict[str, Any]:
        """The body of ``GET /api/campaigns/{CID}``."""
        with self.lock:
            preference = self.kind == "preference"
            saved = self.judge.saved() if preference else {}
            topics = [dict(topic=t, judgments=self.per_topic[t], done=self.judge.done(t),
                           settled=self.judge.settled[t] if preference else self.judge.done(t),
                           open=len(self.judge.open[t]) if preference else 0, saved=saved.get(t, 0))
                      for t in self.topics if t in self.judge.process.topics]   # not a practice-only topic
            open_requests = sum(t["open"] for t in topics)
            stop = preference and self.judge.stop_settled
            flagged = len(self.flagged)
            first = self.hybrid.active(self.flagged | self.revoked) if preference else set()
            people = sum(self.hybrid.passed(self.judge.key(*r), first, self.seen) for r in self.judge.requests()) \
                if first else open_requests
        return dict(id=self.id, name=self.name, kind=self.kind, state=self.state, options=self.options, topics=topics,
                    judgments=sum(self.per_topic.values()),
                    done=all(t["settled"] if stop else t["done"] for t in topics),
                    requests=open_requests, for_people=people, settled=sum(t["settled"] for t in topics),
                    saved=sum(saved.values()), flagged=flagged)

    def answers(self) -> dict[int, int]:
        """Answers per assessor (target answers and quality checks, retracted ones not counted)."""
        with self.lock:
            return {a: s.answers for a, s in self.signals.items()}

    def agreement(self) -> dict[str, Any]:
        with self.lock:
            return agreement(self.votes)

    def judgments_text(self, log: bool = False) -> str:
        """The judgments export: target answers in log order, without flagged assessors' and retracted
        ones; with ``log``, every row of the append-only log with its kind as a last column."""
        with self.lock:
            if log:
                return judgments_text(self.log, kinds=True)
            return judgments_text(j for j in self.log if self.exported(j))

    def qrels_text(self, best: bool = False) -> str:
        """The qrels export (preference: finished topics; ``best``: only each topic's best items)."""
        with self.lock:
            return self.judge.qrels(best)

    def exported(self, j) -> bool:
        """Whether a judgments row is in the exports: a target answer, not retracted nor in a rejected
        bundle, its assessor unflagged."""
        return (j.kind == "answer" and j.id not in self.retracted and j.id not in self.rejected
                and j.assessor_id not in self.flagged)
