"""The campaigns' registry: every :class:`~irbandits.service.campaign_runtime.CampaignRuntime`, rebuilt
at start by replaying the judgments table; the assessors (people, crowd workers who join by a link, and
automatic assessors running in threads, by the names whoever started the server registered); their
tokens, revocation and payments; creating and deleting campaigns."""

from __future__ import annotations

import hmac
import logging
import threading
from collections import defaultdict
from types import SimpleNamespace
from typing import Any, Callable

from sqlalchemy import delete, func, select, update

from irbandits.errors import Conflict, IrbanditsError, NotFound, Unauthorized
from irbandits.judging.assessors import AssessorRegistry, ask, metered
from irbandits.service.campaign_runtime import CampaignRuntime
from irbandits.service.credentials import new_token, token_hash
from irbandits.service.crowd import join_token, new_code, platform_columns, worker_token
from irbandits.service.hybrid import UNSURE
from irbandits.service.judges import log_row
from irbandits.service.models import Assessor, CampaignRow, JoinLink, Judgment, Task
from irbandits.service.quality import Signals
from irbandits.service.settings import Settings

log = logging.getLogger("irbandits.service")


class Campaigns:
    """Every campaign's runtime, rebuilt at start by replaying the judgments table in order, and the
    automatic assessors at work (by their names in ``automatic``, the registry of allowed code)."""

    def __init__(self, sessions, settings: Settings, automatic: AssessorRegistry):
        self.sessions, self.settings, self.automatic = sessions, settings, automatic
        self.engine = sessions.kw["bind"]
        self.campaigns: dict[int, CampaignRuntime] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.workers: list[Automatic] = []
        self.failed: dict[int, str] = {}   # automatic assessor -> why it stopped

    @classmethod
    def load(cls, sessions, settings: Settings, automatic: AssessorRegistry) -> "Campaigns":
        registry = cls(sessions, settings, automatic)
        with sessions() as session:
            for row in session.scalars(select(CampaignRow).order_by(CampaignRow.id)):
                registry.campaigns[row.id] = runtime = CampaignRuntime(row, settings, registry.engine)
                for a in session.scalars(select(Assessor).where(Assessor.campaign_id == row.id)):
                    if a.revoked:
                        runtime.revoked.add(a.id)
                    if a.flagged:
                        runtime.flagged.add(a.id)
                        runtime.reasons[a.id] = "flagged before the restart"
                    if a.trusted:
                        runtime.trusted.add(a.id)
                    if a.consented_at is not None:
                        runtime.crowd.consented.add(a.id)
                    if a.automatic is not None:
                        runtime.crowd.exempt.add(a.id)
                        runtime.hybrid.automatic.add(a.id)
                    if a.cutoff is not None:
                        runtime.hybrid.cut[a.id] = a.cutoff
                for aid, started in session.execute(select(Task.assessor_id, func.min(Task.issued_at)).where(
                        Task.campaign_id == row.id).group_by(Task.assessor_id)):
                    runtime.crowd.people[aid].started = started
                issued = dict(session.execute(select(Task.id, Task.issued_at).where(Task.campaign_id == row.id)).all())
                columns = [c.key for c in Judgment.__table__.columns]
                for j in session.scalars(select(Judgment).where(Judgment.campaign_id == row.id).order_by(Judgment.id)):
                    runtime.apply(SimpleNamespace(**{c: getattr(j, c) for c in columns}), issued.get(j.task_id))
                for task in session.scalars(select(Task).where(Task.campaign_id == row.id, Task.answered.is_(False),
                                                               Task.expires_at > settings.clock())):
                    runtime.hold(task)
            automatic = session.execute(select(Assessor.campaign_id, Assessor.id, Assessor.automatic).where(
                Assessor.automatic.is_not(None))).all()   # a revoked one idles until it is restored
        for cid, aid, name in automatic:
            try:
                registry.start_automatic(registry.campaigns[cid], aid, name)
            except IrbanditsError as exc:   # no longer registered (or an old module:function): not imported
                registry.failed[aid] = str(exc)
                log.warning("automatic assessor %s not started: %s", aid, exc)
        return registry

    def start_automatic(self, runtime: CampaignRuntime, assessor: int, name: str) -> None:
        """Run the automatic assessor registered as ``name`` on ``runtime`` in a daemon thread; an unknown
        name raises :class:`IrbanditsError` and nothing is imported."""
        worker = Automatic(runtime, assessor, name, self.automatic.get(name), self.stopping, self.failed)
        self.workers.append(worker)
        worker.start()

    def add_assessor(self, runtime: CampaignRuntime, name: str, automatic: str | None = None) -> tuple[int, str]:
        """A new assessor of ``runtime`` (a person, or the automatic assessor registered as ``automatic``,
        started at once): ``(id, token)``; only the token's hash is stored."""
        runtime.editable()
        if automatic is not None:
            if runtime.kind != "preference":
                raise IrbanditsError("automatic: automatic assessors answer preference campaigns")
            self.automatic.get(automatic)   # an unregistered name: 422 naming the registered ones
        token = new_token()
        with self.sessions() as session:
            row = Assessor(campaign_id=runtime.id, name=name, token_hash=token_hash(token), revoked=False,
                           flagged=False, trusted=False, automatic=automatic, created_at=self.settings.clock(),
                           code=new_code())
            session.add(row)
            session.commit()
        if automatic is not None:
            runtime.crowd.exempt.add(row.id)
            runtime.hybrid.automatic.add(row.id)
            self.start_automatic(runtime, row.id, automatic)
        return row.id, token

    def add_people(self, runtime: CampaignRuntime, names: list[str]) -> list[tuple[int, str]]:
        """New assessors (people) of ``runtime``, one per name, in one transaction (all or none):
        ``[(id, token), ...]`` in the order of ``names``; only the tokens' hashes are stored."""
        runtime.editable()
        tokens = [new_token() for _ in names]
        now = self.settings.clock()
        with self.sessions() as session:
            rows = [Assessor(campaign_id=runtime.id, name=name, token_hash=token_hash(token), revoked=False,
                             flagged=False, trusted=False, automatic=None, created_at=now, code=new_code())
                    for name, token in zip(names, tokens)]
            session.add_all(rows)
            session.commit()
            return [(row.id, token) for row, token in zip(rows, tokens)]

    # ----- crowd: the join link, consent, payments (module irbandits.service.crowd) ----------------
    def join(self, runtime: CampaignRuntime, secret: bytes, worker: str, ids: dict[str, str]) -> str:
        """The token of the joined ``worker``'s assessor: their own again when they come back (a new
        token, derived from ``secret``, so the link they come back through works), else a new assessor
        while the join link's cap allows; raises :class:`Conflict` (closed, full, campaign not open) or
        :class:`Unauthorized` (the organiser revoked them)."""
        with self.lock, self.sessions() as session:
            link = session.get(JoinLink, runtime.id)
            mine = session.scalars(select(Assessor).where(Assessor.campaign_id == runtime.id,
                                                          Assessor.worker == worker)).first()
            token = worker_token(secret, runtime.id, worker, mine and mine.link)
            if mine is not None:
                if mine.revoked:
                    raise Unauthorized("the organiser has withdrawn this worker's access")
                if mine.token_hash != token_hash(token):   # the server's secret changed
                    mine.token_hash = token_hash(token)
                    session.commit()
                return token
            if link is None or not link.open:
                raise Conflict("this join link is closed")
            if runtime.state != "running":
                raise Conflict(f"this campaign is {runtime.state}: it takes no new assessors now")
            joined = session.scalar(select(func.count()).select_from(Assessor).where(
                Assessor.campaign_id == runtime.id, Assessor.worker.is_not(None)))
            if joined >= link.cap:
                raise Conflict(f"this study is full ({link.cap} assessors joined)")
            session.add(Assessor(campaign_id=runtime.id, name=worker, token_hash=token_hash(token), revoked=False,
                                 flagged=False, trusted=False, automatic=None, created_at=self.settings.clock(),
                                 worker=worker, platform=ids, code=new_code()))
            session.commit()
        return token

    def find_join(self, secret: bytes, token: str) -> CampaignRuntime | None:
        """The campaign whose join link (open or closed, in its current generation) is ``token``, or None."""
        with self.sessions() as session:
            links = session.execute(select(JoinLink.campaign_id, JoinLink.generation)).all()
        for cid, generation in links:
            if hmac.compare_digest(join_token(secret, cid, generation), token) and cid in self.campaigns:
                return self.campaigns[cid]
        return None

    def join_link(self, runtime: CampaignRuntime) -> tuple[JoinLink | None, int]:
        """The campaign's join link row (None: none yet) and how many assessors joined through it."""
        with self.sessions() as session:
            link = session.get(JoinLink, runtime.id)
            joined = session.scalar(select(func.count()).select_from(Assessor).where(
                Assessor.campaign_id == runtime.id, Assessor.worker.is_not(None)))
            return link, joined

    def set_join_link(self, runtime: CampaignRuntime, cap: int | None, open_: bool | None, rotate: bool) -> JoinLink:
        """Make, open, close, re-cap or rotate (a new token; the old one stops working) the join link;
        a new link needs ``cap``."""
        runtime.editable()
        with self.lock, self.sessions() as session:
            link = session.get(JoinLink, runtime.id)
            if link is None:
                if cap is None:
                    raise IrbanditsError("cap: a new join link needs a cap (how many assessors it may create)")
                link = JoinLink(campaign_id=runtime.id, generation=0, cap=cap, open=True,
                                created_at=self.settings.clock())
                session.add(link)
            if cap is not None:
                link.cap = cap
            if open_ is not None:
                link.open = open_
            if rotate:
                link.generation += 1
            session.commit()
            session.refresh(link)
            session.expunge(link)
            return link

    def consent(self, runtime: CampaignRuntime, assessor: int) -> None:
        """Record that ``assessor`` agreed to the campaign's consent (once; later calls change nothing)."""
        if assessor in runtime.crowd.consented:
            return
        with self.engine.begin() as conn:
            conn.execute(update(Assessor).where(Assessor.id == assessor, Assessor.consented_at.is_(None))
                         .values(consented_at=self.settings.clock()))
        runtime.crowd.consented.add(assessor)

    def payments(self, runtime: CampaignRuntime) -> list[dict[str, Any]]:
        """The payment report: per assessor their name, platform ids, completion code, answers, checks,
        bundles (accepted, rejected), skips, active time (lease to answer, at most a lease each) and
        first and last activity (unix seconds)."""
        done = runtime.progress()["done"]
        with runtime.lock:
            rows, now = list(runtime.log), self.settings.clock()
        with self.engine.connect() as conn:
            issued = dict(conn.execute(select(Task.id, Task.issued_at).where(Task.campaign_id == runtime.id)).all())
        mine = defaultdict(list)
        for j in rows:
            if j.kind != "retract" and j.id not in runtime.retracted:
                mine[j.assessor_id].append(j)
        out = []
        for a in self.assessors(runtime.id):
            stage = runtime.crowd.stage(a.id, now, done)
            shown = runtime.crowd.completion(a.code)   # the code this assessor is given (their own with "auto")
            out.append(dict(id=a.id, name=a.name, **platform_columns(a.platform), code=shown and shown["code"], stage=stage,
                            flagged=a.id in runtime.flagged, revoked=a.revoked,
                            **runtime.crowd.payment(a.id, mine[a.id], self.settings.lease_seconds, issued)))
        return out

    def log_rows(self, runtime: CampaignRuntime) -> list[dict[str, Any]]:
        """Every row of ``runtime``'s judgments log, in order, for the JSON Lines and CSV exports
        (:func:`irbandits.service.judges.log_row`: with the assessor's name and the lease's time)."""
        with runtime.lock:
            rows = list(runtime.log)
        people = {a.id: a for a in self.assessors(runtime.id)}
        with self.engine.connect() as conn:   # after the log's copy: every task of its rows is there
            issued = dict(conn.execute(select(Task.id, Task.issued_at).where(Task.campaign_id == runtime.id)).all())
        return [log_row(j, people[j.assessor_id].name, people[j.assessor_id].automatic, issued.get(j.task_id),
                        platform_columns(people[j.assessor_id].platform)) for j in rows]

    def rename(self, runtime: CampaignRuntime, assessor: int, name: str) -> None:
        """Give an assessor of ``runtime`` a new name (a checked one, see
        :func:`irbandits.service.validation.name_problem`); 404 when it is none of its."""
        self.assessor(runtime, assessor)
        runtime.editable()
        with self.engine.begin() as conn:   # the write empties the token cache, which holds names too
            conn.execute(update(Assessor).where(Assessor.id == assessor).values(name=name))

    def listing(self, runtime: CampaignRuntime) -> list[dict[str, Any]]:
        """Each assessor of ``runtime`` with their answers, flag, revocation, failure and quality signals."""
        counts, quality = runtime.answers(), runtime.quality()
        return [dict(id=a.id, name=a.name, judgments=counts.get(a.id, 0), flagged=a.flagged, revoked=a.revoked,
                     automatic=a.automatic, failed=self.failed.get(a.id) if a.automatic else None,
                     hybrid=runtime.hybrid_summary(a.id, a.id in self.failed) if a.automatic else None,
                     **quality.get(a.id, Signals().as_json() | dict(reason=None)))
                for a in self.assessors(runtime.id)]

    def assessor(self, runtime: CampaignRuntime, assessor: int) -> Assessor:
        """Assessor ``assessor`` of campaign ``runtime``; 404 when it is none of its."""
        found = next((a for a in self.assessors(runtime.id) if a.id == assessor), None)
        if found is None:
            raise NotFound(f"no assessor {assessor} in campaign {runtime.id}")
        return found

    def set_revoked(self, runtime: CampaignRuntime, assessor: int, revoked: bool) -> None:
        """Revoke (or restore) an assessor's token: their next call gets 401, their answers stay in the
        log, their open lease goes to others; an automatic assessor gets no work until it is restored."""
        self.assessor(runtime, assessor)
        runtime.editable()
        with self.engine.begin() as conn:   # the write empties the token cache (irbandits.service.auth)
            conn.execute(update(Assessor).where(Assessor.id == assessor).values(revoked=revoked))
        runtime.set_revoked(assessor, revoked)

    def reissue(self, runtime: CampaignRuntime, assessor: int, secret: bytes) -> str:
        """A new token for an assessor (a new link); the old one stops working at once. A joined worker's
        is their next derived token (``secret``: the server's), which the join link then gives them."""
        row = self.assessor(runtime, assessor)
        if row.automatic is not None:
            raise IrbanditsError("token: an automatic assessor has no link to re-issue")
        runtime.editable()
        link = (row.link or 0) + 1 if row.worker is not None else None
        token = new_token() if link is None else worker_token(secret, runtime.id, row.worker, link)
        with self.engine.begin() as conn:
            conn.execute(update(Assessor).where(Assessor.id == assessor)
                         .values(token_hash=token_hash(token), revoked=False, link=link))
        runtime.set_revoked(assessor, False)
        return token

    def stop(self) -> None:
        """Stop the automatic assessors (at shutdown, or before a test starts a new app on the database)."""
        self.stopping.set()
        for worker in self.workers:
            worker.join(5)

    def create(self, fields: dict[str, Any]) -> CampaignRuntime:
        """Store a checked campaign (see :func:`irbandits.service.campaign_spec.check_campaign`) and start it."""
        with self.lock, self.sessions() as session:
            row = CampaignRow(created_at=self.settings.clock(), **fields)
            session.add(row)
            session.commit()
            self.campaigns[row.id] = runtime = CampaignRuntime(row, self.settings, self.engine)
        return runtime

    def delete(self, runtime: CampaignRuntime) -> None:
        """Remove a closed or archived campaign (else :class:`Conflict`): its judgments, tasks, assessors
        and row in one transaction, then its runtime and its automatic assessors. Its assessors' tokens
        are unknown from then on (401) and its id is 404."""
        with self.lock, runtime.lock:
            if runtime.state not in ("closed", "archived"):
                raise Conflict(f"campaign {runtime.id} is {runtime.state}; close it before deleting it")
            with self.engine.begin() as conn:   # the assessors' delete empties the token cache
                for table in (Judgment, Task, Assessor, JoinLink):
                    conn.execute(delete(table).where(table.campaign_id == runtime.id))
                conn.execute(delete(CampaignRow).where(CampaignRow.id == runtime.id))
            del self.campaigns[runtime.id]
            runtime.removed = True
            runtime.changed.set()
        for worker in [w for w in self.workers if w.runtime is runtime]:
            worker.join(5)
            self.workers.remove(worker)
            self.failed.pop(worker.assessor, None)

    def get(self, campaign_id: int) -> CampaignRuntime:
        """Campaign ``campaign_id``; 404 when there is none."""
        runtime = self.campaigns.get(campaign_id)
        if runtime is None:
            raise NotFound(f"no campaign {campaign_id}")
        return runtime

    def assessors(self, campaign_id: int) -> list[Assessor]:
        with self.sessions() as session:
            return list(session.scalars(select(Assessor).where(Assessor.campaign_id == campaign_id).order_by(Assessor.id)))


