"""Figures of simulation results: cumulative regret with standard-error bands, and accuracy.

Every line has its own colour and line style (:func:`style`), titles give the horizon and the number
of runs, and a figure of many algorithms draws each in its own panel with the others grey behind.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

LINESTYLES = ("-", "--", "-.", ":")
COLOURS = (0, 1, 2, 3, 4, 5, 6, 8, 9)  # tab10 without its grey, which marks the other lines of a panel


def style(i: int) -> dict:
    """Colour and line style of the ``i``-th line: nine colours, then the nine again dashed, and so on."""
    import matplotlib

    n = len(COLOURS)
    return dict(color=matplotlib.colormaps["tab10"](COLOURS[i % n]), linestyle=LINESTYLES[(i // n) % len(LINESTYLES)])


def _curves(table: pd.DataFrame, column: str) -> pd.DataFrame:
    g = table.groupby(["algorithm", "step"], sort=False)[column]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["se"] = (out["std"].fillna(0.0) / np.sqrt(out["count"])).to_numpy()
    return out


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _about(table: pd.DataFrame) -> str:
    return f"horizon {int(table.step.max()):,}, {table.run.nunique()} runs"


def _save(plt, fig, path: str | Path) -> Path:
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)


def plot_regret(table: pd.DataFrame, path: str | Path, column: str = "regret", title: str = "",
                kind: str | None = None) -> Path:
    """Mean cumulative regret per algorithm with +-1 SE bands, on a linear and a log time axis; ``kind``
    (e.g. "weak") names the regret on the y axis and in the default title (default: the column's name,
    or the ``regret_kind`` a simulation table records in its attrs)."""
    if kind is None and column == table.attrs.get("regret_column"):
        kind = table.attrs.get("regret_kind")
    from irbandits.simulate import REGRETS

    what = f"{REGRETS[kind].title if kind in REGRETS else kind} regret" if kind else column.replace("_", " ")
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), squeeze=False)
    curves = _curves(table, column)
    for ax, log in zip(axes[0], (False, True)):
        for i, (name, c) in enumerate(curves.groupby("algorithm", sort=False)):
            ax.plot(c.step, c["mean"], label=name, **style(i))
            ax.fill_between(c.step, c["mean"] - c.se, c["mean"] + c.se, color=style(i)["color"], alpha=0.2, lw=0)
        ax.set_xlabel("time step t" + (" (log scale)" if log else ""))
        ax.set_ylabel("cumulative " + what)
        if log:
            ax.set_xscale("log")
        else:
            ax.xaxis.set_major_locator(plt.MaxNLocator(nbins=5))   # long labels like 2,000,000 must not overlap
            ax.xaxis.set_major_formatter(lambda x, _: f"{x:,.0f}")
        ax.grid(alpha=0.3)
    fig.suptitle(title or f"cumulative {what} ({_about(table)}; mean ± 1 SE)")
    if curves.algorithm.nunique() <= 8:
        axes[0][0].legend(fontsize="small")
        fig.tight_layout()
    else:  # many algorithms: the legend gets its own columns to the right instead of hiding curves
        ncol = math.ceil(curves.algorithm.nunique() / 20)  # about 20 names fit the figure's height
        fig.set_figwidth(14 + 1.8 * (ncol - 1))
        axes[0][1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, ncol=ncol)
        fig.tight_layout()
    return _save(plt, fig, path)


def smoothed_accuracy(table: pd.DataFrame, window: int = 5) -> pd.DataFrame:
    """Per algorithm and step: ``mean`` and ``se`` over runs of each run's 0/1 ``correct`` averaged over
    ``window`` neighbouring checkpoints (centred; half a decade of the default log-spaced checkpoints)."""
    t = table.sort_values(["algorithm", "run", "step"], kind="stable")
    smooth = t.groupby(["algorithm", "run"], sort=False).correct.transform(
        lambda c: c.astype(float).rolling(window, center=True, min_periods=1).mean())
    order = {name: i for i, name in enumerate(table.algorithm.unique())}
    curves = _curves(t.assign(correct=smooth), "correct")
    return curves.sort_values("algorithm", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def plot_accuracy(table: pd.DataFrame, path: str | Path, title: str = "", window: int = 5) -> Path:
    """Fraction of runs whose recommended arm is a winner, over log time: a smoothed line per algorithm
    (see :func:`smoothed_accuracy`) with a +-1 SE band across runs. More than three algorithms get a
    panel each, with the other algorithms' lines thin and grey behind."""
    plt = _pyplot()
    curves = smoothed_accuracy(table, window)
    names = list(curves.algorithm.unique())
    panels = len(names) if len(names) > 3 else 1
    ncols = min(panels, 4)
    nrows = math.ceil(panels / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 if panels == 1 else 3.6 * ncols, 4.4 if panels == 1 else 2.9 * nrows + 0.9),
                             sharex=True, sharey=True, squeeze=False)
    by_name = dict(list(curves.groupby("algorithm", sort=False)))
    for p, ax in enumerate(axes.flat):
        if p >= panels:
            ax.set_visible(False)
            continue
        shown = names if panels == 1 else [names[p]]
        for name in names:
            if name not in shown:
                ax.plot(by_name[name].step, by_name[name]["mean"], color="0.78", lw=0.8)
        for name in shown:
            c, s = by_name[name], style(names.index(name))
            ax.fill_between(c.step, (c["mean"] - c.se).clip(0, 1), (c["mean"] + c.se).clip(0, 1), color=s["color"],
                            alpha=0.25, lw=0)
            ax.plot(c.step, c["mean"], label=name, lw=1.8, **s)
        ax.set_xscale("log")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
        if panels > 1:
            ax.set_title(names[p], fontsize="medium", color=style(p)["color"])
    if panels == 1:
        axes[0][0].legend(fontsize="small", loc="lower right")
    fig.supxlabel("time step t (log scale)", fontsize="medium")
    fig.supylabel("accuracy (fraction of runs\nrecommending a winner)" if panels > 1 else
                  "accuracy (fraction of runs recommending a winner)", fontsize="medium")
    fig.suptitle(f"{title or f'accuracy ({_about(table)})'}\nsmoothed over {window} checkpoints; band: ± 1 SE "
                 f"across runs", fontsize="medium")
    fig.tight_layout()
    return _save(plt, fig, path)


