"""Server secrets of the organiser pages (the key that signs session cookies and CSRF tokens).

Revision ID: 0002_web_secret
Revises: 0001_judging
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_web_secret"
down_revision = "0001_judging"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(50), primary_key=True),
        sa.Column("value", sa.String(128), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("server_secrets")
