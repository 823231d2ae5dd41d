"""Dueling Bandit Gradient Descent (Yue & Joachims, ICML 2009, Algorithm 1).

Every impression draws a unit direction ``u``, interleaves the current ranker ``w`` with the
candidate ``w + delta u`` and, if the candidate wins the interleaved comparison, moves ``w`` to
``w + gamma u``. Defaults: delta = 1 and gamma = 0.01 (the paper's; Hofmann et al. 2011/2013 use the
same, as delta and alpha), starting from w = 0; the paper's projection onto a ball is left out, as in
the later OLTR work. Any interleaving method of :mod:`irbandits.clicks.interleaving` compares the
two lists (``team-draft`` by default; ``probabilistic`` is Hofmann et al.'s choice).

>>> import numpy as np
>>> learner = DBGD(n_features=2, seed=1)
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
>>> for _ in range(300):                              # a user who clicks document 0 wherever it is
...     shown = learner.rank(X)
...     _ = learner.update([shown.index(0)])
>>> bool(learner.weights[0] > learner.weights[1])
True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.clicks.interleaving import get_method
from irbandits.oltr.base import DELTA, GAMMA, LENGTH, OnlineLearner
from irbandits.oltr.linear import top_lists, unit_direction
from irbandits.params import Param


@njit(cache=True)
def propose(W, u, delta, rng):
    """Draw ``u`` and write the candidate ``W[0] + delta u`` to ``W[1]``."""
    unit_direction(rng, u)
    for f in range(u.shape[0]):
        W[1, f] = W[0, f] + delta * u[f]


@njit
def _rank(st, rng, X, shown, interleave_k, credit_k):
    W, u, params, lists, lens, assign, prob = st
    propose(W, u, params[0], rng)
    top_lists(X, W, rng, lists, lens)
    return interleave_k(lists[0], lens[0], lists[1], lens[1], rng, shown, assign, prob)


@njit
def _update(st, rng, X, shown, n, clicks, interleave_k, credit_k):
    W, u, params, lists, lens, assign, prob = st
    if credit_k(lists[0], lens[0], lists[1], lens[1], shown, n, assign, prob, clicks) < 0:  # the candidate won
        for f in range(u.shape[0]):
            W[0, f] += params[1] * u[f]


def _interleaving(name: str) -> bool:
    get_method(name)   # raises, listing the methods
    return True


class DBGD(OnlineLearner):
    """Dueling Bandit Gradient Descent: interleave w with w + delta u, step gamma u when it wins."""

    name = "DBGD"
    description = "Dueling Bandit Gradient Descent: one random candidate per impression, interleaved with w"
    reference = "Yue & Joachims ICML 2009, Algorithm 1; Hofmann et al. 2011"
    params = (DELTA, GAMMA,
              Param("interleaving", str, "team-draft", "interleaving method comparing w and the candidate",
                    _interleaving, "an interleaving method"),
              LENGTH)
    _scratch = ("u", "lists", "lens", "assign", "prob")
    _rank = staticmethod(_rank)
    _update = staticmethod(_update)

    def _init_state(self, F, delta, gamma, interleaving, length):
        return dict(W=np.zeros((2, F)), u=np.zeros(F), params=np.array([delta, gamma]),
                    lists=np.full((2, length), -1, np.int64), lens=np.zeros(2, np.int64),
                    assign=np.zeros(length, np.int64), prob=np.zeros(length))

    @property
    def _plugs(self):
        m = get_method(self.param_values["interleaving"])
        return m.interleave, m.credit
