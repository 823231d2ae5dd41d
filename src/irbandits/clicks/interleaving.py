"""Interleaved comparisons of two rankers: team-draft, balanced, probabilistic interleaving and others.

Each method is a pair of compiled kernels with one signature, so the simulation code takes any of
them as an argument::

    interleave(a, na, b, nb, rng, shown, assign, prob) -> n     # the list shown to the user
    credit(a, na, b, nb, shown, n, assign, prob, clicks) -> o   # o in [-1, 1]; > 0: A wins

- ``team-draft`` (Radlinski et al. 2008; slides ``../shared/seeds/004``, Algorithm 2): the team
  with fewer members (a coin on a tie) adds its best result not yet shown; clicks count per team.
- ``balanced`` (Joachims 2003): a coin picks who starts; A and B alternate through their own
  lists, skipping results already shown, until one list runs out; with d the lowest clicked result and k = min(rank_A(d), rank_B(d)), the ranker with more
  clicks in its top k wins.
- ``probabilistic`` (Hofmann et al. 2011): each ranker is a softmax over its remaining results,
  P(d) proportional to 1 / rank(d)^tau, tau = 3; a fair coin picks the ranker of every slot. Credit
  by the actual assignment. ``probabilistic-marginalised`` shows the same list but credits the
  expectation over every assignment that could have produced it: given the list the slots are
  independent, slot s came from A with ``prob[s] = P_A(d_s) / (P_A(d_s) + P_B(d_s))``, and the
  outcome is P(A has more clicked slots) - P(B has more), from the Poisson-binomial distribution.
- ``sosm``, sample-only scored multileaving (Brost, Cox, Seldin & Lioma, "An improved multileaving
  algorithm for online ranker evaluation", SIGIR 2016; not among the seeds, so implemented after the
  code the MergeDTS paper ran, seed 001, section 6.6, footnote 6: github.com/HarrieO/
  PairwisePreferenceMultileave, ``multileaving/SampleOnlyScoredMultileave.py``, its
  ``make_multileaving`` and ``preferences_of_list``) of two rankers: the rankers' common prefix,
  then team-draft rounds (:func:`sosm_fill`); a click on d scores for each ranker the weight
  1 / (k + 1)^3 of d's rank k in the ranker's ranking of the *shown* results only
  (:func:`sosm_weights`), the larger score wins.
  Under clicks with probability 1/2 at every slot it favours neither list, for any pair; at other
  click rates it can (the weights of a ranker add up to the same sum, but the sign of a difference
  is not symmetric then).
- ``document-constraints`` (He, Zhai & Li, "Evaluation of methods for relative comparison of
  retrieval systems based on clickthroughs", CIKM 2009; the Zoghi thesis, seed 002, chapter 3, cites
  it beside balanced and team-draft interleaving): the balanced list; a clicked result is preferred to
  every unclicked result above it and to the first unclicked result below it, a list violates such a
  constraint when it holds the unclicked result and ranks it higher or leaves the clicked one out,
  and the list with fewer violations wins (:func:`constraint_credit`; Lerot's
  ``DocumentConstraints`` with its default ``--constraints 3``). Its credit is blind to results a
  list does not hold, so a list that holds fewer of the shown results is favoured under random
  clicks; with the lists' roles drawn at random neither side is (both measured in
  ``tests/test_sosm_document_constraints.py``).

Lists are at most 10 long (``CUTOFF``). For a live system, :func:`interleave` returns an
:class:`Interleaved` whose ``shown`` list goes to the user and whose ``credit`` takes the clicks.

>>> il = interleave("team-draft", [1, 2, 3, 4], [3, 1, 5, 6], seed=4)
>>> il.shown.tolist(), il.assign.tolist()        # team 0 is A, team 1 is B
([1, 3, 5, 2, 6], [0, 1, 1, 0, 1])
>>> il.credit([2])                                # a click on B's document 5: B wins
-1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from numba import njit, types
from numba.extending import overload

from irbandits.clicks import optimized, preference
from irbandits.clicks.positions import position as _position
from irbandits.errors import IrbanditsError
from irbandits.params import Registry
from irbandits.rng import new_rng, randint, shuffle, uniform

CUTOFF = 10  # the default list length
TAU = 3.0


_WEIGHTS = 1.0 / np.arange(1.0, 65.0) ** 3  # rank_weight of ranks 0-63, looked up (a division costs more)


@njit(cache=True)
def rank_weight(i):
    """1 / (i + 1) ** TAU for 0-based rank i (exact: the cube of a small integer is exact)."""
    if i < 64:
        return _WEIGHTS[i]
    r = i + 1.0
    return 1.0 / (r * r * r)


# ----- low level ------------------------------------------------------------------------------
@njit(cache=True)
def _sign(v):
    return 1.0 if v > 0 else (-1.0 if v < 0 else 0.0)


@njit(cache=True)
def team_draft(a, na, b, nb, rng, shown, assign, prob):
    n, ia, ib, size_a, size_b, L = 0, 0, 0, 0, 0, shown.shape[0]
    while n < L:
        while ia < na and _position(shown, n, a[ia]) >= 0:
            ia += 1
        while ib < nb and _position(shown, n, b[ib]) >= 0:
            ib += 1
        if ia == na or ib == nb:  # the slides' loop condition: both still have an unshown result
            break
        if size_a < size_b or (size_a == size_b and randint(rng, 2) == 1):
            shown[n], assign[n] = a[ia], 0
            size_a += 1
        else:
            shown[n], assign[n] = b[ib], 1
            size_b += 1
        n += 1
    return n


@njit(cache=True)
def team_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    score = 0
    for i in range(n):
        if clicks[i]:
            score += 1 if assign[i] == 0 else -1
    return _sign(score)


@njit(cache=True)
def balanced(a, na, b, nb, rng, shown, assign, prob):
    a_first = randint(rng, 2) == 1
    n, ka, kb, L = 0, 0, 0, shown.shape[0]
    while n < L and ka < na and kb < nb:
        if ka < kb or (ka == kb and a_first):
            d = a[ka]
            ka += 1
        else:
            d = b[kb]
            kb += 1
        if _position(shown, n, d) < 0:
            shown[n], assign[n] = d, -1
            n += 1
    return n


@njit(cache=True)
def balanced_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    last = -1
    for i in range(n):
        if clicks[i]:
            last = i
    if last < 0:
        return 0.0
    ra, rb = _position(a, na, shown[last]), _position(b, nb, shown[last])
    k = min(ra if ra >= 0 else na + nb, rb if rb >= 0 else na + nb) + 1  # absent: below both lists
    ha, hb = 0, 0
    for i in range(last + 1):
        if clicks[i]:
            pa, pb = _position(a, na, shown[i]), _position(b, nb, shown[i])
            ha += 0 <= pa < k
            hb += 0 <= pb < k
    return _sign(ha - hb)


def _used(used, i):
    """Whether the result at rank i has been shown: ``used`` is a bitmask (lists of at most 64) or
    a boolean array (longer lists)."""


def _mark(used, i):
    """``used`` with rank i marked shown (a new bitmask, or the array marked in place)."""


@overload(_used)
def _used_impl(used, i):
    if isinstance(used, types.Array):
        return lambda used, i: used[i]
    return lambda used, i: (used >> i) & 1 == 1


def _weight(used, i):
    """rank_weight(i); a bare table look-up with a bitmask (every rank is below 64)."""


@overload(_weight)
def _weight_impl(used, i):
    if isinstance(used, types.Array):
        return lambda used, i: rank_weight(i)
    return lambda used, i: _WEIGHTS[i]


@overload(_mark)
def _mark_impl(used, i):
    if isinstance(used, types.Array):
        def mark(used, i):
            used[i] = True
            return used
        return mark
    return lambda used, i: used | (1 << i)


@njit(cache=True)
def probabilistic(a, na, b, nb, rng, shown, assign, prob):
    if na <= 64 and nb <= 64:  # the shown ranks fit a bitmask: no allocation per comparison
        return _probabilistic(a, na, b, nb, rng, shown, assign, prob, 0, 0)
    return _probabilistic(a, na, b, nb, rng, shown, assign, prob, np.zeros(na, np.bool_), np.zeros(nb, np.bool_))


@njit(cache=True, inline="always")  # inlined: a call per comparison shows at length 10
def _probabilistic(a, na, b, nb, rng, shown, assign, prob, used_a, used_b):
    wa, wb = 0.0, 0.0
    for i in range(na):
        wa += _weight(used_a, i)
    for i in range(nb):
        wb += _weight(used_b, i)
    left_a, left_b, n, L = na, nb, 0, shown.shape[0]
    while n < L and (left_a > 0 or left_b > 0):
        from_a = left_b == 0 or (left_a > 0 and randint(rng, 2) == 1)
        x, nx, used, w = (a, na, used_a, wa) if from_a else (b, nb, used_b, wb)
        target = uniform(rng) * w
        pick = -1
        for i in range(nx):
            if not _used(used, i):
                pick = i
                target -= _weight(used, i)
                if target < 0.0:
                    break
        d = x[pick]
        pa, pb = _position(a, na, d), _position(b, nb, d)
        pa_d = _weight(used_a, pa) / wa if pa >= 0 else 0.0  # d is unshown, so unused in both lists
        pb_d = _weight(used_b, pb) / wb if pb >= 0 else 0.0
        shown[n], assign[n], prob[n] = d, 0 if from_a else 1, pa_d / (pa_d + pb_d)
        if pa >= 0:
            used_a = _mark(used_a, pa)
            wa -= _weight(used_a, pa)
            left_a -= 1
        if pb >= 0:
            used_b = _mark(used_b, pb)
            wb -= _weight(used_b, pb)
            left_b -= 1
        n += 1
    return n


@njit(cache=True)
def marginalised_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    dist = np.zeros(n + 1)  # distribution of the number of clicked slots that came from A
    dist[0] = 1.0
    c = 0
    for i in range(n):
        if clicks[i]:
            q = prob[i]
            for k in range(c + 1, 0, -1):
                dist[k] = dist[k] * (1.0 - q) + dist[k - 1] * q
            dist[0] *= 1.0 - q
            c += 1
    o = 0.0
    for k in range(c + 1):
        o += dist[k] * _sign(2 * k - c)
    return o


@njit(cache=True)
def _pair(a, na, b, nb):
    lists = np.full((2, max(na, nb)), -1, np.int64)
    lists[0, :na], lists[1, :nb] = a[:na], b[:nb]
    return lists, np.array([na, nb], np.int64)


@njit
def _optimized(a, na, b, nb, rng, shown, assign, prob, roughly):
    lists, lens = _pair(a, na, b, nb)
    credit = np.empty((shown.shape[0], 2))
    n = optimized.draw(lists, lens, roughly, uniform(rng), shown, credit)
    for i in range(n):
        assign[i], prob[i] = -1, credit[i, 0] - credit[i, 1]
    return n


@njit
def optimized_interleave(a, na, b, nb, rng, shown, assign, prob):
    return _optimized(a, na, b, nb, rng, shown, assign, prob, False)


@njit
def roughly_optimized_interleave(a, na, b, nb, rng, shown, assign, prob):
    return _optimized(a, na, b, nb, rng, shown, assign, prob, True)


@njit(cache=True)
def delta_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    """Sign of the clicked slots' credit differences ``prob[i] = 1/rank_A - 1/rank_B``."""
    s = 0.0
    for i in range(n):
        if clicks[i]:
            s += prob[i]
    return _sign(s) if abs(s) > 1e-12 else 0.0


