"""Online learning to rank: every learner learns a known ranker, PDGD's gradient is unbiased (and
backpropagated exactly through the neural ranker, which learns what no linear ranker can), the
interactive object and the compiled simulation take the same path, and save / resume continues it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from irbandits.clicks.click_models import ClickModel, simulate_clicks
from irbandits.clicks.ltr import LtrData
from irbandits.errors import IrbanditsError
from irbandits.oltr import DBGD, MGD, PDGD, OnlineLearner, PDGDNeural, offline_ndcg, simulate_learner
from irbandits.oltr.cps import shown_ranks
from irbandits.oltr.mgd import step_to_winners
from irbandits.oltr.pdgd import inferred_pairs, pairwise_gradient
from irbandits.rng import new_rng, randint

LINEAR = ["DBGD", "DBGD:interleaving=probabilistic", "DBGD-CPS", "MGD:n=4", "MGD:n=4,update=winner", "PDGD"]
LEARNERS = LINEAR + ["PDGD-NN:hidden=8"]


def synthetic(seed: int = 0, Q: int = 40, n: int = 30, F: int = 8) -> tuple[LtrData, np.ndarray]:
    """Queries of ``n`` documents with normal features whose grades (0-4) are quantiles of ``x . w``
    for a random unit ``w``: the best linear rankers are the positive multiples of ``w``."""
    g = np.random.default_rng(seed)
    w = g.normal(size=F)
    w /= np.linalg.norm(w)
    X = g.normal(size=(Q * n, F))
    s = X @ w
    labels = np.digitize(s, np.quantile(s, [0.6, 0.8, 0.9, 0.97])).astype(np.int64)
    return LtrData(X, labels, np.arange(0, Q * n + 1, n), [str(q) for q in range(Q)], "synthetic"), w


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def run_interactively(learner: OnlineLearner, data: LtrData, user: np.ndarray, impressions: int,
                      model: ClickModel) -> list[list[int]]:
    """What :func:`simulate_learner` does, one rank / update call at a time (the same user stream)."""
    shown_lists, clicks = [], np.zeros(learner._length, np.bool_)
    for _ in range(impressions):
        q = randint(user, data.n_queries)
        lo, hi = data.bounds[q], data.bounds[q + 1]
        shown = learner.rank(data.features[lo:hi])
        grades = data.labels[lo + np.array(shown)]
        simulate_clicks(grades, len(shown), *model.arrays(), user, clicks)
        learner.update(clicks[:len(shown)].copy())
        shown_lists.append(shown)
    return shown_lists


# ----- learning ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", LINEAR)
def test_learner_converges_to_the_known_ranker_under_perfect_clicks(spec):
    data, w_true = synthetic()
    start = offline_ndcg(np.zeros(data.n_features), data)
    best = offline_ndcg(w_true, data)
    impressions = 600 if "CPS" in spec else 2000
    curve = simulate_learner(spec, data, click_model="perfect", impressions=impressions, every=impressions, seed=1)
    assert curve.offline_ndcg.iloc[-1] > start + 0.6 * (best - start), (spec, start, curve.offline_ndcg.iloc[-1], best)
    assert curve.online_ndcg.is_monotonic_increasing
    for seed in (1, 2):   # the same runs interactively, to read the weights they reach
        learner = _replay(spec, data, seed, impressions)
        assert cosine(learner.weights, w_true) > 0.95, (spec, seed, cosine(learner.weights, w_true))
        assert offline_ndcg(learner.weights, data, seed=2) > 0.85 * best


def _replay(spec: str, data: LtrData, seed: int, impressions: int) -> OnlineLearner:
    from irbandits.oltr.simulation import make_learner

    streams = np.random.SeedSequence(seed).spawn(3)
    learner = make_learner(spec, data.n_features, streams[0])
    run_interactively(learner, data, new_rng(streams[1]), impressions,
                      ClickModel.named("perfect", data.grades, learner._length))
    return learner


@pytest.mark.parametrize("spec", LEARNERS)
def test_interactive_and_compiled_runs_choose_the_same_candidates(spec):
    """The object's rank / update and the compiled simulation call the same kernels: with the same
    seeds they draw the same candidates and end on the same weights, bit for bit."""
    from irbandits.oltr.simulation import _arrays, make_learner, run_impressions

    data, _ = synthetic(seed=3)
    streams = np.random.SeedSequence(7).spawn(3)
    a = _replay(spec, data, 7, 300)
    b = make_learner(spec, data.n_features, streams[0])
    b._prepare(int(np.diff(data.bounds).max()))
    model = ClickModel.named("perfect", data.grades, b._length)
    run_impressions(b._rank, b._update, *b._plugs, b._st, b._rng, new_rng(streams[1]), _arrays(data),
                    model.arrays(), 300, np.empty(b._length, np.int64), np.array([0.0, 1.0, 0.9995]))
    for name, x, y in zip(a._names, a._st, b._st):
        assert np.array_equal(x, y), (spec, name)
    assert np.array_equal(a._rng, b._rng)
    assert np.any(a.weights != 0)


@pytest.mark.parametrize("spec", LEARNERS)
def test_save_and_resume_continue_the_same_way(spec, tmp_path):
    from irbandits.oltr.simulation import make_learner

    data, _ = synthetic(seed=4)
    model = ClickModel.named("informational", data.grades)
    learner = make_learner(spec, data.n_features, 5)
    user = new_rng(11)
    run_interactively(learner, data, user, 100, model)
    resumed = OnlineLearner.load(learner.save(tmp_path / "learner.json"))
    assert repr(resumed) == repr(learner)
    user_copy = user.copy()
    first = run_interactively(learner, data, user, 100, model)
    second = run_interactively(resumed, data, user_copy, 100, model)
    assert first == second
    assert np.array_equal(learner.weights, resumed.weights)


@pytest.mark.parametrize("spec", LEARNERS)
def test_lists_in_flight_learn_as_if_shown_alone(spec):
    """A list shown while others wait for their clicks learns what it would have learned alone: show()
    keeps the list's scratch and learn() restores it (the service's open impressions)."""
    from irbandits.oltr.simulation import make_learner

    data, w = synthetic(seed=5)
    model = ClickModel.named("perfect", data.grades)
    warm = make_learner(spec, data.n_features, 3)
    run_interactively(warm, data, new_rng(1), 50, model)   # a learner with weights and (CPS) a history
    X, Y = data.features[:30], data.features[30:60]   # two queries
    learned = False
    for seed in range(10):
        alone, busy = OnlineLearner.from_state(warm.state), OnlineLearner.from_state(warm.state)
        first = alone.show(X, rng=new_rng(seed))
        alone.learn(first, [0, 2])
        kept = busy.show(X, rng=new_rng(seed))
        for k in range(3):                                   # lists shown after it, still unanswered
            busy.show(Y, rng=new_rng(100 + k))
        busy.learn(kept, [0, 2])
        assert kept.list == first.list
        assert np.array_equal(alone.weights, busy.weights)
        for name, a, b in zip(alone._names, alone._st, busy._st):   # and CPS's log of impressions
            if name.startswith("hist") or name == "ring":
                assert np.array_equal(a, b), name
        learned |= bool(np.any(alone.weights != warm.weights))
    assert learned


# ----- PDGD: the gradient is unbiased ------------------------------------------------------------------
def _cascade_outcomes(grades, model: ClickModel):
    """Every click pattern on a list with these grades under a cascade model, with its probability."""
    out = []

    def walk(i, clicks, p):
        if i == len(grades):
            out.append((tuple(clicks), p))
            return
        c, s = model.click[grades[i]], model.stop[grades[i]]
        walk(i + 1, clicks + [False], p * (1 - c))
        if c > 0:
            if s > 0:
                out.append((tuple(clicks + [True] + [False] * (len(grades) - i - 1)), p * c * s))
            walk(i + 1, clicks + [True], p * c * (1 - s))

    walk(0, [], 1.0)
    return out


def _pl_probability(ranking, s):
    p, left = 1.0, list(range(len(s)))
    for d in ranking:
        p *= math.exp(s[d]) / sum(math.exp(s[e]) for e in left)
        left.remove(d)
    return p


def _prefers(clicks, i, j):
    """Whether PDGD infers 'position i over position j' from these clicks (section 4.1)."""
    last = max((k for k, c in enumerate(clicks) if c), default=-1)
    return clicks[i] and not clicks[j] and j <= last + 1


def test_pdgd_gradient_expectation_is_the_debiased_pairwise_gradient():
    """On 4 documents with a list of 3, enumerate every ranking (Plackett-Luce) and click pattern
    (navigational cascade): the expected estimate equals sum_{i,j} beta_ij grad P(d_i > d_j) with
    beta_ij = sum_R P(R) rho(i, j, R) P(i > j inferred | R) computed from the definitions, and the net
    weight beta_ij - beta_ji is zero for two equally relevant documents and positive towards the more
    relevant document of every other pair (Oosterhuis & de Rijke 2018, section 4.3)."""
    g = np.random.default_rng(0)
    X = g.normal(size=(4, 3))
    w = np.array([0.3, -0.5, 0.8])
    s = X @ w
    labels = [3, 1, 1, 0]                       # documents 1 and 2 are equally relevant
    model = ClickModel.named("navigational", grades=5)
    sc, lrest, grad = np.zeros(3), np.zeros(3), np.zeros(3)
    expected = np.zeros(3)
    beta = np.zeros((4, 4))
    for R in itertools.permutations(range(4), 3):
        pR = _pl_probability(R, s)
        shown = np.array(R, np.int64)
        sc[:] = s[shown]
        for p in range(3):
            lrest[p] = math.log(sum(math.exp(s[d]) for d in range(4) if d not in R[:p]))
        for clicks, pc in _cascade_outcomes([labels[d] for d in R], model):
            pairwise_gradient(X, shown, 3, np.array(clicks), sc, lrest, grad)
            expected += pR * pc * grad
            for a, b in itertools.permutations(range(3), 2):
                if _prefers(clicks, a, b):
                    swapped = list(R)
                    swapped[a], swapped[b] = swapped[b], swapped[a]
                    pS = _pl_probability(swapped, s)
                    beta[R[a], R[b]] += pR * pc * pS / (pR + pS)
    reference = np.zeros(3)
    for i, j in itertools.permutations(range(4), 2):
        sig = 1.0 / (1.0 + math.exp(-(s[i] - s[j])))
        reference += beta[i, j] * sig * (1 - sig) * (X[i] - X[j])
    np.testing.assert_allclose(expected, reference, rtol=1e-12, atol=1e-15)
    net = beta - beta.T
    assert abs(net[1, 2]) < 1e-14 and beta[1, 2] > 0.01       # inferred often, cancels exactly
    for i, j in [(0, 1), (0, 2), (0, 3), (1, 3), (2, 3)]:
        assert net[i, j] > 1e-3, (i, j, net[i, j])


def test_pdgd_list_is_a_plackett_luce_sample():
    """The first two places of PDGD's list follow the Plackett-Luce probabilities of the scores."""
    X = np.array([[2.0], [1.0], [0.0], [-1.0]])
    learner = PDGD(1, seed=3, length=2)
    learner._st[0][0, 0] = 1.0
    counts = {}
    n = 40_000
    for _ in range(n):
        shown = tuple(learner.rank(X))
        counts[shown] = counts.get(shown, 0) + 1
    s = X[:, 0]
    for R, c in counts.items():
        p = _pl_probability(R, s)
        assert abs(c / n - p) < 4 * math.sqrt(p * (1 - p) / n) + 1e-3, (R, c / n, p)
    assert len(counts) == 12


