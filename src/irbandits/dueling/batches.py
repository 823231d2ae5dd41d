"""Batches of arms for the merge algorithms (mergeRUCB, MergeDTS): pruning, merging, stages.

Both algorithms (thesis Algorithm 4; MergeDTS paper Algorithm 1) keep the surviving arms in small
disjoint batches, work on batch ``m = t mod b_s`` at step ``t`` and compare arms only inside it.
This module holds that shared machinery as compiled kernels over plain arrays:

``arms`` ``int64[K]``
    the surviving arms batch by batch: batch ``b`` is ``arms[bstart[b]:bstart[b + 1]]``; the
    eliminated arms follow after ``n_alive`` (so ``arms`` stays a permutation of ``0..K-1``).
``bstart`` ``int64[K + 1]``
    where each batch starts (entries past ``nb`` are 0).
``where`` ``int64[K]``
    the batch of each arm, ``-1`` once it is eliminated.
``info`` ``int64[4]``
    ``nb`` (number of batches ``b_s``), ``n_alive``, the stage ``s`` (from 1) and the batch size ``M``.
``work`` ``int64[2K]``
    scratch space for :func:`repartition`.
``thr``, ``rowmax``
    the pruning test. ``u_ij < 0.5`` exactly when ``log(t + C) < thr_ij`` (see
    :func:`irbandits.dueling.bounds.threshold`), and ``rowmax[i]`` is the largest ``thr_ij`` over
    the other members ``j`` of arm ``i``'s batch, so "some batch-mate has u < 0.5 against i" is
    ``rowmax[i] > log(t + C)``: one comparison per arm per step. Only the pair just played changes
    its thresholds; batch changes (rare: at most ``K`` of them) recompute the affected rows.

The rules (``../shared/spec/online.md``, "Decisions on the known ambiguities"):

- *Initial batches*: ``M`` consecutive arms. MergeDTS (Algorithm 1, line 6) uses
  ``b_1 = ceil(K / M)`` batches, the last one holding the remainder; mergeRUCB (Algorithm 4,
  line 2) uses ``b_1 = floor(K / M)``, the last batch holding ``M`` to ``2M - 1`` arms.
- *Pruning* (:func:`prune`): an arm leaves the batch when a batch-mate has ``u < 0.5`` against it.
  Arms are removed one at a time in batch order and every later test uses the batch as it is
  then (an arm only pruned by an arm already removed stays). A batch never empties: of two arms
  ``u_ij + u_ji >= 1``, so at least one survives.
- *Merging* (:func:`merge_into_next`): MergeDTS only (Algorithm 1, lines 14-15: "if b_s > 1 and
  |B_m| = 1 then merge B_m with the next batch"): a batch left with one arm joins the next batch
  (the last batch joins batch 0) while more than one batch exists. Thesis Algorithm 4 (mergeRUCB)
  has no such step, so there a one-arm batch stays until the stage ends and its arm duels itself
  on that batch's turns (``merge_single=False`` in :func:`current_batch`).
- *Stages* (:func:`end_of_step`): when ``n_alive <= K / 2^s`` the surviving arms are repartitioned
  and ``s`` grows by one. Without merging one-arm batches (mergeRUCB) the stage also ends when it
  is :func:`stalled`: some batch is down to one arm and ``K / 2^s`` cannot be reached unless every
  batch that still holds two or more arms sheds some (even with every batch but the one with the
  fewest spare arms pruned to one arm, more than ``K / 2^s`` would survive). Algorithm 4 has no rule
  for this: a lone arm has no pair to compare (lines 8-9 need two), and the thesis's stage-length
  argument (section 6.3: the stage ends once ``2 b_S / 3 + 1`` batches are down to one arm) needs
  ``p >= 4`` and many batches. Otherwise the stage waits on its slowest batch (a near-tied pair can
  take ``1 / Delta^2`` comparisons) while the lone arm, often the winner, duels itself and never
  meets the arms it would eliminate at once: with ``M = 3`` on a 10-arm Bradley-Terry problem, 6 of
  10 runs were still stuck after 10^5 steps (winner alone, a near-tied pair in the other batch,
  3 arms against ``K / 4``). The rule covers every batch being down to one arm (nothing left to
  compare) and every batch but one. With merging a one-arm batch joins the next batch on its turn,
  so MergeDTS never waits on it and does not use the rule.
- *Repartition* (:func:`repartition`) lists the batches largest, smallest, second largest,
  second smallest, ... (pairing the smallest batches with the largest, ties by batch index) and
  cuts that list into ``k = max(1, round(n_alive / M))`` consecutive batches of near-equal size,
  so every batch has between ``0.5 M`` and ``1.5 M`` arms (for even ``M``; a single batch when
  fewer than ``0.5 M`` arms survive). Cutting instead of literally joining pairs is what keeps the
  sizes in range: the largest batch plus the smallest one can exceed ``1.5 M``. Without merging
  ``k`` is at most ``n_alive // 2`` (Algorithm 4, line 13: "making sure that each batch contains
  at least two arms"; only ``M = 2`` is affected), so no stage starts with an idle arm.
- When one arm remains it duels itself.

>>> import numpy as np
>>> arms, bstart, where, info, thr, rowmax, work = new_batches(10, 4, ceil=True)
>>> [batch_members(arms, bstart, b).tolist() for b in range(info[0])]
[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
>>> arms, bstart, where, info, thr, rowmax, work = new_batches(10, 4, ceil=False)
>>> [batch_members(arms, bstart, b).tolist() for b in range(info[0])]
[[0, 1, 2, 3], [4, 5, 6, 7, 8, 9]]
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from irbandits.dueling.bounds import threshold

NB, ALIVE, STAGE, SIZE = 0, 1, 2, 3  # the entries of ``info``

# The kernels of both algorithms are compiled without numba's reference counting (``_nrt=False``):
# they never allocate or return an array, and the atomic increments and decrements numba otherwise
# emits for every array argument of every call cost more than a step's work (a 3-4x slowdown on
# MSLR). Functions they call are compiled the same way. Only ``batch_members``, which hands a view
# back to Python, keeps the runtime.
kernel = njit(cache=True, _nrt=False)


def new_batches(K: int, M: int, ceil: bool = True):
    """Fresh batch arrays for K arms and batch size M (``ceil``: b_1 = ceil(K/M), else floor)."""
    nb = -(-K // M) if ceil else max(1, K // M)
    arms = np.arange(K, dtype=np.int64)
    bstart = np.zeros(K + 1, np.int64)
    for b in range(nb):
        bstart[b] = b * M
    bstart[nb] = K
    where = np.minimum(np.arange(K) // M, nb - 1).astype(np.int64)
    info = np.array([nb, K, 1, M], np.int64)
    thr = np.full((K, K), -np.inf)
    rowmax = np.full(K, -np.inf)
    work = np.zeros(2 * K, np.int64)
    return arms, bstart, where, info, thr, rowmax, work


@njit(cache=True)  # hands a view back to Python: needs the runtime
def batch_members(arms, bstart, b):
    """The arms of batch ``b`` (a view)."""
    return arms[bstart[b]:bstart[b + 1]]


@kernel
def refresh_row(thr, rowmax, arms, bstart, where, i):
    """rowmax[i] = max of thr[i, j] over the other members j of i's batch (-inf if eliminated)."""
    b = where[i]
    m = -np.inf
    if b >= 0:
        for p in range(bstart[b], bstart[b + 1]):
            v = thr[i, arms[p]]
            if v > m:
                m = v
    rowmax[i] = m