@njit(cache=True)
def preference_interleave(a, na, b, nb, rng, shown, assign, prob):
    lists, lens = _pair(a, na, b, nb)
    return preference.fill(lists, lens, rng, shown, assign, prob)


@njit(cache=True)
def preference_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    lists, lens = _pair(a, na, b, nb)
    out = np.empty(2)
    preference.scores(lists, lens, shown, n, assign, prob, clicks, out)
    return _sign(out[0] - out[1]) if abs(out[0] - out[1]) > 1e-12 else 0.0


# ----- sample-only scored multileaving (SOSM) --------------------------------------------------
_GRID = 2.0**40  # SOSM's weights are multiples of 1 / _GRID: sums of up to 2^12 of them (each <= 1) are exact


@njit(cache=True)
def sosm_fill(lists, lens, rng, shown, assign):
    """SOSM's list (Brost et al. 2016; ``make_multileaving`` of the implementation the MergeDTS paper
    ran, see the module): the rankers' common prefix first (``assign`` -1),
    then rounds in which the rankers, in a new random order each round, add their best result not
    yet shown (team-draft multileaving); a ranker whose list is used up sits the rounds out.
    Returns the length of the list."""
    m, L = lists.shape[0], shown.shape[0]
    n = 0
    while n < L:
        same = True
        for r in range(m):
            if n >= lens[r] or lists[r, n] != lists[0, n]:
                same = False
                break
        if not same:
            break
        shown[n], assign[n] = lists[0, n], -1
        n += 1
    return team_rounds(lists, lens, rng, shown, assign, n)


