"""Online experiments that hold a learner: its number of features (an experiment's ``features``) and the
clicked positions it learned from (an outcome's ``clicks``).

Revision ID: 0012_learners
Revises: 0011_hybrid
"""

import sqlalchemy as sa
from alembic import op

revision = "0012_learners"
down_revision = "0011_hybrid"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("experiments", sa.Column("features", sa.Integer(), nullable=True))
    op.add_column("outcomes", sa.Column("clicks", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("outcomes", "clicks")
    op.drop_column("experiments", "features")
