"""mergeRUCB: RUCB inside small batches of arms that merge as arms are eliminated.

Thesis (seed 002) Algorithm 4 (Zoghi et al., WSDM 2015). At step ``t`` the algorithm works on batch
``m = t mod b_s`` (:mod:`irbandits.dueling.batches`): it prunes every arm some batch-mate beats
with confidence (``u < 0.5`` with ``u_ij = w_ij / n_ij + sqrt(alpha ln(t + C) / n_ij)``), picks
``c`` uniformly at random in the batch and
``d = argmax_{j in batch, j != c} u_jc`` (ties at random), and starts a new stage (repartition)
when at most ``K / 2^s`` arms survive (the last arm then duels itself for good: ``_absorbed``
lets the simulation finish the run in closed form). Initial batches follow the listing: ``b_1 = floor(K / M)``
batches of ``M`` consecutive arms, the last one taking the remainder.

A batch pruned down to one arm: Algorithm 4 has no step for it (unlike MergeDTS's Algorithm 1,
lines 14-15, which merges it into the next batch "to avoid comparing a suboptimal ranker against
itself"), so by default it stays until the stage ends and its arm duels itself on that batch's
turns, as the thesis's single remaining arm does. ``merge_single=1`` applies MergeDTS's merge
instead. On MSLR-Navigational (tuned) the two give the same regret within noise. The stage also
ends when it is stalled (:func:`~irbandits.dueling.batches.stalled`: a lone arm, and ``K / 2^s``
out of reach unless every batch of two or more arms sheds some), and new batches hold at least
two arms (line 13). The listing has no rule for this; without one a near-tied pair could hold the
stage for ``~1 / Delta^2`` steps while the lone arm, often the winner, duels itself (issue 23:
``M = 3`` on a 10-arm Bradley-Terry problem, 6 of 10 runs stuck at 10^5 steps).

``C`` defaults to ``C(delta) = ((4 alpha - 1) K^2 / ((2 alpha - 1) delta))^(1 / (2 alpha - 1))``
(line 3 of the listing; needs ``alpha > 0.5``). The "tuned" setting is the one the MergeDTS paper
(seed 001, section 5.6) found best on MSLR-Navigational: ``alpha = 0.8^6, M = 8, C = 400,000``.

Recommendation: the last arm standing; before that (the listing has no rule for an unfinished
run), the surviving arm with the most empirical wins over the other survivors, then over all arms
(:func:`~irbandits.dueling.batches.surviving_winner`).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(MergeRUCB(P.K, seed=1), P, horizon=50_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import numpy as np

from irbandits.dueling import batches as bt
from irbandits.dueling.base import DuelingAlgorithm, c_of_delta
from irbandits.dueling.batches import kernel
from irbandits.dueling.bounds import pick, record, ucb
from irbandits.params import Param


@kernel
def _select(st, rng):
    W, t, params, arms, bstart, where, info, thr, rowmax, work, vals, ties = st
    alpha, C = params[0], params[1]
    step = t[0] + 1
    m = bt.current_batch(step, C, thr, rowmax, arms, bstart, where, info, params[2] != 0.0)  # merge_single
    s0, n = bstart[m], bstart[m + 1] - bstart[m]
    if n == 1:
        return arms[s0], arms[s0]
    log_t = bt.log_time(step, C)
    c = pick(arms[s0:s0 + n], n, rng)
    best = -np.inf
    for p in range(n):
        j = arms[s0 + p]
        if j == c:
            vals[p] = -np.inf
            continue
        vals[p] = ucb(W, j, c, log_t, alpha)
        if vals[p] > best:
            best = vals[p]
    k = 0
    for p in range(n):
        if vals[p] == best and arms[s0 + p] != c:
            ties[k] = arms[s0 + p]
            k += 1
    return c, pick(ties, k, rng)


@kernel
def _update(st, rng, c, d, c_won):
    W, t, params, arms, bstart, where, info, thr, rowmax, work, vals, ties = st
    record(W, c, d, c_won)
    bt.after_duel(thr, rowmax, arms, bstart, where, info, W, c, d, params[0])
    t[0] += 1
    bt.end_of_step(thr, rowmax, arms, bstart, where, info, work, params[2] != 0.0)  # merge_single


class MergeRUCB(DuelingAlgorithm):
    """mergeRUCB: random first arm and relative-UCB opponent inside merging batches."""

    name = "mergeRUCB"
    description = "RUCB within small batches that merge as arms are eliminated (scales linearly in K)"
    reference = "Zoghi et al. WSDM 2015; thesis (seed 002) Algorithm 4, parameters in 6.4"
    params = (
        Param("alpha", float, 1.01, "exploration; C(delta) needs > 0.5", lambda a: a > 0, "> 0"),
        Param("M", int, 4, "initial batch size", lambda m: m >= 2, ">= 2"),
        Param("delta", float, 0.01, "probability of failure, sets C(delta)", lambda d: 0 < d < 1, "in (0, 1)"),
        Param("C", float, None, "added to t in ln(t + C); default C(delta)", lambda c: c >= 0, ">= 0"),
        Param("merge_single", int, 0, "1: merge a one-arm batch into the next (MergeDTS's rule); "
              "0: as Algorithm 4, it stays and duels itself", lambda v: v in (0, 1), "0 or 1"),
    )
    settings = {"tuned": {"alpha": 0.8**6, "M": 8, "C": 400_000}}

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(bt.recommend)
    _absorbed = staticmethod(bt.absorbed)

    def _init_state(self, K, alpha, M, delta, C, merge_single):
        if C is None:
            C = c_of_delta(alpha, K, delta)
        arms, bstart, where, info, thr, rowmax, work = bt.new_batches(K, M, ceil=False)
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha, float(C), float(merge_single)]),
            arms=arms,
            bstart=bstart,
            where=where,
            info=info,
            thr=thr,
            rowmax=rowmax,
            work=work,
            vals=np.zeros(K),
            ties=np.zeros(K, np.int64),
        )