@njit(cache=True)
def team_rounds(lists, lens, rng, shown, assign, n):
    """Team-draft multileaving from position ``n`` of ``shown`` on: rounds in which the rankers, in a new
    random order each round, add their best result not yet shown; a ranker whose list is used up sits
    the rounds out. Returns the length of the list."""
    m, L = lists.shape[0], shown.shape[0]
    nxt = np.zeros(m, np.int64)
    order = np.empty(m, np.int64)
    while n < L:
        for r in range(m):
            order[r] = r
        shuffle(rng, order)
        added = False
        for r in order:
            while nxt[r] < lens[r] and _position(shown, n, lists[r, nxt[r]]) >= 0:
                nxt[r] += 1
            if nxt[r] < lens[r] and n < L:
                shown[n], assign[n] = lists[r, nxt[r]], r
                n += 1
                added = True
        if not added:
            break
    return n


@njit(cache=True)
def sosm_weights(x, nx, shown, n, out):
    """``out[i]``: what a click on ``shown[i]`` scores for the ranker with list ``x[:nx]``: the ranker's
    ranking of the sample (the shown results alone) puts it at rank k (0-based) and it scores
    ``rank_weight(k) = 1 / (k + 1)^3`` (``preferences_of_list`` of the implementation the MergeDTS
    paper ran: ``1 / (rank + 1)^tau`` with probabilistic multileaving's tau = 3). Shown results outside the ranker's list rank below its own, in an order it does
    not give: they share the mean weight of the ranks they fill (the expectation over a uniformly
    random order), so every ranker's weights add up to the same sum_k rank_weight(k).

    The weights are rounded to multiples of 2^-40 (:data:`_GRID`): sums of a list's weights are then
    exact, so two rankers whose clicked weights are the same numbers in another order tie exactly."""
    k = 0
    for j in range(nx):
        i = _position(shown, n, x[j])
        if i >= 0:
            out[i] = np.floor(rank_weight(k) * _GRID + 0.5) / _GRID
            k += 1
    if k < n:
        rest = 0.0
        for t in range(k, n):
            rest += rank_weight(t)
        rest = np.floor(rest / (n - k) * _GRID + 0.5) / _GRID
        for i in range(n):
            if _position(x, nx, shown[i]) < 0:
                out[i] = rest


