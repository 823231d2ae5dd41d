"""Online experiments: a registered dueling bandit picks which two rankers to compare, clicks or votes decide.

The service drives the library's own objects: the algorithm is ``irbandits.dueling.parse_spec(algorithm)``
(what ``irbandits simulate --algorithm`` takes) driven through ``select()`` / ``update()`` /
``recommend()``; the comparison is an interleaving method of :mod:`irbandits.clicks.interleaving`
with a list length (``length``, default 10). The experiments table keeps both in its ``comparison``
column: the method's name, with ``@LENGTH`` appended when the length is not 10 (``team-draft@20``).

Order and durability (spec ``service.md``, "Online experiments"):

- every ``select()`` (an impression) and every ``update()`` (an outcome) takes the next number ``seq``
  of its experiment and queues its row for the log under the experiment's lock, so the tables hold the
  exact order of the calls; interleaving and credit run outside the lock;
- the rows are committed in groups (:mod:`irbandits.service.logwriter`) in the order they were queued,
  so the tables always hold a prefix of each experiment's calls; memory runs ahead of the log by the
  writes in flight, and a request is answered only after the commit that holds its write;
- an impression has at most one outcome (the ``outcomes.impression_id`` unique constraint backs the
  in-memory check): a second one gets 409;
- a restart replays both tables in ``seq`` order through a fresh algorithm: ``select()`` draws the
  same random numbers in the same order (and must give the logged pair), ``update()`` gets the
  logged ``c_won``; so the rebuilt state equals the uninterrupted one, and the impressions still
  open keep their pairs and lists;
- an impression without an outcome expires after ``lease_seconds``; an outcome for it then gets 409,
  and expired impressions are counted;
- a write that fails (or whose commit is in doubt) leaves memory ahead of the log: the runtime is then
  stale and rebuilds itself from the tables before it answers again (:meth:`ExperimentRuntime.rebuild`),
  so what it holds is always a replay of what is stored.

An experiment is running, paused or stopped (:data:`MOVES`, stored in ``experiments.state``): only a
running one issues impressions (409 "experiment EID is paused" otherwise). A paused one still takes the
lists and outcomes of the impressions it issued before the pause: the user saw the list and clicked, and
refusing would lose that outcome (as a paused campaign records the answers to its leases); pausing stops
new impressions only. A stopped one, which is final, refuses lists and outcomes too, and its state stays
readable. The state is not part of the replay: the outcomes recorded are applied whatever it is now.

The front end's calls (:meth:`ExperimentRuntime.impression`, ``interleave``, ``clicks``, ``vote``) are
coroutines: they wait for their commit on the event loop of the request.

Clicks are credited as in the simulation (:mod:`irbandits.clicks.environment`): the method's credit
o in [-1, 1], and the algorithm hears that ranker a won with probability (1 + o) / 2 (a tie is a fair
coin). A vote is o = 1 (a), -1 (b) or 0 (tie). Each impression's random numbers (its interleaving, its
coin) come from its own generator ``SeedSequence(seed, spawn_key=(purpose, seq))``, so they do not
depend on which request came first.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import select, update
from sqlalchemy.engine import Engine

from irbandits.clicks.interleaving import CUTOFF, METHODS, Interleaved, encode, get_method, interleave
from irbandits.clicks.stats import leaderboard
from irbandits.dueling import parse_spec
from irbandits.dueling.base import DuelingAlgorithm
from irbandits.errors import Conflict, IrbanditsError, Unavailable
from irbandits.rng import new_rng, uniform
from irbandits.service.logwriter import LogWriter
from irbandits.service.models import ExperimentRow, Impression, Outcome
from irbandits.service.settings import Settings
from irbandits.service.validation import check_text

COMPARISONS = tuple(METHODS)
MOVES = {"running": ("paused", "stopped"), "paused": ("running", "stopped"), "stopped": ()}   # state -> next states
_INTERLEAVE, _COIN = 1, 2   # spawn keys of an impression's generators


def algorithm_seed(seed: int) -> np.random.SeedSequence:
    """The algorithm's seed for experiment seed ``seed``: run 0 of ``irbandits simulate --seed seed``."""
    from irbandits.simulate import run_streams

    return run_streams(np.random.SeedSequence(seed).spawn(1)[0], 2)[2]


def make_algorithm(fields: dict[str, Any]) -> DuelingAlgorithm:
    """The fresh algorithm of an experiment (before any impression)."""
    return parse_spec(fields["algorithm"]).make(len(fields["rankers"]), seed=algorithm_seed(fields["seed"]),
                                                horizon=fields.get("horizon"))


