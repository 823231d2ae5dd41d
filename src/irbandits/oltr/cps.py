"""DBGD with candidate preselection (Hofmann, Schuth, Whiteson & de Rijke, WSDM 2013, "Reusing
historical interaction data for faster online learning to rank for IR", CPS).

DBGD, but the candidate it interleaves with the current ranker is the best of ``candidates`` random
candidates ``w + delta u_j``, picked with the ``history`` most recent impressions before any user sees
it: a tournament draws two remaining candidates, estimates their probabilistic-interleaving outcome
on the logged lists and clicks, and drops the loser, until one is left. The estimate is the paper's
PI-MA-IS: for each logged list ``l`` the outcome marginalised over the assignments
(:func:`~irbandits.clicks.interleaving.marginalised_credit`), weighted by ``P(l | c1, c2) / P(l | the
logged pair)`` (importance sampling), summed over the history.

The live comparison is probabilistic interleaving (:func:`~irbandits.clicks.interleaving.probabilistic`)
of the two rankers' *full* rankings of the query's documents (ties at random), so that every list
has a positive probability under any pair of rankers and the importance weights are defined; a
logged list's probability under a pair comes from the ranks its documents have in their rankings.
The defaults (10 candidates, a history of 10 impressions) are this implementation's choice, not
taken from the paper. Each impression scores ``candidates x history`` logged queries: much slower
than DBGD per impression, for fewer impressions to learn.

>>> import numpy as np
>>> learner = CPS(n_features=2, seed=1, candidates=4, history=5)
>>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
>>> for _ in range(100):                              # a user who clicks document 0 wherever it is
...     shown = learner.rank(X)
...     _ = learner.update([shown.index(0)])
>>> bool(learner.weights[0] > learner.weights[1])
True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.clicks.interleaving import marginalised_credit, probabilistic, rank_weight
from irbandits.oltr.base import DELTA, GAMMA, LENGTH, OnlineLearner
from irbandits.oltr.linear import scores, unit_direction
from irbandits.params import Param
from irbandits.rng import randint, shuffle


@njit(cache=True)
def total_weight(n):
    """Sum of the probabilistic-interleaving rank weights of a full ranking of ``n`` documents."""
    w = 0.0
    for i in range(n):
        w += rank_weight(i)
    return w


@njit(cache=True)
def full_ranking(s, rng, out):
    """All documents by descending score ``s`` into ``out``, ties in a uniformly random order."""
    n = s.shape[0]
    perm = np.arange(n)
    shuffle(rng, perm)
    order = np.argsort(-s[perm], kind="mergesort")
    for i in range(n):
        out[i] = perm[order[i]]


@njit(cache=True)
def list_probability(ra, rb, total, k, prob):
    """``P(list)`` under probabilistic interleaving of two full rankings whose rank weights sum to
    ``total`` (:func:`total_weight`) and in which the list's ``k`` documents have 0-based ranks ``ra``
    and ``rb``; writes each slot's ``P_A / (P_A + P_B)`` (the marginalised credit's input) to ``prob``."""
    wa = wb = total
    p = 1.0
    for s in range(k):
        pa, pb = rank_weight(ra[s]) / wa, rank_weight(rb[s]) / wb
        p *= 0.5 * (pa + pb)
        prob[s] = pa / (pa + pb)
        wa -= rank_weight(ra[s])
        wb -= rank_weight(rb[s])
    return p


@njit(cache=True)
def shown_ranks(S, shown, k, out):
    """``out[j, s]``: the 0-based rank of document ``shown[s]`` (``s < k``) in ranker ``j``'s full
    ranking (column ``j`` of ``S``, ties by document index). One pass over the documents: each adds
    one to the count of how many of the shown documents' scores it exceeds (a tie is settled apart)."""
    C = S.shape[1]
    t = np.empty((C, k))        # ranker j's scores of the shown documents, ascending
    order = np.empty((C, k), np.int64)
    above = np.zeros((C, k + 1), np.int64)  # above[j, c]: documents exceeding exactly the c lowest
    col = np.empty(k)
    for j in range(C):
        for s in range(k):
            col[s] = S[shown[s], j]
        order[j] = np.argsort(col, kind="mergesort")
        for s in range(k):
            t[j, s] = col[order[j, s]]
            out[j, s] = 0
    for i in range(S.shape[0]):
        for j in range(C):
            v = S[i, j]
            c = 0
            for s in range(k):
                c += 1 if v > t[j, s] else 0
            above[j, c] += 1
            while c < k and v == t[j, c]:   # a tie: i ranks above the shown document if its index is lower
                if i < shown[order[j, c]]:
                    out[j, order[j, c]] += 1
                c += 1
    for j in range(C):
        n_above = 0
        for c in range(k - 1, -1, -1):
            n_above += above[j, c + 1]
            out[j, order[j, c]] += n_above


