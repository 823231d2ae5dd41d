"""``python -m irbandits.cli``: the same as the ``irbandits`` command."""

from irbandits.cli import main

main()