def check_experiment(body: dict[str, Any]) -> dict[str, Any]:
    """Validate a ``POST /api/experiments`` body of rankers; returns the experiment row's fields.

    Raises :class:`IrbanditsError` with one message naming the field and the problem.
    """
    check_text(body, "experiment")
    rankers = body.get("rankers") or []
    if not body.get("algorithm"):
        raise IrbanditsError("algorithm: give the dueling-bandit algorithm that picks the rankers to compare "
                             "(or a learner and features instead of rankers)")
    if len(rankers) < 2 or len(set(rankers)) != len(rankers) or any(not r for r in rankers):
        raise IrbanditsError(f"rankers: give at least 2 different non-empty names, got {rankers!r}")
    if body["comparison"] not in COMPARISONS:
        raise IrbanditsError(f"comparison: unknown method {body['comparison']!r}; known: {', '.join(COMPARISONS)}")
    length = int(body.get("length") or CUTOFF)
    comparison = body["comparison"] + ("" if length == CUTOFF else f"@{length}")
    fields = dict(name=body["name"], rankers=list(rankers), algorithm=body["algorithm"].strip(),
                  comparison=comparison, seed=int(body["seed"]), horizon=body.get("horizon"))
    try:
        make_algorithm(fields)
    except IrbanditsError as exc:
        raise IrbanditsError(f"algorithm: {exc}") from None
    return fields


def parse_comparison(comparison: str) -> tuple[str, int]:
    """``(method, length)`` of a stored comparison, ``"team-draft"`` or ``"team-draft@20"``."""
    method, _, length = comparison.partition("@")
    return method, int(length or CUTOFF)


def impression_rng(seed: int, purpose: int, seq: int) -> np.ndarray:
    """The generator of one impression's interleaving (``purpose`` 1) or outcome coin (2)."""
    return new_rng(np.random.SeedSequence(seed, spawn_key=(purpose, seq)))


def settled(algo: DuelingAlgorithm) -> tuple[bool, int]:
    """Whether the recommendation is settled, and how many arms are left.

    Settled: one arm is left (the batches of a merge algorithm: ``info[1]`` alive arms), or the
    algorithm's confidence bounds separate it: ``l_rj > 1/2`` against every other arm j, with the
    bounds of :mod:`irbandits.dueling.bounds` (its ``alpha``, default 0.51, and ``log(t + C)``).
    """
    from irbandits.dueling.bounds import lcb

    st = algo.arrays
    left = int(st["info"][1]) if "bstart" in st else algo.K
    if left == 1:
        return True, 1
    params = algo.param_values
    alpha = float(params.get("alpha") or 0.51)
    log_t = math.log(max(algo.t + float(params.get("C") or 0.0), 1.0))
    r, W = algo.recommend(), algo.wins.astype(np.float64)
    return all(lcb(W, r, j, log_t, alpha) > 0.5 for j in range(algo.K) if j != r), left


@dataclass
class Open:
    """An impression still waiting for its outcome."""

    id: int
    seq: int
    c: int
    d: int
    expires_at: float
    shown: Interleaved | None = None
    listing: bool = False   # its shown list is being committed


@dataclass
class Counts:
    """Outcomes per pair (``comparisons[i, j]`` both ways, ``wins[i, j]``: i beat j, ``ties``)."""

    K: int
    comparisons: np.ndarray = field(init=False)
    wins: np.ndarray = field(init=False)
    ties: np.ndarray = field(init=False)

    def __post_init__(self):
        self.comparisons = np.zeros((self.K, self.K), np.int64)
        self.wins = np.zeros((self.K, self.K), np.int64)
        self.ties = np.zeros((self.K, self.K), np.int64)

    def add(self, c: int, d: int, credit: float) -> None:
        if c == d:
            return
        self.comparisons[c, d] += 1
        self.comparisons[d, c] += 1
        if credit > 0:
            self.wins[c, d] += 1
        elif credit < 0:
            self.wins[d, c] += 1
        else:
            self.ties[c, d] += 1
            self.ties[d, c] += 1


def stored_interleaving(il: Interleaved, a: list[str], b: list[str]) -> dict[str, Any]:
    """What the impressions table keeps of a shown list, to credit clicks after a restart."""
    return dict(a=a, b=b, shown=il.shown_index.tolist(), assign=il.assign.tolist(), prob=il.prob.tolist())


