"""Scatter plots of one measure against another, one point per run (thesis Figures 5.1 and 5.2)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def scatter(means: pd.DataFrame, pairs: list[tuple[str, str]], path: str | Path, titles: list[str] | None = None,
            ncols: int = 2) -> Path:
    """Plot ``x`` against ``y`` for every pair; ``means`` has one row per run and a column per measure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ncols = min(ncols, len(pairs))
    nrows = -(-len(pairs) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5 * ncols, 4.5 * nrows), squeeze=False)
    for k, (x, y) in enumerate(pairs):
        ax = axes[k // ncols][k % ncols]
        ax.scatter(means[x], means[y], s=18, alpha=0.8)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title(titles[k] if titles else f"{y} vs {x}", fontsize=10)
        ax.grid(alpha=0.3)
    for k in range(len(pairs), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