@njit(cache=True)
def sosm_interleave(a, na, b, nb, rng, shown, assign, prob):
    """SOSM of two rankers; ``prob[i]`` is A's weight of slot i minus B's (see :func:`sosm_weights`),
    so :func:`delta_credit` gives the sign of A's score minus B's."""
    lists, lens = _pair(a, na, b, nb)
    n = sosm_fill(lists, lens, rng, shown, assign)
    wb = np.empty(n)
    sosm_weights(a, na, shown, n, prob)
    sosm_weights(b, nb, shown, n, wb)
    for i in range(n):
        prob[i] -= wb[i]
    return n


# ----- document constraints -------------------------------------------------------------------
@njit(cache=True)
def _violates(x, nx, hi, lo):
    """Whether the list ``x[:nx]`` violates "``hi`` (clicked) before ``lo`` (not clicked)": it holds
    ``lo`` and ranks it above ``hi`` or leaves ``hi`` out."""
    p_lo = _position(x, nx, lo)
    if p_lo < 0:
        return False
    p_hi = _position(x, nx, hi)
    return p_hi < 0 or p_lo < p_hi


@njit(cache=True)
def constraint_credit(a, na, b, nb, shown, n, assign, prob, clicks):
    """Document constraints (He, Zhai & Li 2009): every clicked result is preferred to each unclicked
    result above it and to the first unclicked result below it; the list that violates fewer of
    these constraints wins."""
    va, vb = 0, 0
    for hi in range(n):
        if not clicks[hi]:
            continue
        below = hi + 1
        while below < n and clicks[below]:
            below += 1
        for lo in range(min(below + 1, n)):
            if clicks[lo]:
                continue
            va += _violates(a, na, shown[hi], shown[lo])
            vb += _violates(b, nb, shown[hi], shown[lo])
    return _sign(vb - va)