def restored_interleaving(method: str, stored: dict[str, Any]) -> Interleaved:
    """The :class:`Interleaved` of :func:`stored_interleaving`."""
    name, length = parse_comparison(method)
    lists, lens, ids = encode([stored["a"], stored["b"]], ["a", "b"], length)
    shown = np.asarray(stored["shown"], np.int64)
    return Interleaved(get_method(name), ids[shown], np.asarray(stored["assign"], np.int64),
                       np.asarray(stored["prob"], np.float64), lists, lens, shown)


class ExperimentRuntime:
    """One experiment in memory: the algorithm, its open impressions, counts and history."""

    learns = False   # a :class:`irbandits.service.learner_runtime.LearnerRuntime` holds a learner instead

    def __init__(self, row: ExperimentRow, settings: Settings, engine: Engine, log: LogWriter,
                 owner: dict[int, int]):
        self.id, self.name, self.rankers = row.id, row.name, list(row.rankers)
        self.algorithm, self.comparison, self.seed, self.horizon = row.algorithm, row.comparison, row.seed, row.horizon
        self.lifecycle = row.state or "running"   # a key of MOVES (``state()`` is the whole state)
        self.settings, self.engine, self.log = settings, engine, log
        self.owner = owner   # the registry's impression -> experiment map
        self.lock = threading.Lock()
        self.stale = False   # a write failed after memory moved on: rebuild before the next call (set by the log)
        self._reset()
        self._warm()

    def _warm(self) -> None:
        """Load (or compile) the kernels now, not during the first impression."""
        self.algo.clone().select()

    def _reset(self) -> None:
        """The state before any impression."""
        self.algo = make_algorithm(dict(algorithm=self.algorithm, rankers=self.rankers, seed=self.seed,
                                        horizon=self.horizon))
        self.seq = 0
        self.impressions = self.outcomes = self.expired = 0
        self.open: OrderedDict[int, Open] = OrderedDict()   # in issue order, so expiry pops from the front
        self.deciding: set[int] = set()                     # impressions whose outcome is being committed
        self.counts = Counts(self.algo.K)
        self.history: list[tuple[float, int, int]] = []     # (time, outcomes, recommended arm) per outcome
        self._board: tuple[int, list[dict]] | None = None    # the leaderboard and the outcomes it counts

    # ----- the two logged calls ------------------------------------------------------------------
    def _select(self, logged: tuple[int, int] | None = None) -> tuple[int, int, int]:
        c, d = self.algo.select()
        if logged is not None and (c, d) != logged:
            raise IrbanditsError(f"experiment {self.id}: replay selected {(c, d)} where the log has {logged}; "
                                 f"the algorithm's code changed since the log was written")
        self.seq += 1
        self.impressions += 1
        return c, d, self.seq

    def _apply(self, c: int, d: int, credit: float, c_won: bool, at: float) -> None:
        self.algo.update(c, d, c_won)
        self.seq += 1
        self.outcomes += 1
        self.counts.add(c, d, credit)
        self.history.append((at, self.outcomes, self.algo.recommend()))

    def rebuild(self) -> None:
        """Replace the state by a replay of this experiment's impressions and outcomes tables (at start,
        and after a failed write); memory is left as it was when the tables cannot be read."""
        with self.engine.connect() as conn:
            impressions = conn.execute(select(Impression).where(Impression.experiment_id == self.id)
                                       .order_by(Impression.seq)).all()
            outcomes = conn.execute(select(Outcome).where(Outcome.experiment_id == self.id)
                                    .order_by(Outcome.seq)).all()
        self._reset()
        self._replay(impressions, outcomes, self.settings.clock())
        self.stale = False

    def _ready(self) -> None:
        """Under the lock: rebuild first when a failed write left memory ahead of the log (503 while the
        database cannot be read). A stale experiment has no write in flight: the log failed them all."""
        if self.stale:
            try:
                self.rebuild()
            except Exception:
                raise Unavailable(f"experiment {self.id}: the database is unavailable; try again") from None

    def _replay(self, impressions, outcomes, now: float) -> None:
        """Apply ``impressions`` and ``outcomes`` rows, each in ``seq`` order, to the fresh state."""
        pairs, pending = {}, {}
        events = sorted([(i.seq, 0, i) for i in impressions] + [(o.seq, 1, o) for o in outcomes], key=lambda e: e[0])
        for seq, kind, row in events:
            if seq != self.seq + 1:
                raise IrbanditsError(f"experiment {self.id}: the log skips from seq {self.seq} to {seq}")
            if kind == 0:
                self._select((row.c, row.d))
                pairs[row.id] = row
            else:
                imp = pairs[row.impression_id]
                self._apply(imp.c, imp.d, row.credit, row.c_won, row.created_at)
                pending[row.impression_id] = True
        for iid, imp in pairs.items():
            if iid not in pending:
                shown = None if imp.shown is None else restored_interleaving(self.comparison, imp.shown)
                self.open[iid] = Open(iid, imp.seq, imp.c, imp.d, imp.expires_at, shown)
        self._expire(now)

    # ----- impressions -----------------------------------------------------------------------------
    def _expire(self, now: float) -> None:
        while self.open:
            first = next(iter(self.open.values()))
            if first.expires_at > now:
                break
            del self.open[first.id]
            self.expired += 1

    def _opening(self) -> float:
        """Under the lock, before a new impression: 409 unless the experiment is running, a rebuild when
        stale, expiry; the time now."""
        if self.lifecycle != "running":
            raise Conflict(f"experiment {self.id} is {self.lifecycle}")
        self._ready()
        now = self.settings.clock()
        self._expire(now)
        return now

    async def impression(self) -> tuple[Open, list[str]]:
        """A new impression: ``select()`` under the lock, committed before it is returned; 409 unless the
        experiment is running."""
        with self.lock:
            now = self._opening()
            c, d, seq = self._select()
            expires = now + self.settings.lease_seconds
            params = dict(experiment_id=self.id, seq=seq, c=c, d=d, shown=None, issued_at=now, expires_at=expires)
            committed = self.log.submit(self, self.log.new_impression, params,
                                        then=lambda row: self._opened(Open(row[0], seq, c, d, expires)))
        return await committed, [self.rankers[c], self.rankers[d]]

    def _opened(self, imp: Open) -> Open:
        """After its commit: the impression takes outcomes (a rebuild since then has it already)."""
        with self.lock:
            self.open.setdefault(imp.id, imp)
            self.owner[imp.id] = self.id
        return imp

    def _live(self, iid: int, now: float) -> Open:
        """Impression ``iid`` if it still takes its list and outcome, else 409 (the experiment stopped, the
        impression decided or expired)."""
        if self.lifecycle == "stopped":
            raise Conflict(f"experiment {self.id} is stopped")
        imp = self.open.get(iid)
        if imp is None or imp.expires_at <= now:
            self._refuse(iid, now)
        return imp

    def _refuse(self, iid: int, now: float) -> None:
        """Why impression ``iid`` of this experiment takes no outcome: 409 (done or expired)."""
        done = iid in self.deciding
        if not done:
            with self.engine.connect() as conn:
                done = conn.execute(select(Outcome.id).where(Outcome.impression_id == iid)).first() is not None
        if done:
            raise Conflict(f"impression {iid} already has its outcome")
        raise Conflict(f"impression {iid} expired; POST /api/experiments/{self.id}/impressions for a new one")

    async def interleave(self, iid: int, lists: dict[str, list[str]]) -> list[str]:
        """The combined list of impression ``iid``'s two rankings (interleaved outside the lock)."""
        imp = self._live(iid, self.settings.clock())
        a, b = self.rankers[imp.c], self.rankers[imp.d]
        for name in lists:
            if name not in (a, b):
                raise IrbanditsError(f"lists: ranker {name!r} is not in impression {iid}, which compares {a} and {b}")
        for name in (a, b):
            if name not in lists:
                raise IrbanditsError(f"lists: no list for ranker {name!r} of impression {iid}")
        method, length = parse_comparison(self.comparison)
        for name in (a, b):
            if len(lists[name]) > length:
                raise IrbanditsError(f"lists: ranker {name!r} has {len(lists[name])} results; this experiment shows "
                                     f"lists of at most {length}")
        if imp.shown is not None or imp.listing:
            raise Conflict(f"impression {iid} already has its list")
        il = interleave(method, lists[a], lists[b], rng=impression_rng(self.seed, _INTERLEAVE, imp.seq), length=length)
        # memory changes only after the commit (a failed one makes the runtime stale: its rebuild resets
        # ``listing``); a retry writes the same list again
        stored = json.dumps(stored_interleaving(il, list(lists[a]), list(lists[b])))
        committed = self.log.submit(self, self.log.show, dict(iid=iid, shown=stored),
                                    then=lambda _: self._shown(iid, il))
        imp.listing = True
        return await committed

    def _shown(self, iid: int, il: Interleaved) -> list[str]:
        """After its commit: impression ``iid`` shows ``il`` (on the open impression of now: a rebuild since
        then has read it from the table)."""
        imp = self.open.get(iid)
        if imp is not None:
            imp.shown = il
        return il.shown.tolist()

    # ----- outcomes ----------------------------------------------------------------------------------
    async def clicks(self, iid: int, positions: list[int]) -> str | None:
        """Credit clicks (0-based positions of the shown list) and apply the outcome; the winner or None."""
        imp = self._live(iid, self.settings.clock())
        if imp.shown is None:
            raise Conflict(f"impression {iid} has no list yet: POST its lists first")
        credit = imp.shown.credit(positions)
        await self._outcome(iid, "clicks", credit)
        return None if credit == 0 or imp.c == imp.d else self.rankers[imp.c if credit > 0 else imp.d]

    async def vote(self, iid: int, winner: str) -> None:
        """Apply an explicit vote: ranker a, ranker b, or ``"tie"``."""
        imp = self._live(iid, self.settings.clock())
        a, b = self.rankers[imp.c], self.rankers[imp.d]
        if winner not in (a, b, "tie"):
            raise IrbanditsError(f"winner: {winner!r} is neither {a!r}, {b!r} nor \"tie\" (impression {iid})")
        await self._outcome(iid, "vote", 0.0 if winner == "tie" else 1.0 if winner == a else -1.0)

    async def _outcome(self, iid: int, kind: str, credit: float) -> None:
        """Apply the outcome under the lock and wait for its commit."""
        with self.lock:
            self._ready()
            now = self.settings.clock()
            imp = self._live(iid, now)
            c_won = bool(uniform(impression_rng(self.seed, _COIN, imp.seq)) < 0.5 * (1.0 + credit))
            winner = None if credit == 0 else self.rankers[imp.c if credit > 0 else imp.d]
            committed = self.log.submit(self, self.log.new_outcome,
                                        dict(experiment_id=self.id, impression_id=iid, seq=self.seq + 1, kind=kind,
                                             winner=winner, credit=credit, c_won=c_won, clicks=None, created_at=now),
                                        then=lambda _: self.deciding.discard(iid))
            del self.open[iid]
            self.deciding.add(iid)
            self._apply(imp.c, imp.d, credit, c_won, now)
        await committed

    # ----- lifecycle -----------------------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        """Move the experiment to ``state`` (stored first); a move :data:`MOVES` does not allow gets
        :class:`Conflict` naming both states."""
        with self.lock:
            moves = MOVES[self.lifecycle]
            if state == self.lifecycle:
                raise Conflict(f"experiment {self.id} is already {state}")
            if state not in moves:
                raise Conflict(f"experiment {self.id} is {self.lifecycle}: it can move to {' or '.join(moves)}, "
                               f"not to {state}" if moves else
                               f"experiment {self.id} is stopped, which is final: it cannot move to {state}")
            with self.engine.begin() as conn:
                conn.execute(update(ExperimentRow).where(ExperimentRow.id == self.id).values(state=state))
            self.lifecycle = state

    # ----- state -------------------------------------------------------------------------------------
    def state(self, plot_points: int = 200) -> dict[str, Any]:
        """The body of ``GET /api/experiments/{EID}``: counts, recommendation, matrix, leaderboard and
        the history (at most about ``plot_points`` points) for the live plot."""
        with self.lock:
            self._ready()
            self._expire(self.settings.clock())
            best = self.algo.recommend()
            done, left = settled(self.algo)
            comparisons, wins, ties = self.counts.comparisons.copy(), self.counts.wins.copy(), self.counts.ties.copy()
            step = max(1, len(self.history) // plot_points)
            history = self.history[step - 1::step]
            if self.history and (not history or history[-1] is not self.history[-1]):
                history.append(self.history[-1])
            body = dict(id=self.id, name=self.name, state=self.lifecycle, algorithm=self.algorithm,
                        comparison=self.comparison, seed=self.seed, recommended=self.rankers[best], settled=done,
                        arms_left=left, impressions=self.impressions, outcomes=self.outcomes, expired=self.expired,
                        open=len(self.open), duels=self.algo.t)
        body["rankers"] = [dict(name=n, comparisons=int(comparisons[i].sum()), wins=int(wins[i].sum()),
                                ties=int(ties[i].sum())) for i, n in enumerate(self.rankers)]
        body["matrix"] = dict(comparisons=comparisons.tolist(), wins=wins.tolist())
        body["history"] = [dict(time=t, outcomes=n, recommended=self.rankers[r]) for t, n, r in history]
        cached = self._board
        if cached is None or cached[0] != body["outcomes"]:
            cached = self._board = (body["outcomes"], leaderboard(self.rankers, wins, ties, seed=self.seed))
        body["leaderboard"] = cached[1]
        return body
