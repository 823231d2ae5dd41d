"""MoveToFront (Cormack, Palmer & Clarke SIGIR 1998; seed 003 section 3.1).

Every run starts with priority 0. The current run is played while it gives relevant documents;
after a non-relevant one its priority drops by one and play moves to a run of highest priority
(the smaller run number on ties), so every run is visited once before any is visited twice. An
exhausted current run is left the same way, without losing priority. Judgments of documents that
were not offered change nothing but the pool.

>>> import pandas as pd
>>> from irbandits.pooling.pools import depth_pools
>>> runs = pd.DataFrame(dict(run=list("xxyy"), topic="1", docno=list("abcd"), rank=[1, 2, 1, 2]))
>>> m = MoveToFront(depth_pools(runs, depth=2)["1"])
>>> [m.next(), m.judge("a", True).next(), m.judge("b", False).next()]
['a', 'b', 'c']
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.pooling.base import PoolingMethod, best_run, judge, take


@njit(cache=True)
def _select(ps, own, rng):
    length, pos = ps[1], ps[6]
    priority, current = own
    r = current[0]
    if r < 0 or pos[r] == length[r]:
        r = best_run(ps, priority, -1)
        current[0] = r
    return take(ps, r)


@njit(cache=True)
def _update(ps, own, rng, doc, rel):
    priority, current = own
    played = judge(ps, doc)
    if played >= 0 and rel == 0:
        priority[played] -= 1.0
        current[0] = -1


class MoveToFront(PoolingMethod):
    """Stay on a run while it gives relevant documents; leave it for a top-priority run otherwise."""

    name = "MTF"
    description = "MoveToFront: stay while relevant, else demote the run and jump to a top-priority run"
    reference = "Cormack, Palmer & Clarke SIGIR 1998; seed 003 section 3.1"
    _select = staticmethod(_select)
    _update = staticmethod(_update)

    def _init_own(self, pool):
        return dict(priority=np.zeros(len(pool.runs)), current=np.full(1, -1, np.int64))
