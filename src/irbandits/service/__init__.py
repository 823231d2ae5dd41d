"""``irbandits serve``: the judging service (FastAPI app, auth, storage, migrations, routes).

Needs the ``service`` extra (``pip install 'irbandits[service]'``); it imports the library, never
the reverse, and nothing of it is imported by ``import irbandits``. See ``spec/service.md`` for the
HTTP contract and :func:`irbandits.service.app.create_app` for the entry point.
"""
