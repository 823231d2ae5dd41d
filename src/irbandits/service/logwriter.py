"""The experiments' log writes, committed in groups: :class:`LogWriter`.

A front end's cycle writes three rows (an impression, its shown list, its outcome), each committed
before its request is answered. One commit per write would make the database's flush (PostgreSQL's
WAL fsync, milliseconds) the limit on requests per second, so the writes are committed in groups:

- a request queues its write (:meth:`LogWriter.submit`, in the order the runtime made it, so each
  experiment's ``seq`` order) and awaits its future;
- one writer thread commits whatever is queued in one transaction; writes that arrive while that
  commit is in flight wait for the next one, which holds them all. Before it starts a commit, the
  writer lets the group fill up to the size of the largest recent group, for at most the time the
  last commit took: with a few clients that each wait for their answer, committing at the first write
  would split them into two groups that each wait for the other's commit;
- a write's future is resolved (on the event loop of the request) only after the commit that holds
  it, so nothing is acknowledged before it is stored. Its ``then`` callback runs there first, not in
  the request's task, so memory follows every committed write even if the request is cancelled.

A group that fails (or whose commit is in doubt) fails every write in it. The experiments it touched
are marked ``stale``, and their writes still queued fail as well (503): an experiment's later write
must not commit after an earlier one failed, or its log would skip a ``seq``. A stale experiment takes
no new write until it has rebuilt itself from the tables
(:meth:`irbandits.service.experiment_runtime.ExperimentRuntime.rebuild`).

The writes run on one database connection kept open, in autocommit mode, with statements compiled once
by SQLAlchemy for the engine's dialect and run on the driver's cursor (no pool checkout, no ORM objects):
a group of one is a single statement committed in the same round trip; a larger group is
``BEGIN`` ... ``COMMIT``.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from sqlalchemy import bindparam, insert, update
from sqlalchemy.engine import Engine

from irbandits.errors import Unavailable
from irbandits.service.models import Impression, Outcome

IDLE_SECONDS = 1.0          # the writer thread ends after this long without work (the next write starts one)
GROUPS_REMEMBERED = 16      # a group waits to be as large as the largest of the last ones ...
MAX_LINGER_SECONDS = 0.01   # ... for at most the last commit's time, and never longer than this
_IMPRESSION_FIELDS = ("experiment_id", "seq", "c", "d", "shown", "issued_at", "expires_at")
_OUTCOME_FIELDS = ("experiment_id", "impression_id", "seq", "kind", "winner", "credit", "c_won", "clicks", "created_at")

Statement = tuple[str, "tuple[str, ...] | None"]   # SQL and the order of its "?" parameters (SQLite)


@dataclass(slots=True)
class Write:
    """One queued write: whose log it extends (an object with ``id`` and ``stale``), what, and who waits."""

    owner: Any
    statement: Statement
    params: dict[str, Any]
    then: Callable[[Any], Any] | None
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop


class LogWriter:
    """Group commit of the experiments' log on one connection of ``engine`` (see the module)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.lock = threading.Lock()     # one statement at a time on the connection
        self.conn = None
        self.new_impression = self._compile(insert(Impression).values({f: bindparam(f) for f in _IMPRESSION_FIELDS})
                                            .returning(Impression.id))
        self.show = self._compile(update(Impression).where(Impression.id == bindparam("iid"))
                                  .values(shown=bindparam("shown")))
        self.new_outcome = self._compile(insert(Outcome).values({f: bindparam(f) for f in _OUTCOME_FIELDS}))
        self.queue: list[Write] = []
        self.waiting = threading.Condition()   # guards the queue, the writer thread and the owners' ``stale``
        self.thread: threading.Thread | None = None
        self.wanted = 1                        # queued writes that wake the writer thread

    def _compile(self, statement) -> Statement:
        compiled = statement.compile(dialect=self.engine.dialect)
        return compiled.string, compiled.positiontup

    # ----- the requests' side (on their event loop) ---------------------------------------------
    def submit(self, owner, statement: Statement, params: dict[str, Any],
               then: Callable[[Any], Any] | None = None) -> asyncio.Future:
        """Queue a write of ``owner``'s log for the next group commit. The future gives ``then(row)`` (or the
        row: the first row of a RETURNING statement, else None) once the write is committed; 503 at once
        when ``owner`` is stale."""
        loop = asyncio.get_running_loop()
        write = Write(owner, statement, params, then, loop.create_future(), loop)
        with self.waiting:
            if owner.stale:
                raise _unavailable(owner)
            self.queue.append(write)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="irbandits-log-writer", daemon=True)
                self.thread.start()
            elif len(self.queue) >= self.wanted:
                self.waiting.notify()
        return write.future

    # ----- the writer thread --------------------------------------------------------------------
    def _run(self) -> None:
        sizes, took = collections.deque([1], maxlen=GROUPS_REMEMBERED), 0.0
        while True:
            with self.waiting:
                group = self._next_group(max(sizes), took)
                if group is None:
                    self.thread = None
                    return
            start = time.perf_counter()
            try:
                if len(group) == 1:
                    rows = [self.write(group[0].statement, group[0].params)]
                else:
                    rows = self.write_all([(w.statement, w.params) for w in group])
            except Exception as exc:
                dropped = self._failed(group)
                self._settle(group + dropped, [None] * (len(group) + len(dropped)),
                             [exc] * len(group) + [_unavailable(w.owner) for w in dropped])
            else:
                self._settle(group, rows, [None] * len(group))
            sizes.append(len(group))
            took = time.perf_counter() - start

    def _next_group(self, size: int, linger: float) -> list[Write] | None:
        """Under ``waiting``: the writes of the next commit (None after :data:`IDLE_SECONDS` without any):
        once one is queued, all that come until there are ``size`` or ``linger`` seconds have passed."""
        self.wanted = 1
        if not self.waiting.wait_for(lambda: self.queue, IDLE_SECONDS):
            return None
        self.wanted = size
        self.waiting.wait_for(lambda: len(self.queue) >= size, min(linger, MAX_LINGER_SECONDS))
        self.wanted = 1
        group, self.queue = self.queue, []
        return group

    def _failed(self, group: list[Write]) -> list[Write]:
        """Mark the owners of a failed group stale; returns their writes taken off the queue."""
        owners = {id(w.owner): w.owner for w in group}
        with self.waiting:
            for owner in owners.values():
                owner.stale = True
            dropped = [w for w in self.queue if id(w.owner) in owners]
            self.queue = [w for w in self.queue if id(w.owner) not in owners]
        return dropped

    @staticmethod
    def _settle(group: list[Write], rows: list, errors: list) -> None:
        """Resolve the writes' futures, one callback per event loop."""
        by_loop: dict[asyncio.AbstractEventLoop, list] = {}
        for w, row, error in zip(group, rows, errors):
            by_loop.setdefault(w.loop, []).append((w, row, error))
        for loop, items in by_loop.items():
            try:
                loop.call_soon_threadsafe(_resolve, items)
            except RuntimeError:   # that loop is closed: nobody waits any more
                pass

    # ----- the connection -----------------------------------------------------------------------
    def _connection(self):
        if self.conn is None:
            self.conn = self.engine.raw_connection()
            # each statement is its own transaction unless a group says BEGIN
            self.engine.dialect.set_isolation_level(self.conn.dbapi_connection, "AUTOCOMMIT")
        return self.conn

    def _dropped(self) -> None:
        """After a failed statement: drop the connection (the next write opens a new one)."""
        conn, self.conn = self.conn, None
        conn.invalidate()

    @staticmethod
    def _send(cursor, statement: Statement, params: dict[str, Any]):
        sql, order = statement
        cursor.execute(sql, params if order is None else [params[name] for name in order])
        return cursor

    def _execute(self, cursor, statement: Statement, params: dict[str, Any]):
        self._send(cursor, statement, params)
        return cursor.fetchone() if cursor.description else None

    def write(self, statement: Statement, params: dict[str, Any]):
        """Run and commit one compiled statement with ``params``; returns its first row (RETURNING) or None."""
        with self.lock:
            cursor = self._connection().cursor()
            try:
                row = self._execute(cursor, statement, params)
                cursor.close()
            except BaseException:
                self._dropped()
                raise
        return row

    def write_all(self, writes: list[tuple[Statement, dict[str, Any]]]) -> list:
        """Run ``(statement, params)`` pairs in one transaction; their first rows once it is committed.

        On psycopg 3 the group goes in one pipeline (one round trip, the rows read after the commit);
        elsewhere (SQLite, in process) each statement's row is read before the next one runs."""
        with self.lock:
            conn = self._connection()
            try:
                pipeline = getattr(conn.dbapi_connection, "pipeline", None)
                if pipeline is not None:
                    with pipeline():
                        conn.cursor().execute("BEGIN")
                        cursors = [self._send(conn.cursor(), statement, params) for statement, params in writes]
                        conn.cursor().execute("COMMIT")
                    rows = [cursor.fetchone() if cursor.description else None for cursor in cursors]
                else:
                    cursor = conn.cursor()
                    cursor.execute("BEGIN")
                    rows = [self._execute(cursor, statement, params) for statement, params in writes]
                    cursor.execute("COMMIT")
            except BaseException:
                self._dropped()
                raise
        return rows


def _unavailable(owner) -> Unavailable:
    return Unavailable(f"experiment {owner.id}: a write to the database failed; try again")


def _resolve(items: list[tuple[Write, Any, Exception | None]]) -> None:
    """On the requests' event loop: run each committed write's ``then`` and settle its future."""
    for w, row, error in items:
        if error is None and w.then is not None:
            try:
                row = w.then(row)
            except Exception as exc:
                row, error = None, exc
        if not w.future.done():
            if error is None:
                w.future.set_result(row)
            else:
                w.future.set_exception(error)
