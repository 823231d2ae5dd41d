"""``irbandits serve --demo``: a small demo campaign (filled in with the pages)."""

from __future__ import annotations


def load_demo(app) -> None:
    """Create the demo campaign in ``app`` unless it exists (not written yet: does nothing)."""
