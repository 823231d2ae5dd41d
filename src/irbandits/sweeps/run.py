"""Run a sweep spec's tasks on a backend, streaming them into its result store.

Run r of every algorithm on every problem is seeded by ``SeedSequence(seed, spawn_key=(r,))``:
from the spec's seed and the task's key alone, never from its place in a queue. That is run r of
``simulate(seed=seed)`` (see :func:`irbandits.simulate.run_streams`), so a sweep's rows for a
problem equal ``irbandits simulate``'s with the same seed, whatever the backend, the number of
workers and the interruptions (``run_seconds``, a wall time, aside).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.io import write_parquet
from irbandits.simulate import simulate_run
from irbandits.sweeps.spec import SweepSpec, Task
from irbandits.sweeps.store import ResultStore
from irbandits.tasks import Done, Interrupted, run_tasks

BATCH_TASKS = 32  # a batch is written when this many tasks have finished ...
BATCH_SECONDS = 2.0  # ... or this long after the last batch, whichever comes first (the first batch: at once)


def run_seed(seed: int, task: Task) -> np.random.SeedSequence:
    """The seed of ``task``: from the spec's seed and the task's run number only."""
    return np.random.SeedSequence(seed, spawn_key=(task.run,))


def run_task(context: dict, task: Task) -> pd.DataFrame:
    problem = context["problems"][task.problem]
    rows = simulate_run(context["specs"][task.algorithm], problem, context["horizon"], task.run,
                        run_seed(context["seed"], task), regret=context["regret"])
    rows.insert(0, "problem", task.problem)
    return rows


class TasksFailed(RuntimeError):
    """Some tasks raised; the others are kept in the store, and a rerun retries the failed ones."""

    def __init__(self, failures: list[tuple[str, str]], total: int, out: Path):
        key, error = failures[0]
        super().__init__(f"{len(failures)} of {total} tasks failed (first: {key}: {error}); the finished ones are "
                         f"kept in {out}; run again to retry the failed ones")
        self.failures = failures


def run_sweep(spec: SweepSpec, out: str | Path, backend: str = "local", workers: int = 1,
              address: str | None = None, progress: bool = True, force: bool = False) -> pd.DataFrame:
    """Run the tasks of ``spec`` not yet in the store ``out``; return every row (see :mod:`.store`).

    Finished tasks are written in batches as they come, so Ctrl-C (:class:`~irbandits.tasks.Interrupted`), a
    crash or a lost worker loses nothing finished; the same call resumes. When all tasks are done,
    ``out/results.parquet`` holds the rows in spec order.
    """
    out = Path(out)
    store = ResultStore(out, spec, force)
    tasks = spec.tasks()
    todo = [t for t in tasks if t.key not in store.done]
    context = dict(problems=spec.problems, specs={s.label: s.spec for s in spec.settings}, horizon=spec.horizon,
                   seed=spec.seed, regret=spec.regret)
    finished: list = []
    failures: list[tuple[str, str]] = []
    flushed = float("-inf")
    try:
        for outcome in run_tasks(run_task, todo, context, backend=backend, workers=workers, address=address,
                                 progress=progress, label=f"{spec.name}: tasks"):
            task = todo[outcome.index]
            if isinstance(outcome, Done):
                finished.append((task.key, outcome.value, outcome.seconds, outcome.worker))
            else:
                failures.append((task.key, outcome.error))
            if len(finished) >= BATCH_TASKS or time.monotonic() - flushed >= BATCH_SECONDS:
                store.add(finished)
                finished, flushed = [], time.monotonic()
    except KeyboardInterrupt:
        store.add(finished)
        raise Interrupted(len(store.done), len(tasks), out, "tasks") from None
    store.add(finished)
    if failures:
        raise TasksFailed(failures, len(tasks), out)
    table = store.table()
    write_parquet(table, out / "results.parquet")
    return table