# ----- PDGD on a neural ranker ------------------------------------------------------------------------
def nonlinear(seed: int) -> LtrData:
    """Queries whose grades are quantiles of ``-x_0^2 + 0.3 x_1``: the best documents have ``x_0`` near 0,
    which no weight vector can rank first."""
    g = np.random.default_rng(seed)
    X = g.normal(size=(40 * 30, 4))
    s = -X[:, 0] ** 2 + 0.3 * X[:, 1]
    labels = np.digitize(s, np.quantile(s, [0.6, 0.8, 0.9, 0.97])).astype(np.int64)
    return LtrData(X, labels, np.arange(0, 40 * 30 + 1, 30), [str(q) for q in range(40)], "nonlinear")


def test_neural_pdgd_learns_what_no_linear_ranker_can():
    train, test = nonlinear(0), nonlinear(1)
    for seed in (1, 2, 3):
        linear = simulate_learner("PDGD", train, test, "perfect", impressions=2000, every=2000, seed=seed)
        neural = simulate_learner("PDGD-NN:hidden=8", train, test, "perfect", impressions=2000, every=2000, seed=seed)
        assert linear.offline_ndcg.iloc[-1] < 0.75, seed                 # the linear ceiling is about 0.66
        assert neural.offline_ndcg.iloc[-1] > 0.9, (seed, neural.offline_ndcg.tolist())
        assert neural.online_ndcg.iloc[-1] > linear.online_ndcg.iloc[-1]