def plot_grid(cells: pd.DataFrame, params: list[str], path: str | Path, value: str = "regret_mean",
              title: str = "", label: str = "final regret (mean over runs)") -> Path:
    """Heat map of ``value`` (lower is better) over a parameter grid: one row of ``cells`` per setting,
    the ``params`` columns holding its values. The last parameter runs along the x axis, the others'
    combinations down the y axis; every cell is labelled and the best (lowest) one framed and starred."""
    from matplotlib.colors import LogNorm

    plt = _pyplot()
    x_param, y_params = params[-1], params[:-1]
    xs = list(dict.fromkeys(cells[x_param]))
    ys = list(dict.fromkeys(zip(*(cells[p] for p in y_params)))) if y_params else [()]
    grid = np.full((len(ys), len(xs)), np.nan)
    for row in cells.itertuples(index=False):
        r = row._asdict()
        grid[ys.index(tuple(r[p] for p in y_params)), xs.index(r[x_param])] = r[value]
    fig, ax = plt.subplots(figsize=(max(6.0, 2.4 + 1.2 * len(xs)), 2.0 + 0.55 * len(ys)))
    finite = grid[np.isfinite(grid)]
    norm = LogNorm(finite.min(), finite.max()) if finite.min() > 0 and finite.max() > 30 * finite.min() else None
    image = ax.imshow(grid, cmap="viridis_r", norm=norm, aspect="auto")
    fig.colorbar(image, ax=ax, label=f"{label}\nlower is better")
    best = np.unravel_index(np.nanargmin(grid), grid.shape)
    for (i, j), v in np.ndenumerate(grid):
        text = "" if np.isnan(v) else f"{v:,.4g}" + (" ★" if (i, j) == best else "")
        ax.text(j, i, text, ha="center", va="center", fontsize="small", fontweight="bold" if (i, j) == best else None,
                color="white" if image.norm(v) > 0.55 else "black")
    ax.add_patch(plt.Rectangle((best[1] - 0.5, best[0] - 0.5), 1, 1, fill=False, edgecolor="red", lw=2.5))
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_xlabel(x_param)
    ax.set_yticks(range(len(ys)), [", ".join(map(str, y)) for y in ys] if y_params else [""])
    ax.set_ylabel(", ".join(y_params))
    setting = [f"{p}={v}" for p, v in zip(y_params, ys[best[0]])] + [f"{x_param}={xs[best[1]]}"]
    ax.set_title("\n".join(filter(None, [title, f"{label}; best (★): {', '.join(setting)}"])), fontsize="medium")
    fig.tight_layout()
    return _save(plt, fig, path)


