"""Group commit of the experiments' log (:mod:`irbandits.service.logwriter`): writes that arrive while a
commit is in flight are committed together, each answered only after its commit; a failed group fails
its writes and its experiments' queued ones, and leaves other experiments' writes alone."""

from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from irbandits.errors import Unavailable
from irbandits.service.db import make_engine, migrate
from irbandits.service.guard import refusal
from irbandits.service.logwriter import LogWriter
from irbandits.service.models import ExperimentRow, Impression


class Injected(Exception):
    """A database failure made up by the test."""


@pytest.fixture
def writer(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'log.db'}")
    migrate(engine)
    with engine.begin() as conn:
        for eid in (1, 2):
            conn.execute(ExperimentRow.__table__.insert().values(id=eid, name="e", rankers=["a", "b"], algorithm="RUCB",
                                                                comparison="team-draft", seed=0, created_at=0.0))
    log = LogWriter(engine)
    yield log
    engine.dispose()


def impression(log: LogWriter, owner, seq: int, then=None) -> asyncio.Future:
    return log.submit(owner, log.new_impression, dict(experiment_id=owner.id, seq=seq, c=0, d=1, shown=None,
                                                      issued_at=0.0, expires_at=1.0), then)


def held(log: LogWriter, fail: bool = False):
    """Make the first write block until the returned event is set (then raise Injected if ``fail``); record
    the size of every group after it."""
    release, groups, real_write, real_all = threading.Event(), [], log.write, log.write_all

    def write(statement, params):
        if not release.is_set():
            release.wait(10)
            if fail:
                raise Injected("the commit failed")
        groups.append(1)
        return real_write(statement, params)

    def write_all(writes):
        groups.append(len(writes))
        return real_all(writes)

    log.write, log.write_all = write, write_all
    return release, groups


def stored(log: LogWriter) -> int:
    with log.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(Impression)).scalar()


def test_writes_arriving_during_a_commit_are_committed_together_and_answered_after_it(writer):
    release, groups = held(writer)
    owner, opened = SimpleNamespace(id=1, stale=False), []

    def then(row):
        opened.append(row)
        return row[0]

    async def run():
        first = impression(writer, owner, 1)
        await asyncio.sleep(0.05)                      # the writer is now in the first commit
        rest = [impression(writer, owner, seq, then) for seq in range(2, 7)]
        await asyncio.sleep(0.05)
        waiting = [f.done() for f in [first, *rest]]
        release.set()
        return waiting, await first, await asyncio.gather(*rest)

    waiting, first, rest = asyncio.run(run())
    assert waiting == [False] * 6                      # nothing is answered before its commit
    assert groups == [1, 5]                            # the five that came during the first commit: one group
    ids = [first[0], *rest]                            # ``then`` gave the id of each row, in order
    assert len(set(ids)) == 6 and [row[0] for row in opened] == ids[1:]
    assert stored(writer) == 6


def test_a_failed_group_fails_its_writes_and_its_experiments_queued_writes_only(writer):
    release, groups = held(writer, fail=True)
    a, b = SimpleNamespace(id=1, stale=False), SimpleNamespace(id=2, stale=False)

    async def run():
        first = impression(writer, a, 1)
        await asyncio.sleep(0.05)
        queued_a, queued_b = impression(writer, a, 2), impression(writer, b, 1)
        release.set()
        results = await asyncio.gather(first, queued_a, queued_b, return_exceptions=True)
        with pytest.raises(Unavailable) as refused:   # a stale experiment takes no write until it is rebuilt
            impression(writer, a, 3)
        return results, refused.value

    (first, queued_a, queued_b), refused = asyncio.run(run())
    assert isinstance(first, Injected)
    assert isinstance(queued_a, Unavailable) and refusal(queued_a)[0] == 503   # its log must not skip seq 1
    assert isinstance(queued_b, tuple) and refusal(refused)[0] == 503
    assert (a.stale, b.stale) == (True, False) and groups == [1] and stored(writer) == 1
