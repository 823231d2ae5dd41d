"""Issue 23, item 6: mergeRUCB's stage must not wait on one slow batch while a lone arm only duels
itself (thesis Algorithm 4 has no rule for a one-arm batch; :func:`irbandits.dueling.batches.stalled`).

The problem: Bradley-Terry with utilities ``default_rng(2026).normal(size=10)``,
``p_ij = 1 / (1 + exp(u_j - u_i))``. Before the rule, ``mergeRUCB:M=3`` was stuck in 6 of 10 runs
(seed 0) after 10^5 steps: the winner alone in its batch, a near-tied pair in the other, 3 arms
against K / 4. Regret grew by about 0.17 a step (9,700 median, runs up to 17,100) and 3 runs
recommended a non-winner; ``M=2`` did the same in 7 runs (median 18,900, 6 wrong recommendations).
"""

from __future__ import annotations

import numpy as np
import pytest
from test_merge import batches_of, layout

from irbandits.dueling import MergeRUCB
from irbandits.dueling import batches as bt
from irbandits.simulate import simulate
from irbandits.synthetic import bradley_terry


def issue_problem():
    u = np.random.default_rng(2026).normal(size=10)
    return bradley_terry(np.exp(u), name="bt-10-2026")  # exp(u_i) / (exp(u_i) + exp(u_j))


def test_the_issue_problem():
    P = issue_problem()
    u = np.random.default_rng(2026).normal(size=10)
    assert np.allclose(P.p, 1 / (1 + np.exp(u[None, :] - u[:, None])))
    assert P.condorcet_winner == 3
    assert abs(P.p[5, 6] - 0.5) < 0.01  # near-tied pairs: what the stalled runs waited on


@pytest.mark.parametrize(
    "spec", ["mergeRUCB:M=2", "mergeRUCB:M=3", "mergeRUCB", "mergeRUCB:M=5", "MergeDTS:M=2", "MergeDTS:M=3"]
)
def test_no_run_stalls_on_the_issue_problem(spec):
    """10 runs of 10^5 steps: every run finds the winner, none is an outlier (below 5x the median),
    and none is stuck (a stall costs about 0.17 a step: 10^4 within the horizon)."""
    table = simulate(issue_problem(), [spec], 10**5, runs=10, seed=0, progress=False)
    last = table[table.step == table.step.max()].sort_values("run")
    regret = last.regret.to_numpy()
    assert len(regret) == 10 and last.correct.all(), (spec, last.recommended.tolist(), regret.round())
    assert (regret < 5 * np.median(regret)).all() and regret.max() < 5_000, (spec, regret.round())


def stalled_at(K: int, batches: list[list[int]], M: int, stage: int) -> bool:
    arms, bstart, where, info, thr, rowmax, work = layout(K, batches, M)
    info[2] = stage
    return bool(bt.stalled(bstart, info, K))


def test_when_a_stage_is_stalled():
    # the issue's state: K / 4 = 2.5, 3 arms; only the pair can shed an arm
    assert stalled_at(10, [[9], [0, 1]], 3, 2)
    # two pairs: K / 4 needs both
    assert stalled_at(10, [[9], [0, 1], [2, 3]], 2, 2)
    assert stalled_at(6, [[0], [2], [4]], 2, 2)  # every batch down to one arm
    # K / 2 = 10 of 13 arms: only the 12-arm batch can shed them
    assert stalled_at(20, [[0], list(range(1, 13))], 8, 1)
    # not stalled: no lone arm; one batch; K / 2 reachable without one of the batches
    assert not stalled_at(10, [[9, 8], [0, 1]], 3, 2)
    assert not stalled_at(10, [[0, 1, 2]], 3, 3)
    assert not stalled_at(20, [[0], [1, 2, 3], [4, 5, 6]], 4, 2)  # K / 4 = 5 of 7: either batch can
    assert not stalled_at(12, [[0], [4, 5, 6, 7], [8, 9, 10, 11]], 4, 1)
    # stage 1 of 136 arms in batches of 4: a lone arm waits for the other batches, as the listing says
    many = [[0]] + [list(range(b, b + 4)) for b in range(1, 133, 4)]
    assert len(many) == 34 and not stalled_at(136, many, 4, 1)


def test_a_stalled_stage_ends_and_a_merging_one_waits_for_the_merge():
    """The issue's state, [[9], [0, 1]] at stage 2 of K = 10: the old rule (every batch down to one
    arm) left it; now the stage ends and arm 9 meets 0 and 1. With merging (MergeDTS) the stage
    waits: [9] joins the next batch on its own turn (:func:`~irbandits.dueling.batches.current_batch`)."""
    for merge_single, after, stage in ((False, [[0, 1, 9]], 3), (True, [[9], [0, 1]], 2)):
        arms, bstart, where, info, thr, rowmax, work = layout(10, [[9], [0, 1]], 3)
        info[2] = 2
        bt.end_of_step(thr, rowmax, arms, bstart, where, info, work, merge_single)
        got = [sorted(bt.batch_members(arms, bstart, b).tolist()) for b in range(info[0])]
        assert got == after and info[2] == stage, merge_single


def test_a_lone_winner_meets_a_tied_batch():
    """K = 6, M = 3: arm 0 empties its batch, arms 3, 4, 5 tie (every duel among them alternates),
    so they never prune each other and 4 arms stay above K / 2 = 3. Before the stall rule the stage
    never ended ([[0], [3, 4, 5]] for good, arm 0 dueling itself); now it ends at once, and arm 0
    eliminates the three."""
    algo = MergeRUCB(6, seed=0, M=3, C=1.0, alpha=1.0)
    for j in (1, 2):
        for _ in range(60):
            algo.update(0, j, True)
    seen, flip = [], False
    for _ in range(3000):
        c, d = algo.select()
        if 0 in (c, d):
            c_won = c == 0
        else:
            c_won, flip = flip, not flip
        algo.update(c, d, c_won)
        if not seen or batches_of(algo) != seen[-1]:
            seen.append(batches_of(algo))
    assert [[0], [3, 4, 5]] not in seen
    assert sorted(seen[1][0]) == [0, 3, 4, 5] and len(seen[1]) == 1
    assert seen[-1] == [[0]] and algo.recommend() == 0