@kernel
def refresh_batch(thr, rowmax, arms, bstart, where, b):
    """Recompute rowmax for every member of batch ``b``."""
    for p in range(bstart[b], bstart[b + 1]):
        refresh_row(thr, rowmax, arms, bstart, where, arms[p])


@kernel
def remove_at(arms, bstart, where, info, b, pos):
    """Eliminate the arm at position ``pos`` of ``arms`` (a member of batch ``b``)."""
    n = info[ALIVE]
    arm = arms[pos]
    for p in range(pos, n - 1):
        arms[p] = arms[p + 1]
    arms[n - 1] = arm
    for bb in range(b + 1, info[NB] + 1):
        bstart[bb] -= 1
    where[arm] = -1
    info[ALIVE] = n - 1


@kernel
def prune(thr, rowmax, arms, bstart, where, info, b, log_t):
    """Remove, one at a time in batch order, every arm of batch ``b`` that a batch-mate beats
    with confidence (``u < 0.5``, i.e. ``rowmax > log_t``); returns how many were removed."""
    removed = 0
    pos = bstart[b]
    while pos < bstart[b + 1]:
        if rowmax[arms[pos]] > log_t:
            remove_at(arms, bstart, where, info, b, pos)
            refresh_batch(thr, rowmax, arms, bstart, where, b)
            removed += 1
        else:
            pos += 1
    return removed


