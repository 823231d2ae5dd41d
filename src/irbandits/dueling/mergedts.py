"""MergeDTS: Double Thompson Sampling inside small batches of arms that merge as arms are eliminated.

MergeDTS paper (seed 001) Algorithms 1-3 (Li, Markov, de Rijke & Zoghi, TOIS 2020). At step ``t``
the algorithm works on batch ``m = t mod b_s`` (:mod:`irbandits.dueling.batches`, the same
machinery as mergeRUCB except ``b_1 = ceil(K / M)``): it prunes every arm some batch-mate beats
with confidence (``u < 0.5``, ``u_ij = w_ij / n_ij + sqrt(alpha ln(t + C) / n_ij)``), merges a
batch left with one arm into the next, and then

- Phase I (SampleTournament): samples ``theta_ij ~ Beta(w_ij + 1, w_ji + 1)`` for the pairs of
  the batch and takes ``c`` = the arm beating the most batch-mates by ``theta > 0.5`` (ties at
  random);
- Phase II (RelativeTournament): samples ``phi_j ~ Beta(w_jc + 1, w_cj + 1)`` for the other
  members, sets ``phi_c = 1`` and takes ``d = argmin phi`` (ties at random);
- Phase IV: repartitions when at most ``K / 2^s`` arms survive. The last arm duels itself. From then on
  the choices never change: ``_absorbed`` tells the simulation to finish the run in closed form.
  mergeRUCB's extra stage end for a stalled stage (:func:`~irbandits.dueling.batches.stalled`) is
  not used: a one-arm batch joins the next batch on its own turn, so no stage waits on a lone arm.

Phase I only uses the indicators ``theta_ij > 0.5``, which are Bernoulli with success probability
``q_ij = P(Beta(w_ij + 1, w_ji + 1) > 0.5)`` (:mod:`irbandits.dueling.thompson`). The state keeps
``q`` for every pair ``i < j`` (updated only for the pair just played) and Phase I draws one
uniform per pair of the batch, in batch order: "the lower-numbered arm of the pair wins" is
``uniform < q``. This has exactly the distribution of the listing's Beta draws.

``C`` defaults to ``C(epsilon)`` with ``epsilon = 1 / T`` (line 1 of Algorithm 1), T the
``horizon`` the object is given. Without a horizon, pass ``epsilon`` or ``C``; otherwise the
constructor raises :class:`~irbandits.errors.IrbanditsError` (the listing has no default). The
"tuned" setting (section 5.6) is ``alpha = 0.8^6, M = 16, C = 4,000,000``.

Recommendation: the remaining arm (Algorithm 1, line 10); before one arm is left, the surviving
arm with the most empirical wins (``w_ij > w_ji``) over the other survivors, then over all arms,
then the lowest index (:func:`~irbandits.dueling.batches.surviving_winner`).

>>> from irbandits.problems import get_problem
>>> from irbandits.simulate import run_one
>>> P = get_problem("arithmetic")
>>> int(run_one(MergeDTS(P.K, seed=1, horizon=50_000), P, horizon=50_000, seed=1).recommended[-1])
0
>>> MergeDTS(P.K)
Traceback (most recent call last):
...
irbandits.errors.IrbanditsError: MergeDTS: epsilon = 1/T needs the horizon T; give horizon=, epsilon= or C=
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.dueling import batches as bt
from irbandits.dueling.base import DuelingAlgorithm, c_of_delta
from irbandits.dueling.batches import kernel
from irbandits.dueling.bounds import pick, record
from irbandits.dueling.thompson import beta_above_half
from irbandits.errors import IrbanditsError
from irbandits.params import Param
from irbandits.rng import beta, uniform


@njit(cache=True, _nrt=False, inline="always")  # inlined: each step calls it twice
def pick_tied(vals, best, arms, s0, n, ties, rng):
    """A uniformly random one of the batch's arms ``arms[s0 + p]`` (p < n) with ``vals[p] == best``."""
    k = 0
    for p in range(n):
        if vals[p] == best:
            ties[k] = arms[s0 + p]
            k += 1
    return pick(ties, k, rng)


