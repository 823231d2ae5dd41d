"""The registry of the online experiments: every experiment's runtime (rankers compared by a dueling
bandit, :mod:`irbandits.service.experiment_runtime`, or a learner, :mod:`irbandits.service.learner_runtime`),
rebuilt at start from its log, and the front ends' client tokens."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import select, update

from irbandits.errors import NotFound
from irbandits.service.credentials import new_token, token_hash
from irbandits.service.experiment_runtime import ExperimentRuntime, check_experiment
from irbandits.service.learner_runtime import LearnerRuntime, check_learner
from irbandits.service.logwriter import LogWriter
from irbandits.service.models import ExperimentClient, ExperimentRow, Impression
from irbandits.service.settings import Settings
from irbandits.service.validation import in_range


def checked(body: dict[str, Any]) -> dict[str, Any]:
    """Validate a ``POST /api/experiments`` body: a learner's (with ``learner``, :func:`check_learner`) or
    rankers' (:func:`check_experiment`); the experiment row's fields."""
    return (check_learner if body.get("learner") is not None else check_experiment)(body)


class Experiments:
    """Every experiment's runtime, rebuilt at start by replaying its impressions and outcomes."""

    def __init__(self, sessions, settings: Settings):
        self.sessions, self.settings = sessions, settings
        self.engine = sessions.kw["bind"]
        self.experiments: dict[int, ExperimentRuntime] = {}
        self.owner: dict[int, int] = {}           # impression -> experiment (since start; older ones: the DB)
        self.clients: dict[str, int] = {}         # client token hash -> experiment
        self.lock = threading.Lock()
        self.log = LogWriter(self.engine)

    @classmethod
    def load(cls, sessions, settings: Settings) -> "Experiments":
        self = cls(sessions, settings)
        with sessions() as session:
            for row in session.scalars(select(ExperimentRow).order_by(ExperimentRow.id)):
                runtime = self._runtime(row)
                self.experiments[row.id] = runtime
                runtime.rebuild()
                self.owner.update((iid, row.id) for iid in runtime.open)
            self.clients = dict(session.execute(select(ExperimentClient.token_hash, ExperimentClient.experiment_id)
                                                .where(ExperimentClient.revoked.is_(False))).all())
        return self

    def create(self, fields: dict[str, Any]) -> ExperimentRuntime:
        """Store a checked experiment (see :func:`checked`) and start it."""
        with self.lock, self.sessions() as session:
            row = ExperimentRow(created_at=self.settings.clock(), **fields)
            session.add(row)
            session.commit()
            runtime = self._runtime(row)
            self.experiments[row.id] = runtime
        return runtime

    def _runtime(self, row: ExperimentRow) -> ExperimentRuntime:
        """The runtime of a stored experiment: a learner's when it has ``features``."""
        return (LearnerRuntime if row.features else ExperimentRuntime)(row, self.settings, self.engine, self.log,
                                                                        self.owner)

    def get(self, eid: int, allowed: int | None = None) -> ExperimentRuntime:
        """Experiment ``eid``; 404 when there is none or the caller's token is for another one."""
        runtime = self.experiments.get(eid)
        if runtime is None or (allowed is not None and allowed != eid):
            raise NotFound(f"no experiment {eid}")
        return runtime

    def of_impression(self, iid: int, allowed: int | None = None) -> ExperimentRuntime:
        """The experiment of impression ``iid``; 404 when unknown or another experiment's."""
        eid = self.owner.get(iid)
        if eid is None and in_range(iid):
            with self.engine.connect() as conn:
                eid = conn.execute(select(Impression.experiment_id).where(Impression.id == iid)).scalar()
        if eid is None or (allowed is not None and allowed != eid):
            raise NotFound(f"no impression {iid}")
        return self.experiments[eid]

    # ----- client tokens -------------------------------------------------------------------------------
    def add_client(self, eid: int, name: str) -> tuple[int, str]:
        """A client token for a front end of experiment ``eid``: ``(id, token)``; only its hash is stored."""
        self.get(eid)
        token = new_token()
        with self.sessions() as session:
            row = ExperimentClient(experiment_id=eid, name=name, token_hash=token_hash(token), revoked=False,
                                   created_at=self.settings.clock())
            session.add(row)
            session.commit()
        self.clients[row.token_hash] = eid
        return row.id, token

    def client_list(self, eid: int) -> list[dict[str, Any]]:
        """Experiment ``eid``'s client tokens (without the tokens): id, name, created_at, revoked."""
        self.get(eid)
        with self.engine.connect() as conn:
            rows = conn.execute(select(ExperimentClient.id, ExperimentClient.name, ExperimentClient.created_at,
                                       ExperimentClient.revoked).where(ExperimentClient.experiment_id == eid)
                                .order_by(ExperimentClient.id)).all()
        return [dict(id=r.id, name=r.name, created_at=r.created_at, revoked=r.revoked) for r in rows]

    def _client(self, eid: int, client: int) -> ExperimentClient:
        self.get(eid)
        with self.sessions() as session:
            row = session.get(ExperimentClient, client) if in_range(client) else None
        if row is None or row.experiment_id != eid:
            raise NotFound(f"no client {client} of experiment {eid}")
        return row

    def set_client_revoked(self, eid: int, client: int, revoked: bool) -> None:
        """Revoke (or restore) a client token of experiment ``eid``: its next call gets 401."""
        row = self._client(eid, client)
        with self.engine.begin() as conn:
            conn.execute(update(ExperimentClient).where(ExperimentClient.id == client).values(revoked=revoked))
        if revoked:
            self.clients.pop(row.token_hash, None)
        else:
            self.clients[row.token_hash] = eid

    def reissue_client(self, eid: int, client: int) -> str:
        """A new token for client ``client`` of experiment ``eid``; the old one stops working at once."""
        row = self._client(eid, client)
        token = new_token()
        with self.engine.begin() as conn:
            conn.execute(update(ExperimentClient).where(ExperimentClient.id == client)
                         .values(token_hash=token_hash(token), revoked=False))
        self.clients.pop(row.token_hash, None)
        self.clients[token_hash(token)] = eid
        return token
