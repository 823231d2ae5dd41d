"""Quality control of judging campaigns: known-answer test pairs, quality checks and retractions in the
log, automatic (program) assessors and the organiser's trust in a cleared assessor.

Revision ID: 0004_quality
Revises: 0003_experiments
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_quality"
down_revision = "0003_experiments"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("campaigns", sa.Column("tests", sa.JSON, nullable=True))
    op.add_column("assessors", sa.Column("automatic", sa.String(200), nullable=True))
    op.add_column("assessors", sa.Column("trusted", sa.Boolean, nullable=False, server_default=sa.false()))
    op.add_column("tasks", sa.Column("kind", sa.String(10), nullable=False, server_default="answer"))
    op.add_column("judgments", sa.Column("kind", sa.String(10), nullable=False, server_default="answer"))
    op.add_column("judgments", sa.Column("retracts", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("judgments") as batch:
        batch.drop_column("retracts")
        batch.drop_column("kind")
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("kind")
    with op.batch_alter_table("assessors") as batch:
        batch.drop_column("trusted")
        batch.drop_column("automatic")
    with op.batch_alter_table("campaigns") as batch:
        batch.drop_column("tests")
