"""A joined worker's link generation: re-issuing their link moves it on, so the join link gives them the
new token and never the revoked one again (``assessors.link``; none means 0).

Revision ID: 0013_worker_links
Revises: 0012_learners
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_worker_links"
down_revision = "0012_learners"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("assessors", sa.Column("link", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("assessors", "link")
