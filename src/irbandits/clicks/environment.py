"""Full online simulation: every duel an algorithm asks for is a real interleaved comparison.

A :class:`ClickEnvironment` plugs into :func:`irbandits.simulate.simulate` (and ``run_one``) in
place of the Bernoulli proxy: each duel (c, d) draws a query uniformly, builds both rankers' top-10
lists (ties at random), interleaves them, simulates one user under the click model and credits the
outcome o in [-1, 1]; c wins with probability (1 + o) / 2 (so a tie is a fair coin, and the chance
that c wins is exactly the p_cd that :mod:`irbandits.clicks.matrix` estimates). A self-duel is a
fair coin. The algorithms run their own compiled kernels inside the same compiled loop as on the
proxy; regret is measured against a reference matrix (estimated, or given).

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

from functools import lru_cache

import numpy as np
from numba import njit

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.interleaving import get_method
from irbandits.clicks.ltr import Rankers
from irbandits.clicks.matrix import Estimate, compare, estimate_matrix, new_work, resolve_model
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


class ClickEnvironment:
    """Rankers, a click model and an interleaving method: the real pipeline behind each duel."""

    def __init__(self, rankers: Rankers, click_model: str | ClickModel = "navigational",
                 interleaving: str = "probabilistic"):
        self.rankers = rankers
        self.model = resolve_model(click_model, rankers.grades)
        self.interleaving = get_method(interleaving).name

    @property
    def K(self) -> int:
        return self.rankers.K

    @property
    def duel(self):
        return duel_kernel(self.interleaving)

    def world(self, perm: np.ndarray) -> tuple:
        """The kernel's data; the algorithm's arm i is ranker ``perm[i]``."""
        return (self.rankers.arrays(), self.model.arrays(), new_work(),
                np.ascontiguousarray(perm, dtype=np.int64))

    def estimate(self, comparisons: int = 4000, seed: int = 0, jobs: int | None = None,
                 progress: bool = False) -> Estimate:
        """The reference matrix of this environment (see :func:`estimate_matrix`)."""
        return estimate_matrix(self.rankers, self.model, self.interleaving, comparisons, seed=seed,
                               jobs=jobs, progress=progress, name=f"ltr-{self.model.name}-{self.interleaving}")

    def __repr__(self) -> str:
        return f"ClickEnvironment(K={self.K}, click_model={self.model.name!r}, interleaving={self.interleaving!r})"
