"""What an online study would cost before it runs: ``irbandits reproduce NAME [--full] --dry-run``.

An online study module's ``plan(horizon, runs, **scale)`` lists its :class:`Work`: per problem and
algorithm, the steps of one run, the runs, and a *probe* that runs a given number of further steps of
that algorithm on that problem (one algorithm per probe, in the compiled loop, step by step).
:func:`estimate` times each probe for about ``seconds``: a first short call (which compiles), then
calls of 4x as many steps each, continuing the same run, until one takes a quarter of ``seconds``; its
rate counts. The steps per second are measured here, on this machine, now; core-hours are the steps to
simulate over that rate.

The rate of the steps a probe reaches (about a quarter to a whole second's worth from the start) stands
for the whole run. That overstates the cost of the merge algorithms, whose runs finish in closed form once
one arm is left (``fast_forward``), and of any algorithm whose steps get cheaper as it eliminates arms; it
understates an algorithm whose steps get dearer later on. Nothing is written: a probe's results are
dropped.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import pandas as pd

from irbandits.dueling.base import AlgorithmSpec, DuelingAlgorithm, parse_spec
from irbandits.problems import PreferenceMatrix


@dataclass(frozen=True)
class Work:
    """``runs`` runs of ``steps`` steps each of ``algorithm`` on ``problem``; ``probe(n)`` simulates ``n``
    such steps; probes with the same ``key`` share one measurement."""

    problem: str
    algorithm: str
    steps: int
    runs: int
    probe: Callable[[int], object]
    key: object = None


def dueling(problem: PreferenceMatrix, algorithm: str | AlgorithmSpec | Callable[[int], DuelingAlgorithm],
            horizon: int, environment=None) -> Callable[[int], object]:
    """A probe: ``algorithm`` (a spec, or a function of the horizon making one) given ``horizon``, made at
    the first call, and each call runs ``n`` more steps of it on ``problem`` (or ``environment``, or
    ``environment(n)`` where it is a function of the steps) with :func:`~irbandits.simulate.run_one`."""
    from irbandits.simulate import run_one

    if isinstance(algorithm, str):
        algorithm = parse_spec(algorithm)
    make = (lambda T: algorithm.make(problem.K, seed=0, horizon=T)) if isinstance(algorithm, AlgorithmSpec) \
        else algorithm

    made: list[DuelingAlgorithm] = []

    def probe(n: int):
        if not made:
            made.append(make(horizon))
        env = environment(n) if callable(environment) else environment
        return run_one(made[0], problem, n, seed=0, environment=env)

    return probe


def rate(probe: Callable[[int], object], seconds: float = 1.0, first: int = 100) -> float:
    """Steps per second of ``probe``: one call of ``first`` steps (compiles), then calls of 4x as many
    steps until one takes ``seconds / 4`` or more; the rate of that call."""
    probe(first)
    n = first
    while True:
        start = time.perf_counter()
        probe(n)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds / 4 or n >= 10**9:
            return n / max(elapsed, 1e-9)
        n *= 4


def estimate(works: list[Work], seconds: float = 1.0) -> pd.DataFrame:
    """One row per work: problem, algorithm, steps per run, runs, steps in all, the measured steps/s
    and the core-hours (steps in all / steps/s / 3600)."""
    rates: dict = {}
    rows = []
    for w in works:
        key = (w.problem, w.algorithm) if w.key is None else w.key
        if key not in rates:
            rates[key] = rate(w.probe, seconds)
        total = w.steps * w.runs
        rows.append(dict(problem=w.problem, algorithm=w.algorithm, steps_per_run=w.steps, runs=w.runs,
                         steps=total, steps_per_s=rates[key], core_hours=total / rates[key] / 3600))
    return pd.DataFrame(rows)
