"""Hybrid campaigns: what each automatic assessor's call cost (a judgments row's ``usage``) and where
its answers stopped counting (an assessor's ``cutoff``).

Revision ID: 0011_hybrid
Revises: 0010_crowd
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_hybrid"
down_revision = "0010_crowd"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("judgments", sa.Column("usage", sa.JSON(), nullable=True))
    op.add_column("assessors", sa.Column("cutoff", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("assessors", "cutoff")
    op.drop_column("judgments", "usage")
