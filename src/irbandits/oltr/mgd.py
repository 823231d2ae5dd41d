"""Multileave Gradient Descent (Schuth, Oosterhuis, Whiteson & de Rijke, WSDM 2016, Algorithm 2).

Every impression draws ``n`` unit directions ``u_j``, multileaves the current ranker ``w`` (ranker 0)
with the candidates ``w + delta u_j`` and takes as winners the candidates whose credit beats the
current ranker's. Winner-takes-all (``update=winner``, MGD-W) moves ``w`` by ``gamma u_j`` for one
winner with the most credit (ties at random); mean-winner (``update=mean``, MGD-M, the default)
moves it by ``gamma`` times the mean of the winners' directions. Any multileaving method of
:mod:`irbandits.clicks.multileaving` makes the list (``team-draft`` by default).

>>> import numpy as np
>>> learner = MGD(n_features=2, seed=1, n=4)
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
>>> for _ in range(200):                              # a user who clicks document 0 wherever it is
...     shown = learner.rank(X)
...     _ = learner.update([shown.index(0)])
>>> bool(learner.weights[0] > learner.weights[1])
True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.clicks.multileaving import get_multileaving
from irbandits.oltr.base import DELTA, GAMMA, LENGTH, OnlineLearner
from irbandits.oltr.linear import top_lists, unit_direction
from irbandits.params import Param
from irbandits.rng import randint

UPDATES = ("mean", "winner")


@njit(cache=True)
def propose_many(W, U, delta, rng):
    """Draw the directions ``U[j]`` and write the candidates ``W[0] + delta U[j]`` to ``W[j + 1]``."""
    for j in range(U.shape[0]):
        unit_direction(rng, U[j])
        for f in range(U.shape[1]):
            W[j + 1, f] = W[0, f] + delta * U[j, f]


@njit(cache=True)
def step_to_winners(W, U, credit, gamma, mean, rng, winners):
    """Move ``W[0]`` towards the candidates whose credit beats ranker 0's: the mean of their directions
    (``mean``) or one with the most credit, ties at random."""
    k, best = 0, credit[0]
    for j in range(U.shape[0]):
        if credit[j + 1] > credit[0]:
            if mean:
                winners[k] = j
                k += 1
            elif credit[j + 1] > best:
                best, winners[0], k = credit[j + 1], j, 1
            elif credit[j + 1] == best:
                winners[k] = j
                k += 1
    if k == 0:
        return
    if not mean:
        winners[0] = winners[randint(rng, k)]
        k = 1
    for f in range(U.shape[1]):
        s = 0.0
        for i in range(k):
            s += U[winners[i], f]
        W[0, f] += gamma * s / k


@njit
def _rank(st, rng, X, shown, multileave_k, credit_k):
    W, U, params, lists, lens, assign, prob, credit, winners = st
    propose_many(W, U, params[0], rng)
    top_lists(X, W, rng, lists, lens)
    return multileave_k(lists, lens, rng, shown, assign, prob)


@njit
def _update(st, rng, X, shown, n, clicks, multileave_k, credit_k):
    W, U, params, lists, lens, assign, prob, credit, winners = st
    credit_k(lists, lens, shown, n, assign, prob, clicks, credit)
    step_to_winners(W, U, credit, params[1], params[2] == 0.0, rng, winners)


def _multileaving(name: str) -> bool:
    get_multileaving(name)   # raises, listing the methods
    return True


class MGD(OnlineLearner):
    """Multileave Gradient Descent: n candidates multileaved with w, step towards the winners."""

    name = "MGD"
    description = "Multileave Gradient Descent: n random candidates multileaved with w, mean- or winner-takes-all step"
    reference = "Schuth, Oosterhuis, Whiteson & de Rijke WSDM 2016"
    params = (Param("n", int, 9, "candidates per impression", lambda n: 1 <= n <= 100, "1 to 100"), DELTA, GAMMA,
              Param("update", str, "mean", "mean (MGD-M: the winners' mean direction) or winner (MGD-W: "
                    "one best winner)", lambda u: u in UPDATES, " or ".join(UPDATES)),
              Param("multileaving", str, "team-draft", "multileaving method of w and the candidates",
                    _multileaving, "a multileaving method"),
              LENGTH)
    _scratch = ("U", "lists", "lens", "assign", "prob")
    _rank = staticmethod(_rank)
    _update = staticmethod(_update)

    def _init_state(self, F, n, delta, gamma, update, multileaving, length):
        m = n + 1
        return dict(W=np.zeros((m, F)), U=np.zeros((n, F)),
                    params=np.array([delta, gamma, float(UPDATES.index(update))]),
                    lists=np.full((m, length), -1, np.int64), lens=np.zeros(m, np.int64),
                    assign=np.zeros(length, np.int64), prob=np.zeros((length, m)), credit=np.zeros(m),
                    winners=np.zeros(n, np.int64))

    @property
    def _plugs(self):
        m = get_multileaving(self.param_values["multileaving"])
        return m.multileave, m.credit
