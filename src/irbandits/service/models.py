"""The database tables (SQLAlchemy 2 typed models), one ``Base`` for every part of the service.

Judging campaigns keep their inputs (queries, texts, pools, options) and an append-only log of
answers (:class:`Judgment`, ordered by ``id``); the process state is rebuilt by replaying that log.
:class:`Task` rows are the leases of the assignment engine. Later parts (online experiments) add
their own tables to the same ``Base`` and one migration each to the same chain.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class AdminCredential(Base):
    """The organiser token, as its SHA-256 hash only."""

    __tablename__ = "admin_credentials"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Float)


class CampaignRow(Base):
    """A judging campaign: its kind, options and the inputs its process is built from."""

    __tablename__ = "campaigns"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))          # "preference" or "graded"
    options: Mapped[dict[str, Any]] = mapped_column(JSON)  # checked options, defaults filled in
    topics: Mapped[dict[str, str]] = mapped_column(JSON)   # topic -> query text
    texts: Mapped[dict[str, str]] = mapped_column(JSON)    # docno -> passage text (pooled items only)
    pools: Mapped[dict[str, Any]] = mapped_column(JSON)    # preference: topic -> [docno]; graded: see campaigns.py
    created_at: Mapped[float] = mapped_column(Float)


class Assessor(Base):
    """A person (or program) answering one campaign's tasks; the token is stored as its hash."""

    __tablename__ = "assessors"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaigns.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
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
    __table_args__ = (Index("ix_tasks_open", "campaign_id", "answered"),)


class Judgment(Base):
    """One recorded answer; the table is append-only and ``id`` is the order answers were applied in."""

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
    __table_args__ = (UniqueConstraint("assessor_id", "client_id", name="uq_judgments_client"),)
