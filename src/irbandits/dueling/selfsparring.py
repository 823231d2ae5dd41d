"""Self-Sparring with Thompson sampling (Sui, Zhuang, Burdick & Yue, UAI 2017).

One Beta(1, 1) prior per arm on its chance of winning a duel; each step two independent Thompson
draws (argmax over arms of a Beta(S_i + 1, F_i + 1) sample) pick the two arms; the winner's S and
the loser's F grow by one. A self-duel teaches nothing and changes nothing. Recommendation: the
highest posterior mean (S + 1) / (S + F + 2).

Multi-dueling (the paper's own setting): each step m independent Thompson draws pick m arms
(repeats allowed), the environment compares them all at once (e.g. one multileaved list), and
every pair of distinct arms with a strict difference in credit updates S and F as one duel (an
arm drawn twice counts once). With m = 2 this is exactly the pairwise algorithm: the same draws,
the same update.

Speed: each draw samples the arm with the highest posterior mean first and then decides for every
other arm only whether its sample would beat the running maximum
(:func:`irbandits.dueling.thompson.beta_draw_above`), so a late step costs about one uniform per
arm instead of two Gamma variates; the argmax has exactly the distribution of the full draw. That
test is written out in the loop over the arms (:func:`draw_from_lead`: a call per arm made numba
pass the generator's array with a reference count, several times the cost of the uniform), and
the leader is found once per step for both draws; the draws and their order are unchanged, so a
seed gives the same run as before (``tests/test_speed_identical.py``). At K = 136 (MSLR, after
10^6 steps) a step is 3.3x faster than before, about 1.5x RUCB's time; its floor, two Beta draws
and 2(K - 1) uniforms, is about a quarter of it (the rest is the exact test's arithmetic per arm).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(SelfSparring(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import record
from irbandits.dueling.thompson import _NEGLIGIBLE, _PLAIN, _betaincc, _betainccinv
from irbandits.rng import beta, uniform


@njit
def posterior_lead(S, F):
    """The arm of highest posterior mean (S + 1) / (S + F + 2), compared without division; ties to
    the lowest index."""
    lead = 0
    for i in range(1, S.shape[0]):
        if (S[i] + 1.0) * (S[lead] + F[lead] + 2.0) > (S[lead] + 1.0) * (S[i] + F[i] + 2.0):
            lead = i
    return lead


@njit
def draw_from_lead(S, F, lead, rng):
    """argmax_i of theta_i ~ Beta(S_i + 1, F_i + 1), sampling ``lead`` first (continuous draws: no ties).

    :func:`irbandits.dueling.thompson.beta_draw_above` written out for the loop over the arms (a
    call per arm made numba pass ``rng`` with a reference count, several times the cost of the
    uniform it draws), with its branches, draws and their order unchanged, and one exact shortcut:
    in the tail branch the uniform u is rejected without ``exp`` when u >= 1 / T(x), T(x) = 1 + x +
    x^2/2 + x^3/6 + x^4/24 the Taylor polynomial, as it would be with it: exp(x) / T(x) grows with x
    and is 2.2 or more for x >= 5 (where the branch is), so 1 / T(x) > exp(-x) by far more than
    any rounding. Most arms of a late step end there (more than 120 of 135 on MSLR after 10^6
    steps), and most of the rest at ``exp``, before the special functions.
    """
    best, arm = beta(rng, S[lead] + 1.0, F[lead] + 1.0), lead
    for i in range(S.shape[0]):
        if i == lead:
            continue
        a, b = S[i] + 1.0, F[i] + 1.0
        mean = a / (a + b)
        exponent = 2.0 * (a + b + 1.0) * (best - mean) ** 2
        if best < mean or exponent < _PLAIN:
            x = beta(rng, a, b)
        elif exponent > _NEGLIGIBLE:
            continue
        else:
            u = uniform(rng)
            taylor = 1.0 + exponent * (1.0 + exponent * 0.5 * (1.0 + exponent * (1.0 / 3.0) * (1.0 + exponent * 0.25)))
            if u * taylor >= 1.0 or u >= math.exp(-exponent) or u >= _betaincc(a, b, best):
                continue
            x = _betainccinv(a, b, u)
        if x > best:
            best, arm = x, i
    return arm


@njit
def thompson_draw(S, F, rng):
    """argmax_i of theta_i ~ Beta(S_i + 1, F_i + 1) (continuous draws: no ties)."""
    return draw_from_lead(S, F, posterior_lead(S, F), rng)


@njit
def _select(st, rng):
    W, t, S, F = st
    lead = posterior_lead(S, F)  # the same for both draws: S and F do not change in between
    return draw_from_lead(S, F, lead, rng), draw_from_lead(S, F, lead, rng)


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, S, F = st
    record(W, c, d, c_won)
    if c != d:
        win, lose = (c, d) if c_won else (d, c)
        S[win] += 1
        F[lose] += 1
    t[0] += 1


@njit
def _select_many(st, rng, arms):
    """m = len(arms) independent Thompson draws (the first two are what ``_select`` draws)."""
    W, t, S, F = st
    lead = posterior_lead(S, F)
    for i in range(arms.shape[0]):
        arms[i] = draw_from_lead(S, F, lead, rng)


@njit
def _shown_before(arms, j):
    for k in range(j):
        if arms[k] == arms[j]:
            return True
    return False


@njit
def _update_many(st, rng, arms, credit):
    """Every pair of distinct arms shown with different credit is one duel, won by the one with
    more credit (``_update``). An arm shown in several slots counts once: the environment compared
    rankers, not slots (counting every copy would add correlated wins and lock in early leaders).
    Two slots of the same arm with different credit are a self-duel, recorded as ``_update`` does
    (no S or F changes), so m = 2 is the pairwise algorithm exactly."""
    for i in range(arms.shape[0]):
        if _shown_before(arms, i):
            continue
        for j in range(i + 1, arms.shape[0]):
            if credit[i] != credit[j] and (arms[j] == arms[i] or not _shown_before(arms, j)):
                _update(st, rng, arms[i], arms[j], credit[i] > credit[j])


@njit(cache=True)
def _recommend(st):
    W, t, S, F = st
    return np.argmax((S + 1.0) / (S + F + 2.0))


class SelfSparring(DuelingAlgorithm):
    """Self-Sparring: one Thompson-sampling bandit that spars with itself."""

    name = "Self-Sparring"
    description = "two independent Thompson draws from one Beta(1,1)-prior bandit per step"
    reference = "Sui et al. UAI 2017; MergeDTS paper (seed 001) section 5.5"

    multi_dueling = True

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)
    _select_many = staticmethod(_select_many)
    _update_many = staticmethod(_update_many)

    def _init_state(self, K):
        return dict(
            W=np.zeros((K, K), np.int64), t=np.zeros(1, np.int64), S=np.zeros(K, np.int64), F=np.zeros(K, np.int64)
        )
