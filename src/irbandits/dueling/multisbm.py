"""MultiSBM (Ailon, Karnin & Joachims, "Reducing dueling bandits to cardinal bandits", ICML 2014,
Algorithm 2, MultiSBM; thesis, seed 002, section 2.2 cites it beside Doubler), with its singleton
bandit machine (SBM) as a parameter.

One K-armed bandit S_x per arm x. The listing, step by step:

1. start one SBM S_x over the K arms for every arm x;
2. x_0 is arbitrary (here drawn uniformly at the first step);
3. at step t, y_t <- advance(S_{x_{t-1}}): the SBM of the previous right arm proposes the right arm;
4. play (x_{t-1}, y_t) and observe which arm won;
5. feedback(S_{x_{t-1}}, b_t): S_{x_{t-1}} gets reward 1 when y_t won, else 0 (a self-duel
   x_{t-1} = y_t is played and rewarded the same way: its fair coin);
6. x_t <- y_t, the next step's left arm.

Under the paper's utility (linear-link) model the SBM of the best arm learns to propose the best
arm, whose SBM then keeps it: regret O(K log T) for an alpha-robust SBM (their Theorem on MultiSBM).

``sbm`` picks the singleton bandit, with the kernels Sparring uses (:mod:`irbandits.dueling.sparring`):

* ``ucb`` (default): UCB1 (Auer, Cesa-Bianchi & Fischer 2002), every arm once, lowest index first,
  then ``argmax mean_i + sqrt(alpha ln n_x / n_xi)`` with ``n_x`` the pulls of S_x so far and ties
  at random; ``alpha = 2`` is UCB1 (the paper's analysis asks the SBM to be alpha-robust and leaves
  the constant open: we keep Auer et al.'s);
* ``exp3``: EXP3 (Auer et al. 2002, Fig. 1) with ``gamma = min(1, sqrt(K ln K / ((e - 1) T)))`` for
  the horizon T, as Sparring-EXP3 (the best arm's SBM plays almost every step);
* ``ts``: Beta(1, 1)-prior Thompson sampling, as Sparring-TS.

Recommendation (no rule in the source): the arm the SBMs have proposed most (first in arm order).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(MultiSBM(P.K, seed=1), P, horizon=20_000, seed=1).recommended[-1])
0
>>> int(run_one(MultiSBM(P.K, seed=1, sbm="ts"), P, horizon=20_000, seed=1).recommended[-1])
0
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.base import DuelingAlgorithm, from_horizon
from irbandits.dueling.bounds import record
from irbandits.dueling.selfsparring import thompson_draw
from irbandits.dueling.sparring import exp3_draw, exp3_reward, ucb_arm
from irbandits.params import Param
from irbandits.rng import randint

SBMS = ("ucb", "exp3", "ts")  # the singleton bandits; the index is the code the kernels read (params[2])
_UCB, _EXP3, _TS = range(3)


@njit  # not cached: Thompson sampling calls Boost through a function pointer (see irbandits.dueling.thompson)
def _select(st, rng):
    W, t, params, left, N, S, n, played, lw, w, shift, buf = st
    if left[0] < 0:  # step 2: x_0 drawn at the first step
        left[0] = randint(rng, W.shape[0])
    x = left[0]
    code = params[2]
    if code == _UCB:  # step 3: y_t <- advance(S_x)
        y = ucb_arm(S[x], N[x], n[x], params[0], buf, rng)
    elif code == _EXP3:
        y = exp3_draw(w[x], params[1], rng)
    else:
        for i in range(N.shape[1]):  # the failures of S_x's arms
            buf[i] = N[x, i] - S[x, i]
        y = thompson_draw(S[x], buf, rng)
    return x, y


@njit(cache=True)
def _update(st, rng, c, d, c_won):
    """Steps 5-6: S_c is rewarded 1 when its arm d won; d becomes the next left arm."""
    W, t, params, left, N, S, n, played, lw, w, shift, buf = st
    record(W, c, d, c_won)
    N[c, d] += 1
    n[c] += 1
    played[d] += 1
    if not c_won:
        S[c, d] += 1
        if params[2] == _EXP3:
            exp3_reward(lw, w, shift, c, d, params[1])
    left[0] = d
    t[0] += 1


@njit(cache=True)
def _recommend(st):
    return np.argmax(st[7])  # the arm proposed most


class MultiSBM(DuelingAlgorithm):
    """MultiSBM: one singleton bandit per arm; the previous right arm's bandit proposes the next."""

    name = "MultiSBM"
    description = "one K-armed bandit per arm: the bandit of the last right arm proposes the next right arm"
    reference = "Ailon, Karnin & Joachims ICML 2014, Algorithm 2 (MultiSBM); thesis (seed 002) 2.2"
    params = (
        Param(
            "sbm",
            str,
            "ucb",
            "the singleton bandit: ucb (UCB1), exp3 or ts (Thompson sampling)",
            lambda s: s.lower() in SBMS,
            "one of " + ", ".join(SBMS),
        ),
        Param("alpha", float, 2.0, "UCB1 exploration: mean + sqrt(alpha ln n / n_i) (sbm=ucb)", lambda a: a > 0, "> 0"),
        Param(
            "gamma",
            float,
            None,
            "EXP3 exploration in (0, 1] (sbm=exp3); None: min(1, sqrt(K ln K / ((e - 1) T)))",
            lambda g: 0 < g <= 1,
            "in (0, 1]",
        ),
    )

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(_recommend)

    def _init_state(self, K, sbm, alpha, gamma):
        code = SBMS.index(sbm.lower())
        if code == _EXP3:
            gamma = from_horizon(
                self.name,
                self.horizon,
                gamma,
                lambda T: min(1.0, math.sqrt(K * math.log(K) / ((math.e - 1) * T))),
                what="gamma",
            )
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha, 0.0 if gamma is None else gamma, code]),
            left=np.full(1, -1, np.int64),  # x_{t-1}; -1 before the first step
            N=np.zeros((K, K), np.int64),  # N[x, y]: pulls of arm y by S_x
            S=np.zeros((K, K), np.int64),  # S[x, y]: rewards (y won) of arm y in S_x
            n=np.zeros(K, np.int64),  # pulls of S_x in all
            played=np.zeros(K, np.int64),  # times each arm was proposed (the right arm)
            lw=np.zeros((K, K)),  # EXP3: log-weights, one row per SBM
            w=np.ones((K, K)),  # EXP3: exp(lw - shift), cached
            shift=np.zeros(K),
            buf=np.zeros(K, np.int64),  # ties (UCB) or failures (TS)
        )
