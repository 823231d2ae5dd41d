"""Campaign lifecycle: a campaign is running, paused, closed or archived.

Existing campaigns upgrade as running (the column's server default).

Revision ID: 0006_lifecycle
Revises: 0005_safety
"""

import sqlalchemy as sa
from alembic import op

revision = "0006_lifecycle"
down_revision = "0005_safety"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("campaigns", sa.Column("state", sa.String(10), nullable=False, server_default="running"))


def downgrade() -> None:
    # a plain DROP COLUMN (SQLite 3.35 and later): a batch copy of the table would need foreign keys off
    op.drop_column("campaigns", "state")
