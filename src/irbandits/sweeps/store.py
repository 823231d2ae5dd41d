"""The result store of a sweep: a folder of Parquet batches and an index of finished tasks.

Layout of ``DIR``::

    spec.toml           the spec as given
    sweep.json          the expanded spec (horizon, seed, problem checksums, algorithm settings, grids)
    batches/NNNNNN.parquet   the rows of the tasks finished in one batch, written whole or not at all
    index.jsonl         one line per finished task: key, batch, seconds, worker (wall times live here
                        and in the rows' run_seconds, never in what is compared)
    results.parquet     every row of the spec's tasks in a fixed order, once all are finished

A batch file is written (atomically) before its tasks enter the index, so a crash at any moment
loses at most the batch being written: its tasks are simply run again.

A store made before sweeps had their name keeps its expanded spec in ``experiment.json``: it is read
in the place of ``sweep.json``, and renamed to it when the store is opened for writing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.io import write_parquet
from irbandits.simulate import COLUMNS, REGRETS
from irbandits.sweeps.spec import SweepSpec

STORE_COLUMNS = ["problem", *COLUMNS]
WALL_TIME = ["run_seconds"]  # the columns that differ between identical runs
META = "sweep.json"  # the expanded spec
OLD_META = "experiment.json"  # its name in a store made before sweeps had their name


def meta_file(out: Path) -> Path | None:
    """The expanded spec's file of the store ``out``: ``sweep.json``, else an old ``experiment.json``;
    None when there is neither."""
    for name in (META, OLD_META):
        if (out / name).is_file():
            return out / name
    return None


@contextmanager
def whole_block():
    """Ctrl-C waits until the block is done: a batch and its index lines are written together.

    The signal's handler is swapped, not the signal masked: a masked SIGINT goes to another thread
    (a process pool's), and Python raises it in the main thread all the same."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    old = signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if caught:
        signal.raise_signal(signal.SIGINT)  # now to the handler it was meant for


class ResultStore:
    """Open (creating or resuming) the store of ``spec`` in ``out``.

    A store made with another horizon, seed or matrix under the same problem name is refused,
    naming the difference, unless ``force`` (which empties it). More problems, algorithms or runs
    than before simply add tasks.
    """

    def __init__(self, out: str | Path, spec: SweepSpec, force: bool = False):
        self.out, self.spec = Path(out), spec
        self.batches, self.index = self.out / "batches", self.out / "index.jsonl"
        meta, found = self.out / META, meta_file(self.out)
        if found is not None:
            differences = self._differences(found)
            if differences and not force:
                raise IrbanditsError(f"{self.out} holds results made with {'; '.join(differences)}; use --force to "
                                     "replace them, or another --out")
            if differences:
                shutil.rmtree(self.batches, ignore_errors=True)
                for name in ("index.jsonl", "results.parquet"):
                    (self.out / name).unlink(missing_ok=True)
        if found is not None and found != meta:
            os.replace(found, meta)  # an old store: its experiment.json becomes sweep.json
        self.batches.mkdir(parents=True, exist_ok=True)
        if spec.path.resolve() != (self.out / "spec.toml").resolve():
            shutil.copyfile(spec.path, self.out / "spec.toml")
        meta.write_text(json.dumps(spec.describe(), indent=1))
        self.done = self._read_index()

    def _differences(self, meta: Path) -> list[str]:
        try:
            old = json.loads(meta.read_text())
            new = self.spec.fingerprint()
            out = [f"{key} {old[key]}, not {new[key]}" for key in ("horizon", "seed") if old[key] != new[key]]
            out += [f"another matrix named {name}" for name, sha in new["problems"].items()
                    if old["problems"].get(name, sha) != sha]
            kinds = old.get("regret_kinds", {})  # a store made before kinds of regret: Condorcet
            out += [f"regret {kinds.get(name, 'condorcet')}, not {kind} on {name}"
                    for name, kind in new["regret_kinds"].items()
                    if name in old["problems"] and _holds(kinds.get(name, "condorcet")) != _holds(kind)]
            return out
        except (ValueError, KeyError, TypeError, AttributeError):
            return [f"a {meta.name} that irbandits did not write"]

    def _read_index(self) -> dict[str, dict]:
        """The finished tasks by key; a torn last line (a crash while appending) is cut off, and
        batch files the index does not name (a crash before their lines) are removed."""
        entries, good = _entries(self.index)
        if self.index.is_file() and good != self.index.stat().st_size:
            os.truncate(self.index, good)
        named = {e["batch"] for e in entries}
        for path in self.batches.iterdir():
            if path.name not in named:
                path.unlink()
        return {e["key"]: e for e in entries}

    def add(self, finished: list[tuple[str, pd.DataFrame, float, str]]) -> None:
        """Write one batch: ``(key, rows, seconds, worker)`` of each task finished since the last."""
        finished = [f for f in finished if f[0] not in self.done]  # a batch given again after Ctrl-C
        if not finished:
            return
        number = 1 + max((int(p.stem) for p in self.batches.glob("*.parquet")), default=0)
        name = f"{number:06d}.parquet"
        entries = [dict(key=key, batch=name, seconds=round(seconds, 4), worker=worker)
                   for key, _, seconds, worker in finished]
        with whole_block():
            write_parquet(pd.concat([rows for _, rows, _, _ in finished], ignore_index=True), self.batches / name)
            with open(self.index, "a", encoding="utf-8") as fh:
                fh.write("".join(json.dumps(e) + "\n" for e in entries))
                fh.flush()
                os.fsync(fh.fileno())
            self.done.update((e["key"], e) for e in entries)

    def table(self) -> pd.DataFrame:
        """The rows of the spec's finished tasks, in spec order: problem, algorithm, run, step."""
        return read_rows(self.out, self.spec.describe(), [t.key for t in self.spec.tasks() if t.key in self.done])


def _holds(kind: str) -> str | None:
    """The kind of regret the ``regret`` column holds when ``kind`` is chosen (Condorcet for Copeland)."""
    return REGRETS[kind].in_regret.name if kind in REGRETS else None


def _entries(index: Path) -> tuple[list[dict], int]:
    """The whole lines of an index file and their length in bytes."""
    entries, good = [], 0
    if index.is_file():
        with open(index, "rb") as fh:
            for line in fh:
                if not line.endswith(b"\n"):
                    break
                try:
                    entries.append(json.loads(line))
                except ValueError:
                    break
                good += len(line)
    return entries, good


def _key(df: pd.DataFrame) -> pd.Series:
    return df.problem + "|" + df.algorithm + "|" + df.run.astype(str)


def read_rows(out: Path, described: dict, keys: list[str] | None = None) -> pd.DataFrame:
    """The rows of a store's indexed batches (only ``keys`` when given), sorted in the order of the
    expanded spec ``described``."""
    index = _entries(out / "index.jsonl")[0]
    if keys is not None:
        wanted = set(keys)
        index = [e for e in index if e["key"] in wanted]
    batches = sorted({e["batch"] for e in index})
    if not batches:
        return pd.DataFrame(columns=STORE_COLUMNS)
    rows = pd.concat([pd.read_parquet(out / "batches" / b) for b in batches], ignore_index=True)
    rows = rows[_key(rows).isin({e["key"] for e in index})]
    problems = {name: i for i, name in enumerate(described["problems"])}
    algorithms = {a["label"]: i for i, a in enumerate(described["algorithms"])}
    order = rows.problem.map(problems).fillna(len(problems)), rows.algorithm.map(algorithms).fillna(len(algorithms))
    rows = rows.assign(_p=order[0], _a=order[1]).sort_values(["_p", "problem", "_a", "algorithm", "run", "step"])
    return rows.drop(columns=["_p", "_a"]).reset_index(drop=True)[STORE_COLUMNS]
