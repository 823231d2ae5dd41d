"""The database tables (SQLAlchemy 2 typed models), one ``Base`` for every part of the service.

Judging campaigns keep their inputs (queries, texts, pools, options) and an append-only log of
answers (:class:`Judgment`, ordered by ``id``); the process state is rebuilt by replaying that log.
:class:`Task` rows are the leases of the assignment engine. Later parts (online experiments) add
their own tables to the same ``Base`` and one migration each to the same chain. The service's
secrets are not here: they are kept outside the database (:mod:`irbandits.service.credentials`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class CampaignRow(Base):
    """A judging campaign: its kind, options, the inputs its process is built from, and its lifecycle
    state (running, paused, closed or archived: :data:`irbandits.service.campaign_runtime.MOVES`)."""

    __tablename__ = "campaigns"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))          # "preference" or "graded"
    options: Mapped[dict[str, Any]] = mapped_column(JSON)  # checked options, defaults filled in
    topics: Mapped[dict[str, str]] = mapped_column(JSON)   # topic -> query text
    texts: Mapped[dict[str, str]] = mapped_column(JSON)    # docno -> passage text (pooled items only)
    pools: Mapped[dict[str, Any]] = mapped_column(JSON)    # preference: topic -> [docno]; graded: see campaigns.py
    tests: Mapped[list[list[str]] | None] = mapped_column(JSON, nullable=True)  # [topic, better, worse] test pairs
    created_at: Mapped[float] = mapped_column(Float)
    state: Mapped[str] = mapped_column(String(10), default="running", server_default="running")  # see STATES
    notes: Mapped[dict[str, dict[str, str]] | None] = mapped_column(JSON, nullable=True)  # topic -> description, narrative
    crowd: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # see irbandits.service.crowd


class Assessor(Base):
    """A person (or program) answering one campaign's tasks; the token is stored as its hash."""

    __tablename__ = "assessors"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    trusted: Mapped[bool] = mapped_column(Boolean, default=False)  # the organiser cleared a flag: no auto-flag
    automatic: Mapped[str | None] = mapped_column(String(200), nullable=True)  # registered name of a program
    created_at: Mapped[float] = mapped_column(Float)
    worker: Mapped[str | None] = mapped_column(String(200), nullable=True)  # joined: "prolific:PID" / "mturk:ID"
    platform: Mapped[dict[str, str] | None] = mapped_column(JSON, nullable=True)  # the join link's ids
    link: Mapped[int | None] = mapped_column(Integer, nullable=True)  # joined: links re-issued (none: 0)
    consented_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    code: Mapped[str | None] = mapped_column(String(40), nullable=True)  # their own completion code
    cutoff: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # automatic: see service.hybrid
    __table_args__ = (Index("ix_assessors_worker", "campaign_id", "worker", unique=True),)


class JoinLink(Base):
    """A campaign's public join link ``/j/TOKEN``: the token is derived from the server's secret and
    ``generation`` (rotating it bumps the generation), so it is never stored; ``cap`` bounds how many
    assessors it creates."""

    __tablename__ = "join_links"
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"), primary_key=True)
    generation: Mapped[int] = mapped_column(Integer)
    cap: Mapped[int] = mapped_column(Integer)
    open: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[float] = mapped_column(Float)


class Task(Base):
    """A lease: one request (a pair, or one document) given to one assessor until ``expires_at``."""

    __tablename__ = "tasks"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"))
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessors.id"))
    topic: Mapped[str] = mapped_column(String(100))
    left: Mapped[str] = mapped_column(String(200))                   # graded: the document
    right: Mapped[str | None] = mapped_column(String(200), nullable=True)
    issued_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)
    answered: Mapped[bool] = mapped_column(Boolean, default=False)
    kind: Mapped[str] = mapped_column(String(10), default="answer")  # "answer", "test" or "repeat"
    __table_args__ = (Index("ix_tasks_open", "campaign_id", "answered"),)