# ----- registry -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Method:
    """An interleaving method: name, one-line description, its two kernels, and whether it credits
    clicks per team (``assign`` holds each slot's team, 0 for A, 1 for B)."""

    name: str
    description: str
    interleave: Callable
    credit: Callable
    teams: bool = False


METHODS = Registry("interleaving method", [
    Method("team-draft", "team-draft interleaving (Radlinski et al. 2008), clicks per team", team_draft, team_credit,
           True),
    Method("balanced", "balanced interleaving (Joachims 2003)", balanced, balanced_credit),
    Method("probabilistic", "probabilistic interleaving (Hofmann et al. 2011), tau = 3, "
           "credit marginalised over assignments", probabilistic, marginalised_credit),
    Method("probabilistic-assignment", "probabilistic interleaving, tau = 3, credit by the actual assignment",
           probabilistic, team_credit, True),
    Method("optimized", "optimized interleaving (Radlinski & Craswell 2013), LP over prefix-constrained lists, "
           "1/rank credit", optimized_interleave, delta_credit),
    Method("roughly-optimized", "roughly optimized interleaving (Manabe et al. 2017): the LP with the "
           "unbiasedness constraint relaxed", roughly_optimized_interleave, delta_credit),
    Method("pairwise-preference", "pairwise-preference interleaving (Oosterhuis & de Rijke 2017) of two rankers",
           preference_interleave, preference_credit),
    Method("sosm", "sample-only scored multileaving (Brost et al. 2016) of two rankers: team-draft list, every "
           "click scored by each ranker's ranking of the shown results", sosm_interleave, delta_credit),
    Method("document-constraints", "document constraints (He, Zhai & Li 2009): balanced list, the list that "
           "violates fewer click-implied constraints wins", balanced, constraint_credit),
])


def get_method(name: str) -> Method:
    """The interleaving method called ``name``, or an error listing the methods."""
    return METHODS.get(name)


def check_length(length) -> int:
    """``length`` as the number of results a list shows (a positive whole number)."""
    try:
        n = int(length)
    except (TypeError, ValueError):
        n = None
    if n is None or n != length or n < 1:
        raise IrbanditsError(f"length (results per list) must be a whole number >= 1, got {length!r}")
    return n


# ----- one comparison at a time -----------------------------------------------------------------
def encode(rankings, names, length: int = CUTOFF) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rankings of any document ids as the kernels' input: int64[m, length] (padded with -1), the
    lengths, and the ids in order of first appearance (kernel document i is ``ids[i]``). A ranking
    longer than ``length`` is cut: only its top ``length`` can be shown."""
    ids = list(dict.fromkeys(d for r in rankings for d in list(r)[:length]))
    index = {d: i for i, d in enumerate(ids)}
    lists, lens = np.full((len(rankings), length), -1, np.int64), np.zeros(len(rankings), np.int64)
    for r, (ranking, name) in enumerate(zip(rankings, names)):
        ranking = list(ranking)
        if len(set(ranking)) != len(ranking):
            raise IrbanditsError(f"{name} must list distinct documents, got {ranking}")
        ranking = ranking[:length]
        lists[r, :len(ranking)] = [index[d] for d in ranking]
        lens[r] = len(ranking)
    return lists, lens, np.asarray(ids)


def clicks_at(clicked_positions, shown: int, out: np.ndarray | None = None) -> np.ndarray:
    """The kernels' click array (``out``, or a new one) for clicks at these 0-based positions of a
    shown list of ``shown`` results."""
    clicks = np.zeros(shown, np.bool_) if out is None else out
    clicks[:] = False
    for p in clicked_positions:
        try:
            i = int(p)
        except (TypeError, ValueError):
            i = -1
        if not 0 <= i < shown:
            raise IrbanditsError(f"clicked position {p!r} is not in the shown list of {shown}")
        clicks[i] = True
    return clicks


@njit(cache=True)
def _count(a, na, b, nb, shown, n, assign, clicks, team, out):
    out[:] = 0
    for i in range(n):
        if clicks[i]:
            if team:
                out[assign[i]] += 1
            else:
                out[0] += _position(a, na, shown[i]) >= 0
                out[1] += _position(b, nb, shown[i]) >= 0


def _entry(kernel, *args) -> Callable:
    """The compiled entry point of ``kernel`` for the types of ``args`` (compiled on them first): a
    call without the dispatcher's type resolution, for arguments of exactly those types."""
    from numba import typeof

    kernel(*args)
    sig = tuple(typeof(a) for a in args)
    return next(r.entry_point for k, r in kernel.overloads.items() if tuple(k) == sig)


