"""Administration and safety: the secrets leave the database, experiment client tokens can be revoked,
seeds and horizons hold 64 bits.

The organiser token's hash and the session secret were in ``admin_credentials`` and
``server_secrets``; :func:`irbandits.service.credentials.load_credentials` moves them to the secrets
file before this migration drops the tables (a downgrade recreates them empty).

Revision ID: 0005_safety
Revises: 0004_quality
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_safety"
down_revision = "0004_quality"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("admin_credentials")
    op.drop_table("server_secrets")
    op.add_column("experiment_clients", sa.Column("revoked", sa.Boolean, nullable=False, server_default=sa.false()))
    with op.batch_alter_table("experiments") as batch:
        batch.alter_column("seed", type_=sa.BigInteger, existing_type=sa.Integer, existing_nullable=False)
        batch.alter_column("horizon", type_=sa.BigInteger, existing_type=sa.Integer, existing_nullable=True)


def downgrade() -> None:
    with op.batch_alter_table("experiments") as batch:
        batch.alter_column("horizon", type_=sa.Integer, existing_type=sa.BigInteger, existing_nullable=True)
        batch.alter_column("seed", type_=sa.Integer, existing_type=sa.BigInteger, existing_nullable=False)
    with op.batch_alter_table("experiment_clients") as batch:
        batch.drop_column("revoked")
    op.create_table(
        "server_secrets",
        sa.Column("name", sa.String(50), primary_key=True),
        sa.Column("value", sa.String(128), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "admin_credentials",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