@njit(cache=True)
def preselect(Wc, hist_X, hist_n, hist_shown, hist_len, hist_clicks, hist_p, count, rng):
    """The index of the candidate (row of ``Wc``) that wins a knock-out tournament of PI-MA-IS
    comparisons on the ``count`` logged impressions."""
    C, H, L = Wc.shape[0], count, hist_shown.shape[1]
    ranks = np.zeros((H, C, L), np.int64)
    total = np.empty(H)
    for h in range(H):
        n = hist_n[h]
        total[h] = total_weight(n)
        S = np.empty((n, C))
        scores(hist_X[h, :n], Wc, S)
        shown_ranks(S, hist_shown[h], hist_len[h], ranks[h])
    alive = np.arange(C)
    left = C
    prob, assign = np.empty(L), np.zeros(L, np.int64)
    while left > 1:
        x, y = randint(rng, left), randint(rng, left - 1)
        if y >= x:
            y += 1
        c1, c2 = alive[x], alive[y]
        o = 0.0
        for h in range(H):
            k = hist_len[h]
            p = list_probability(ranks[h, c1], ranks[h, c2], total[h], k, prob)
            o += p / hist_p[h] * marginalised_credit(hist_shown[h], k, hist_shown[h], k, hist_shown[h], k, assign,
                                                     prob, hist_clicks[h])
        loser = y if o > 0 or (o == 0 and randint(rng, 2) == 1) else x
        alive[loser] = alive[left - 1]
        left -= 1
    return alive[0]


@njit(cache=True)
def _rank(st, rng, X, shown, plug1, plug2):
    (W, U, Wc, params, full, pos, assign, prob, chosen,
     hist_X, hist_n, hist_shown, hist_len, hist_clicks, hist_p, ring) = st
    C, F, n = U.shape[0], U.shape[1], X.shape[0]
    if n > full.shape[1]:
        raise ValueError("DBGD-CPS: a query with more documents than the state has room for (call _prepare)")
    for j in range(C):
        unit_direction(rng, U[j])
        for f in range(F):
            Wc[j, f] = W[0, f] + params[0] * U[j, f]
    chosen[0] = preselect(Wc, hist_X, hist_n, hist_shown, hist_len, hist_clicks, hist_p, ring[1], rng) \
        if ring[1] > 0 else 0
    W[1] = Wc[chosen[0]]
    S = np.empty((n, 2))
    scores(X, W, S)
    full_ranking(S[:, 0], rng, full[0, :n])
    full_ranking(S[:, 1], rng, full[1, :n])
    k = probabilistic(full[0, :n], n, full[1, :n], n, rng, shown, assign, prob)
    for r in range(2):
        for i in range(n):
            pos[r, full[r, i]] = i
    return k


@njit(cache=True)
def _update(st, rng, X, shown, n, clicks, plug1, plug2):
    (W, U, Wc, params, full, pos, assign, prob, chosen,
     hist_X, hist_n, hist_shown, hist_len, hist_clicks, hist_p, ring) = st
    N = X.shape[0]
    if marginalised_credit(full[0, :N], N, full[1, :N], N, shown, n, assign, prob, clicks) < 0:
        for f in range(W.shape[1]):
            W[0, f] += params[1] * U[chosen[0], f]
    h = ring[0]   # log the impression: its documents, list, probability under the pair shown, clicks
    hist_X[h, :N] = X
    hist_n[h], hist_len[h] = N, n
    hist_shown[h, :n] = shown[:n]
    ra, rb = np.empty(n, np.int64), np.empty(n, np.int64)
    for s in range(n):
        ra[s], rb[s] = pos[0, shown[s]], pos[1, shown[s]]
    hist_p[h] = list_probability(ra, rb, total_weight(N), n, np.empty(n))
    hist_clicks[h, :] = False
    hist_clicks[h, :n] = clicks[:n]
    ring[0] = (h + 1) % hist_n.shape[0]
    ring[1] = min(ring[1] + 1, hist_n.shape[0])


class CPS(OnlineLearner):
    """DBGD whose candidate is preselected from several by comparisons on logged interactions."""

    name = "DBGD-CPS"
    description = "DBGD with candidate preselection: the best of several candidates on logged clicks (PI-MA-IS)"
    reference = "Hofmann, Schuth, Whiteson & de Rijke WSDM 2013"
    params = (Param("candidates", int, 10, "candidates per impression, one kept by the tournament",
                    lambda n: 1 <= n <= 100, "1 to 100"),
              Param("history", int, 10, "logged impressions the tournament uses", lambda n: 1 <= n <= 100,
                    "1 to 100"),
              DELTA, GAMMA, LENGTH)
    _scratch = ("U", "chosen", "full", "pos", "assign", "prob")
    _rank = staticmethod(_rank)
    _update = staticmethod(_update)

    def _init_state(self, F, candidates, history, delta, gamma, length, documents=1):
        return dict(W=np.zeros((2, F)), U=np.zeros((candidates, F)), Wc=np.zeros((candidates, F)),
                    params=np.array([delta, gamma]), full=np.zeros((2, documents), np.int64),
                    pos=np.zeros((2, documents), np.int64), assign=np.zeros(length, np.int64),
                    prob=np.zeros(length), chosen=np.zeros(1, np.int64),
                    hist_X=np.zeros((history, documents, F)), hist_n=np.zeros(history, np.int64),
                    hist_shown=np.zeros((history, length), np.int64), hist_len=np.zeros(history, np.int64),
                    hist_clicks=np.zeros((history, length), np.bool_), hist_p=np.ones(history),
                    ring=np.zeros(2, np.int64))

    def _grow(self, documents: int) -> None:
        """Room for queries of ``documents`` documents (the logged queries are kept)."""
        old = dict(zip(self._names, self._st))
        new = self._init_state(self.n_features, **self.param_values, documents=documents)
        for name, arr in new.items():
            region = tuple(slice(0, s) for s in old[name].shape)
            arr[region] = old[name]
        self._st = tuple(new.values())

    _plugs = (0, 0)   # its comparison method is fixed: the kernels call it directly, and are cached
