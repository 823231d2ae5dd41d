"""Skips and problem reports: a judgments row of kind "skip" keeps its reason and the assessor's comment.

Existing rows upgrade with both empty (they are answers, checks and retractions).

Revision ID: 0007_skips
Revises: 0006_lifecycle
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_skips"
down_revision = "0006_lifecycle"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("judgments", sa.Column("reason", sa.String(20), nullable=True))
    op.add_column("judgments", sa.Column("comment", sa.String(1000), nullable=True))


def downgrade() -> None:
    # skip rows would read as answers without a winner: they go with the columns
    op.execute("DELETE FROM judgments WHERE kind = 'skip'")
    op.drop_column("judgments", "comment")
    op.drop_column("judgments", "reason")
