"""Relative Exponential-weight algorithm for Exploration and Exploitation, REX3.

Gajane, Urvoy & Clérot, ICML 2015, Algorithm 1 (adversarial utility-based dueling bandits); the
update below was checked against the authors' Python (Urvoy & Gajane, Orange Labs, GPL), read,
not copied. Weights ``w_i`` start at 1; each step

* ``p_i = (1 - gamma) w_i / sum_k w_k + gamma / K``;
* ``c`` and ``d`` are drawn independently from ``p`` (so ``c == d`` happens, and teaches nothing);
* if ``c != d``, with ``o = +1`` when ``c`` won and ``-1`` otherwise:
  ``w_c *= exp(gamma / K * o / (2 p_c))`` and ``w_d *= exp(-gamma / K * o / (2 p_d))``, both ``p``
  taken before the update. (The MergeDTS authors' Python drops the factor 1/2; not followed.)

Exploration rate (state yours, says the spec): by default the horizon-free schedule
``gamma_t = min(1/2, sqrt(K ln K / t))`` at step ``t = 1, 2, ...`` (the MergeDTS paper's setting;
its code also floors ``t`` at 10^4, which is not done here). ``schedule="horizon"`` fixes
``gamma = min(1/2, sqrt(K ln K / T))`` for the horizon ``T`` given to the constructor (the
paper's tuning for a known horizon); an explicit ``gamma`` fixes it to that value.

Numerics and speed: log-weights are kept exactly; ``w_i = exp(lw_i - shift)`` are kept in a
Fenwick tree, so the total, the two draws (an inverse-CDF search of ``p``, one uniform each) and
the update cost O(log K). The shift is moved to ``max lw`` (an O(K) rescale) when the total
leaves [1e-100, 1e100], and the tree is rebuilt from the weights every 4096 steps so rounding in
its partial sums cannot build up.

Recommendation: the arm of largest weight (ties to the lowest index).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(REX3(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm
from irbandits.dueling.bounds import record
from irbandits.errors import IrbanditsError
from irbandits.params import Param
from irbandits.rng import uniform

REBUILD_EVERY = 4096


@njit(cache=True)
def fenwick_add(tree, i, delta):
    """Add ``delta`` to element ``i`` (0-based) of the Fenwick tree ``tree[1..K]``."""
    k = i + 1
    n = tree.shape[0] - 1
    while k <= n:
        tree[k] += delta
        k += k & -k


@njit(cache=True)
def fenwick_total(tree):
    k = tree.shape[0] - 1
    s = 0.0
    while k > 0:
        s += tree[k]
        k -= k & -k
    return s


@njit(cache=True)
def fenwick_build(tree, w):
    n = w.shape[0]
    tree[0] = 0.0
    for i in range(1, n + 1):
        tree[i] = w[i - 1]
    for i in range(1, n + 1):
        j = i + (i & -i)
        if j <= n:
            tree[j] += tree[i]


@njit(cache=True)
def draw(tree, top, total, gamma, u):
    """The first arm whose cumulative probability exceeds ``u``, p_i = (1 - gamma) w_i / total + gamma / K."""
    K = tree.shape[0] - 1
    a = (1.0 - gamma) / total
    b = gamma / K
    pos = 0
    acc = 0.0
    step = top
    while step > 0:
        nxt = pos + step
        if nxt <= K:
            s = acc + tree[nxt]
            if a * s + b * nxt <= u:
                pos = nxt
                acc = s
        step >>= 1
    return min(pos, K - 1)


@njit(cache=True)
def exploration(params, step):
    """gamma at step ``step`` (1-based): fixed when params[0] > 0, else min(1/2, sqrt(K ln K / step))."""
    if params[0] > 0.0:
        return params[0]
    g = math.sqrt(params[1] / step)
    return 0.5 if g > 0.5 else g


@njit(cache=True)
def _rescale(lw, w, tree, shift):
    m = lw.max()
    shift[0] = m
    for i in range(lw.shape[0]):
        w[i] = math.exp(lw[i] - m)
    fenwick_build(tree, w)


@njit(cache=True)
def _select(st, rng):
    W, t, lw, w, tree, shift, params, top = st
    gamma = exploration(params, t[0] + 1)
    total = fenwick_total(tree)
    c = draw(tree, top[0], total, gamma, uniform(rng))
    d = draw(tree, top[0], total, gamma, uniform(rng))
    return c, d


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    W, t, lw, w, tree, shift, params, top = st
    record(W, c, d, c_won)
    if c != d:
        K = w.shape[0]
        gamma = exploration(params, t[0] + 1)
        total = fenwick_total(tree)
        pc = (1.0 - gamma) * w[c] / total + gamma / K
        pd = (1.0 - gamma) * w[d] / total + gamma / K
        o = 1.0 if c_won else -1.0
        lw[c] += gamma / K * o / (2.0 * pc)
        lw[d] -= gamma / K * o / (2.0 * pd)
        for i in (c, d):
            new = math.exp(lw[i] - shift[0])
            fenwick_add(tree, i, new - w[i])
            w[i] = new
        total = fenwick_total(tree)
        if not 1e-100 < total < 1e100:
            _rescale(lw, w, tree, shift)
    t[0] += 1
    if t[0] % REBUILD_EVERY == 0:
        fenwick_build(tree, w)


@njit(cache=True)
def _recommend(st):
    return np.argmax(st[2])


class REX3(DuelingAlgorithm):
    """REX3: EXP3-style exponential weights on relative (duel) feedback; O(sqrt(K ln K T)) regret."""

    name = "REX3"
    description = "Relative Exponential-weight algorithm for Exploration and Exploitation (adversarial, sqrt(T) regret)"
    reference = "Gajane, Urvoy & Clerot ICML 2015, Algorithm 1; MergeDTS paper (seed 001) section 5.5"
    params = (
        Param("gamma", float, None, "fixed exploration rate in (0, 1]; None: use the schedule",
              lambda g: 0 < g <= 1, "in (0, 1]"),
        Param("schedule", str, "anytime",
              "without gamma: 'anytime' gamma_t = min(1/2, sqrt(K ln K / t)); "
              "'horizon' gamma = min(1/2, sqrt(K ln K / T)) for the horizon T",
              lambda s: s in ("anytime", "horizon"), "'anytime' or 'horizon'"),
    )

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)

    def _init_state(self, K, gamma, schedule):
        k_ln_k = K * math.log(K)
        if gamma is None and schedule == "horizon":
            if self.horizon is None or self.horizon < 1:
                raise IrbanditsError("REX3: schedule='horizon' needs a positive horizon")
            gamma = min(0.5, math.sqrt(k_ln_k / self.horizon))
        top = 1
        while 2 * top <= K:
            top *= 2
        w = np.ones(K)
        tree = np.zeros(K + 1)
        fenwick_build(tree, w)
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            lw=np.zeros(K),  # log-weights
            w=w,  # exp(lw - shift)
            tree=tree,  # Fenwick tree over w
            shift=np.zeros(1),
            params=np.array([0.0 if gamma is None else gamma, k_ln_k]),
            top=np.array([top], np.int64),
        )
