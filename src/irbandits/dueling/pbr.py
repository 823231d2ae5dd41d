"""PBR, Preference-Based Racing (Busa-Fekete, Szörényi, Weng, Cheng & Hüllermeier, "Top-k selection
based on adaptive sampling of noisy preferences", ICML 2013, Algorithm 1 with the Copeland sampling
strategy SSCO), for the top k = 1 Copeland arm, as the thesis (seed 002, section 7.5) runs it.

The paper is not among the seeds; this follows its Algorithm 1 as recalled (and as duelpy's
``CopelandPBR`` reads it, read, not copied). The listing, by its lines:

* 1-5: no samples; the active pairs A are all pairs; selected S and discarded D empty;
* 6-10: each round samples every pair of A once (here: in a fresh random order per round, the
  order the listing leaves open; the pairs are the K (K - 1) / 2 unordered ones, since a duel of
  (i, j) is one of (j, i) and p_ji = 1 - p_ij: the listing's ordered pairs would sample each twice);
* 11-13: after the round, every pair's Hoeffding interval ``mean +- c``,
  ``c = sqrt(ln(2 K^2 n_max / delta) / (2 n))`` (n_max: the most samples one pair may take);
* 14, SSCO with k = 1: a pair is *decided* once 1/2 is outside its interval; the Copeland bounds
  of arm i are ``lo_i`` = its decided wins and ``hi_i`` = K - 1 minus its decided losses; i is
  discarded (D) when some ``lo_j > hi_i``, selected (S) when ``lo_i > hi_j`` for every j != i (so
  that S = {i} puts every other arm in D); a pair leaves A when it is decided or both its arms
  are in S or D;
* 15: stop when |S| = k or |D| = K - k (with k = 1: when K - 1 arms are discarded), when A is
  empty, or when a pair of A has reached n_max samples.

Decided pairs are not sampled again, so the bounds only tighten and an arm discarded stays so.
With delta = 1/T (thesis 7.5) PBR is a PAC algorithm given the horizon; as an online, regret-
minimising algorithm it explores until it stops (or the horizon T is used up), then commits to
its answer and duels that arm with itself ever after (explore then exploit, as SAVAGE here).
Its answer, and the recommendation while it explores: among the arms not discarded, the one with
the most empirical wins (w_ij > w_ji), first in arm order (the selected arm once S = {i}).

Unlike Copeland SAVAGE, which updates its bounds after every duel and uses ``ln(2 N T / delta)``
(N the number of pairs), PBR updates them once per round of the active pairs. Like SAVAGE, PBR
assumes no pair is exactly tied: such a pair is never decided.

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(PBR(P.K, seed=1, horizon=20_000), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm, from_horizon
from irbandits.dueling.bounds import empirical_copeland_winner, record, shuffled
from irbandits.params import Param

# info slots: committed arm (-1 while exploring), pairs in A, length of this round's queue, position
# in it, horizon T (0: none), n_max, arms discarded (PBR) or option pairs unsettled (RankEl), RankEl's rho
_BEST, _NACT, _QLEN, _QPOS, _T, _NMAX, _COUNT, _RHO = range(8)


@njit(cache=True)
def next_pair(info, active, queue, rng):
    """The next pair of this round (a code i * K + j, i < j); a new round, the pairs of A in a random
    order, when this one is done."""
    if info[_QPOS] >= info[_QLEN]:
        info[_QLEN] = shuffled(active, queue, rng)
        info[_QPOS] = 0
    return queue[info[_QPOS]]


@njit(cache=True)
def advance(info, queue, K, c, d):
    """Count the duel (c, d) if it is the round's next pair; True when it was the round's last."""
    if c == d or info[_QPOS] >= info[_QLEN] or queue[info[_QPOS]] != min(c, d) * K + max(c, d):
        return False
    info[_QPOS] += 1
    return info[_QPOS] == info[_QLEN]


@njit(cache=True)
def resolve(W, params, info, active, queue, wins, losses):
    """Lines 11-13 and the pair test of 14, over the round's pairs (A at its start): a pair whose
    interval ``mean +- c`` has ``mean - c > 1/2 - eps`` or ``mean + c < 1/2 + eps`` leaves A and counts
    for the arm with the larger mean (a mean of exactly 1/2 counts as a win for neither: possible only
    with eps > 0). ``losses`` counts the pairs decided and not won. True when a pair left in A has
    reached n_max samples (line 15)."""
    K = W.shape[0]
    log_term, eps = params[0], params[1]
    capped = False
    for q in range(info[_QLEN]):
        code = queue[q]
        i, j = code // K, code % K
        n = W[i, j] + W[j, i]
        if n == 0:
            continue
        mean = W[i, j] / n
        c = math.sqrt(log_term / (2.0 * n))
        if mean - c > 0.5 - eps or mean + c < 0.5 + eps:
            if mean > 0.5:
                wins[i] += 1
                losses[j] += 1
            elif mean < 0.5:
                wins[j] += 1
                losses[i] += 1
            else:
                losses[i] += 1
                losses[j] += 1
            active[code] = False
            info[_NACT] -= 1
        elif n >= info[_NMAX]:
            capped = True
    return capped


@njit(cache=True)
def _end_round(W, params, info, active, queue, wins, losses, out):
    """Lines 11-15 after a round: decide pairs, discard arms (SSCO, k = 1), shrink A, test the stop."""
    K = W.shape[0]
    capped = resolve(W, params, info, active, queue, wins, losses)
    best_lo = wins.max()
    for i in range(K):
        if not out[i] and K - 1 - losses[i] < best_lo:  # some lo_j > hi_i
            out[i] = True
            info[_COUNT] += 1
    for q in range(info[_QLEN]):  # both arms in S or D (here: in D; S = {i} makes D all others)
        code = queue[q]
        if active[code] and out[code // K] and out[code % K]:
            active[code] = False
            info[_NACT] -= 1
    if capped or info[_NACT] == 0 or info[_COUNT] >= K - 1:
        info[_BEST] = empirical_copeland_winner(W, out)


@njit(cache=True)
def racing_select(st, rng):
    """PBR's and RankEl's select: the committed arm against itself, else the round's next pair."""
    W, info, active, queue = st[0], st[3], st[4], st[5]
    if info[_BEST] >= 0:
        return info[_BEST], info[_BEST]
    K = W.shape[0]
    code = next_pair(info, active, queue, rng)
    return code // K, code % K


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, params, info, active, queue, wins, losses, out = st
    record(W, c, d, c_won)
    t[0] += 1
    if info[_BEST] >= 0:
        return
    if advance(info, queue, W.shape[0], c, d):
        _end_round(W, params, info, active, queue, wins, losses, out)
    if info[_BEST] < 0 and info[_T] > 0 and t[0] >= info[_T]:
        info[_BEST] = empirical_copeland_winner(W, out)


