"""Online experiments that hold an online learner to rank (:mod:`irbandits.oltr`) instead of a fixed set of
rankers.

The front end sends each impression's candidate documents with their features
(``POST /api/experiments/{EID}/impressions`` ``{"documents": [docno, ...], "features": [[x, ...], ...]}``);
the learner ranks them and the answer is the list to show; the front end then posts the clicks on it
(``POST /api/impressions/{IID}/clicks``), which the learner learns from. The learner is what
``irbandits oltr -a`` takes (``PDGD``, ``MGD:n=9``, ...), over ``features`` features a document.

Order and durability are those of :mod:`irbandits.service.experiment_runtime`: each ``show`` (an
impression) and ``learn`` (an outcome) takes the next ``seq`` of the experiment under its lock, its row
(the documents, their features as base64 float64 bytes and the list shown; the clicked positions) is
committed before the answer, and a restart replays both tables in ``seq`` order through a fresh learner, streaming the
impressions. Each impression's random numbers come from its own generator
(:func:`~irbandits.service.experiment_runtime.impression_rng`), so the replay draws the logged list (it
checks) and the learner's state after the replay equals the uninterrupted one. Many lists wait for
their clicks at once (:meth:`irbandits.oltr.base.OnlineLearner.show` keeps each list's scratch); the
clicks of a list step from the weights of when they come, as an asynchronous learner does.
"""

from __future__ import annotations

import base64
import json
from collections import OrderedDict, deque
from typing import Any

import numpy as np
from sqlalchemy import select

from irbandits.errors import IrbanditsError
from irbandits.oltr.base import LEARNERS, OnlineLearner, Shown, parse_learner
from irbandits.service.experiment_runtime import (
    _COIN,
    _INTERLEAVE,
    ExperimentRuntime,
    Open,
    algorithm_seed,
    impression_rng,
)
from irbandits.service.models import Impression, Outcome
from irbandits.service.validation import check_text

MAX_FEATURES = 1000     # features of a document
MAX_DOCUMENTS = 1000    # candidate documents of one impression
WINDOW = 100            # outcomes in the recent clicks-per-impression figure


def make_learner(fields: dict[str, Any]) -> OnlineLearner:
    """The fresh learner of a learner experiment (before any impression)."""
    cls, params = parse_learner(fields["algorithm"])
    return cls(fields["features"], seed=algorithm_seed(fields["seed"]), **params)


def check_learner(body: dict[str, Any]) -> dict[str, Any]:
    """Validate a ``POST /api/experiments`` body that names a ``learner``; the experiment row's fields
    (no rankers, comparison ""). Raises :class:`IrbanditsError` naming the field and the problem."""
    check_text(body, "experiment")
    features = body.get("features")
    if not isinstance(features, int) or not 1 <= features <= MAX_FEATURES:
        raise IrbanditsError(f"features: give the number of features of a document, 1 to {MAX_FEATURES}, "
                             f"got {features!r}")
    if body.get("rankers"):
        raise IrbanditsError("rankers: an experiment with a learner has no rankers; give either rankers and an "
                             "algorithm, or a learner and features")
    fields = dict(name=body["name"], rankers=[], algorithm=body["learner"].strip(), comparison="",
                  seed=int(body.get("seed") or 0), horizon=None, features=features)
    try:
        learner = make_learner(fields)
    except IrbanditsError as exc:
        raise IrbanditsError(f"learner: {exc}") from None
    if not learner.linear:
        raise IrbanditsError(f"learner: {learner.name} ranks with a neural network; an experiment holds a linear "
                             f"learner (one weight a feature, shown on its page): "
                             f"{', '.join(n for n, c in LEARNERS.items() if c.linear)}")
    return fields


