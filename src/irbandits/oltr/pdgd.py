"""Pairwise Differentiable Gradient Descent (Oosterhuis & de Rijke, CIKM 2018, Algorithm 1).

The shown list is sampled from the Plackett-Luce model of the linear scores over all of the query's
documents, ``P(d | D) = exp(f(d)) / sum_{d' in D} exp(f(d'))`` position by position without
replacement. From the clicks it infers that a clicked document is preferred to every unclicked one
above the last click and to the one right below it (section 4.1), and steps along

    sum over inferred d_k > d_l of  rho(d_k, d_l, R) * grad P(d_k > d_l),   P(d_k > d_l) = sigmoid(f(d_k) - f(d_l)),

where ``rho = P(R*) / (P(R) + P(R*))`` and ``R*`` is the list with d_k and d_l swapped (section 4.2,
equation 8): the debiasing that makes the expected step a sum of pairwise preference gradients whose
weight for two equally relevant documents is zero (section 4.3). ``P(R*) / P(R)`` only involves the
positions between the two documents, whose remaining-document sums change by ``e^{f(d_lo)} - e^{f(d_hi)}``.
The learning rate defaults to 0.1 and the model starts from w = 0.

>>> import numpy as np
>>> learner = PDGD(n_features=2, seed=1)
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
>>> for _ in range(200):                              # a user who clicks document 0 wherever it is
...     shown = learner.rank(X)
...     _ = learner.update([shown.index(0)])
>>> bool(learner.weights[0] > learner.weights[1])
True
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.oltr.base import LENGTH, OnlineLearner
from irbandits.oltr.linear import scores
from irbandits.params import Param
from irbandits.rng import uniform


@njit(cache=True)
def plackett_luce(s, rng, shown, sc, lrest):
    """Sample ``len(shown)`` documents (or all) from the Plackett-Luce model of scores ``s``; writes
    their indices to ``shown``, their scores to ``sc`` and, per position p, ``lrest[p]`` = log of the
    sum of ``exp(score)`` over the documents not placed before p. Returns the list length."""
    n, k = s.shape[0], min(shown.shape[0], s.shape[0])
    shift = s.max()
    e = np.empty(n)
    for i in range(n):
        e[i] = math.exp(s[i] - shift)
    for p in range(k):
        total = 0.0
        for i in range(n):
            if e[i] > 0.0:
                total += e[i]
        if total < 1e-200:   # the remaining documents' weights underflowed: rescale them
            shift = -np.inf
            for i in range(n):
                if e[i] >= 0.0 and s[i] > shift:
                    shift = s[i]
            total = 0.0
            for i in range(n):
                if e[i] >= 0.0:
                    e[i] = math.exp(s[i] - shift)
                    total += e[i]
        lrest[p] = shift + math.log(total)
        target = uniform(rng) * total
        pick = -1
        for i in range(n):
            if e[i] >= 0.0:   # not placed yet
                pick = i
                target -= e[i]
                if target < 0.0:
                    break
        shown[p], sc[p] = pick, s[pick]
        e[pick] = -1.0   # placed: never drawn again, and never rescaled
    return k


@njit(cache=True)
def swap_weight(sc, lrest, lo, hi):
    """``rho = P(R*) / (P(R) + P(R*))`` for the documents at positions ``lo < hi`` swapped."""
    log_ratio = 0.0   # log P(R*) / P(R)
    for p in range(lo + 1, hi + 1):
        log_ratio -= math.log(1.0 + math.exp(sc[lo] - lrest[p]) - math.exp(sc[hi] - lrest[p]))
    return 1.0 / (1.0 + math.exp(-log_ratio))


@njit(cache=True)
def inferred_pairs(n, clicks, sc, lrest, better, worse, weight):
    """The preferences PDGD infers from the clicks on a list and the weight of each in its estimate:
    pair ``k`` is position ``better[k]`` over ``worse[k]`` with ``weight[k]`` = ``rho *
    sigmoid'(f(d_better) - f(d_worse))``, so the estimate is ``sum_k weight[k] * (grad f(d_better[k]) -
    grad f(d_worse[k]))`` for any differentiable scorer ``f``. The arrays hold ``n * n``; returns the
    number of pairs."""
    last = -1
    for i in range(n):
        if clicks[i]:
            last = i
    pairs = 0
    for i in range(last + 1):
        if not clicks[i]:
            continue
        for j in range(min(last + 2, n)):
            if clicks[j]:
                continue
            rho = swap_weight(sc, lrest, min(i, j), max(i, j))
            z = sc[i] - sc[j]
            sig = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
            better[pairs], worse[pairs], weight[pairs] = i, j, rho * sig * (1.0 - sig)
            pairs += 1
    return pairs


@njit(cache=True)
def pairwise_gradient(X, shown, n, clicks, sc, lrest, grad):
    """PDGD's gradient estimate for a linear ranker (``grad f(d) = x_d``): writes it to ``grad``;
    returns the number of inferred preference pairs."""
    better, worse, weight = np.empty(n * n, np.int64), np.empty(n * n, np.int64), np.empty(n * n)
    pairs = inferred_pairs(n, clicks, sc, lrest, better, worse, weight)
    grad[:] = 0.0
    for k in range(pairs):
        di, dj, c = shown[better[k]], shown[worse[k]], weight[k]
        for f in range(X.shape[1]):
            grad[f] += c * (X[di, f] - X[dj, f])
    return pairs


@njit(cache=True)
def _rank(st, rng, X, shown, plug1, plug2):
    W, params, sc, lrest, grad = st
    S = np.empty((X.shape[0], 1))
    scores(X, W, S)
    return plackett_luce(S[:, 0], rng, shown, sc, lrest)


@njit(cache=True)
def _update(st, rng, X, shown, n, clicks, plug1, plug2):
    W, params, sc, lrest, grad = st
    if pairwise_gradient(X, shown, n, clicks, sc, lrest, grad):
        for f in range(grad.shape[0]):
            W[0, f] += params[0] * grad[f]


class PDGD(OnlineLearner):
    """Pairwise Differentiable Gradient Descent: Plackett-Luce lists, debiased pairwise gradient."""

    name = "PDGD"
    description = "Pairwise Differentiable Gradient Descent: Plackett-Luce sampled lists, debiased pairwise gradient"
    reference = "Oosterhuis & de Rijke CIKM 2018, Algorithm 1"
    params = (Param("learning_rate", float, 0.1, "step size of the gradient ascent", lambda a: a > 0, "> 0"),
              LENGTH)
    _scratch = ("sc", "lrest")
    _rank = staticmethod(_rank)
    _update = staticmethod(_update)

    def _init_state(self, F, learning_rate, length):
        return dict(W=np.zeros((1, F)), params=np.array([learning_rate]), sc=np.zeros(length),
                    lrest=np.zeros(length), grad=np.zeros(F))

    _plugs = (0, 0)   # no comparison method: the kernels take no plugs, and are cached
