"""The best-item (PAC) algorithms the thesis reviews (seed 000, section 3.2) but did not simulate,
under the study's budget of judgments: extra rows of the Figure 4.1 study, beyond the thesis.

Every function has the interface of :mod:`irbandits.judging.algorithms`: ``name(oracle, rng,
**params) -> list[int]``, every judgment through :meth:`Oracle.duels <irbandits.judging.algorithms.
Oracle.duels>` (so the budget and the per-pair counts stay exact), and the item it reports when it
stops. The papers are not among the seeds: each is implemented from its listing as recalled here
(algorithm numbers and steps below), the structure of Knockout, Seq-Eliminate and Opt-Max (Opt-Max's
subset sizes in particular) checked against duelpy 1.0's readings of them; what a paper leaves open
under a fixed budget is chosen and said below.

- :func:`knockout`: Falahatgar, Orlitsky, Pichapati, Suresh, "Maximum selection and ranking under
  noisy comparisons", ICML 2017 (thesis [30]): Algorithm 1 (COMPARE), 2 (KNOCKOUT-ROUND),
  3 (KNOCKOUT). Round i pairs the survivors at random (a bye for the odd one) and COMPAREs each pair
  with eps_i = c eps / (gamma 2^(i/3)), c = 2^(1/3) - 1, delta_i = delta / 2^i: judge until
  |p_hat - 1/2| > c_r - eps_i, c_r = sqrt(ln(4 r^2 / delta_i) / (2 r)), or r reaches
  m_i = 1 / (2 eps_i^2) ln(2 / delta_i) (Algorithm 1 line 1); the loser is p_hat <= 1/2 (line 4).
- :func:`seq_eliminate`: SEQ-ELIMINATE of Falahatgar, Hao, Orlitsky, Pichapati, Ravindrakumar,
  "Maxing and ranking with few assumptions", NeurIPS 2017 (thesis [28]; the brief's citation of the
  ICML 2017 paper above is the thesis's [30], where Knockout is): Algorithm 1 (COMPARE: m =
  2 / (eps_u - eps_l)^2 ln(2 / delta) judgments, "not eps_u-preferable" when p_hat - 1/2 <
  (eps_l + eps_u) / 2) and Algorithm 2 (a random running winner; each other item, in random order,
  challenges it and replaces it unless COMPARE(c, r, eps_l, eps_u, delta / n) says it is not
  preferable).
- :func:`opt_max`: OPT-MAX of Falahatgar, Jain, Orlitsky, Pichapati, Ravindrakumar, "The limits of
  maxing, ranking, and preference learning", ICML 2018 (thesis [29]; the brief names the same
  paper with other authors and title). Its branch for delta <= K^(-1/3) (the case K = 100,
  delta = 0.1): a random subset Q of K^(3/4) items; PICK-ANCHOR on Q (SEQ-ELIMINATE over a random
  sqrt(|Q| ln(4 |Q| / delta')) of Q with (0, eps'/2), then over Q from that item with
  (eps'/2, eps'), eps' = eps / 2, delta' = delta / 3); then SEQ-ELIMINATE over all K items from
  that anchor with (eps / 2, eps). Its COMPARE judges a pair 8 / (eps_u - eps_l)^2 ln(2 / delta)
  times (thesis 3.2). Its two branches for larger delta are not implemented (an error says so).
- :func:`plpac`: PLPAC, the PAC-item variant of Szörényi, Busa-Fekete, Paul, Hüllermeier, "Online
  rank elicitation for Plackett-Luce: a dueling bandits approach", NeurIPS 2015 (thesis [76]),
  Algorithm 1 with Algorithm 2 (budgeted QuickSort): each round QuickSorts the active items (random
  pivots, each pair judged at most once a round, at most ceil(2 n ln n) judgments: the budget of
  Algorithm 2, our constant) and adds every judgment to the pair's counts; an item is dropped when
  another active item beats it with p_hat - c > 1/2, c = sqrt(ln(4 K^2 n^2 / delta) / (2 n));
  it stops with the single active item, or one whose p_hat - c > 1/2 - eps against every other.
- :func:`mallows_mpi`: MallowsMPI of Busa-Fekete, Hüllermeier, Szörényi, "Preference-based rank
  elicitation using statistical models: the case of Mallows", ICML 2014 (thesis [11]),
  Algorithm 1: under a Mallows model every pair has a strict majority, so the maximum is found by
  K - 1 sequential tests, the current candidate against the next item (random order), each
  judging until 1/2 leaves [p_hat - c, p_hat + c], c = sqrt(ln(4 K n^2 / delta) / (2 n)); the
  loser leaves.
- :func:`multisort`: Maystre & Grossglauser, "Just sort it! A simple and effective approach to
  active preference learning", ICML 2017 (thesis [62]), Multisort: QuickSort with random pivots and
  single noisy judgments, again and again until the budget ends; the rankings aggregated by their
  Copeland scores (the number of items an item is above in more of the sorts than below), ties
  broken by Borda (items below it over all sorts), then at random.

Fitting a fixed budget (Case A / B: 1,000 judgments for 100 items). The papers' parameters
(eps = 0.05, delta = 0.1) ask thousands of judgments of one pair, which the thesis names as their
flaw for preference judging (3.2). With ``fit=True`` (the default, and the study's setting) each
algorithm keeps its decision rules but caps the judgments of one COMPARE / test so that its
worst case fits the oracle's budget, as the thesis fitted SELECT's m = 10 (990 judgments):

- Knockout: every round's m_i is scaled by one factor (the paper's allocation across rounds kept;
  at least one judgment), the largest whose worst case sum(pairs_i x m_i) fits the budget;
- Seq-Eliminate, Opt-Max: m = min(the paper's m, floor(budget / COMPAREs)), COMPAREs = K - 1,
  resp. the three SEQ-ELIMINATE passes' |Q'| - 1 + |Q| - 1 + K - 1; the decision threshold
  (eps_l + eps_u) / 2 is the paper's;
- MallowsMPI: each test stops at floor(budget / (K - 1)) judgments at the latest; the item with more
  wins then advances, a tie keeps the current candidate (our choice; the paper's test never ends
  at p_hat = 1/2);
- PLPAC and Multisort need nothing: they run until the budget ends.

A PAC algorithm that finishes before the budget reports what it returns; one that runs past it
(``fit=False``, or PLPAC, whose eliminations need far more than 1,000 judgments for 100 items)
reports its current best: Knockout an item of the furthest round reached (at random), Seq-Eliminate
/ Opt-Max the running winner, MallowsMPI the current candidate, PLPAC the active item with the
largest Bradley-Terry (the Plackett-Luce pairwise model) maximum-likelihood strength from its
judgments, Multisort the aggregate of its sorts, the unfinished one (blocks left unsplit) included.

Each run is at most ``budget`` judgments, each a Python call of ``Oracle.duels``; the rest is numpy,
so nothing here is compiled.

>>> import numpy as np
>>> from irbandits.judging.algorithms import Oracle
>>> from irbandits.synthetic import case_a
>>> oracle = Oracle(case_a().p, budget=1000, rng=np.random.default_rng(0))
>>> best = seq_eliminate(oracle, np.random.default_rng(0))
>>> oracle.judgments, oracle.assessors, len(best)
(990, 10, 1)
"""

