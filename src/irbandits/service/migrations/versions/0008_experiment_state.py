"""Experiment lifecycle: an online experiment is running, paused or stopped.

Existing experiments upgrade as running (the column's server default).

Revision ID: 0008_experiment_state
Revises: 0007_skips
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_experiment_state"
down_revision = "0007_skips"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("experiments", sa.Column("state", sa.String(10), nullable=False, server_default="running"))


def downgrade() -> None:
    op.drop_column("experiments", "state")
