"""Multileaving online runs: m rankers per step, one multileaved comparison on the click pipeline.

A :class:`MultileaveEnvironment` plugs into :func:`irbandits.simulate.simulate` (and ``run_one``)
for multi-dueling algorithms (Self-Sparring; Sui, Zhuang, Burdick & Yue, UAI 2017). Each step the
algorithm names m arms (repeats allowed); the environment draws a query uniformly, builds the top-10
lists of the distinct rankers among them (ties at random), multileaves them (team-draft or
probabilistic multileaving, :mod:`irbandits.clicks.multileaving`), simulates one user under the
click model and returns every shown arm's credit (a repeated arm gets its ranker's credit). Every
pair with different credit is one duel for the algorithm.

With ``log=PATH`` every multileaved comparison is also appended to ``PATH`` as one JSON line of the
comparison log (:mod:`irbandits.clicks.stats`): the rankers compared, the team of every shown
result, the clicked positions and the query; for a method that does not credit clicks per team
(all but team-draft) the teams are -1 and ``credit`` gives each ranker's credit, which decides.

A multileave of two rankers is an interleaved comparison, so with ``per_step=2`` the environment
is the pairwise :class:`~irbandits.clicks.environment.ClickEnvironment` of the same method (c wins
with probability (1 + o) / 2), and Self-Sparring follows exactly its pairwise trajectory. Regret is
measured against a pairwise reference matrix (:meth:`MultileaveEnvironment.estimate`: interleaved
comparisons), the same one a pairwise run uses, so m = 2 and m > 2 runs compare directly.

>>> from irbandits.clicks.ltr import read_ltr
>>> from irbandits.simulate import simulate
>>> data = read_ltr("../shared/data/ltr/lightgbm-lambdarank-sample/rank.test")
>>> env = MultileaveEnvironment(data.rankers([0, 10, 99, 120, 163]), "navigational", "team-draft", per_step=4)
>>> P = env.estimate(300, seed=0).matrix
>>> df = simulate(P, ["Self-Sparring"], horizon=2000, runs=2, seed=1, progress=False, environment=env)
>>> int(df.step.max()), sorted(set(df.algorithm))
(2000, ['Self-Sparring'])
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.environment import LOG_ROWS, ClickEnvironment, append_lines
from irbandits.clicks.ltr import Rankers
from irbandits.clicks.matrix import Estimate
from irbandits.clicks.multileaving import get_multileaving, multicompare, new_multiwork
from irbandits.errors import IrbanditsError
from irbandits.rng import randint


# ----- low level ------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def multiduel_kernel(method: str, logged: bool = False):
    """The compiled ``multiduel(world, env, arms, credit)`` for one multileaving method; ``logged``:
    one that also records the comparison in the world's log buffer (the same random draws)."""
    ml = get_multileaving(method)
    multileave, credit, team = ml.multileave, ml.credit, ml.teams

    @njit
    def multiduel(world, env, arms, out):
        """The comparison; returns the number of distinct rankers compared and the query."""
        lists, model, work, perm, who, cr = world[0], world[1], world[2], world[3], world[4], world[5]
        m = 0
        for s in range(arms.shape[0]):  # the distinct rankers, in order of first appearance
            r = perm[arms[s]]
            j = 0
            while j < m and who[j] != r:
                j += 1
            if j == m:
                who[m] = r
                m += 1
        if m == 1:  # one ranker against itself: nothing to compare
            out[:] = 0.0
            return m, -1
        q = randint(env, lists[2].shape[1] - 1)
        multicompare(multileave, credit, lists, model, who, m, q, env, work, cr)
        for s in range(arms.shape[0]):
            j = 0
            while who[j] != perm[arms[s]]:
                j += 1
            out[s] = cr[j]
        return m, q

    if not logged:
        return multiduel

    @njit
    def logged_multiduel(world, env, arms, out):
        (rows, teams, clicks, credits, count), shown = world[6], world[2][2]
        shown[:] = -1                  # the slots left at -1 were not shown
        m, q = multiduel(world, env, arms, out)
        if m < 2:
            return
        k = count[0]
        rows[k, 0], rows[k, 1] = q, m
        for s in range(m):
            rows[k, 2 + s], credits[k, s] = world[4][s], world[5][s]
        for i in range(shown.shape[0]):
            teams[k, i] = (world[2][3][i] if team else -1) if shown[i] >= 0 else -2
            clicks[k, i] = shown[i] >= 0 and world[2][6][i]
        count[0] = k + 1

    return logged_multiduel