from __future__ import annotations

import math

import numpy as np

from irbandits.errors import IrbanditsError
from irbandits.judging.algorithms import BudgetExhausted, Oracle

__all__ = ["knockout", "seq_eliminate", "opt_max", "plpac", "mallows_mpi", "multisort", "knockout_caps"]


# ----- Knockout -------------------------------------------------------------------------------------
def knockout_caps(
    K: int, budget: int | None, epsilon: float = 0.05, delta: float = 0.1, gamma: float = 1.0
) -> list[tuple[int, float, float, int]]:
    """Knockout's rounds for ``K`` items: (pairs, eps_i, delta_i, m_i) per round, m_i the paper's
    ceil(ln(2 / delta_i) / (2 eps_i^2)) or, with a ``budget``, scaled by the largest common factor
    whose worst case sum(pairs x m_i) fits it (at least one judgment per COMPARE)."""
    c = 2 ** (1 / 3) - 1
    rounds, n, i = [], K, 1
    while n > 1:
        eps_i = c * epsilon / (gamma * 2 ** (i / 3))
        delta_i = delta / 2**i
        rounds.append((n // 2, eps_i, delta_i, math.log(2 / delta_i) / (2 * eps_i**2)))
        n, i = (n + 1) // 2, i + 1

    def worst(s):
        return sum(p * max(1, math.floor(s * m)) for p, _, _, m in rounds)

    caps = [math.ceil(m) for _, _, _, m in rounds]
    if budget is not None and sum(p * m for (p, *_), m in zip(rounds, caps)) > budget:
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if worst(mid) <= budget else (lo, mid)
        caps = [max(1, math.floor(lo * m)) for _, _, _, m in rounds]
    return [(p, e, d, m) for (p, e, d, _), m in zip(rounds, caps)]


def _compare(oracle: Oracle, i: int, j: int, eps: float, delta: float, cap: int) -> int:
    """Falahatgar et al. 2017, Algorithm 1: judge (i, j) until |p_hat - 1/2| > c_r - eps or ``cap``
    judgments; the winner is ``i`` unless p_hat <= 1/2."""
    wins = r = 0
    p_hat, c_r = 0.5, 0.5
    while abs(p_hat - 0.5) <= c_r - eps and r < cap:
        wins += oracle.duels(i, j)
        r += 1
        p_hat = wins / r
        c_r = math.sqrt(math.log(4 * r * r / delta) / (2 * r))
    return j if p_hat <= 0.5 else i


def knockout(
    oracle: Oracle,
    rng: np.random.Generator,
    epsilon: float = 0.05,
    delta: float = 0.1,
    gamma: float = 1.0,
    fit: bool = True,
) -> list[int]:
    """Knockout (Falahatgar et al., ICML 2017, Algorithms 1-3): single-elimination rounds of
    COMPAREs with shrinking eps_i and delta_i; with ``fit``, the COMPARE caps scaled to the budget
    (:func:`knockout_caps`). Reports the last survivor, or, when the budget ends first, an item of
    the furthest round reached (at random)."""
    K = len(oracle.P)
    alive = [int(x) for x in rng.permutation(K)]
    rounds = knockout_caps(K, oracle.left if fit else None, epsilon, delta, gamma)
    nxt: list[int] = []
    try:
        for _, eps_i, delta_i, cap in rounds:
            order = [alive[x] for x in rng.permutation(len(alive))]  # Algorithm 2, line 1: random pairs
            nxt = []
            for a in range(0, len(order) - 1, 2):
                nxt.append(_compare(oracle, order[a], order[a + 1], eps_i, delta_i, cap))
            if len(order) % 2:
                nxt.append(order[-1])
            alive = nxt
    except BudgetExhausted:
        alive = nxt or alive  # the winners of the round in progress are a round further than the rest
    return [alive[int(rng.integers(len(alive)))]] if len(alive) > 1 else [int(alive[0])]


# ----- Seq-Eliminate and Opt-Max ---------------------------------------------------------------------
def _seq_eliminate(
    oracle: Oracle, rng: np.random.Generator, items, anchor: int | None, eps_l: float, eps_u: float, m: int
) -> tuple[int, bool]:
    """SEQ-ELIMINATE (Falahatgar et al., NeurIPS 2017, Algorithm 2) over ``items`` from ``anchor``
    (random when None), each COMPARE ``m`` judgments; (running winner, finished before the budget)."""
    items = [int(x) for x in rng.permutation(np.asarray(items))]
    anchor = items[0] if anchor is None else int(anchor)
    r = anchor
    threshold = (eps_l + eps_u) / 2
    for c in items:
        if c == anchor:
            continue
        try:
            wins = oracle.duels(c, r, m)
        except BudgetExhausted:
            return r, False
        if wins / m - 0.5 >= threshold:  # COMPARE(c, r) does not say "c not eps_u-preferable"
            r = c
    return r, True


def _budget_share(budget: int, paper_m: float, compares: int, fit: bool) -> int:
    """Judgments per COMPARE: the paper's m, with ``fit`` at most ``budget`` // ``compares`` (>= 1)."""
    m = math.ceil(paper_m)
    return max(1, min(m, budget // max(compares, 1))) if fit else m


def seq_eliminate(
    oracle: Oracle,
    rng: np.random.Generator,
    eps_l: float = 0.0,
    eps_u: float = 0.05,
    delta: float = 0.1,
    fit: bool = True,
) -> list[int]:
    """SEQ-ELIMINATE (Falahatgar et al., NeurIPS 2017, Algorithms 1-2): a random running winner,
    challenged by every other item once, m judgments a challenge (m = 2 / (eps_u - eps_l)^2
    ln(2 K / delta), with ``fit`` at most the budget's share, budget // (K - 1)); the challenger
    replaces it when it wins a fraction >= 1/2 + (eps_l + eps_u) / 2. Reports the running winner."""
    K = len(oracle.P)
    m = _budget_share(oracle.left, 2 / (eps_u - eps_l) ** 2 * math.log(2 * K / delta), K - 1, fit)
    return [_seq_eliminate(oracle, rng, np.arange(K), None, eps_l, eps_u, m)[0]]


def opt_max(
    oracle: Oracle, rng: np.random.Generator, epsilon: float = 0.05, delta: float = 0.1, fit: bool = True
) -> list[int]:
    """OPT-MAX (Falahatgar et al., ICML 2018), its branch for delta <= K^(-1/3): PICK-ANCHOR on a
    random K^(3/4) of the items, then SEQ-ELIMINATE over all items from that anchor; every COMPARE
    m = 8 / (eps_u - eps_l)^2 ln(2 / delta) judgments (with ``fit``, at most the budget's share over
    the run's COMPAREs). Reports the final running winner, or the running winner when the budget
    ends."""
    K = len(oracle.P)
    if K > 1 and delta > K ** (-1 / 3):
        raise IrbanditsError(
            f"Opt-Max is implemented for delta <= K^(-1/3) = {K ** (-1 / 3):.3g} only "
            f"(the paper's other branches are not); got delta = {delta}"
        )
    q = rng.permutation(K)[: max(1, math.ceil(K**0.75))]
    d1 = delta / 3  # PICK-ANCHOR's confidence, eps' = eps / 2
    q1 = rng.permutation(q)[: max(1, min(len(q), int(math.sqrt(len(q) * math.log(4 * len(q) / d1)))))]
    e1 = epsilon / 2
    passes = [(q1, 0.0, e1 / 2, d1 / 4), (q, e1 / 2, e1, d1 / 2), (np.arange(K), epsilon / 2, epsilon, delta / 3)]
    compares = sum(len(items) - 1 for items, *_ in passes)
    anchor, budget = None, oracle.left
    for items, lo, hi, d in passes:
        m = _budget_share(budget, 8 / (hi - lo) ** 2 * math.log(2 / d), compares, fit)
        anchor, finished = _seq_eliminate(oracle, rng, items, anchor, lo, hi, m)
        if not finished:
            break
    return [int(anchor)]


# ----- MallowsMPI ---------------------------------------------------------------------------------
def mallows_mpi(oracle: Oracle, rng: np.random.Generator, delta: float = 0.1, fit: bool = True) -> list[int]:
    """MallowsMPI (Busa-Fekete et al., ICML 2014, Algorithm 1): the current candidate against each
    other item in random order, judged until 1/2 leaves the confidence interval (with ``fit``, or
    budget // (K - 1) judgments: then more wins advance, a tie keeps the candidate); the loser
    leaves. Reports the candidate."""
    K = len(oracle.P)
    order = [int(x) for x in rng.permutation(K)]
    cap = max(1, oracle.left // max(K - 1, 1)) if fit else math.inf
    best = order[0]
    try:
        for j in order[1:]:
            wins = n = 0
            while n < cap:
                wins += oracle.duels(best, j)
                n += 1
                if abs(wins / n - 0.5) > math.sqrt(math.log(4 * K * n * n / delta) / (2 * n)):
                    break
            if 2 * wins < n:
                best = j
    except BudgetExhausted:
        pass
    return [best]


# ----- QuickSort: PLPAC and Multisort --------------------------------------------------------------
def _quicksort(
    oracle: Oracle, rng: np.random.Generator, items, W: np.ndarray, limit: float = math.inf
) -> tuple[list[list[int]], bool]:
    """Randomized QuickSort by single judgments (the upper part first), each judgment added to
    ``W`` (W[i, j]: times i beat j). Returns the blocks, best first, and whether it finished;
    when the budget or ``limit`` (judgments) ends it, the block in progress stays unsplit."""
    done: list[list[int]] = []
    stack = [[int(x) for x in items]]
    used = 0
    while stack:
        block = stack.pop()
        if len(block) <= 1:
            done.append(block)
            continue
        pivot = block[int(rng.integers(len(block)))]
        up, down = [], []
        for x in block:
            if x == pivot:
                continue
            if used >= limit or oracle.left == 0:
                return done + [block] + stack[::-1], False
            win = oracle.duels(x, pivot)
            used += 1
            W[x, pivot] += win
            W[pivot, x] += 1 - win
            (up if win else down).append(x)
        stack += [down, [pivot], up]
    return done, True


def _levels(blocks: list[list[int]], K: int) -> np.ndarray:
    """Each item's block index (0 = best) in a sort's blocks."""
    level = np.zeros(K, np.int64)
    for b, block in enumerate(blocks):
        level[block] = b
    return level


def multisort(oracle: Oracle, rng: np.random.Generator, sorts: int | None = None) -> list[int]:
    """Multisort (Maystre & Grossglauser, ICML 2017): noisy QuickSorts until the budget ends (or
    ``sorts`` of them), aggregated by Copeland score (ties: Borda, then random); an unfinished last
    sort counts as a ranking with its unsplit blocks tied. Reports the top item."""
    K = len(oracle.P)
    W = np.zeros((K, K))
    levels: list[np.ndarray] = []
    while sorts is None or len(levels) < sorts:
        blocks, finished = _quicksort(oracle, rng, rng.permutation(K), W)
        if finished or len(blocks) > 1:
            levels.append(_levels(blocks, K))
        if not finished:
            break
    if not levels:
        return [int(rng.integers(K))]
    L = np.array(levels)
    above = (L[:, :, None] < L[:, None, :]).sum(axis=0)  # above[i, j]: sorts placing i above j
    copeland = (above > above.T).sum(axis=1)
    borda = above.sum(axis=1)
    return [int(np.lexsort((rng.random(K), -borda, -copeland))[0])]


# ----- PLPAC ---------------------------------------------------------------------------------------
def _btl_strengths(W: np.ndarray, iterations: int = 200) -> np.ndarray:
    """Bradley-Terry maximum-likelihood strengths by Hunter's MM iterations, every item also beating
    and losing to a dummy of strength 1 once (so items without judgments or wins stay finite)."""
    N = W + W.T
    wins = W.sum(axis=1) + 1.0
    pi = np.ones(len(W))
    for _ in range(iterations):
        denom = (N / (pi[:, None] + pi[None, :])).sum(axis=1) + 2.0 / (pi + 1.0)
        pi = wins / denom
    return pi


def plpac(oracle: Oracle, rng: np.random.Generator, epsilon: float = 0.05, delta: float = 0.1) -> list[int]:
    """PLPAC (Szörényi et al., NeurIPS 2015, Algorithms 1-2) for a PAC item: budgeted QuickSorts of
    the active items, elimination of items confidently beaten by an active one, stop at one active
    item or an eps-optimal one. Reports that item, or, when the budget ends first, the active item
    with the largest Bradley-Terry strength estimated from its judgments."""
    K = len(oracle.P)
    W = np.zeros((K, K))
    active = np.ones(K, bool)
    while True:
        items = np.flatnonzero(active)
        if len(items) == 1:
            return [int(items[0])]
        _quicksort(oracle, rng, rng.permutation(items), W, limit=math.ceil(2 * len(items) * math.log(len(items))))
        N = W + W.T
        n = np.maximum(N, 1)
        lower = np.where(N > 0, W / n - np.sqrt(np.log(4 * K * K * n * n / delta) / (2 * n)), -np.inf)
        sub = lower[np.ix_(items, items)]
        beaten = (sub > 0.5).any(axis=0)  # some active j with p_hat_ji - c_ji > 1/2
        np.fill_diagonal(sub, np.inf)
        good = (sub > 0.5 - epsilon).all(axis=1)
        if good.any():
            return [int(items[np.flatnonzero(good)[0]])]
        if not beaten.all():  # (a confident 3-cycle could otherwise drop every item)
            active[items[beaten]] = False
        if oracle.left == 0:
            break
    pi = _btl_strengths(W)
    pi[~active] = -np.inf
    return [int(np.lexsort((rng.random(K), -pi))[0])]