def query_features(documents: list[str], features: list[list[float]], n_features: int) -> np.ndarray:
    """The impression body's features as float[documents, n_features]; :class:`IrbanditsError` naming the
    first problem (counts, a row's length, a repeated or empty docno, a value that is not finite)."""
    if not 1 <= len(documents) <= MAX_DOCUMENTS:
        raise IrbanditsError(f"documents: give 1 to {MAX_DOCUMENTS} candidate documents, got {len(documents)}")
    if len(features) != len(documents):
        raise IrbanditsError(f"features: {len(features)} rows for {len(documents)} documents (one row a document)")
    seen: set[str] = set()
    for i, (docno, row) in enumerate(zip(documents, features)):
        if not docno or docno in seen:
            raise IrbanditsError(f"documents[{i}]: {'an empty docno' if not docno else f'{docno!r} is repeated'}")
        seen.add(docno)
        if len(row) != n_features:
            raise IrbanditsError(f"features[{i}] (document {docno!r}): {len(row)} values, the experiment's "
                                 f"learner takes {n_features}")
    X = np.asarray(features, np.float64)
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        raise IrbanditsError(f"features[{bad[0]}] (document {documents[bad[0]]!r}): a value is not finite")
    return X


def unpacked(stored: dict[str, Any]) -> np.ndarray:
    """The features of a stored impression (``shown``: documents, features as base64 float64 bytes, list)."""
    return np.frombuffer(base64.b64decode(stored["features"]), np.float64).reshape(len(stored["documents"]), -1)


