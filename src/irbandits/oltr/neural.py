"""PDGD with a neural ranker (Oosterhuis & de Rijke, CIKM 2018, section 6: PDGD optimises any
differentiable scorer, and they run it on a neural network as well as a linear model).

The scorer is a multilayer perceptron with one hidden layer of sigmoid units and a linear output,
``f(x) = sum_h v_h sigmoid(W_h . x + b_h)``, started from normal weights (standard deviation one over
the layer's inputs, as in the authors' code, drawn from the learner's own generator). Lists are
Plackett-Luce samples of its scores and the step is PDGD's debiased pairwise estimate
(:func:`~irbandits.oltr.pdgd.inferred_pairs`), ``sum_k weight_k (grad f(d_better) - grad f(d_worse))``,
backpropagated through the network. The default learning rate, 0.1, is the authors' for both models.

>>> import numpy as np
>>> learner = PDGDNeural(n_features=2, seed=1, hidden=8)
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
>>> for _ in range(300):                              # a user who clicks document 0 wherever it is
...     shown = learner.rank(X)
...     _ = learner.update([shown.index(0)])
>>> s = learner.scores(X)
>>> bool(s[0] > s[1] and s[0] > s[2])
True
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.oltr.base import LENGTH, OnlineLearner
from irbandits.oltr.pdgd import inferred_pairs, plackett_luce
from irbandits.params import Param
from irbandits.rng import normal


@njit(cache=True, fastmath=True)
def _hidden(x, W, b, out):
    """The hidden layer's sigmoid activations for one document's features ``x``."""
    for h in range(W.shape[0]):
        a = b[h]
        for f in range(W.shape[1]):
            a += W[h, f] * x[f]
        out[h] = 1.0 / (1.0 + math.exp(-a)) if a >= 0 else math.exp(a) / (1.0 + math.exp(a))


@njit(cache=True)
def network_scores(st, X, S):
    """``S[i, 0]``: the network's score of document ``i`` (the scorer offline evaluation calls)."""
    W, b, v = st[0], st[1], st[2]
    act = np.empty(W.shape[0])
    for i in range(X.shape[0]):
        _hidden(X[i], W, b, act)
        s = 0.0
        for h in range(act.shape[0]):
            s += v[h] * act[h]
        S[i, 0] = s


@njit(cache=True)
def _rank(st, rng, X, shown, plug1, plug2):
    W, b, v, params, sc, lrest = st
    S = np.empty((X.shape[0], 1))
    network_scores(st, X, S)
    return plackett_luce(S[:, 0], rng, shown, sc, lrest)


@njit(cache=True)
def _update(st, rng, X, shown, n, clicks, plug1, plug2):
    W, b, v, params, sc, lrest = st
    better, worse, weight = np.empty(n * n, np.int64), np.empty(n * n, np.int64), np.empty(n * n)
    pairs = inferred_pairs(n, clicks, sc, lrest, better, worse, weight)
    if pairs == 0:
        return
    coef = np.zeros(n)   # the estimate is sum_p coef[p] grad f(shown[p])
    for k in range(pairs):
        coef[better[k]] += weight[k]
        coef[worse[k]] -= weight[k]
    H, F = W.shape
    gW, gb, gv, act = np.zeros((H, F)), np.zeros(H), np.zeros(H), np.empty(H)
    for p in range(n):
        if coef[p] == 0.0:
            continue
        x = X[shown[p]]
        _hidden(x, W, b, act)
        for h in range(H):
            gv[h] += coef[p] * act[h]
            delta = coef[p] * v[h] * act[h] * (1.0 - act[h])
            gb[h] += delta
            for f in range(F):
                gW[h, f] += delta * x[f]
    rate = params[0]
    for h in range(H):
        v[h] += rate * gv[h]
        b[h] += rate * gb[h]
        for f in range(F):
            W[h, f] += rate * gW[h, f]


@njit(cache=True)
def _initialise(W, b, v, rng):
    F, H = W.shape[1], W.shape[0]
    for h in range(H):
        for f in range(F):
            W[h, f] = normal(rng) / F
        b[h] = normal(rng) / F
        v[h] = normal(rng) / H


class PDGDNeural(OnlineLearner):
    """PDGD on a neural ranker: one hidden layer of sigmoid units, debiased pairwise gradient."""

    name = "PDGD-NN"
    description = "PDGD on a neural ranker (one hidden layer of sigmoid units): Plackett-Luce sampled lists, " \
                  "debiased pairwise gradient, backpropagated"
    reference = "Oosterhuis & de Rijke CIKM 2018, section 6"
    params = (Param("hidden", int, 64, "units of the hidden layer", lambda h: 1 <= h <= 1024, "1 to 1024"),
              Param("learning_rate", float, 0.1, "step size of the gradient ascent", lambda a: a > 0, "> 0"),
              LENGTH)
    linear = False
    _scratch = ("sc", "lrest")
    _rank = staticmethod(_rank)
    _update = staticmethod(_update)
    _score = staticmethod(network_scores)
    _plugs = (0, 0)   # no comparison method: the kernels take no plugs, and are cached

    def __init__(self, n_features: int, seed=0, **params):
        super().__init__(n_features, seed, **params)
        W, b, v = self._st[:3]
        _initialise(W, b, v, self._rng)

    def _init_state(self, F, hidden, learning_rate, length):
        return dict(W=np.zeros((hidden, F)), b=np.zeros(hidden), v=np.zeros(hidden),
                    params=np.array([learning_rate]), sc=np.zeros(length), lrest=np.zeros(length))

    @property
    def weights(self) -> np.ndarray:
        """A copy of the network's parameters in one vector: the hidden layer's weights (a row of
        ``n_features`` per unit), its biases, the output weights."""
        return np.concatenate([a.ravel() for a in self._st[:3]])
