"""Online experiments: experiments, their client tokens, impressions (the selects) and outcomes (the updates).

Revision ID: 0003_experiments
Revises: 0002_web_secret
"""

import sqlalchemy as sa
from alembic import op

revision = "0003_experiments"
down_revision = "0002_web_secret"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "experiments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("rankers", sa.JSON, nullable=False),
        sa.Column("algorithm", sa.String(200), nullable=False),
        sa.Column("comparison", sa.String(40), nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("horizon", sa.Integer, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "experiment_clients",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer, sa.ForeignKey("experiments.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_experiment_clients_experiment_id", "experiment_clients", ["experiment_id"])
    op.create_table(
        "impressions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer, sa.ForeignKey("experiments.id"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("c", sa.Integer, nullable=False),
        sa.Column("d", sa.Integer, nullable=False),
        sa.Column("shown", sa.JSON, nullable=True),
        sa.Column("issued_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.UniqueConstraint("experiment_id", "seq", name="uq_impressions_seq"),
    )
    op.create_table(
        "outcomes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer, sa.ForeignKey("experiments.id"), nullable=False),
        sa.Column("impression_id", sa.Integer, sa.ForeignKey("impressions.id"), nullable=False, unique=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("winner", sa.String(200), nullable=True),
        sa.Column("credit", sa.Float, nullable=False),
        sa.Column("c_won", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_outcomes_experiment_id", "outcomes", ["experiment_id"])


def downgrade() -> None:
    for table in ("outcomes", "impressions", "experiment_clients", "experiments"):
        op.drop_table(table)