class Judgment(Base):
    """One recorded answer, quality check, retraction or skip (a "can't judge" or a problem report, with
    its reason and comment); the table is append-only and ``id`` is the order answers were applied in."""

    __tablename__ = "judgments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"), index=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id"))
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessors.id"))
    topic: Mapped[str] = mapped_column(String(100))
    left: Mapped[str] = mapped_column(String(200))                   # graded: the document
    right: Mapped[str | None] = mapped_column(String(200), nullable=True)
    winner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    grade: Mapped[float | None] = mapped_column(Float, nullable=True)
    client_id: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[float] = mapped_column(Float)
    kind: Mapped[str] = mapped_column(String(10), default="answer")  # answer, test, repeat, audit, practice, retract, skip
    retracts: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a retract event: the judgment taken back
    reason: Mapped[str | None] = mapped_column(String(20), nullable=True)     # a skip: a key of SKIP_REASONS
    comment: Mapped[str | None] = mapped_column(String(1000), nullable=True)  # a skip: the assessor's words
    usage: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # an automatic assessor's call: see service.hybrid
    __table_args__ = (UniqueConstraint("assessor_id", "client_id", name="uq_judgments_client"),)


class ExperimentRow(Base):
    """An online experiment: K named rankers, the dueling-bandit algorithm and the comparison method; or,
    with ``features``, an online learner to rank (``algorithm`` as ``irbandits oltr -a`` takes it, no
    rankers, comparison "")."""

    __tablename__ = "experiments"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    rankers: Mapped[list[str]] = mapped_column(JSON)
    algorithm: Mapped[str] = mapped_column(String(200))     # as ``irbandits simulate --algorithm`` takes it
    comparison: Mapped[str] = mapped_column(String(40))     # an interleaving method of irbandits.clicks
    seed: Mapped[int] = mapped_column(BigInteger)
    horizon: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    created_at: Mapped[float] = mapped_column(Float)
    state: Mapped[str] = mapped_column(String(10), default="running", server_default="running")  # running, paused, stopped
    features: Mapped[int | None] = mapped_column(Integer, nullable=True)   # a learner's (then no rankers)


class ExperimentClient(Base):
    """A front end allowed to run one experiment's impressions; the token is stored as its hash."""

    __tablename__ = "experiment_clients"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    experiment_id: Mapped[int] = mapped_column(ForeignKey("experiments.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[float] = mapped_column(Float)


class Impression(Base):
    """One ``select()`` of the algorithm: the arms (c, d) it chose, in the order ``seq`` of the
    experiment's select / update calls, and the interleaved list once the front end sent the lists. A
    learner's: c = d = 0, and ``shown`` holds the documents, their features and the list it showed."""

    __tablename__ = "impressions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    experiment_id: Mapped[int] = mapped_column(ForeignKey("experiments.id"))
    seq: Mapped[int] = mapped_column(Integer)
    c: Mapped[int] = mapped_column(Integer)
    d: Mapped[int] = mapped_column(Integer)
    shown: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    issued_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float)
    __table_args__ = (UniqueConstraint("experiment_id", "seq", name="uq_impressions_seq"),)


class Outcome(Base):
    """One applied outcome (``update(c, d, c_won)``, or a learner's update from ``clicks``), append-only;
    one per impression."""

    __tablename__ = "outcomes"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    experiment_id: Mapped[int] = mapped_column(ForeignKey("experiments.id"), index=True)
    impression_id: Mapped[int] = mapped_column(ForeignKey("impressions.id"), unique=True)
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(10))             # "clicks" or "vote"
    winner: Mapped[str | None] = mapped_column(String(200), nullable=True)  # a, b, or None for a tie
    credit: Mapped[float] = mapped_column(Float)              # in [-1, 1]; > 0: a won
    c_won: Mapped[bool] = mapped_column(Boolean)              # what the algorithm was told
    clicks: Mapped[list[int] | None] = mapped_column(JSON, nullable=True)   # a learner's: the clicked positions
    created_at: Mapped[float] = mapped_column(Float)
