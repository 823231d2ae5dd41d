"""MDB, the multi-dueling bandit (Brost, Seldin, Cox & Lioma, "Multi-dueling bandits and their
application to online ranker evaluation", CIKM 2016, Algorithm 1; MergeDTS paper, seed 001,
section 2 describes it).

Two relative upper confidence bounds on each pair, a tight one and a loose one,

    u_ij = w_ij / n_ij + sqrt(alpha ln t / n_ij)   and   v_ij = w_ij / n_ij + sqrt(alpha beta ln t / n_ij)

(``x / 0 := 1``, ``u_ii = v_ii = 1/2``, ``beta >= 1``), and at step t:

1. E: the arms with ``u_ij >= 1/2`` for every j (none beats them by the tight bound);
2. if E holds a single arm, show it alone (exploit: nothing is compared);
3. else F: the arms with ``v_ij >= 1/2`` for every j (F contains E), all arms when there is none;
   multileave every arm of F;
4. every pair of distinct arms shown with a different credit is one duel, won by the one with
   more credit, added to W.

With ``m`` slots per step and more than ``m`` arms in F, ``m`` of them are drawn uniformly at random;
fewer fill the slots in turn (as UCB-Multileave, :mod:`irbandits.dueling.ucb_multileave`, whose
thresholds, update and multi-duel update this reuses: ``v_ij >= 1/2`` exactly when
``beta ln t >= thr_ij``). Two arms per step (``select``) are two arms of F drawn at random, or E's lone
arm against itself. Defaults: ``alpha = 0.51`` (RUCB's, which MDB generalises; the theory needs
alpha > 1/2) and ``beta = 1.5``, our choice: the loose bound must be wider than the tight one.
Recommendation: E's lone arm when it has one, else the empirical Copeland winner.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(MDB(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import empirical_copeland_winner
from irbandits.dueling.ucb_multileave import _update, _update_many, rows_below
from irbandits.params import Param
from irbandits.rng import randint


@njit(cache=True)
def compared(rowmax, t, params, out):
    """Steps 1-3 at step ``t + 1``: write the arms to compare to ``out``; return how many (1: E's lone
    arm). ``rowmax[i]`` is the largest threshold of row i (see :mod:`~irbandits.dueling.bounds`), taken
    with alpha: ``u_ij >= 1/2`` when ``ln t >= thr_ij``, ``v_ij >= 1/2`` when ``beta ln t >= thr_ij``."""
    log_t = math.log(t + 1)
    if rows_below(rowmax, log_t, out) == 1:  # E is one arm (none: every arm, K >= 2)
        return 1
    return rows_below(rowmax, params[1] * log_t, out)


@njit(cache=True)
def _fill(st, rng, arms):
    """Fill ``arms`` with the arms to compare (see the module)."""
    W, t, thr, rowmax, params, cand, slot, pair = st
    m = arms.shape[0]
    n = compared(rowmax, t[0], params, cand)
    for s in range(min(m, n)):  # a partial Fisher-Yates shuffle: a uniform subset in random order
        j = s + randint(rng, n - s)
        cand[s], cand[j] = cand[j], cand[s]
        arms[s] = cand[s]
    for s in range(n, m):
        arms[s] = arms[s - n]


@njit(cache=True)
def _select(st, rng):
    pair = st[-1]
    _fill(st, rng, pair)
    return pair[0], pair[1]


@njit(cache=True)
def _select_many(st, rng, arms):
    _fill(st, rng, arms)


@njit(cache=True)
def _recommend(st):
    W, t, thr, rowmax, params = st[:5]
    log_t = math.log(t[0] + 1)
    e, lone = 0, 0
    for i in range(rowmax.shape[0]):
        if rowmax[i] <= log_t:
            e += 1
            lone = i
    return lone if e == 1 else empirical_copeland_winner(W)


class MDB(DuelingAlgorithm):
    """Multi-dueling bandit: exploit the lone arm the tight bound leaves, else multileave all the loose bound leaves."""

    name = "MDB"
    description = "multileave every arm unbeaten by a loose UCB unless a tight UCB leaves one arm, then show it alone"
    reference = "Brost, Seldin, Cox & Lioma CIKM 2016, Algorithm 1 (MDB); MergeDTS paper (seed 001) section 2"
    params = (
        Param("alpha", float, 0.51, "exploration of the tight bound; theory needs > 0.5", lambda a: a > 0, "> 0"),
        Param("beta", float, 1.5, "the loose bound's exploration is alpha * beta", lambda b: b >= 1, ">= 1"),
    )
    multi_dueling = True

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)
    _select_many = staticmethod(_select_many)
    _update_many = staticmethod(_update_many)

    def compared(self) -> np.ndarray:
        """The arms the next step compares (all of them given enough slots): E's lone arm, or F."""
        W, t, thr, rowmax, params = self._st[:5]
        out = np.empty(self.K, np.int64)
        return out[: compared(rowmax, t[0], params, out)]

    def _init_state(self, K, alpha, beta):
        # the layout of UCB-Multileave's state, whose _update and _update_many read params[0] as alpha
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            thr=np.full((K, K), -np.inf),
            rowmax=np.full(K, -np.inf),
            params=np.array([alpha, beta]),
            cand=np.zeros(K, np.int64),
            slot=np.zeros(K, np.int64),
            pair=np.zeros(2, np.int64),
        )