def test_neural_pdgd_steps_along_the_backpropagated_pairwise_estimate():
    """One update moves the network's parameters by learning_rate * sum_k weight_k (grad f(d_better) -
    grad f(d_worse)), with the pairs and weights PDGD infers and grad f by finite differences."""
    X = np.random.default_rng(4).normal(size=(6, 3))
    learner = PDGDNeural(3, seed=2, hidden=5, learning_rate=0.1, length=4)
    shown = learner.show(X, rng=new_rng(1))
    clicks = np.array([False, True, False, False])
    sc, lrest = shown.scratch
    better, worse, weight = np.empty(16, np.int64), np.empty(16, np.int64), np.empty(16)
    pairs = inferred_pairs(4, clicks, sc, lrest, better, worse, weight)
    assert pairs == 2                                      # position 1 over 0 and over 2

    def score(params, d):
        probe = OnlineLearner.from_state(learner.state)
        W, b, v = probe._st[:3]
        W[:], b[:], v[:] = params[:15].reshape(5, 3), params[15:20], params[20:]
        return probe.scores(X)[d]

    theta, eps = learner.weights, 1e-6
    grad = np.zeros_like(theta)
    for k in range(pairs):
        for d, sign in ((shown.list[better[k]], 1), (shown.list[worse[k]], -1)):
            for m in range(theta.size):
                up, down = theta.copy(), theta.copy()
                up[m] += eps
                down[m] -= eps
                grad[m] += sign * weight[k] * (score(up, d) - score(down, d)) / (2 * eps)
    learner.learn(shown, clicks)
    np.testing.assert_allclose(learner.weights - theta, 0.1 * grad, rtol=1e-5, atol=1e-9)
    assert np.abs(grad).max() > 1e-3