class LearnerRuntime(ExperimentRuntime):
    """One learner experiment in memory: the learner, its open impressions (with their lists' scratch),
    counts and history. Lifecycle, leases, expiry, the log and rebuilds are the experiments' own."""

    learns = True

    def __init__(self, row, settings, engine, log, owner):
        self.features = row.features
        super().__init__(row, settings, engine, log, owner)

    def _warm(self) -> None:
        self.learner.clone().show(np.zeros((2, self.features)))

    def _reset(self) -> None:
        self.learner = make_learner(dict(algorithm=self.algorithm, features=self.features, seed=self.seed))
        self.seq = 0
        self.impressions = self.outcomes = self.expired = self.clicked = self.updates = 0
        self.open: OrderedDict[int, Open] = OrderedDict()
        self.deciding: set[int] = set()
        self.recent: deque[int] = deque(maxlen=WINDOW)        # clicks of the last outcomes
        self.history: list[tuple[float, int, float]] = []    # (time, outcomes, recent clicks per impression)

    # ----- the two logged calls ------------------------------------------------------------------
    def _show(self, X: np.ndarray, logged: list[int] | None = None) -> Shown:
        shown = self.learner.show(X, rng=impression_rng(self.seed, _INTERLEAVE, self.seq + 1))
        if logged is not None and shown.list != logged:
            raise IrbanditsError(f"experiment {self.id}: replay showed {shown.list} where the log has {logged}; "
                                 f"the learner's code changed since the log was written")
        self.seq += 1
        self.impressions += 1
        return shown

    def _learn(self, imp: Open, positions: list[int], at: float) -> bool:
        """Learn from the clicks on ``imp``'s list; whether the ranker's weights moved."""
        before = self.learner.weights
        self.learner.learn(imp.shown, positions, rng=impression_rng(self.seed, _COIN, imp.seq))
        moved = bool(np.any(self.learner.weights != before))
        self.seq += 1
        self.outcomes += 1
        self.clicked += len(positions)
        self.updates += moved
        self.recent.append(len(positions))
        self.history.append((at, self.outcomes, sum(self.recent) / len(self.recent)))
        return moved

    def rebuild(self) -> None:
        """Replace the state by a replay of the tables; the impressions are streamed, so memory holds only
        the lists still waiting for their clicks at each point of the replay. A read that fails part way
        leaves the runtime stale (the next call rebuilds again, or gets 503)."""
        self._reset()
        try:
            with self.engine.connect() as conn:
                outcomes = conn.execute(select(Outcome.impression_id, Outcome.seq, Outcome.clicks,
                                               Outcome.created_at).where(Outcome.experiment_id == self.id)
                                        .order_by(Outcome.seq)).all()
                rows = conn.execution_options(yield_per=256).execute(
                    select(Impression.id, Impression.seq, Impression.shown, Impression.expires_at)
                    .where(Impression.experiment_id == self.id).order_by(Impression.seq))
                self._replay(rows, outcomes, self.settings.clock())
        except Exception:
            self.stale = True
            raise
        self.stale = False

    def _replay(self, impressions, outcomes, now: float) -> None:
        answered = {o.impression_id for o in outcomes}
        waiting: dict[int, Open] = {}
        pending = iter(outcomes)
        nxt = next(pending, None)

        def step(to: float) -> Any:
            nonlocal nxt
            while nxt is not None and nxt.seq < to:
                if nxt.seq != self.seq + 1:
                    raise IrbanditsError(f"experiment {self.id}: the log skips from seq {self.seq} to {nxt.seq}")
                self._learn(waiting.pop(nxt.impression_id), nxt.clicks, nxt.created_at)
                nxt = next(pending, None)

        for row in impressions:
            step(row.seq)
            if row.seq != self.seq + 1:
                raise IrbanditsError(f"experiment {self.id}: the log skips from seq {self.seq} to {row.seq}")
            shown = self._show(unpacked(row.shown), row.shown["list"])
            if row.id in answered or row.expires_at > now:
                waiting[row.id] = Open(row.id, row.seq, 0, 0, row.expires_at, shown)
            else:
                self.expired += 1
        step(float("inf"))
        self.open.update((iid, imp) for iid, imp in waiting.items())
        self._expire(now)

    # ----- impressions -----------------------------------------------------------------------------
    async def rank(self, documents: list[str], features: list[list[float]]) -> tuple[Open, list[str]]:
        """A new impression of these candidate documents: the learner's list (docnos), committed before it
        is returned; 409 unless the experiment is running."""
        X = query_features(documents, features, self.features)
        packed = base64.b64encode(X.tobytes()).decode()   # exact, and far quicker to write and read than JSON numbers
        with self.lock:
            now = self._opening()
            shown = self._show(X)
            seq, expires = self.seq, now + self.settings.lease_seconds
            stored = json.dumps(dict(documents=documents, features=packed, list=shown.list))
            params = dict(experiment_id=self.id, seq=seq, c=0, d=0, shown=stored, issued_at=now, expires_at=expires)
            committed = self.log.submit(self, self.log.new_impression, params,
                                        then=lambda row: self._opened(Open(row[0], seq, 0, 0, expires, shown)))
        return await committed, [documents[i] for i in shown.list]

    async def interleave(self, iid: int, lists):
        raise IrbanditsError(f"impression {iid} is of experiment {self.id}, which holds a learner: its list came "
                             f"with the impression; post the clicks on it")

    async def vote(self, iid: int, winner: str):
        raise IrbanditsError(f"impression {iid} is of experiment {self.id}, which holds a learner: it learns "
                             f"from clicks, POST /api/impressions/{iid}/clicks")

    async def clicks(self, iid: int, positions: list[int]) -> bool:
        """Learn from the clicks (0-based positions of the list shown); whether the weights moved."""
        with self.lock:
            self._ready()
            now = self.settings.clock()
            imp = self._live(iid, now)
            n = len(imp.shown.list)
            for p in positions:
                if p >= n:
                    raise IrbanditsError(f"clicks: position {p} is not in impression {iid}'s list of {n}")
            positions = sorted(set(positions))
            moved = self._learn(imp, positions, now)
            committed = self.log.submit(self, self.log.new_outcome,
                                        dict(experiment_id=self.id, impression_id=iid, seq=self.seq, kind="clicks",
                                             winner=None, credit=0.0, c_won=moved, clicks=json.dumps(positions),
                                             created_at=now),
                                        then=lambda _: self.deciding.discard(iid))
            del self.open[iid]
            self.deciding.add(iid)
        await committed
        return moved

    # ----- state -------------------------------------------------------------------------------------
    def state(self, plot_points: int = 200) -> dict[str, Any]:
        """The body of ``GET /api/experiments/{EID}`` for a learner: counts, clicks, the current weights and
        the history of recent clicks per impression (at most about ``plot_points`` points)."""
        with self.lock:
            self._ready()
            self._expire(self.settings.clock())
            step = max(1, len(self.history) // plot_points)
            history = self.history[step - 1::step]
            if self.history and (not history or history[-1] is not self.history[-1]):
                history.append(self.history[-1])
            return dict(id=self.id, name=self.name, state=self.lifecycle, learner=self.algorithm,
                        algorithm=self.algorithm, features=self.features, seed=self.seed,
                        impressions=self.impressions, outcomes=self.outcomes, expired=self.expired,
                        open=len(self.open), clicks=self.clicked, updates=self.updates,
                        clicks_per_impression=round(sum(self.recent) / len(self.recent), 4) if self.recent else None,
                        weights=self.learner.weights.tolist(),
                        history=[dict(time=t, outcomes=n, clicks=round(c, 4)) for t, n, c in history])
