"""Alembic environment: runs on the connection :func:`irbandits.service.db.migrate` passes in."""

from alembic import context

from irbandits.service.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