# ----- CPS's ranks of logged lists, MGD's two updates, parameters and errors ------------------------
def test_cps_ranks_the_logged_documents_as_a_full_ranking_does():
    g = np.random.default_rng(0)
    for _ in range(50):
        n, C = int(g.integers(1, 40)), int(g.integers(1, 5))
        S = g.integers(0, 4, size=(n, C)).astype(float)          # few distinct scores: many ties
        k = int(g.integers(1, min(n, 10) + 1))
        shown = g.permutation(n)[:k]
        out = np.full((C, k), -1, np.int64)
        shown_ranks(S, shown, k, out)
        for j in range(C):
            ranking = sorted(range(n), key=lambda i: (-S[i, j], i))    # by score, ties by index
            assert out[j].tolist() == [ranking.index(d) for d in shown]


def test_mgd_mean_and_winner_takes_all_steps():
    U = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    credit = np.array([1.0, 2.0, 2.0, 0.0])          # candidates 0 and 1 beat the current ranker
    W = np.zeros((4, 2))
    step_to_winners(W, U, credit, 0.5, True, new_rng(0), np.zeros(3, np.int64))
    assert W[0].tolist() == [0.25, 0.25]
    seen = set()
    for seed in range(20):
        W[0] = 0.0
        step_to_winners(W, U, credit, 0.5, False, new_rng(seed), np.zeros(3, np.int64))
        seen.add(tuple(W[0]))
    assert seen == {(0.5, 0.0), (0.0, 0.5)}
    W[0] = 0.0
    step_to_winners(W, U, np.array([3.0, 2.0, 1.0, 0.0]), 0.5, True, new_rng(0), np.zeros(3, np.int64))
    assert W[0].tolist() == [0.0, 0.0]                 # no candidate beat it: no step


def test_parameters_are_stored_and_checked():
    learner = MGD(5, seed=1, n=3, update="winner")
    assert learner.param_values["n"] == 3 and learner._st[0].shape == (4, 5)
    assert repr(DBGD(3)) == "DBGD(n_features=3, delta=1.0, gamma=0.01, interleaving='team-draft', length=10)"
    with pytest.raises(IrbanditsError, match="unknown parameter 'alpha'"):
        DBGD(3, alpha=0.1)
    with pytest.raises(IrbanditsError, match="interleaving method"):
        DBGD(3, interleaving="zipper")
    with pytest.raises(IrbanditsError, match="update"):
        MGD(3, update="median")
    with pytest.raises(IrbanditsError, match=r"\(documents, 3\)"):
        DBGD(3).rank(np.zeros((4, 2)))
    with pytest.raises(IrbanditsError, match="rank\\(\\) first"):
        PDGD(3).update([0])
    learner = PDGD(2)
    shown = learner.rank(np.eye(2))
    with pytest.raises(IrbanditsError, match="clicked position 5"):
        learner.update([5])
    assert len(shown) == 2
    with pytest.raises(IrbanditsError, match="unknown online learner 'SGD'"):
        simulate_learner("SGD", synthetic()[0])


def test_the_guides_neural_example_prints_its_numbers(monkeypatch, capsys):
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "guides" / "oltr.md").read_text()
    block, printed = next((b, t) for b, t in re.findall(r"```python\n((?:(?!```).)*)```\s*```text\n(.*?)```", text, re.S)
                          if "PDGD-NN" in b)
    monkeypatch.chdir(root)
    exec(compile(block, "oltr.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == printed.splitlines()
