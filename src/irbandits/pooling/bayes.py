"""Bayesian bandits over runs: BLA, MM and their non-stationary variants (seed 003 sections 2.1.4, 3.3).

Run ``s`` has the posterior ``Beta(1 + jrel_s, 1 + jret_s - jrel_s)``. After a judgment of document
``d`` (relevance ``rel``), every run that retrieved ``d`` is updated (evidence propagation)::

    jrel_s <- rate * jrel_s + rel        jret_s <- rate * jret_s + 1

``rate = 1`` is the stationary model (BLA, MM); ``rate = 0`` (the paper's best, BLA-NS and MM-NS)
re-initialises a run's counts before counting the last judgment, so only that one counts. MM-NS with
``propagate=0`` updates only the run played (a judgment out of turn then updates no run). BLA plays
the run with the largest posterior draw (Thompson sampling, Granmo 2008); MM plays the run with the
largest posterior mean, ties to the run just played, then to the smaller run number.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> runs = pd.DataFrame(dict(run=list("xxyyzz"), topic="1", docno=list("abcdce"), rank=[1, 2] * 3))
>>> m = MMNS(depth_pools(runs, depth=2)["1"])
>>> [m.next(), m.judge("a", False).next(), m.judge("c", True).next()]
['a', 'c', 'd']
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.params import Param
from irbandits.pooling.base import PoolingMethod, best_run, judge, propagate, take
from irbandits.rng import beta_draw


@njit(cache=True)
def _select_sample(ps, own, rng):
    length, pos = ps[1], ps[6]
    jrel, jret, rate, last, values = own
    for r in range(values.shape[0]):
        if pos[r] < length[r]:
            values[r] = beta_draw(rng, 1.0 + jrel[r], 1.0 + jret[r] - jrel[r])
    return take(ps, best_run(ps, values, -1))


@njit(cache=True)
def _select_mean(ps, own, rng):
    jrel, jret, rate, last, values = own
    for r in range(values.shape[0]):
        values[r] = (1.0 + jrel[r]) / (2.0 + jret[r])
    return take(ps, best_run(ps, values, last[0]))


@njit(cache=True)
def _update(ps, own, rng, doc, rel):
    jrel, jret, rate, last, values = own
    played = judge(ps, doc)
    if rate.shape[0] == 1:
        propagate(ps, doc, rel, rate[0], jrel, jret)
    elif played >= 0:
        jrel[played] = rate[0] * jrel[played] + rel
        jret[played] = rate[0] * jret[played] + 1.0
    if played >= 0:
        last[0] = played


class _Bayes(PoolingMethod):
    rate = 1.0
    _update = staticmethod(_update)

    def _init_own(self, pool, rate=None, propagate=1):
        runs = len(pool.runs)
        rate = self.rate if rate is None else rate
        # (rate,), or (rate, 0) without propagation: a state saved before ``propagate`` existed still loads
        return dict(jrel=np.zeros(runs), jret=np.zeros(runs), rate=np.array([rate] if propagate else [rate, 0.0]),
                    last=np.full(1, -1, np.int64), values=np.zeros(runs))


_RATE = Param("rate", float, 0.0, "weight of past evidence at each update (1: stationary)", lambda r: r >= 0, ">= 0")
_PROPAGATE = Param("propagate", int, 1, "1: update every run that retrieved the judged document; 0: only the "
                   "run played", lambda p: p in (0, 1), "0 or 1")


class BLA(_Bayes):
    """Bayesian Learning Automaton: Thompson sampling from Beta posteriors, evidence propagated."""

    name = "BLA"
    description = "Thompson sampling from Beta(1 + jrel, 1 + jret - jrel) per run"
    reference = "Granmo ICMLA 2008; seed 003 Algorithm 2"
    random = True
    _select = staticmethod(_select_sample)


class MM(_Bayes):
    """MaxMean: the run with the largest posterior mean, ties to the run just played."""

    name = "MM"
    description = "largest posterior mean (1 + jrel) / (2 + jret); ties to the run just played"
    reference = "seed 003 section 2.1.4"
    _select = staticmethod(_select_mean)


class BLANS(BLA):
    """BLA with non-stationary counts (rate 0: only each run's last judgment counts)."""

    name = "BLA-NS"
    description = "BLA with counts jrel <- rate jrel + rel, jret <- rate jret + 1"
    reference = "seed 003 section 3.3, eq. 7-10"
    params = (_RATE,)


class MMNS(MM):
    """MM with non-stationary counts (rate 0: only each run's last judgment counts); ``propagate=0``
    keeps the evidence to the run played."""

    name = "MM-NS"
    description = "MM with counts jrel <- rate jrel + rel, jret <- rate jret + 1"
    reference = "seed 003 section 3.3, eq. 7-10"
    params = (_RATE, _PROPAGATE)
