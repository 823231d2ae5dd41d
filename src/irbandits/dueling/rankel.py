"""RankEl, PAC rank elicitation (Busa-Fekete, Szörényi & Hüllermeier, "PAC rank elicitation through
adaptive sampling of stochastic pairwise preferences", AAAI 2014, Algorithm 1 with the sampling
strategy for Copeland's ranking and the number of discordant pairs), run online as the thesis
(seed 002, section 7.5) runs it: delta = 1/T, then its ranking's top arm is exploited.

The paper is not among the seeds; this follows its Algorithm 1 as recalled. RankEl shares PBR's
racing frame (:mod:`irbandits.dueling.pbr`: rounds over the active pairs A, in a fresh random order
per round, the K (K - 1) / 2 unordered pairs; after each round the Hoeffding intervals
``mean +- sqrt(ln(2 K^2 n_max / delta) / (2 n))``), but its goal is the whole Copeland ranking,
not its top:

* a pair is *decided* when ``mean - c > 1/2 - eps`` or ``mean + c < 1/2 + eps``: its side of 1/2 is
  known, up to the paper's indifference eps (default 0: the exact sign); it counts for the arm
  with the larger mean (a mean of exactly 1/2, possible only with eps > 0, for neither);
* the Copeland score of arm i lies in ``[lo_i, hi_i]``, ``lo_i`` its decided wins and
  ``hi_i`` = K - 1 minus its decided pairs not won; the order of two arms i, j is *settled* when
  ``lo_i > hi_j`` or ``lo_j > hi_i``, or when both scores are known (``lo = hi``), equal or not;
* a pair leaves A when it is decided, or when neither of its arms is in an unsettled pair
  (its outcome can no longer change the ranking);
* stop when at most ``rho`` pairs of arms are unsettled (the tolerated number of discordant
  pairs; default 0), when A is empty, or when a pair of A has reached n_max samples.

RankEl's answer is the ranking by empirical Copeland score (w_ij > w_ji), highest first, ties in
arm order (:meth:`RankEl.ranking`); online, its top arm is committed and duels itself ever after,
and it is the recommendation throughout. Ranking every arm costs more duels than finding the top
one (PBR), which is what the thesis's Figure 7.6 shows. With eps = 0 an exactly tied pair is never
decided: its arms stay unsettled unless their other pairs separate them.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(RankEl(P.K, seed=1, horizon=20_000), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import empirical_copeland_winner, record
from irbandits.dueling.pbr import (
    _BEST,
    _COUNT,
    _NACT,
    _QLEN,
    _RHO,
    _T,
    DELTA,
    N_MAX,
    advance,
    committed,
    racing_select,
    racing_state,
    resolve,
)
from irbandits.params import Param


@njit(cache=True)
def _end_round(W, params, info, active, queue, wins, losses, open_):
    """After a round: decide pairs, find the unsettled pairs of arms, shrink A, test the stop."""
    K = W.shape[0]
    capped = resolve(W, params, info, active, queue, wins, losses)
    open_[:] = False
    unsettled = 0
    for i in range(K):
        lo_i, hi_i = wins[i], K - 1 - losses[i]
        for j in range(i + 1, K):
            lo_j, hi_j = wins[j], K - 1 - losses[j]
            if lo_i > hi_j or lo_j > hi_i or (lo_i == hi_i and lo_j == hi_j):
                continue
            unsettled += 1
            open_[i] = True
            open_[j] = True
    info[_COUNT] = unsettled
    for q in range(info[_QLEN]):
        code = queue[q]
        if active[code] and not open_[code // K] and not open_[code % K]:
            active[code] = False
            info[_NACT] -= 1
    if capped or info[_NACT] == 0 or unsettled <= info[_RHO]:
        info[_BEST] = empirical_copeland_winner(W)


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, params, info, active, queue, wins, losses, open_ = st
    record(W, c, d, c_won)
    t[0] += 1
    if info[_BEST] >= 0:
        return
    if advance(info, queue, W.shape[0], c, d):
        _end_round(W, params, info, active, queue, wins, losses, open_)
    if info[_BEST] < 0 and info[_T] > 0 and t[0] >= info[_T]:
        info[_BEST] = empirical_copeland_winner(W)


@njit(cache=True)
def _recommend(st):
    info = st[3]
    return info[_BEST] if info[_BEST] >= 0 else empirical_copeland_winner(st[0])


class RankEl(DuelingAlgorithm):
    """PAC rank elicitation of the Copeland ranking: rounds over the pairs that can still change the
    ranking; then its top arm duels itself."""

    name = "RankEl"
    description = ("PAC rank elicitation (Copeland ranking, discordant pairs): rounds over the pairs that can "
                   "still change the ranking, then its top arm is exploited (needs the horizon)")
    reference = "Busa-Fekete, Szörényi & Hüllermeier AAAI 2014, Algorithm 1 (Copeland, NDP); thesis (seed 002) 7.5"
    params = (
        DELTA,
        N_MAX,
        Param("eps", float, 0.0, "indifference: a pair is decided once its interval is within eps of one side of "
              "1/2; 0: the exact sign", lambda e: 0 <= e < 0.5, "in [0, 0.5)"),
        Param("rho", int, 0, "pairs of arms whose order may stay unsettled at the stop (discordant pairs tolerated)",
              lambda r: r >= 0, ">= 0"),
    )

    _select = staticmethod(racing_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)
    _absorbed = staticmethod(committed)

    def _init_state(self, K, delta, n_max, eps, rho):
        arrays = racing_state(self.name, K, self.horizon, delta, n_max, eps, rho)
        arrays["info"][_COUNT] = K * (K - 1) // 2  # every pair of arms unsettled
        arrays["open"] = arrays.pop("out")  # arms in an unsettled pair (after a round)
        return arrays

    def ranking(self) -> np.ndarray:
        """RankEl's answer: the arms by empirical Copeland score (w_ij > w_ji), highest first, ties in arm
        order; its first arm is :meth:`recommend`."""
        W = self.wins
        return np.argsort(-(W > W.T).sum(1), kind="stable")
