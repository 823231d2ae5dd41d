"""Figures and tables of a sweep's result store, per problem: the regret and accuracy figures
and summary table of ``irbandits simulate``, and a heat map of final regret over every grid (the
regret of the spec's kind, ``auto`` resolved per problem as ``irbandits simulate --regret`` does)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.sweeps.store import META, meta_file, read_rows


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", name)


def load_results(out: str | Path) -> tuple[dict, pd.DataFrame]:
    """The expanded spec and every finished row of the store ``out``."""
    out = Path(out)
    meta = meta_file(out)  # sweep.json, or experiment.json in a store made before sweeps had their name
    if meta is None:
        raise IrbanditsError(f"{out}: not a sweep result store (no {META}; see `irbandits sweep run`)")
    described = json.loads(meta.read_text())
    rows = pd.read_parquet(out / "results.parquet") if (out / "results.parquet").is_file() else read_rows(out, described)
    return described, rows


def grid_cells(summary: pd.DataFrame, described: dict,
               column: str = "regret") -> dict[str, tuple[list[str], pd.DataFrame]]:
    """Per algorithm family with a grid: its parameter names and one row per setting (grid values,
    regret_mean: the final mean of ``column``, accuracy), from a :func:`irbandits.simulate.summarize` table."""
    out = {}
    by_label = summary.set_index("algorithm")
    for family in dict.fromkeys(a["family"] for a in described["algorithms"] if a["grid"]):
        settings = [a for a in described["algorithms"] if a["family"] == family and a["label"] in by_label.index]
        if not settings:
            continue
        params = list(settings[0]["grid"])
        cells = pd.DataFrame([{**a["grid"], "algorithm": a["label"],
                               "regret_mean": by_label.loc[a["label"], f"{column}_mean"],
                               "accuracy": by_label.loc[a["label"], "accuracy"]} for a in settings])
        out[family] = (params, cells)
    return out


def report(out: str | Path) -> list[dict]:
    """Write ``out/report/<problem>/`` (regret.png, accuracy.png, summary.csv, grid-<family>.png) and
    return per problem: name, its summary table, the grid tables, the files written and how many of
    its runs are finished."""
    from irbandits.plots import plot_accuracy, plot_grid, plot_regret
    from irbandits.simulate import REGRETS, summarize

    out = Path(out)
    described, rows = load_results(out)
    if rows.empty:
        raise IrbanditsError(f"{out}: no finished tasks yet")
    expected = len(described["algorithms"]) * described["runs"]
    pages = []
    for problem, table in rows.groupby("problem", sort=False):
        folder = out / "report" / _safe(problem)
        folder.mkdir(parents=True, exist_ok=True)
        table = table.drop(columns="problem")
        finished = table.groupby(["algorithm", "run"]).ngroups
        about = f"{problem}, horizon {int(table.step.max()):,}, {table.run.nunique()} runs"
        kind = REGRETS[described.get("regret_kinds", {}).get(problem, "condorcet")]  # a store made before: Condorcet
        files = [plot_regret(table, folder / "regret.png", column=kind.column, kind=kind.title,
                             title=f"cumulative {kind.title} regret ({about}; mean ± 1 SE)"),
                 plot_accuracy(table, folder / "accuracy.png", title=f"accuracy ({about})")]
        summary = summarize(table)
        summary.to_csv(folder / "summary.csv", index=False, float_format="%.6g")
        files.append(folder / "summary.csv")
        grids = grid_cells(summary, described, kind.column)
        for family, (params, cells) in grids.items():
            files.append(plot_grid(cells, params, folder / f"grid-{_safe(family)}.png",
                                   title=f"{family} grid on {about}", label=f"final {kind.title} regret (mean over runs)"))
        pages.append(dict(problem=problem, summary=summary, grids=grids, files=files, finished=finished,
                          expected=expected, horizon=described["horizon"]))
    return pages
