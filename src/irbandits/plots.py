"""Figures of simulation results: cumulative regret with standard-error bands, and accuracy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def _curves(table: pd.DataFrame, column: str) -> pd.DataFrame:
    g = table.groupby(["algorithm", "step"], sort=False)[column]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["se"] = (out["std"].fillna(0.0) / np.sqrt(out["count"])).to_numpy()
    return out


def _figure(ncols: int):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(1, ncols, figsize=(6 * ncols, 4.2), squeeze=False)


def plot_regret(table: pd.DataFrame, path: str | Path, column: str = "regret", title: str = "") -> Path:
    """Mean cumulative regret per algorithm with +-1 SE bands, on a linear and a log time axis."""
    plt, fig, axes = _figure(2)
    curves = _curves(table, column)
    for ax, log in zip(axes[0], (False, True)):
        for name, c in curves.groupby("algorithm", sort=False):
            ax.plot(c.step, c["mean"], label=name)
            ax.fill_between(c.step, c["mean"] - c.se, c["mean"] + c.se, alpha=0.25)
        ax.set_xlabel("time step t" + (" (log scale)" if log else ""))
        ax.set_ylabel("cumulative " + column.replace("_", " "))
        if log:
            ax.set_xscale("log")
        else:
            ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize="small")
    fig.suptitle(title or f"cumulative {column.replace('_', ' ')} (mean of {table.run.nunique()} runs, +-1 SE)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_accuracy(table: pd.DataFrame, path: str | Path, title: str = "") -> Path:
    """Fraction of runs whose recommended arm is a winner, over (log) time."""
    plt, fig, axes = _figure(1)
    ax = axes[0][0]
    curves = _curves(table.assign(correct=table.correct.astype(float)), "correct")
    for name, c in curves.groupby("algorithm", sort=False):
        ax.plot(c.step, c["mean"], label=name)
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("time step t (log scale)")
    ax.set_ylabel("accuracy (fraction of runs recommending a winner)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title or f"accuracy over {table.run.nunique()} runs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
