"""The metered click environment: the clicks and NDCG@10 of the lists users saw, counted in the
compiled loop without changing the run."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DATA

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.multidueling import MultileaveEnvironment
from irbandits.clicks.online_metrics import MeteredEnvironment, grading, list_metrics, per_impression, ranker_quality
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix
from irbandits.rng import new_rng
from irbandits.simulate import simulate

NP2004 = DATA / "ltr" / "letor3-np2004-fold1" / "test.txt.gz"
FEATURES = [22, 0, 27, 40]  # feature 23 (the best), 1, 28, 41


@pytest.fixture(scope="module")
def rankers():
    return read_ltr(NP2004).rankers(FEATURES)


@pytest.fixture(scope="module")
def problem():
    # regret is not what these tests look at: a total order with the first ranker, feature 23, on top
    return PreferenceMatrix(0.5 + 0.05 * (np.arange(4)[None, :] - np.arange(4)[:, None]))


def test_ndcg_follows_the_papers_equation_11():
    gain = np.array([0.0, 1.0, 3.0, 0.0, 7.0])        # labels 0, 1, 2, 0, 3
    query = np.array([0, 0, 0, 1, 1])
    discount = 1.0 / np.log2(np.arange(2, 5))
    ideal = np.array([3.0 + 1.0 / np.log2(3), 7.0])
    shown, clicks = np.array([1, 0, 2]), np.array([True, False, True])
    c, ndcg = list_metrics(shown, clicks, gain, query, ideal, discount)
    assert c == 2 and ndcg == pytest.approx((1.0 + 3.0 / 2.0) / ideal[0])
    c, ndcg = list_metrics(np.array([4, -1, -1]), clicks, gain, query, ideal, discount)  # slots after -1 unshown
    assert c == 1 and ndcg == 1.0


def test_grading_of_np2004(rankers):
    gain, query, ideal, discount = grading(rankers, 10)
    assert np.array_equal(np.bincount(query), np.diff(rankers.bounds))
    assert (ideal == 1.0).all()  # one relevant page per query: its ideal place is the top


@pytest.mark.parametrize("multileave", [False, True])
def test_metering_leaves_the_run_alone_and_counts_every_step(rankers, problem, multileave):
    # Self-Sparring duels itself (pairwise) or shows one ranker in every slot (m = 3) once it has settled
    plain = (MultileaveEnvironment(rankers, "navigational", "team-draft", per_step=3) if multileave
             else ClickEnvironment(rankers, "navigational", "probabilistic"))
    a = simulate(problem, ["Self-Sparring"], horizon=6000, runs=2, seed=3, progress=False, environment=plain)
    b = simulate(problem, ["Self-Sparring"], horizon=6000, runs=2, seed=3, progress=False,
                 environment=MeteredEnvironment(plain, 6000))
    for column in ("regret", "recommended"):
        assert np.array_equal(a[column], b[column])       # the same comparisons, the same trajectory
    assert (b.groupby("run").clicks.diff().dropna() >= 0).all()
    w = per_impression(b, "ndcg", [6000])
    assert len(w) == 2 and (w.ndcg > 0).all() and (w.ndcg <= 1).all()
    late = per_impression(b, "ndcg", [1000, 6000]).query("step == 6000").ndcg
    best = ranker_quality(rankers, "navigational", 4000, seed=1).ndcg[0]
    assert (abs(late - best) < 0.05).all()                # settled on feature 23: its lists, self-duels included


def test_a_self_duel_still_shows_the_ranker_alone(rankers):
    env = MeteredEnvironment(ClickEnvironment(rankers, "navigational", "team-draft"), 3000)
    world, rng = env.world(np.arange(4)), new_rng(5)
    for _ in range(3000):
        env.duel(world, rng, 1, 1)                        # feature 1 against itself
    out = env.columns(world, env.steps)
    q = ranker_quality(rankers, "navigational", 6000, seed=2)
    assert out["ndcg"][-1] / 3000 == pytest.approx(q.ndcg[1], abs=4 * q.ndcg_se[1] * np.sqrt(3))
    assert out["clicks"][-1] / 3000 == pytest.approx(q.ctr[1], abs=4 * q.ctr_se[1] * np.sqrt(3))


def test_ranker_quality_orders_by_the_labels(rankers):
    q = ranker_quality(rankers, "navigational", 3000, seed=0)
    assert q.name.tolist() == ["feature23", "feature1", "feature28", "feature41"]
    assert q.ndcg.idxmax() == 0 and (q.ndcg_se > 0).any()
    with pytest.raises(IrbanditsError, match="impressions must be positive"):
        ranker_quality(rankers, impressions=0)


def test_mistakes_are_clear(rankers, problem, tmp_path):
    with pytest.raises(IrbanditsError, match="cannot also log"):
        MeteredEnvironment(ClickEnvironment(rankers, log=tmp_path / "log.jsonl"), 100)
    env = MeteredEnvironment(ClickEnvironment(rankers), 100)
    with pytest.raises(IrbanditsError, match="checkpoints of horizon 100; this run has other checkpoints"):
        env.columns(env.world(np.arange(4)), np.array([1, 10, 200]))
