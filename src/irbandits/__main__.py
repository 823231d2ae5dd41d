"""``python -m irbandits``: the same as the ``irbandits`` command."""

from irbandits.cli import main

main()