@kernel
def sample_tournament(q, arms, s0, n, kappa, ties, rng):
    """Phase I: the Thompson-sampled Copeland winner of ``arms[s0:s0+n]`` (one uniform per pair)."""
    for a in range(n):
        kappa[a] = 0
    for a in range(n):
        i = arms[s0 + a]
        for b in range(a + 1, n):
            j = arms[s0 + b]
            u = uniform(rng)
            low_wins = u < q[min(i, j), max(i, j)]  # "the lower-numbered arm wins"
            i_wins = np.int64(low_wins == (i < j))  # no branch: the outcome is unpredictable
            kappa[a] += i_wins
            kappa[b] += 1 - i_wins
    best = -1
    for a in range(n):
        if kappa[a] > best:
            best = kappa[a]
    return pick_tied(kappa, best, arms, s0, n, ties, rng)


@kernel
def relative_tournament(W, arms, s0, n, c, vals, ties, rng):
    """Phase II: argmin over the batch of phi_j ~ Beta(w_jc + 1, w_cj + 1), phi_c = 1."""
    best = np.inf
    for p in range(n):
        j = arms[s0 + p]
        if j == c:
            vals[p] = 1.0
        else:
            vals[p] = beta(rng, W[j, c] + 1.0, W[c, j] + 1.0)
        if vals[p] < best:
            best = vals[p]
    return pick_tied(vals, best, arms, s0, n, ties, rng)


@kernel
def _select(st, rng):
    W, t, params, arms, bstart, where, info, thr, rowmax, work, q, kappa, vals, ties = st
    step = t[0] + 1
    m = bt.current_batch(step, params[1], thr, rowmax, arms, bstart, where, info)
    s0, n = bstart[m], bstart[m + 1] - bstart[m]
    if n == 1:
        return arms[s0], arms[s0]
    c = sample_tournament(q, arms, s0, n, kappa, ties, rng)
    d = relative_tournament(W, arms, s0, n, c, vals, ties, rng)
    return c, d


@njit(_nrt=False)  # calls SciPy's betainc through a function pointer: cannot be cached on disk
def _update(st, rng, c, d, c_won):
    W, t, params, arms, bstart, where, info, thr, rowmax, work, q, kappa, vals, ties = st
    record(W, c, d, c_won)
    if c != d:
        bt.after_duel(thr, rowmax, arms, bstart, where, info, W, c, d, params[0])
        lo, hi = min(c, d), max(c, d)
        q[lo, hi] = beta_above_half(W[lo, hi], W[hi, lo])
    t[0] += 1
    bt.end_of_step(thr, rowmax, arms, bstart, where, info, work, True)  # merge_single: no stall rule


class MergeDTS(DuelingAlgorithm):
    """MergeDTS: double Thompson sampling inside merging batches."""

    name = "MergeDTS"
    description = "Double Thompson Sampling within small batches that merge as arms are eliminated"
    reference = "Li, Markov, de Rijke & Zoghi, TOIS 2020; MergeDTS paper (seed 001) Algorithms 1-3"
    params = (
        Param("alpha", float, 1.01, "exploration; C(epsilon) needs > 0.5", lambda a: a > 0, "> 0"),
        Param("M", int, 4, "initial batch size", lambda m: m >= 2, ">= 2"),
        Param("epsilon", float, None, "probability of failure, sets C(epsilon); default 1/horizon",
              lambda e: 0 < e < 1, "in (0, 1)"),
        Param("C", float, None, "added to t in ln(t + C); default C(epsilon)", lambda c: c >= 0, ">= 0"),
    )
    settings = {"tuned": {"alpha": 0.8**6, "M": 16, "C": 4_000_000}}

    _select = staticmethod(_select)
    _update = staticmethod(_update)
    _recommend = staticmethod(bt.recommend)
    _absorbed = staticmethod(bt.absorbed)

    def _init_state(self, K, alpha, M, epsilon, C):
        if C is None:
            if epsilon is None:
                if self.horizon is None:
                    raise IrbanditsError(
                        f"{self.name}: epsilon = 1/T needs the horizon T; give horizon=, epsilon= or C="
                    )
                epsilon = 1.0 / max(self.horizon, 2)
            C = c_of_delta(alpha, K, epsilon)
        arms, bstart, where, info, thr, rowmax, work = bt.new_batches(K, M, ceil=True)
        return dict(
            W=np.zeros((K, K), np.int64),
            t=np.zeros(1, np.int64),
            params=np.array([alpha, float(C)]),
            arms=arms,
            bstart=bstart,
            where=where,
            info=info,
            thr=thr,
            rowmax=rowmax,
            work=work,
            q=np.full((K, K), 0.5),
            kappa=np.zeros(K, np.int64),
            vals=np.zeros(K),
            ties=np.zeros(K, np.int64),
        )