@njit(cache=True)
def _recommend(st):
    W, t, params, info, active, queue, wins, losses, out = st
    return info[_BEST] if info[_BEST] >= 0 else empirical_copeland_winner(W, out)


@njit(cache=True)
def committed(st):
    """PBR's and RankEl's absorbing test: true once an arm is committed (every later step is (b, b))."""
    return st[3][_BEST] >= 0


def racing_state(name: str, K: int, horizon: int | None, delta: float | None, n_max: int | None,
                 eps: float = 0.0, rho: int = 0) -> dict[str, np.ndarray]:
    """The state arrays PBR and RankEl share: win counts, the confidence term, the active pairs A (by code
    i * K + j, i < j), this round's queue, decided wins and losses per arm, and a per-arm flag."""
    delta = from_horizon(name, horizon, delta, lambda T: 1.0 / T)
    if n_max is None:
        n_max = horizon if horizon else math.ceil(1.0 / delta)  # a pair is never sampled more than T times
    N = K * (K - 1) // 2
    active = np.zeros(K * K, np.bool_)
    for i in range(K):
        active[i * K + i + 1:(i + 1) * K] = True
    return dict(
        W=np.zeros((K, K), np.int64),
        t=np.zeros(1, np.int64),
        params=np.array([math.log(2.0 * K * K * n_max / delta), eps]),  # ln(2 K^2 n_max / delta), eps
        info=np.array([-1, N, 0, 0, horizon or 0, n_max, 0, rho], np.int64),
        active=active,
        queue=np.zeros(N, np.int64),
        wins=np.zeros(K, np.int64),  # lo_i: decided pairs won
        losses=np.zeros(K, np.int64),  # decided pairs not won: hi_i = K - 1 - losses_i
        out=np.zeros(K, np.bool_),  # PBR: discarded (D); RankEl: rank still open
    )


DELTA = Param("delta", float, None, "failure probability; None: 1 / T for the horizon T (thesis 7.5)",
              lambda d: 0 < d < 1, "in (0, 1)")
N_MAX = Param("n_max", int, None, "most samples of one pair (the union bound's n_max; reaching it stops "
              "the exploration); None: the horizon T (1 / delta without one)", lambda n: n >= 1, ">= 1")


class PBR(DuelingAlgorithm):
    """Preference-Based Racing with Copeland scores: rounds over the undecided pairs until the Copeland
    winner is certain, then the winner duels itself."""

    name = "PBR"
    description = ("Preference-Based Racing (Copeland, top-1): rounds over the undecided pairs, arms discarded by "
                   "Copeland-score bounds, then the winner is exploited (needs the horizon)")
    reference = ("Busa-Fekete, Szörényi, Weng, Cheng & Hüllermeier ICML 2013, Algorithm 1 with SSCO; "
                 "thesis (seed 002) 7.5")
    params = (DELTA, N_MAX)

    _select = staticmethod(racing_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)
    _absorbed = staticmethod(committed)

    def _init_state(self, K, delta, n_max):
        return racing_state(self.name, K, self.horizon, delta, n_max)