@lru_cache(maxsize=None)
def _live(name: str) -> tuple[Callable, Callable]:
    """The :class:`Interleaver`'s two compiled calls for a method (compiled once per process):

    - ``step(a, b, rng, shown, assign, prob, state) -> n`` interleaves the top ``len(shown)`` of
      ``a`` and ``b`` and keeps ``state = [n, na, nb]``;
    - ``score(a, b, shown, assign, prob, state, clicked, k, clicks, counts) -> outcome`` marks the
      positions ``clicked[:k]`` in ``clicks`` (``k < 0``: ``clicks`` is set already), credits them
      and counts the clicks per ranker into ``counts``; NaN when a position is not in the list."""
    method = get_method(name)
    interleave_k, credit_k, team = method.interleave, method.credit, method.teams

    @njit
    def step(a, b, rng, shown, assign, prob, state):
        na, nb = min(len(a), len(shown)), min(len(b), len(shown))
        state[0], state[1], state[2] = interleave_k(a, na, b, nb, rng, shown, assign, prob), na, nb
        return state[0]

    @njit
    def score(a, b, shown, assign, prob, state, clicked, k, clicks, counts):
        n, na, nb = state[0], state[1], state[2]
        if k >= 0:
            clicks[:n] = False
            for i in range(k):
                if not 0 <= clicked[i] < n:
                    return np.nan
                clicks[clicked[i]] = True
        o = credit_k(a, na, b, nb, shown, n, assign, prob, clicks)
        _count(a, na, b, nb, shown, n, assign, clicks, team, counts)
        return o

    x, state, ints = np.arange(2, dtype=np.int64), np.zeros(3, np.int64), np.zeros(2, np.int64)
    shown, assign, prob, clicks = np.empty(2, np.int64), np.empty(2, np.int64), np.empty(2), np.zeros(2, np.bool_)
    return (_entry(step, x, x, new_rng(0), shown, assign, prob, state),
            _entry(score, x, x, shown, assign, prob, state, ints, 0, clicks, ints))


_INT64 = np.dtype(np.int64)