def plot_windows(table: pd.DataFrame, path: str | Path, columns: dict[str, str], title: str = "",
                 levels: dict[str, dict[str, float]] | None = None) -> Path:
    """Per algorithm, a quantity per step over time (mean +-1 SE over runs; log time axis), one panel
    per ``columns`` entry (column -> axis label); ``table`` has one row per algorithm, run and window
    ending at ``step`` (e.g. :func:`irbandits.clicks.online_metrics.per_impression`). ``levels[column]``
    adds labelled dotted horizontal lines (e.g. the best ranker's own value)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(columns), figsize=(6 * len(columns), 4.6), squeeze=False)
    for ax, (column, label) in zip(axes[0], columns.items()):
        for i, (name, c) in enumerate(_curves(table, column).groupby("algorithm", sort=False)):
            ax.plot(c.step, c["mean"], label=name, **style(i))
            ax.fill_between(c.step, c["mean"] - c.se, c["mean"] + c.se, color=style(i)["color"], alpha=0.2, lw=0)
        for name, value in (levels or {}).get(column, {}).items():
            ax.axhline(value, color="grey", linestyle=":", lw=1)
            ax.annotate(name, (1, value), xycoords=("axes fraction", "data"), ha="right", va="bottom",
                        fontsize="x-small", color="grey")
        ax.set_xscale("log")
        ax.set_xlabel("time step t (log scale)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    return _save(plt, fig, path)


def plot_sensitivity(needed: pd.DataFrame, shares: pd.DataFrame, out: str | Path, stem: str,
                     power: float = 0.8) -> list[Path]:
    """How many impressions each test needs to find the better of two rankers, two figures:
    ``out/<stem>-needed.png``, per pair (``needed``: pair, metric, power, direction) the impressions
    by power analysis on a log axis, a marker per test (a test going the wrong way is an x at the
    top); ``out/<stem>-power.png``, a panel per pair with the share of repetitions that detect the
    better ranker against the impressions (``shares``: pair, metric, impressions, detected) and the
    target ``power`` dotted."""
    plt = _pyplot()
    tests, pairs = list(dict.fromkeys(needed.metric)), list(dict.fromkeys(needed.pair))
    markers = "osD^v<>p*hX"
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(pairs)), 5.2))
    top = needed.power.max() * 3 if needed.power.notna().any() else 1.0
    for i, test in enumerate(tests):
        part = needed[needed.metric == test].set_index("pair").reindex(pairs)
        x = np.arange(len(pairs)) + (i - (len(tests) - 1) / 2) * 0.07
        ax.plot(x, part.power, linestyle="none", marker=markers[i % len(markers)], color=style(i)["color"], label=test)
        wrong = (part.direction == "wrong way").to_numpy()
        ax.plot(x[wrong], np.full(wrong.sum(), top), linestyle="none", marker="x", color=style(i)["color"])
    ax.set_yscale("log")
    ax.set_xticks(range(len(pairs)), pairs, fontsize="small")
    ax.set_ylabel(f"impressions needed (power analysis, power {power})")
    ax.set_title("impressions to find the better ranker at 95 % confidence (x at the top: the test points the "
                 "wrong way)", fontsize="medium")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", ncol=2)
    fig.tight_layout()
    paths = [_save(plt, fig, Path(out) / f"{stem}-needed.png")]
    cols = min(3, len(pairs))
    rows = math.ceil(len(pairs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.8 * rows), squeeze=False, sharey=True)
    for ax, pair in zip(axes.ravel(), pairs):
        for i, test in enumerate(tests):
            c = shares[(shares.pair == pair) & (shares.metric == test)]
            ax.plot(c.impressions, c.detected, label=test, marker=markers[i % len(markers)], ms=3, **style(i))
        ax.axhline(power, color="grey", linestyle=":", lw=1)
        ax.set_xscale("log")
        ax.set_title(pair.replace("\n", " "), fontsize="small")
        ax.set_xlabel("impressions")
        ax.grid(alpha=0.3)
    for ax in axes.ravel()[len(pairs):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("share of repetitions detecting\nthe better ranker (p < 0.05)")
    axes[0][0].legend(fontsize="x-small")
    fig.tight_layout()
    return paths + [_save(plt, fig, Path(out) / f"{stem}-power.png")]
