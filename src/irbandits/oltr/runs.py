"""Many runs of many learners: a tidy table, saved as it goes and resumed, its summary and figures.

:func:`simulate_learners` runs :func:`~irbandits.oltr.simulation.simulate_learner` for every
(learner, run) pair through the one task runner (:func:`~irbandits.tasks.run_tasks`: local processes
or Ray). Run ``r`` of every learner gets the same seed (derived from ``seed`` and ``r`` alone, so
adding runs or learners later changes no finished run). With ``out``, every finished pair is written
to ``out/runs/`` at once and the whole table to ``out/results.parquet``; a rerun with the same
settings skips the pairs already there (new learners and more runs are added).

>>> from irbandits.clicks.ltr import read_ltr
>>> data = read_ltr("../shared/data/ltr/lightgbm-lambdarank-sample/rank.test")
>>> table = simulate_learners(["DBGD", "PDGD"], data, impressions=200, runs=2, every=100)
>>> table.columns.tolist(), len(table)
(['algorithm', 'run', 'impression', 'offline_ndcg', 'online_ndcg'], 12)
>>> summarize_learners(table).columns.tolist()
['algorithm', 'runs', 'impressions', 'offline_ndcg_mean', 'offline_ndcg_se', 'online_ndcg_mean', 'online_ndcg_se']
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.ltr import LtrData
from irbandits.errors import IrbanditsError
from irbandits.io import write_parquet
from irbandits.oltr.base import parse_learner
from irbandits.oltr.simulation import DISCOUNT, simulate_learner
from irbandits.tasks import Failed, Interrupted, run_tasks

COLUMNS = ["algorithm", "run", "impression", "offline_ndcg", "online_ndcg"]


def run_seed(seed: int, run: int) -> int:
    """The seed of run ``run``: the same for every learner, independent of the number of runs."""
    return int(np.random.SeedSequence(int(seed)).spawn(run + 1)[run].generate_state(1)[0])


def _task(context: tuple, task: tuple) -> pd.DataFrame:
    train, test, click_model, impressions, every, discount = context
    label, run, seed = task
    curve = simulate_learner(label, train, test, click_model, impressions, every, seed, discount)
    curve.insert(0, "run", run)
    curve.insert(0, "algorithm", label)
    return curve


def piece_path(out: Path, label: str, run: int) -> Path:
    """Where run ``run`` of learner ``label`` is kept under the results folder ``out``."""
    safe = "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in label)
    return out / "runs" / f"{safe}--{run}.parquet"


def _prepare_out(out: Path, config: dict, force: bool) -> None:
    """Resume results of the same settings in ``out``; refuse others (naming them) unless ``force``."""
    path = out / "config.json"
    if path.is_file():
        try:
            old = json.loads(path.read_text())
            differences = [f"{k} {old.get(k)!r}, not {v!r}" for k, v in config.items() if old.get(k) != v]
        except (ValueError, AttributeError):
            differences = ["a config.json that irbandits did not write"]
        if differences and not force:
            raise IrbanditsError(f"results in {out} were made with {'; '.join(differences)}; use --force to "
                                 "replace them, or another --out")
        if differences:
            shutil.rmtree(out / "runs", ignore_errors=True)
            (out / "results.parquet").unlink(missing_ok=True)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=1))


def simulate_learners(learners: Sequence[str], train: LtrData, test: LtrData | None = None,
                      click_model: str | ClickModel = "perfect", impressions: int = 10_000, runs: int = 5,
                      every: int = 1000, seed: int = 0, jobs: int = 1, backend: str = "local",
                      address: str | None = None, out: str | Path | None = None, force: bool = False,
                      progress: bool = False, settings: dict | None = None,
                      discount: float = DISCOUNT) -> pd.DataFrame:
    """Run every learner spec (``"DBGD"``, ``"MGD:n=9"``, ...) ``runs`` times; return the tidy table
    ``algorithm, run, impression, offline_ndcg, online_ndcg`` (see :func:`simulate_learner`).

    ``jobs`` processes (or a Ray cluster with ``backend="ray"``) run the pairs; ``out`` keeps them and
    resumes (see the module docstring); ``settings`` (e.g. the data files) join the settings a resumed
    folder must match; ``force`` replaces results of other settings. Ctrl-C stops the workers and
    raises :class:`~irbandits.tasks.Interrupted` with the pairs kept.
    """
    labels = list(learners)
    for spec in labels:   # every spec checked before anything runs
        parse_learner(spec)
    if not labels:
        raise IrbanditsError("no learner given")
    if len(set(labels)) != len(labels):
        raise IrbanditsError("the same learner is given twice")
    if runs < 1 or jobs < 1:
        raise IrbanditsError(f"runs and jobs must be positive, got {runs} and {jobs}")
    test = train if test is None else test
    out = Path(out) if out is not None else None
    if out is not None:
        name = click_model.name if isinstance(click_model, ClickModel) else str(click_model)
        _prepare_out(out, dict(click_model=name, impressions=int(impressions), every=int(every), seed=int(seed),
                               discount=float(discount), **(settings or {})), force)
    pieces, todo = [], []
    for label in labels:
        for r in range(runs):
            if out is not None and piece_path(out, label, r).exists():
                pieces.append(pd.read_parquet(piece_path(out, label, r)))
            else:
                todo.append((label, r, run_seed(seed, r)))
    try:
        for outcome in run_tasks(_task, todo, (train, test, click_model, impressions, every, discount),
                                 backend=backend, workers=jobs, address=address, progress=progress,
                                 label="learning"):
            if isinstance(outcome, Failed):
                if outcome.exception is not None:
                    raise outcome.exception
                raise IrbanditsError(f"run {todo[outcome.index][:2]} failed: {outcome.error}")
            pieces.append(outcome.value)
            if out is not None:
                label, r, _ = todo[outcome.index]
                write_parquet(outcome.value, piece_path(out, label, r))
    except KeyboardInterrupt:
        raise Interrupted(len(pieces) if out is not None else 0, len(labels) * runs, out, "runs") from None
    order = {s: i for i, s in enumerate(labels)}
    table = pd.concat(pieces, ignore_index=True)
    table = table[table.algorithm.isin(order) & (table.run < runs)]
    table = table.sort_values(["algorithm", "run", "impression"],
                              key=lambda c: c.map(order) if c.name == "algorithm" else c).reset_index(drop=True)
    if out is not None:
        write_parquet(table, out / "results.parquet")
    return table[COLUMNS]


def summarize_learners(table: pd.DataFrame) -> pd.DataFrame:
    """Per learner at the last impression: runs, offline NDCG@10 and online performance, mean and SE."""
    last = table[table.impression == table.impression.max()]
    g = last.groupby("algorithm", sort=False)
    n = g.size()
    out = pd.DataFrame(dict(runs=n, impressions=int(table.impression.max())))
    for col in ("offline_ndcg", "online_ndcg"):
        out[f"{col}_mean"] = g[col].mean()
        out[f"{col}_se"] = g[col].std(ddof=1).fillna(0.0) / np.sqrt(n)
    return out.reset_index()


def plot_learning(table: pd.DataFrame, column: str, path: str | Path, title: str = "") -> Path:
    """Mean ``column`` (offline_ndcg or online_ndcg) per learner against impressions, +-1 SE bands."""
    from irbandits.plots import _pyplot, _save, style

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    g = table.groupby(["algorithm", "impression"], sort=False)[column].agg(["mean", "std", "count"]).reset_index()
    g["se"] = g["std"].fillna(0.0) / np.sqrt(g["count"])
    for i, (name, c) in enumerate(g.groupby("algorithm", sort=False)):
        ax.plot(c.impression, c["mean"], label=name, **style(i))
        ax.fill_between(c.impression, c["mean"] - c.se, c["mean"] + c.se, color=style(i)["color"], alpha=0.2, lw=0)
    ax.set_xlabel("impressions")
    ax.set_ylabel("offline NDCG@10 (test set)" if column == "offline_ndcg" else "online performance "
                  "(discounted cumulative NDCG@10)")
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:,.0f}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title or f"{column.replace('_', ' ')} ({table.run.nunique()} runs; mean ± 1 SE)", fontsize="medium")
    fig.tight_layout()
    return _save(plt, fig, path)
