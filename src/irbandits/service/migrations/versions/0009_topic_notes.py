"""Topic notes: a campaign's topics may carry a description and a narrative shown beside the query.

Existing campaigns upgrade without notes.

Revision ID: 0009_topic_notes
Revises: 0008_experiment_state
"""

import sqlalchemy as sa
from alembic import op

revision = "0009_topic_notes"
down_revision = "0008_experiment_state"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("campaigns", sa.Column("notes", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("campaigns", "notes")
