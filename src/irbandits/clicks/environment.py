"""Full online simulation: every duel an algorithm asks for is a real interleaved comparison.

A :class:`ClickEnvironment` plugs into :func:`irbandits.simulate.simulate` (and ``run_one``) in
place of the Bernoulli proxy: each duel (c, d) draws a query uniformly, builds both rankers' top-``length``
(default 10) lists (ties at random), interleaves them, simulates one user under the click model and credits the
outcome o in [-1, 1]; c wins with probability (1 + o) / 2 (so a tie is a fair coin, and the chance
that c wins is exactly the p_cd that :mod:`irbandits.clicks.matrix` estimates). A self-duel is a
fair coin. The algorithms run their own compiled kernels inside the same compiled loop as on the
proxy; regret is measured against a reference matrix (estimated, or given).

With ``log=PATH`` every interleaved comparison is also appended to ``PATH`` as one JSON line of the
comparison log (:mod:`irbandits.clicks.stats`): the two rankers, the team of every shown result,
the clicked positions and the query; for a method that does not credit clicks per team (all but
team-draft and probabilistic-assignment) the teams are -1 and the outcome's sign decides.
The logged kernel draws the same random numbers, so results are the same with and without a log;
without one the duel kernel is the plain one, untouched.

>>> from irbandits.clicks.ltr import read_ltr
>>> from irbandits.simulate import simulate
>>> data = read_ltr("../shared/data/ltr/lightgbm-lambdarank-sample/rank.test")
>>> env = ClickEnvironment(data.rankers([0, 10, 99, 120]), "navigational", "team-draft")
>>> P = env.estimate(500, seed=0).matrix
>>> df = simulate(P, ["RUCB"], horizon=2000, runs=2, seed=1, progress=False, environment=env)
>>> int(df.step.max())
2000
"""

from __future__ import annotations

import fcntl
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.interleaving import CUTOFF, get_method
from irbandits.clicks.ltr import Rankers
from irbandits.clicks.matrix import Estimate, check_rankers, compare, estimate_matrix, new_work, resolve_model
from irbandits.rng import randint, uniform


@lru_cache(maxsize=None)
def duel_kernel(method: str):
    """The compiled ``duel(world, env, c, d)`` for one interleaving method."""
    m = get_method(method)
    interleave, credit = m.interleave, m.credit

    @njit
    def duel(world, env, c, d):
        lists, model, work, perm = world
        if c == d:
            return uniform(env) < 0.5
        q = randint(env, lists[2].shape[1] - 1)
        o = compare(interleave, credit, lists, model, perm[c], perm[d], q, env, work)
        return uniform(env) < 0.5 * (1.0 + o)

    return duel


LOG_ROWS = 1 << 18  # comparisons a logging world holds between drains (run_one's chunks are no longer)


def append_lines(path: Path, lines: list[str]) -> None:
    """Append ``lines`` to the log at ``path`` in one locked write (runs in other processes append to
    the same file)."""
    data = "".join(lines).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


@lru_cache(maxsize=None)
def logged_duel_kernel(method: str):
    """``duel_kernel(method)`` that also records the comparison in the world's log buffer."""
    m = get_method(method)
    interleave, credit, team = m.interleave, m.credit, m.teams

    @njit
    def duel(world, env, c, d):
        lists, model, work, perm, (who, teams, clicks, outcome, count) = world
        if c == d:
            return uniform(env) < 0.5
        q = randint(env, lists[2].shape[1] - 1)
        shown = work[2]
        shown[:] = -1                  # the slots left at -1 were not shown
        o = compare(interleave, credit, lists, model, perm[c], perm[d], q, env, work)
        k = count[0]
        who[k, 0], who[k, 1], who[k, 2], outcome[k] = perm[c], perm[d], q, o
        for i in range(shown.shape[0]):
            teams[k, i] = (work[3][i] if team else -1) if shown[i] >= 0 else -2
            clicks[k, i] = shown[i] >= 0 and work[6][i]
        count[0] = k + 1
        return uniform(env) < 0.5 * (1.0 + o)

    return duel


class ClickEnvironment:
    """Rankers, a click model and an interleaving method: the real pipeline behind each duel."""

    def __init__(self, rankers: Rankers, click_model: str | ClickModel = "navigational",
                 interleaving: str = "probabilistic", length: int = CUTOFF, log: str | Path | None = None):
        self.length = check_rankers(rankers, length)
        self.rankers = rankers
        self.model = resolve_model(click_model, rankers.grades, self.length)
        self.interleaving = get_method(interleaving).name
        self.log = None if log is None else Path(log)
        self.max_chunk = LOG_ROWS

    @property
    def K(self) -> int:
        return self.rankers.K

    @property
    def duel(self):
        return (logged_duel_kernel if self.log else duel_kernel)(self.interleaving)

    def world(self, perm: np.ndarray) -> tuple:
        """The kernel's data; the algorithm's arm i is ranker ``perm[i]``."""
        world = (self.rankers.arrays(), self.model.arrays(), new_work(self.length), np.ascontiguousarray(perm, dtype=np.int64))
        if not self.log:
            return world
        slots = len(world[2][2])
        return (*world, (np.empty((LOG_ROWS, 3), np.int64), np.empty((LOG_ROWS, slots), np.int64),
                         np.empty((LOG_ROWS, slots), np.bool_), np.empty(LOG_ROWS), np.zeros(1, np.int64)))

    @property
    def drain(self):
        """With a log, the function :func:`irbandits.simulate.run_one` calls with the world after each
        chunk of at most ``max_chunk`` steps (it appends the comparisons to the log); else None."""
        return self._drain if self.log else None

    def _drain(self, world: tuple, write: bool = True) -> None:
        who, teams, clicks, outcome, count = world[4]
        n, count[0] = int(count[0]), 0
        if not write or not n:
            return
        names = [json.dumps(x) for x in self.rankers.names]
        lines = []
        for (a, b, q), t, c, o in zip(who[:n].tolist(), teams[:n].tolist(), clicks[:n], outcome[:n].tolist()):
            t = t[:t.index(-2)] if -2 in t else t
            extra = f', "outcome": {int(np.sign(o))}' if -1 in t else ""
            lines.append(f'{{"rankers": [{names[a]}, {names[b]}], "teams": {t}, "clicks": {np.flatnonzero(c).tolist()}'
                         f'{extra}, "query": {q}}}\n')
        append_lines(self.log, lines)

    def estimate(self, comparisons: int = 4000, seed: int = 0, jobs: int | None = None,
                 progress: bool = False, backend: str = "local", address: str | None = None) -> Estimate:
        """The reference matrix of this environment (see :func:`estimate_matrix`)."""
        return estimate_matrix(self.rankers, self.model, self.interleaving, comparisons, seed=seed,
                               jobs=jobs, progress=progress, name=f"ltr-{self.model.name}-{self.interleaving}",
                               length=self.length, backend=backend, address=address)

    def __repr__(self) -> str:
        length = "" if self.length == CUTOFF else f", length={self.length}"  # results of 10-long lists keep their key
        return f"ClickEnvironment(K={self.K}, click_model={self.model.name!r}, interleaving={self.interleaving!r}{length})"
