"""UCB-Multileave (the MergeDTS paper's multileaving baseline): what it multileaves and what it records."""

from __future__ import annotations

from irbandits.dueling import UCBMultileave
from irbandits.problems import get_problem
from irbandits.simulate import run_one


def test_a_multileaved_step_records_every_pair_of_rankers_once():
    algo = UCBMultileave(4, seed=0)
    algo.update_many([0, 1, 2, 2], [1.0, 0.0, 0.0, 0.0])  # ranker 2 in two slots: still one ranker
    W = algo.wins
    assert W[0, 1] == 1 and W[0, 2] == 1 and W.sum() == 2  # 1 and 2 tie: no duel; 3 was not shown
    assert algo.t == 1


def test_it_multileaves_every_unbeaten_ranker_and_narrows_to_the_winner():
    fresh = UCBMultileave(6, seed=1, C=0)
    arms = fresh.select_many(4)
    assert len(set(arms.tolist())) == 4                    # six candidates, four slots: four of them
    assert sorted(set(fresh.select_many(9).tolist())) == list(range(6))  # more slots: all six, some twice
    problem = get_problem("arithmetic")                    # arm 0 beats arm j with 0.5 + 0.05 j
    algo = UCBMultileave(problem.K, seed=1, C=0)
    run_one(algo, problem, 20_000, seed=2)
    assert algo.candidates().tolist() == [0] and algo.recommend() == 0
    assert (algo.select_many(3) == 0).all()                # the only candidate fills every slot