@kernel
def _renumber(arms, bstart, where, info):
    for b in range(info[NB]):
        for p in range(bstart[b], bstart[b + 1]):
            where[arms[p]] = b


@kernel
def merge_into_next(thr, rowmax, arms, bstart, where, info, b):
    """Merge batch ``b`` (one arm) into the next batch (batch 0 after the last); needs nb > 1.

    Returns the index of the merged batch: ``b`` itself, or 0 when ``b`` was the last batch.
    """
    nb = info[NB]
    if b < nb - 1:
        for bb in range(b + 1, nb):
            bstart[bb] = bstart[bb + 1]
        merged = b
    else:
        n = info[ALIVE]
        arm = arms[n - 1]
        for p in range(n - 1, 0, -1):
            arms[p] = arms[p - 1]
        arms[0] = arm
        for bb in range(1, nb - 1):
            bstart[bb] += 1
        bstart[nb - 1] = n
        merged = 0
    bstart[nb] = 0
    info[NB] = nb - 1
    _renumber(arms, bstart, where, info)
    refresh_batch(thr, rowmax, arms, bstart, where, merged)
    return merged


@kernel
def repartition(thr, rowmax, arms, bstart, where, info, work, at_least_two=False):
    """Start a new stage's batches: pair the smallest batches with the largest (see module doc).

    ``work`` is scratch space of at least ``2 K`` integers. ``at_least_two`` (mergeRUCB without
    merging): no new batch has one arm while two or more survive (thesis Algorithm 4, line 13,
    "making sure that each batch contains at least two arms"); this only changes ``M = 2``, where
    ``[0.5 M, 1.5 M]`` admits one arm.
    """
    nb, n, M = info[NB], info[ALIVE], info[SIZE]
    order = work[:nb]  # batch indices by size, ascending; ties by index (insertion sort: stable)
    for b in range(nb):
        size = bstart[b + 1] - bstart[b]
        p = b
        while p > 0 and bstart[order[p - 1] + 1] - bstart[order[p - 1]] > size:
            order[p] = order[p - 1]
            p -= 1
        order[p] = b
    new = work[nb:nb + n]
    lo, hi, p, take_hi = 0, nb - 1, 0, True
    while lo <= hi:
        if take_hi:
            b = order[hi]
            hi -= 1
        else:
            b = order[lo]
            lo += 1
        take_hi = not take_hi
        for r in range(bstart[b], bstart[b + 1]):
            new[p] = arms[r]
            p += 1
    k = max(1, (2 * n + M) // (2 * M))
    if at_least_two and k > n // 2:
        k = max(1, n // 2)
    base, extra = n // k, n % k
    for p in range(n):
        arms[p] = new[p]
    for b in range(bstart.shape[0]):
        bstart[b] = 0
    for b in range(k):
        bstart[b + 1] = bstart[b] + base + (1 if b < extra else 0)
    info[NB] = k
    _renumber(arms, bstart, where, info)
    for b in range(k):
        refresh_batch(thr, rowmax, arms, bstart, where, b)


@kernel
def current_batch(step, C, thr, rowmax, arms, bstart, where, info, merge_single=True):
    """The batch to work on at ``step`` (1-based): ``m = step mod b_s``, after pruning it (with
    ``ln(step + C)``) and, with ``merge_single`` (MergeDTS, Algorithm 1 lines 14-15), merging it
    into the next batch if one arm is left. Without it (mergeRUCB, thesis Algorithm 4, which has
    no such step) a one-arm batch stays until the stage ends and its arm duels itself."""
    nb = info[NB]
    if nb == 1:
        if bstart[1] == 1:  # the last arm standing
            return 0
        m = 0
    else:
        m = step % nb
    prune(thr, rowmax, arms, bstart, where, info, m, log_time(step, C))
    if merge_single and info[NB] > 1 and bstart[m + 1] - bstart[m] == 1:
        m = merge_into_next(thr, rowmax, arms, bstart, where, info, m)
    return m


@kernel
def after_duel(thr, rowmax, arms, bstart, where, info, W, c, d, alpha):
    """New thresholds for the pair just played, and the rows they change."""
    if c == d:
        return
    thr[c, d] = threshold(W, c, d, alpha)
    thr[d, c] = threshold(W, d, c, alpha)
    refresh_row(thr, rowmax, arms, bstart, where, c)
    refresh_row(thr, rowmax, arms, bstart, where, d)


@kernel
def stage_limit(K, info):
    """``floor(K / 2^s)``: the stage ends once ``n_alive`` is at most this (integers compared)."""
    return K >> info[STAGE] if info[STAGE] < 63 else 0


@kernel
def stalled(bstart, info, K):
    """Whether the stage is stalled (see module doc): some batch is down to one arm (it has nothing
    to compare: its arm only duels itself) and ``K / 2^s`` can no longer be reached unless every batch
    that still holds two or more arms sheds some, i.e. even if every batch but the one with the
    fewest spare arms (``|B| - 1``) were pruned to one arm, more than ``K / 2^s`` arms would remain.
    This includes every batch being down to one arm, and every batch but one.

    Without merging no batch holds more than ``2 M`` arms (at most ``2 M - 1`` in stage 1, under
    ``1.5 M + 1`` after :func:`repartition`, and batches only shrink within a stage), so the batches
    are only looked at when ``nb + 2 M - 1 > K / 2^s``: a stage with many batches costs nothing.
    """
    nb = info[NB]
    limit = stage_limit(K, info)
    if nb == 1 or nb + 2 * info[SIZE] - 1 <= limit:
        return False
    lone, fewest = 0, K
    for b in range(nb):
        spare = bstart[b + 1] - bstart[b] - 1
        if spare == 0:
            lone += 1
        elif spare < fewest:
            fewest = spare
    if lone == 0:
        return False
    if lone == nb:
        return True
    return nb + fewest > limit


@kernel
def end_of_step(thr, rowmax, arms, bstart, where, info, work, merge_single=True):
    """Phase IV: a new stage when ``n_alive <= K / 2^s`` (Algorithm 4, line 11; Algorithm 1,
    line 20), or, without ``merge_single`` (mergeRUCB), when the stage is :func:`stalled`. With it a
    one-arm batch joins the next batch on its turn (:func:`current_batch`), so none can stall."""
    K = arms.shape[0]
    if info[ALIVE] <= stage_limit(K, info) or (not merge_single and stalled(bstart, info, K)):
        repartition(thr, rowmax, arms, bstart, where, info, work, not merge_single)
        info[STAGE] += 1


@kernel
def surviving_winner(W, arms, info):
    """The arm to ship: the last arm standing; before that, the surviving arm that empirically
    beats (w_ij > w_ji) the most other survivors, then the most arms overall, then the lowest index.

    Survivors in different batches have rarely met, so wins over all arms alone would favour an
    arm from an easy batch over the survivors that beat it in the last batch.
    """
    n = info[ALIVE]
    if n == 1:
        return arms[0]
    K = W.shape[0]
    best, best_s, best_all = K, -1, -1
    for p in range(n):
        i = arms[p]
        s = 0
        for r in range(n):
            j = arms[r]
            if W[i, j] > W[j, i]:
                s += 1
        s_all = 0
        for j in range(K):
            if W[i, j] > W[j, i]:
                s_all += 1
        if s > best_s or (s == best_s and (s_all > best_all or (s_all == best_all and i < best))):
            best, best_s, best_all = i, s, s_all
    return best


@kernel
def last_arm_standing(info):
    """One arm left: it duels itself and is recommended from now on, whatever the outcomes
    (:func:`current_batch` returns its one-arm batch without pruning); the absorbing test of both
    merge algorithms."""
    return info[ALIVE] == 1


# The state of both algorithms starts W, t, params, arms, bstart, where, info: one _recommend and
# one _absorbed kernel serve both.
@kernel
def recommend(st):
    """``_recommend`` of both merge algorithms: :func:`surviving_winner`."""
    return surviving_winner(st[0], st[3], st[6])


@kernel
def absorbed(st):
    """``_absorbed`` of both merge algorithms: :func:`last_arm_standing`."""
    return last_arm_standing(st[6])


@kernel
def log_time(t, C):
    """ln(t + C) at step ``t`` (1-based)."""
    return math.log(t + C)
