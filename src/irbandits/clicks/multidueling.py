"""Multileaving online runs: m rankers per step, one multileaved comparison on the click pipeline.

A :class:`MultileaveEnvironment` plugs into :func:`irbandits.simulate.simulate` (and ``run_one``)
for multi-dueling algorithms (Self-Sparring; Sui, Zhuang, Burdick & Yue, UAI 2017). Each step the
algorithm names m arms (repeats allowed); the environment draws a query uniformly, builds the top-10
lists of the distinct rankers among them (ties at random), multileaves them (team-draft or
probabilistic multileaving, :mod:`irbandits.clicks.multileaving`), simulates one user under the
click model and returns every shown arm's credit (a repeated arm gets its ranker's credit). Every
pair with different credit is one duel for the algorithm.

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

from functools import lru_cache

import numpy as np
from numba import njit

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import Rankers
from irbandits.clicks.matrix import Estimate
from irbandits.clicks.multileaving import get_multileaving, multicompare, new_multiwork
from irbandits.errors import IrbanditsError
from irbandits.rng import randint


# ----- low level ------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def multiduel_kernel(method: str):
    """The compiled ``multiduel(world, env, arms, credit)`` for one multileaving method."""
    ml = get_multileaving(method)
    multileave, credit = ml.multileave, ml.credit

    @njit
    def multiduel(world, env, arms, out):
        lists, model, work, perm, who, cr = world
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
            return
        q = randint(env, lists[2].shape[1] - 1)
        multicompare(multileave, credit, lists, model, who, m, q, env, work, cr)
        for s in range(arms.shape[0]):
            j = 0
            while who[j] != perm[arms[s]]:
                j += 1
            out[s] = cr[j]

    return multiduel


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
                 multileaving: str = "probabilistic", per_step: int = 4, length: int = 10):
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
    def multiduel(self):
        if self.per_step == 2:
            return pairwise_kernel(self.pairwise.duel)
        return multiduel_kernel(self.multileaving)

    def world(self, perm: np.ndarray) -> tuple:
        """The kernel's data; the algorithm's arm i is ranker ``perm[i]``."""
        if self.per_step == 2:
            return self.pairwise.world(perm)
        m = self.per_step
        return (self.rankers.arrays(), self.model.arrays(), new_multiwork(m, self.length),
                np.ascontiguousarray(perm, dtype=np.int64), np.empty(m, np.int64), np.empty(m))

    def estimate(self, comparisons: int = 4000, seed: int = 0, jobs: int | None = None,
                 progress: bool = False) -> Estimate:
        """The reference matrix: pairwise interleaved comparisons (as for a pairwise run)."""
        return self.pairwise.estimate(comparisons, seed=seed, jobs=jobs, progress=progress)

    def __repr__(self) -> str:
        return (f"MultileaveEnvironment(K={self.K}, click_model={self.model.name!r}, "
                f"multileaving={self.multileaving!r}, per_step={self.per_step}"
                + ("" if self.length == 10 else f", length={self.length}") + ")")