class Interleaver:
    """A reusable interleaver: built once per method and list length, it interleaves two rankings
    and credits clicks with preallocated buffers and one direct call of compiled code each.

    Rankings are document ids: 1-d int64 arrays go to the kernels as they are, without a copy (the
    fast path: do not change them before :meth:`credit`); other integer arrays are converted and
    other ids (strings) encoded first. :meth:`interleave` returns the list to show (a view that the
    next call overwrites); :meth:`credit` returns the outcome (> 0: A won) and the clicks per
    ranker: per team for the team methods (team-draft, probabilistic-assignment), else the clicked
    results in each ranker's list (a result in both counts for both).

    >>> il = Interleaver("team-draft", length=4, seed=4)
    >>> il.interleave(np.array([1, 2, 3, 4, 7]), np.array([3, 1, 5, 6])).tolist()
    [1, 3, 5, 2]
    >>> il.credit([2])                      # a click on B's document 5
    (-1.0, array([0, 1]))
    """

    def __init__(self, method: str, length: int = CUTOFF, seed: int | None = 0, rng: np.ndarray | None = None):
        self.method = get_method(method)
        self.length = L = check_length(length)
        self.rng = new_rng(seed or 0) if rng is None else rng
        self._a = self._b = np.empty(0, np.int64)   # the last rankings (the caller's arrays, not copied)
        self.shown, self.assign, self.prob = np.full(L, -1, np.int64), np.zeros(L, np.int64), np.zeros(L)
        self.clicks, self.counts = np.zeros(L, np.bool_), np.zeros(2, np.int64)
        self._state, self._clicked = np.zeros(3, np.int64), np.zeros(L, np.int64)   # [n, na, nb]; clicked positions
        self.n, self.ids = 0, None
        self._step, self._score = _live(self.method.name)

    def interleave(self, a, b) -> np.ndarray:
        """The list to show for rankings ``a`` and ``b`` (best first; their top ``length`` count)."""
        if (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is _INT64 and b.dtype is _INT64
                and a.ndim == 1 and b.ndim == 1 and a.flags.c_contiguous and b.flags.c_contiguous):
            self.ids = None
        else:
            a, b = self._converted(a, b)
        self._a, self._b = a, b
        self.n = n = self._step(a, b, self.rng, self.shown, self.assign, self.prob, self._state)
        return self.shown[:n] if self.ids is None else self.ids[self.shown[:n]]

    def _converted(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """Rankings other than 1-d int64 arrays as such arrays (``ids`` set when encoded)."""
        if all(isinstance(x, np.ndarray) and x.dtype.kind in "iu" and x.ndim == 1 for x in (a, b)):
            self.ids = None
            return np.ascontiguousarray(a, np.int64), np.ascontiguousarray(b, np.int64)
        lists, lens, self.ids = encode([a, b], ["ranking A", "ranking B"], self.length)
        return lists[0, :lens[0]], lists[1, :lens[1]]

    def credit(self, clicked) -> tuple[float, np.ndarray]:
        """``(outcome, clicks per ranker)`` for the last list: ``clicked`` is the 0-based clicked
        positions, or a boolean array over the shown list."""
        n, k = self.n, -1
        if type(clicked) is np.ndarray and clicked.dtype == np.bool_:
            if len(clicked) != n:
                raise IrbanditsError(f"clicks: {len(clicked)} flags for a shown list of {n}")
            self.clicks[:n] = clicked
        else:
            buf, k = self._clicked, 0
            try:
                for p in clicked:
                    buf[k] = p
                    k += 1
            except (IndexError, OverflowError, TypeError, ValueError):   # repeats, or not positions: say which
                clicks_at(clicked, n, self.clicks[:n])
                k = -1
        o = self._score(self._a, self._b, self.shown, self.assign, self.prob, self._state, self._clicked, k,
                        self.clicks, self.counts)
        if o != o:
            clicks_at(clicked, n)   # raises: a position outside the list
        return o, self.counts

    def result(self) -> "Interleaved":
        """The last list as an :class:`Interleaved` (a copy that outlives the next call)."""
        n, na, nb = self._state.tolist()
        lists = np.full((2, self.length), -1, np.int64)
        lists[0, :na], lists[1, :nb] = self._a[:na], self._b[:nb]
        shown = self.shown[:n].copy()
        return Interleaved(self.method, shown if self.ids is None else self.ids[shown], self.assign[:n].copy(),
                           self.prob[:n].copy(), lists, np.array([na, nb]), shown)


@dataclass
class Interleaved:
    """One interleaved list: show ``shown``; pass the clicked positions to :meth:`credit`.

    ``shown_index`` is ``shown`` as indices of the encoded rankings (what a restart stores)."""

    method: Method
    shown: np.ndarray
    assign: np.ndarray
    prob: np.ndarray
    _lists: np.ndarray
    _lens: np.ndarray
    shown_index: np.ndarray

    def credit(self, clicked_positions) -> float:
        """Outcome in [-1, 1] for clicks at these 0-based positions of ``shown``: > 0 means A won."""
        (a, b), (na, nb) = self._lists, self._lens
        return float(self.method.credit(a, na, b, nb, self.shown_index, len(self.shown_index), self.assign, self.prob,
                                        clicks_at(clicked_positions, len(self.shown_index))))


def interleave(method: str, a, b, seed: int | None = None, rng: np.ndarray | None = None,
               length: int = CUTOFF) -> Interleaved:
    """Interleave rankings ``a`` and ``b`` (document ids of any kind, best first) with ``method``
    into a list of at most ``length`` results (a one-off :class:`Interleaver`)."""
    il = Interleaver(method, length, seed, rng)
    il.interleave(a if isinstance(a, np.ndarray) else list(a), b if isinstance(b, np.ndarray) else list(b))
    return il.result()
