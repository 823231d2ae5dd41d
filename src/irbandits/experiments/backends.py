"""Run independent tasks on local processes or a Ray cluster, with a progress bar (done, failed, ETA).

:func:`run_tasks` is the one task runner of the heavy jobs (experiments, ``matrix``,
``reproduce judging-study``, ``pool simulate``): ``fn(context, task)`` for every task, ``context``
shipped once per worker (Ray: once to the object store). It yields each outcome as it finishes,
in finishing order; callers key results by the task, never by that order, so results do not depend
on the backend or the number of workers. Ray is imported only for ``backend="ray"``.

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
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, Callable, Iterator, Sequence

from irbandits.errors import IrbanditsError

BACKENDS = ("local", "ray")
RAY_RETRIES = 3  # a task whose worker or node dies is run again elsewhere this many times


@dataclass
class Done:
    """Task ``index`` finished with ``value`` after ``seconds`` on ``worker`` (host:pid)."""

    index: int
    value: Any
    seconds: float
    worker: str


@dataclass
class Failed:
    """Task ``index`` raised ``error`` (after Ray's retries of a lost worker, if any)."""

    index: int
    error: str


def _call(fn: Callable, context: Any, task: Any) -> tuple[Any, float, str]:
    start = time.perf_counter()
    value = fn(context, task)
    return value, time.perf_counter() - start, f"{socket.gethostname()}:{os.getpid()}"


_CONTEXT = None  # in a local worker process: the context given to every task


def _start_worker(context: Any) -> None:
    """Local workers ignore Ctrl-C (the parent stops them) and keep the context."""
    global _CONTEXT
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _CONTEXT = context


def _local_call(fn: Callable, task: Any) -> tuple[Any, float, str]:
    return _call(fn, _CONTEXT, task)


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
              workers: int = 1, address: str | None = None, progress: bool = True,
              label: str = "tasks") -> Iterator[Done | Failed]:
    """Yield a :class:`Done` or :class:`Failed` for every task as it finishes.

    ``backend="local"``: ``workers`` processes (in this process when 1). ``backend="ray"``: the Ray
    cluster at ``address``, or a local Ray runtime of ``workers`` CPUs started for the call; a task
    whose worker or node is lost is retried on what is left. ``fn`` must be importable by the
    workers (a module-level function). Leaving the loop early (Ctrl-C included) cancels the
    unfinished tasks and stops the workers.
    """
    check_backend(backend, workers, address)
    with _Progress(progress and len(tasks) > 0, len(tasks), label) as bar:
        if backend == "ray":
            outcomes = _ray(fn, tasks, context, workers, address)
        elif workers == 1 or len(tasks) <= 1:
            outcomes = _serial(fn, tasks, context)
        else:
            outcomes = _processes(fn, tasks, context, workers)
        for outcome in outcomes:
            bar(failed=isinstance(outcome, Failed))
            yield outcome


def _serial(fn, tasks, context) -> Iterator[Done | Failed]:
    for i, task in enumerate(tasks):
        try:
            value, seconds, worker = _call(fn, context, task)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:
            yield Failed(i, f"{type(exc).__name__}: {exc}")
            continue
        yield Done(i, value, seconds, worker)


def _processes(fn, tasks, context, workers: int) -> Iterator[Done | Failed]:
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=_start_worker,
                               initargs=(context,))
    index = {pool.submit(_local_call, fn, task): i for i, task in enumerate(tasks)}
    unfinished = set(index)
    try:
        while unfinished:
            finished = wait(unfinished, timeout=0.5, return_when=FIRST_COMPLETED).done
            for future in sorted(finished, key=index.get):
                unfinished.discard(future)
                exc = future.exception()
                if exc is not None:
                    yield Failed(index[future], f"{type(exc).__name__}: {exc}")
                else:
                    yield Done(index[future], *future.result())
    finally:
        if unfinished:  # stopped early: ProcessPoolExecutor would wait for running tasks
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


class _Progress:
    """A rich bar on standard error counting finished tasks, failures and the time left; or nothing."""

    def __init__(self, enabled: bool, total: int, label: str):
        self.enabled, self.total, self.label = enabled, total, label

    def __enter__(self) -> Callable[..., None]:
        if not self.enabled:
            return lambda failed=False: None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self._bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(),
                             TextColumn("finished, {task.fields[failed]} failed"), TimeElapsedColumn(),
                             TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True))
        self._bar.start()
        task = self._bar.add_task(self.label, total=self.total, failed=0)
        failures = 0

        def advance(failed: bool = False) -> None:
            nonlocal failures
            failures += failed
            self._bar.update(task, advance=1, failed=failures)

        return advance

    def __exit__(self, *exc) -> bool:
        if self.enabled:
            self._bar.stop()
        return False
