"""Run independent tasks on local processes or a Ray cluster, with a progress bar (done, failed, ETA).

:func:`run_tasks` is the one task runner of the heavy jobs (``simulate``, sweeps, ``matrix``,
``reproduce judging-study``, ``pool simulate``): ``fn(context, task)`` for every task, ``context``
shipped once per worker (Ray: once to the object store). It yields each outcome as it finishes,
in finishing order; callers key results by the task, never by that order, so results do not depend
on the backend or the number of workers. A running task may call :func:`report` to move a
step-level progress bar. Ray is imported only for ``backend="ray"``.

Test hook: with ``IRBANDITS_TEST_HOLD_AFTER=N`` in the environment, :func:`run_tasks` yields N
outcomes, then hands out nothing more and waits until it is interrupted (Ctrl-C), so that a test
can interrupt a run at a known point without racing the clock.

>>> [d.value for d in run_tasks(pow, [2, 3], context=10, progress=False)]
[100, 1000]
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from queue import Empty
from typing import Any, Callable, Iterator, Sequence

from irbandits.errors import IrbanditsError

BACKENDS = ("local", "ray")
RAY_RETRIES = 3  # a task whose worker or node dies is run again elsewhere this many times
HOLD_AFTER = "IRBANDITS_TEST_HOLD_AFTER"  # the test hook's environment variable (see the module)


@dataclass
class Done:
    """Task ``index`` finished with ``value`` after ``seconds`` on ``worker`` (host:pid)."""

    index: int
    value: Any
    seconds: float
    worker: str


@dataclass
class Failed:
    """Task ``index`` raised ``error`` (after Ray's retries of a lost worker, if any); ``exception`` is
    the exception itself where it reached this process (the local backend), for callers that re-raise it."""

    index: int
    error: str
    exception: BaseException | None = field(default=None, repr=False, compare=False)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a job of ``total`` tasks (``what``: "runs", "tasks"); ``kept`` finished ones are
    saved in ``out`` (None: nowhere), where the same call resumes."""

    def __init__(self, kept: int, total: int, out: Path | None, what: str = "tasks"):
        super().__init__(f"interrupted: {kept} of {total} {what} kept" + (f" in {out}" if out is not None else ""))
        self.kept, self.total, self.out, self.what = kept, total, out, what


_report: Callable[[int], None] | None = None  # while a task runs: where report() sends its steps


def report(steps: int) -> None:
    """Called by a running task: ``steps`` more of its steps are done (see ``on_progress`` of :func:`run_tasks`)."""
    if _report is not None:
        _report(steps)


def check_backend(backend: str, workers: int, address: str | None) -> None:
    """One clear error for a bad ``--backend`` / ``--workers`` / ``--address``."""
    if backend not in BACKENDS:
        raise IrbanditsError(f"--backend must be {' or '.join(BACKENDS)}, got {backend!r}")
    if workers < 1:
        raise IrbanditsError(f"--workers must be at least 1, got {workers}")
    if address and backend != "ray":
        raise IrbanditsError("--address names a Ray cluster; it needs --backend ray")
    if backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise IrbanditsError("--backend ray needs Ray: pip install 'irbandits[distributed]'") from None
        if address and address != "auto":
            _reachable(address)


def run_tasks(fn: Callable[[Any, Any], Any], tasks: Sequence, context: Any = None, backend: str = "local",
              workers: int = 1, address: str | None = None, progress: bool = True, label: str = "tasks",
              on_progress: Callable[[int, int], None] | None = None) -> Iterator[Done | Failed]:
    """Yield a :class:`Done` or :class:`Failed` for every task as it finishes. Leaving the loop early
    (Ctrl-C included) cancels the unfinished tasks and stops the workers at once.

    Parameters
    ----------
    fn
        ``fn(context, task)``, importable by the workers (a module-level function).
    tasks, context
        The tasks, and what every task is given besides (sent once per worker).
    backend, workers, address
        ``"local"``: ``workers`` processes (in this process when 1). ``"ray"``: the Ray cluster at
        ``address``, or a local Ray runtime of ``workers`` CPUs started for the call; a task whose
        worker or node is lost is retried on what is left.
    progress, label
        A bar on standard error counting finished and failed tasks, named ``label``.
    on_progress
        Called here with ``(task index, steps)`` whenever a running task calls :func:`report`
        (local backend; steps may still arrive after the task's outcome).
    """
    check_backend(backend, workers, address)
    hold = int(os.environ.get(HOLD_AFTER) or 0)
    with ProgressBar(progress, len(tasks), label) as bar:
        if backend == "ray":
            outcomes = _ray(fn, tasks, context, workers, address)
        elif workers == 1 or len(tasks) <= 1:
            outcomes = _serial(fn, tasks, context, on_progress)
        else:
            outcomes = _processes(fn, tasks, context, workers, on_progress)
        try:
            for n, outcome in enumerate(outcomes, 1):
                bar(failed=isinstance(outcome, Failed))
                yield outcome
                while n == hold:  # the test hook: hand out nothing more until Ctrl-C
                    time.sleep(0.05)
        finally:
            outcomes.close()


def _call(fn: Callable, context: Any, task: Any) -> tuple[Any, float, str]:
    start = time.perf_counter()
    value = fn(context, task)
    return value, time.perf_counter() - start, f"{socket.gethostname()}:{os.getpid()}"


def _serial(fn, tasks, context, on_progress) -> Iterator[Done | Failed]:
    global _report
    for i, task in enumerate(tasks):
        _report = None if on_progress is None else (lambda steps, i=i: on_progress(i, steps))
        try:
            outcome = Done(i, *_call(fn, context, task))
        except Exception as exc:  # Ctrl-C (KeyboardInterrupt) goes through
            outcome = Failed(i, f"{type(exc).__name__}: {exc}", exc)
        finally:
            _report = None
        yield outcome


_CONTEXT = None  # in a local worker process: the context given to every task
_STEPS = None  # in a local worker process: the queue that takes (task index, steps) from report()


def _start_worker(context: Any, steps) -> None:
    """Local workers ignore Ctrl-C (the parent stops them) and keep the context and the steps queue."""
    global _CONTEXT, _STEPS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _CONTEXT, _STEPS = context, steps


def _local_call(fn: Callable, index: int, task: Any) -> tuple[Any, float, str]:
    global _report
    _report = None if _STEPS is None else (lambda steps: _STEPS.put((index, steps)))
    try:
        return _call(fn, _CONTEXT, task)
    finally:
        _report = None


def _processes(fn, tasks, context, workers: int, on_progress) -> Iterator[Done | Failed]:
    """Tasks on ``workers`` spawned processes, at most two per worker handed out at a time."""
    spawn = get_context("spawn")
    steps = None if on_progress is None else spawn.Queue()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=spawn, initializer=_start_worker,
                               initargs=(context, steps))
    todo = iter(enumerate(tasks))
    index: dict = {}
    stopped = True  # until the last task is in (shutdown alone would wait for the running tasks)
    try:
        while True:
            for i, task in itertools.islice(todo, 2 * workers - len(index)):
                index[pool.submit(_local_call, fn, i, task)] = i
            if not index:
                stopped = False
                break
            finished = wait(index, timeout=0.2, return_when=FIRST_COMPLETED).done
            while steps is not None:  # the steps reported so far first, then the tasks finished meanwhile
                try:
                    on_progress(*steps.get_nowait())
                except Empty:
                    break
            for future in sorted(finished, key=index.get):
                i, exc = index.pop(future), future.exception()
                if exc is not None:
                    yield Failed(i, f"{type(exc).__name__}: {exc}", exc)
                else:
                    yield Done(i, *future.result())
    finally:
        if stopped:  # early, by Ctrl-C, an error or the caller: stop the workers at once
            for process in list((pool._processes or {}).values()):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _reachable(address: str) -> None:
    """Fail at once, not after Ray's minutes of retries, when nothing listens at ``address`` (host:port)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except ValueError:
        raise IrbanditsError(f"--address {address}: expected HOST:PORT of the Ray head, e.g. 10.0.0.1:6379") from None
    except OSError as exc:
        raise IrbanditsError(f"--address {address}: no Ray head answers there ({exc.strerror or exc}); start one with "
                             "`ray start --head` or check the address") from None


def _ray(fn, tasks, context, workers: int, address: str | None) -> Iterator[Done | Failed]:
    import logging

    import ray

    started = not ray.is_initialized()
    if started:
        try:
            if address:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            else:  # its token is made and used here: Ray's notice about it is not for the user
                logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
                ray.init(address="local", num_cpus=workers, include_dashboard=False, logging_level=logging.WARNING,
                         log_to_driver=False)
        except ConnectionError as exc:
            raise IrbanditsError(f"--address {address}: cannot connect to a Ray cluster there ({exc})") from None
    call = ray.remote(_call).options(num_cpus=1, max_retries=RAY_RETRIES, retry_exceptions=False)
    ctx = ray.put(context)
    window = max(64, 4 * int(ray.cluster_resources().get("CPU", 1)))  # tasks in flight at once
    todo = iter(enumerate(tasks))
    pending: dict = {}
    try:
        while True:
            for i, task in itertools.islice(todo, window - len(pending)):
                pending[call.remote(fn, ctx, task)] = i
            if not pending:
                break
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in ready:
                i = pending.pop(ref)
                try:
                    yield Done(i, *ray.get(ref))
                except ray.exceptions.RayTaskError as exc:
                    yield Failed(i, str(exc.cause if exc.cause is not None else exc).strip().splitlines()[-1])
                except ray.exceptions.RayError as exc:  # the worker or node died more often than RAY_RETRIES
                    yield Failed(i, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}")
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


class ProgressBar:
    """A rich bar on standard error, or nothing when disabled. It counts ``total`` tasks
    (``advance(failed=False)``), or with a ``horizon`` the steps of ``total`` runs
    (``advance(steps, runs=0)``, ``runs`` the runs just finished)."""

    def __init__(self, enabled: bool, total: int, label: str, horizon: int = 0):
        self.enabled, self.total, self.label, self.horizon = enabled and total > 0, total, label, horizon

    def __enter__(self) -> Callable[..., None]:
        if not self.enabled:
            return lambda steps=1, runs=0, failed=False: None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        count = ((TextColumn("{task.completed:,.0f} of {task.total:,.0f} steps, {task.fields[runs]} of "
                             f"{self.total} runs"),) if self.horizon
                 else (MofNCompleteColumn(), TextColumn("finished, {task.fields[failed]} failed")))
        self._bar = Progress(TextColumn(self.label), BarColumn(), *count, TimeElapsedColumn(), TextColumn("ETA"),
                             TimeRemainingColumn(), console=Console(stderr=True))
        self._bar.start()
        task = self._bar.add_task(self.label, total=self.total * (self.horizon or 1), runs=0, failed=0)
        counts = {"runs": 0, "failed": 0}

        def advance(steps: int = 1, runs: int = 0, failed: bool = False) -> None:
            counts["runs"] += runs
            counts["failed"] += failed
            self._bar.update(task, advance=steps, **counts)

        return advance

    def __exit__(self, *exc) -> bool:
        if self.enabled:
            self._bar.stop()
        return False
