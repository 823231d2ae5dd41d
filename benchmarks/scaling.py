"""Tasks per second of `irbandits sweep run`'s task machinery with 1, 2, 4, ... workers, and the
parallel efficiency.

    python benchmarks/scaling.py                         # local processes, 1 and 2 workers (more if the cores exist)
    python benchmarks/scaling.py --backend ray           # a local Ray runtime per worker count
    python benchmarks/scaling.py --workers 1 --workers 16 --horizon 1e6 --per-worker 6

Every task is one run of ``--algorithm`` on ``--problem`` for ``--horizon`` steps (default: MergeDTS
tuned on case-a, K=100, 10^6 steps); a worker count W gets ``--per-worker`` x W tasks. Two rates:
*end to end* (first submission to last result, so each worker's numba compilation is included) and
*steady* (after the last worker finished its first task: tasks finished since, per second).
Efficiency at W = rate(W) / (W x rate(1)). Target (issue 14): >= 85 % at 16 workers for 10^6-step
tasks. A loaded machine (other jobs on the cores) lowers the efficiency; say so with the figures.
"""

from __future__ import annotations

import argparse
import os
import time

from irbandits.dueling import parse_spec
from irbandits.problems import get_problem
from irbandits.sweeps.run import run_task
from irbandits.sweeps.spec import Task
from irbandits.tasks import Done, run_tasks


def measure(backend: str, workers: int, problem: str, algorithm: str, horizon: int, per_worker: int) -> dict:
    spec = parse_spec(algorithm)
    context = dict(problems={problem: get_problem(problem)}, specs={spec.label: spec}, horizon=horizon, seed=0)
    tasks = [Task(problem, spec.label, r) for r in range(per_worker * workers)]
    start = time.perf_counter()
    first: dict[str, float] = {}
    finished = []
    for outcome in run_tasks(run_task, tasks, context, backend=backend, workers=workers, progress=False):
        if not isinstance(outcome, Done):
            raise SystemExit(f"task failed: {outcome.error}")
        now = time.perf_counter() - start
        first.setdefault(outcome.worker, now)
        finished.append(now)
    end = finished[-1]
    warm = max(first.values()) if len(first) == workers else end
    steady = sum(t > warm for t in finished) / (end - warm) if end > warm else float("nan")
    return dict(workers=workers, tasks=len(tasks), seconds=end, end_to_end=len(tasks) / end, steady=steady)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local", choices=["local", "ray"])
    parser.add_argument("--workers", type=int, action="append", help="repeat; default 1, 2, 4, 8, 16 up to the cores")
    parser.add_argument("--problem", default="case-a")
    parser.add_argument("--algorithm", default="MergeDTS:tuned")
    parser.add_argument("--horizon", default="1e6")
    parser.add_argument("--per-worker", type=int, default=4, help="tasks per worker")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    counts = args.workers or [w for w in (1, 2, 4, 8, 16) if w <= max(2, cores)]
    horizon = int(float(args.horizon))
    print(f"{args.backend} backend, {cores} cores, load average {os.getloadavg()[0]:.1f}; {args.algorithm} on "
          f"{args.problem}, {horizon:,} steps per task, {args.per_worker} tasks per worker")
    rows = [measure(args.backend, w, args.problem, args.algorithm, horizon, args.per_worker) for w in counts]
    base = {k: rows[0][k] / rows[0]["workers"] for k in ("end_to_end", "steady")}
    print(f"{'workers':>7} {'tasks':>5} {'seconds':>8} {'tasks/s':>8} {'eff.':>6} {'steady/s':>9} {'eff.':>6}")
    for r in rows:
        print(f"{r['workers']:>7} {r['tasks']:>5} {r['seconds']:>8.1f} {r['end_to_end']:>8.3f} "
              f"{r['end_to_end'] / (r['workers'] * base['end_to_end']):>6.0%} {r['steady']:>9.3f} "
              f"{r['steady'] / (r['workers'] * base['steady']):>6.0%}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
