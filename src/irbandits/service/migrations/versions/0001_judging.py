"""Judging campaigns: admin credential, campaigns, assessors, tasks (leases), judgments (the log).

Revision ID: 0001_judging
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_judging"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "admin_credentials",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "campaigns",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("topics", sa.JSON, nullable=False),
        sa.Column("texts", sa.JSON, nullable=False),
        sa.Column("pools", sa.JSON, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "assessors",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaigns.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("revoked", sa.Boolean, nullable=False),
        sa.Column("flagged", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaigns.id"), nullable=False),
        sa.Column("assessor_id", sa.Integer, sa.ForeignKey("assessors.id"), nullable=False),
        sa.Column("topic", sa.String(100), nullable=False),
        sa.Column("left", sa.String(200), nullable=False),
        sa.Column("right", sa.String(200), nullable=True),
        sa.Column("issued_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("answered", sa.Boolean, nullable=False),
    )
    op.create_index("ix_tasks_open", "tasks", ["campaign_id", "answered"])
    op.create_table(
        "judgments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("campaign_id", sa.Integer, sa.ForeignKey("campaigns.id"), nullable=False),
        sa.Column("task_id", sa.Integer, sa.ForeignKey("tasks.id"), nullable=False),
        sa.Column("assessor_id", sa.Integer, sa.ForeignKey("assessors.id"), nullable=False),
        sa.Column("topic", sa.String(100), nullable=False),
        sa.Column("left", sa.String(200), nullable=False),
        sa.Column("right", sa.String(200), nullable=True),
        sa.Column("winner", sa.String(200), nullable=True),
        sa.Column("grade", sa.Float, nullable=True),
        sa.Column("client_id", sa.String(200), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("assessor_id", "client_id", name="uq_judgments_client"),
    )
    op.create_index("ix_assessors_campaign_id", "assessors", ["campaign_id"])
    op.create_index("ix_judgments_campaign_id", "judgments", ["campaign_id"])


def downgrade() -> None:
    for table in ("judgments", "tasks", "assessors", "campaigns", "admin_credentials"):
        op.drop_table(table)