class Automatic(threading.Thread):
    """An automatic assessor: a registered callable ``f(topic, query, left_text, right_text) -> "left" |
    "right" | "unsure"`` (:mod:`irbandits.judging.assessors`) answering a preference campaign's tasks
    through the same lease / answer path as a person, so it never gets a pair twice and its answers are
    logged and checked like anyone's, under the hybrid rule (:mod:`irbandits.service.hybrid`: people get
    the pairs it passes on). It waits for the campaign to change when nothing is open for it (or while
    it is revoked or cut off, or the campaign is not running), and stops when the campaign is deleted.
    "unsure" is logged as a skip ("cant-judge", :data:`~irbandits.service.hybrid.UNSURE`): the pair goes
    to people. Each row carries what its call cost (:func:`irbandits.judging.assessors.metered`). When
    the callable raises (or answers something else) the assessor is marked failed (``failed``) and stops;
    people then get every pair."""

    def __init__(self, runtime: CampaignRuntime, assessor: int, name: str, judge: Callable,
                 stopping: threading.Event, failed: dict[int, str]):
        super().__init__(daemon=True, name=f"automatic-{assessor}")
        self.runtime, self.assessor, self.name, self.judge = runtime, assessor, name, judge
        self.stopping, self.failed = stopping, failed

    def run(self) -> None:
        r = self.runtime
        self.failed.pop(self.assessor, None)
        with r.lock:
            r.hybrid.working.add(self.assessor)
        try:
            self._work()
        finally:
            with r.lock:
                r.hybrid.working.discard(self.assessor)
            r.changed.set()

    def _work(self) -> None:
        r = self.runtime
        while not self.stopping.is_set() and not r.removed:
            lease = r.next_task(self.assessor)
            if lease is None:
                r.changed.wait(0.5)
                r.changed.clear()
                continue
            try:
                side, usage = metered(self.judge, lambda: ask(self.judge, self.name, lease.topic,
                                                              r.topics[lease.topic], r.texts[lease.left],
                                                              r.texts[lease.right]))
                if side == "unsure":   # logged as its skip: the pair goes to the people, never back to it
                    r.skip(self.assessor, lease.id, "cant-judge", UNSURE, f"auto-{lease.id}", usage)
                else:
                    r.answer(self.assessor, lease.id, side, f"auto-{lease.id}", usage)
            except (Conflict, Unauthorized):   # the lease expired while it thought, or it was revoked: ask again
                continue
            except Exception as exc:
                self.failed[self.assessor] = f"{type(exc).__name__}: {exc}"[:500]
                log.exception("automatic assessor %s (%s) failed and stopped", self.assessor, self.name)
                return
