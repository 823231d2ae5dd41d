"""Frequentist bandits over runs: Random, epsilon_n-greedy and UCB1-Tuned (seed 003 section 2.1).

Playing a run judges its next unjudged document; the reward is the document's relevance. Evidence
is propagated: a judgment counts as one trial (and a success if relevant) for every run that
retrieved the document, so ``n_j`` below is the number of judged documents run ``j`` retrieved
and ``n`` the number of judgments.

- Random: a run uniformly among those not exhausted.
- epsilon_n-greedy (Auer et al. 2002): with probability ``eps_n = min(1, c K / (d^2 n))`` a random
  run, otherwise the largest mean reward (0.5 for a run without evidence); ``c = 0.01``,
  ``d = 0.1`` as in the paper, ``K`` the number of runs, ``n`` the round (judgments + 1).
- UCB1-Tuned: a run without evidence first, then the largest
  ``mean_j + sqrt(ln n / n_j * min(1/4, var_j + sqrt(2 ln n / n_j)))`` with the 0/1 rewards'
  variance ``var_j = mean_j (1 - mean_j)``.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> runs = pd.DataFrame(dict(run=list("xxyy"), topic="1", docno=list("abcd"), rank=[1, 2, 1, 2]))
>>> m = UCB1Tuned(depth_pools(runs, depth=2)["1"])
>>> [m.next(), m.judge("a", False).next(), m.judge("c", True).next()]
['a', 'c', 'd']
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.params import Param
from irbandits.pooling.base import N_JUDGED, PoolingMethod, best_run, judge, propagate, random_run, take
from irbandits.rng import uniform


@njit(cache=True)
def _select_random(ps, own, rng):
    return take(ps, random_run(ps, rng))


@njit(cache=True)
def _update_plain(ps, own, rng, doc, rel):
    judge(ps, doc)


@njit(cache=True)
def _select_greedy(ps, own, rng):
    jrel, jret, params, values = own
    n = ps[7][N_JUDGED] + 1
    eps = min(1.0, params[0] * values.shape[0] / (params[1] * params[1] * n))
    if uniform(rng) < eps:
        return take(ps, random_run(ps, rng))
    for r in range(values.shape[0]):
        values[r] = jrel[r] / jret[r] if jret[r] > 0 else 0.5
    return take(ps, best_run(ps, values, -1))


@njit(cache=True)
def _select_ucb(ps, own, rng):
    length, pos = ps[1], ps[6]
    jrel, jret, params, values = own
    log_n = math.log(max(ps[7][N_JUDGED], 1))
    for r in range(values.shape[0]):
        if pos[r] == length[r]:
            continue
        if jret[r] == 0:
            return take(ps, r)
        mean = jrel[r] / jret[r]
        bonus = log_n / jret[r]
        values[r] = mean + math.sqrt(bonus * min(0.25, mean * (1.0 - mean) + math.sqrt(2.0 * bonus)))
    return take(ps, best_run(ps, values, -1))


@njit(cache=True)
def _update_evidence(ps, own, rng, doc, rel):
    jrel, jret, params, values = own
    judge(ps, doc)
    propagate(ps, doc, rel, 1.0, jrel, jret)


def _evidence(pool, *params):
    runs = len(pool.runs)
    return dict(jrel=np.zeros(runs), jret=np.zeros(runs), params=np.array(params, dtype=np.float64),
                values=np.zeros(runs))


class Random(PoolingMethod):
    """A run uniformly at random among those not exhausted."""

    name = "Random"
    description = "a uniformly random run"
    reference = "seed 003 section 2.1.1"
    random = True
    _select = staticmethod(_select_random)
    _update = staticmethod(_update_plain)

    def _init_own(self, pool):
        return dict(unused=np.zeros(0))


class EpsilonGreedy(PoolingMethod):
    """epsilon_n-greedy: explore at random with a probability that decays as 1 / n."""

    name = "eps-greedy"
    description = "epsilon_n-greedy, eps_n = min(1, cK / (d^2 n)), means start at 0.5"
    reference = "Auer, Cesa-Bianchi & Fischer 2002; seed 003 section 2.1.2"
    random = True
    params = (Param("c", float, 0.01, "exploration constant", lambda c: c > 0, "> 0"),
              Param("d", float, 0.1, "assumed gap between the best and second-best run", lambda d: d > 0, "> 0"))
    _select = staticmethod(_select_greedy)
    _update = staticmethod(_update_evidence)

    def _init_own(self, pool, c, d):
        return _evidence(pool, c, d)


class UCB1Tuned(PoolingMethod):
    """UCB1-Tuned: every run once, then the largest variance-aware upper confidence bound."""

    name = "UCB1-Tuned"
    description = "UCB1-Tuned upper confidence bounds on each run's rate of relevant documents"
    reference = "Auer, Cesa-Bianchi & Fischer 2002; seed 003 Algorithm 1"
    _select = staticmethod(_select_ucb)
    _update = staticmethod(_update_evidence)

    def _init_own(self, pool):
        return _evidence(pool)
