"""Crowd campaigns: a campaign's crowd settings (guidelines, consent, practice, quotas, bundles,
completion), the join link, and per assessor the platform's ids, the consent and a completion code.

Existing campaigns upgrade without crowd settings and existing assessors without platform ids; each
existing assessor gets a completion code of its own (as new ones do) so a payment report covers them.

Revision ID: 0010_crowd
Revises: 0009_topic_notes
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0010_crowd"
down_revision = "0009_topic_notes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("campaigns", sa.Column("crowd", sa.JSON(), nullable=True))
    op.add_column("assessors", sa.Column("worker", sa.String(200), nullable=True))
    op.add_column("assessors", sa.Column("platform", sa.JSON(), nullable=True))
    op.add_column("assessors", sa.Column("consented_at", sa.Float(), nullable=True))
    op.add_column("assessors", sa.Column("code", sa.String(40), nullable=True))
    op.create_index("ix_assessors_worker", "assessors", ["campaign_id", "worker"], unique=True)
    conn = op.get_bind()
    for (aid,) in conn.execute(sa.text("SELECT id FROM assessors")).all():
        conn.execute(sa.text("UPDATE assessors SET code = :code WHERE id = :id"),
                     {"code": secrets.token_hex(5).upper(), "id": aid})
    op.create_table(
        "join_links",
        sa.Column("campaign_id", sa.Integer(), sa.ForeignKey("campaigns.id"), primary_key=True),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("cap", sa.Integer(), nullable=False),
        sa.Column("open", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("join_links")
    op.drop_index("ix_assessors_worker", "assessors")
    for column in ("code", "consented_at", "platform", "worker"):
        op.drop_column("assessors", column)
    op.drop_column("campaigns", "crowd")