@lru_cache(maxsize=None)
def pairwise_kernel(duel):
    """A pairwise ``duel(world, env, c, d)`` as a multiduel of two arms: credit 1 to the winner."""

    @njit
    def multiduel(world, env, arms, out):
        out[0] = 1.0 if duel(world, env, arms[0], arms[1]) else 0.0
        out[1] = 1.0 - out[0]

    return multiduel


# ----- public ---------------------------------------------------------------------------------
class MultileaveEnvironment:
    """Rankers, a click model, a multileaving method and ``per_step`` rankers per comparison."""

    def __init__(self, rankers: Rankers, click_model: str | ClickModel = "navigational",
                 multileaving: str = "probabilistic", per_step: int = 4, length: int = 10,
                 log: str | Path | None = None):
        self.multileaving = get_multileaving(multileaving).name
        try:
            m = int(per_step)
        except (TypeError, ValueError):
            m = None
        if m is None or m != per_step or not 2 <= m <= rankers.K:
            raise IrbanditsError(f"per_step (rankers per multileaved comparison) must be 2..{rankers.K} "
                                 f"for {rankers.K} rankers, got {per_step!r}")
        self.per_step = m
        self.pairwise = ClickEnvironment(rankers, click_model, self.multileaving, length)  # same names in both registries
        self.log = log

    @property
    def rankers(self) -> Rankers:
        return self.pairwise.rankers

    @property
    def model(self) -> ClickModel:
        return self.pairwise.model

    @property
    def interleaving(self) -> str:
        """The interleaving method of the reference matrix and of ``per_step=2``."""
        return self.pairwise.interleaving

    @property
    def K(self) -> int:
        return self.pairwise.K

    @property
    def length(self) -> int:
        return self.pairwise.length

    @property
    def log(self) -> Path | None:
        """The comparison log the runs append to (see the module), or None."""
        return self.pairwise.log if self.per_step == 2 else self._log

    @log.setter
    def log(self, path: str | Path | None) -> None:
        self._log = None if path is None else Path(path)
        if self.per_step == 2:
            self.pairwise.log = self._log

    @property
    def max_chunk(self) -> int:
        return LOG_ROWS

    @property
    def multiduel(self):
        if self.per_step == 2:
            return pairwise_kernel(self.pairwise.duel)
        return multiduel_kernel(self.multileaving, self.log is not None)

    def world(self, perm: np.ndarray) -> tuple:
        """The kernel's data; the algorithm's arm i is ranker ``perm[i]``."""
        if self.per_step == 2:
            return self.pairwise.world(perm)
        m = self.per_step
        world = (self.rankers.arrays(), self.model.arrays(), new_multiwork(m, self.length),
                 np.ascontiguousarray(perm, dtype=np.int64), np.empty(m, np.int64), np.empty(m))
        if self.log is None:
            return world
        return (*world, (np.empty((LOG_ROWS, 2 + m), np.int64), np.empty((LOG_ROWS, self.length), np.int64),
                         np.empty((LOG_ROWS, self.length), np.bool_), np.empty((LOG_ROWS, m)), np.zeros(1, np.int64)))

    @property
    def drain(self):
        """With a log, the function :func:`irbandits.simulate.run_one` calls with the world after each
        chunk (it appends the comparisons to the log); else None."""
        if self.per_step == 2:
            return self.pairwise.drain
        return self._drain if self.log is not None else None

    def _drain(self, world: tuple, write: bool = True) -> None:
        rows, teams, clicks, credits, count = world[6]
        n, count[0] = int(count[0]), 0
        if not write or not n:
            return
        names = [json.dumps(x) for x in self.rankers.names]
        lines = []
        for row, t, c, cr in zip(rows[:n].tolist(), teams[:n].tolist(), clicks[:n], credits[:n].tolist()):
            (q, m), t = row[:2], (t[:t.index(-2)] if -2 in t else t)
            extra = f', "credit": {json.dumps(cr[:m])}' if -1 in t else ""
            lines.append(f'{{"rankers": [{", ".join(names[r] for r in row[2:2 + m])}], "teams": {t}, '
                         f'"clicks": {np.flatnonzero(c).tolist()}{extra}, "query": {q}}}\n')
        append_lines(self.log, lines)

    def estimate(self, comparisons: int = 4000, seed: int = 0, jobs: int | None = None,
                 progress: bool = False) -> Estimate:
        """The reference matrix: pairwise interleaved comparisons (as for a pairwise run)."""
        return self.pairwise.estimate(comparisons, seed=seed, jobs=jobs, progress=progress)

    def __repr__(self) -> str:
        return (f"MultileaveEnvironment(K={self.K}, click_model={self.model.name!r}, "
                f"multileaving={self.multileaving!r}, per_step={self.per_step}"
                + ("" if self.length == 10 else f", length={self.length}") + ")")
