"""Every interleaving / multileaving method at lengths 5-50: credit, fidelity, the optimized LP,
the reusable Interleaver, and mpkato's published examples rewritten as our own checks."""

from __future__ import annotations

import numpy as np
import pytest

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.interleaving import METHODS, Interleaver, interleave
from irbandits.clicks.multileaving import METHODS as MULTI
from irbandits.clicks.multileaving import multileave
from irbandits.clicks.optimized import distribution, expected_bias
from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, randint, uniform

LENGTHS = [5, 10, 20, 50]


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_credits_the_ranker_whose_results_are_clicked(method, length):
    a, b = np.arange(length), np.arange(1000, 1000 + length)      # disjoint: every result has one owner
    il = Interleaver(method, length, seed=length)
    for _ in range(5):
        shown = il.interleave(a, b).copy()
        assert len(shown) == length and len(set(shown.tolist())) == length
        from_a = np.flatnonzero(shown < 1000)
        assert il.credit([])[0] == 0.0
        outcome, counts = il.credit(from_a)
        assert outcome == 1.0 and counts.tolist() == [len(from_a), 0]
        outcome, counts = il.credit(np.flatnonzero(shown >= 1000))
        assert outcome == -1.0 and counts.tolist() == [0, length - len(from_a)]


@pytest.mark.parametrize("length", LENGTHS)
def test_optimized_slot_credit_is_the_inverse_rank_difference(length):
    gen = np.random.default_rng(length)
    a, b = gen.permutation(2 * length)[:length], gen.permutation(2 * length)[:length]
    il = Interleaver("optimized", length, seed=1)
    shown = il.interleave(a, b)
    rank = lambda x, d: (np.flatnonzero(x == d)[0] + 1.0) if d in x else length + 1.0  # noqa: E731
    expected = [1 / rank(a, d) - 1 / rank(b, d) for d in shown]
    np.testing.assert_allclose(il.prob[:len(shown)], expected)
    clicks = gen.random(len(shown)) < 0.3
    assert il.credit(clicks)[0] == np.sign(np.round(np.dot(clicks, expected), 12))


@pytest.mark.parametrize("length", LENGTHS)
@pytest.mark.parametrize("method", list(MULTI))
def test_every_multileaving_credits_the_owner_of_a_clicked_result(method, length):
    """Clicks on one ranker's results never credit another ranker more; over a few lists they
    credit it strictly most (pairwise-preference may count no pair in one list: a tie)."""
    rankings = [list(range(r * 100, r * 100 + length)) for r in range(3)]   # disjoint
    strict = np.zeros(3, np.int64)
    for seed in range(6):
        ml = multileave(method, rankings, seed=seed, length=length)
        assert len(ml.shown) == length
        owner = [int(d) // 100 for d in ml.shown]
        for r in range(3):
            credit = ml.credit([i for i, o in enumerate(owner) if o == r])
            assert credit[r] == credit.max() >= 0, (method, r, credit)
            strict[r] += (np.delete(credit, r) < credit[r]).all()
    assert (strict > 0).all()


@pytest.mark.parametrize("method", list(METHODS))
def test_no_preference_under_random_clicks(method):
    """A user who clicks every result with probability 1/2: the mean outcome over many seeds is
    0 within 4 standard errors (each a random one of 40 pairs of overlapping lists)."""
    gen = np.random.default_rng(7)
    n, length = 1500, 10
    pairs = [(gen.permutation(15)[:length], gen.permutation(15)[:length]) for _ in range(40)]
    il = Interleaver(method, length, seed=11)
    out = np.empty(n)
    for t in range(n):
        a, b = pairs[gen.integers(len(pairs))]
        shown = il.interleave(a, b)
        out[t] = il.credit(gen.random(len(shown)) < 0.5)[0]
    z = out.mean() / (out.std() / np.sqrt(n) + 1e-12)
    assert abs(z) < 4, (method, out.mean(), z)


@pytest.mark.parametrize("length", [10, 20])
@pytest.mark.parametrize("method", list(METHODS))
def test_the_better_ranker_wins_under_a_cascade_user(method, length):
    grades = 4 * np.arange(2 * length - 1, -1, -1) // (2 * length - 1)   # document d's grade falls with d
    good, bad = np.arange(length), np.arange(2 * length - 1, length - 1, -1)
    model, rng, clicks = ClickModel.named("navigational", length=length), new_rng(5), np.zeros(length, np.bool_)
    il = Interleaver(method, length, seed=2)
    wins = 0.0
    for _ in range(300):
        shown = il.interleave(good, bad)
        model.simulate(grades[shown], clicks, rng)
        wins += il.credit(clicks[:len(shown)].copy())[0]
    assert wins / 300 > 0.3, (method, wins / 300)


@pytest.mark.parametrize("length", [5, 10, 20])
@pytest.mark.parametrize("roughly", [False, True])
def test_optimized_distribution_is_unbiased_at_every_depth(length, roughly):
    gen = np.random.default_rng(length)
    for m in (2, 3):
        lists = np.stack([gen.permutation(length + 3)[:length] for _ in range(m)])
        dist = distribution(lists, np.full(m, length), length, roughly=roughly)
        assert abs(dist.p.sum() - 1) < 1e-9 and (dist.p >= 0).all()
        if dist.unbiased:
            assert np.abs(expected_bias(dist.credit, dist.p)).max() < 1e-7
        assert dist.bias == pytest.approx(np.abs(expected_bias(dist.credit, dist.p)).max())


def _highs(credit: np.ndarray, roughly: bool):
    """The published LPs as scipy's linprog (HiGHS) solves them: the optimum, or None if infeasible."""
    from scipy.optimize import linprog

    J, L, m = credit.shape
    cum = np.cumsum(credit, axis=1)
    seen = np.einsum("i,jir->jr", 1.0 / np.arange(1, L + 1), credit)
    s = ((seen - seen.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    if not roughly:
        diff = (cum[:, :, :-1] - cum[:, :, 1:]).reshape(J, -1).T
        res = linprog(s, A_eq=np.vstack([np.ones(J), diff]), b_eq=np.r_[1.0, np.zeros(len(diff))], method="highs")
        return res.fun if res.status == 0 else None
    rows = np.concatenate([(cum[:, :, a] - cum[:, :, b]).T for a in range(m) for b in range(m) if a != b])
    res = linprog(np.r_[s, np.ones(L)], A_ub=np.hstack([rows, -np.tile(np.eye(L), (m * (m - 1), 1))]),
                  b_ub=np.zeros(len(rows)), A_eq=np.r_[np.ones(J), np.zeros(L)][None, :], b_eq=[1.0], method="highs")
    return res.fun


def test_compiled_simplex_finds_the_optimum_highs_finds():
    """On random overlapping rankings (2-4 rankers, lists of 2-12, some shorter) the compiled
    simplex agrees with HiGHS on feasibility and reaches its optimum; its distribution is one."""
    gen = np.random.default_rng(7)
    infeasible = 0
    for trial in range(60):
        m, L = (2, 2, 3, 4)[trial % 4], int(gen.integers(2, 13))
        lens = gen.integers(1, L + 1, size=m)
        lists = np.full((m, L), -1)
        for r in range(m):
            lists[r, :lens[r]] = gen.permutation(L + int(gen.integers(0, L + 1)))[:lens[r]]
        for roughly in (False, True):
            d, best = distribution(lists, lens, L, roughly=roughly), _highs(distribution(lists, lens, L).credit, roughly)
            assert abs(d.p.sum() - 1) < 1e-12 and (d.p >= 0).all()
            cum = np.einsum("j,jkr->kr", d.p, np.cumsum(d.credit, axis=1))
            seen = np.einsum("i,jir->jr", 1.0 / np.arange(1, L + 1), d.credit)
            objective = d.p @ ((seen - seen.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
            if roughly:
                assert objective + (cum.max(axis=1) - cum.min(axis=1)).sum() == pytest.approx(best, abs=1e-7)
            elif best is None:
                infeasible += 1
                assert not d.unbiased
            else:
                assert d.unbiased and objective == pytest.approx(best, abs=1e-7)
    assert 0 < infeasible < 60


def test_infeasible_optimized_falls_back_or_raises():
    """A = [1], B = [1, 2, 3], lists of 3: provably infeasible. Both rankers' best result is 1, so
    slot 1 shows 1; A then has nothing left, so B fills slots 2 and 3: [1, 2, 3] is the only
    prefix-constrained list and p = 1 on it. A's credit for 2 and 3 (absent, rank len(A) + 1 = 2)
    is 1/2 each, B's is 1/2 and 1/3: top-3 credit A 2, B 11/6, unequal, so no distribution over the
    candidates is unbiased. The fallback (roughly-optimized) has that same one list, bias 1/6."""
    lists, lens = np.array([[1, -1, -1], [1, 2, 3]]), np.array([1, 3])
    d = distribution(lists, lens, 3)
    assert d.lists.tolist() == [[1, 2, 3]] and d.p.tolist() == [1.0]
    assert not d.unbiased and d.bias == pytest.approx(1 / 6)
    with pytest.raises(IrbanditsError, match=r"^optimized interleaving: no distribution over the 1 candidate list "
                       r"is unbiased for these rankings; use roughly-optimized"):
        distribution(lists, lens, 3, strict=True)
    il = Interleaver("optimized", 3, seed=0)              # a live comparison falls back without an error
    assert il.interleave(np.array([1]), np.array([1, 2, 3])).tolist() == [1, 2, 3]
    assert il.credit([2])[0] == 1.0                       # a click on 3: A credited 1/2, B 1/3


def test_feasible_optimized_is_unbiased_even_when_strict():
    """A = [1, 2], B = [2, 1], lists of 2: the candidates are [1, 2] and [2, 1]. At depth 1 the
    first gives A 1 - 1/2 more credit than B, the second 1/2 less, so p = (1/2, 1/2); at depth 2
    both give each ranker 1 + 1/2. Unbiased, and strict=True accepts it."""
    lists, lens = np.array([[1, 2], [2, 1]]), np.array([2, 2])
    d = distribution(lists, lens, 2, strict=True)
    assert d.lists.tolist() == [[1, 2], [2, 1]] and d.p == pytest.approx([0.5, 0.5])
    assert d.unbiased and d.bias < 1e-9


def ref_probabilistic(a, b, length, rng):
    """Probabilistic interleaving in plain Python (lists, no bitmasks), drawing from ``rng`` as
    the kernel does: a coin per slot while both rankers have results left, then a draw from the
    chosen ranker's softmax 1 / rank^3 over its unshown results (running totals, as the kernel)."""
    weight = lambda x, d: 1.0 / (x.index(d) + 1) ** 3  # noqa: E731
    shown, assign, prob = [], [], []
    wa, wb = sum(weight(a, d) for d in a), sum(weight(b, d) for d in b)
    while len(shown) < length and (set(a) | set(b)) - set(shown):
        left_a, left_b = [d for d in a if d not in shown], [d for d in b if d not in shown]
        from_a = not left_b or (bool(left_a) and randint(rng, 2) == 1)
        x, rest, w = (a, left_a, wa) if from_a else (b, left_b, wb)
        target = uniform(rng) * w
        for d in rest:
            target -= weight(x, d)
            if target < 0.0:
                break
        pa, pb = (weight(a, d) / wa if d in a else 0.0), (weight(b, d) / wb if d in b else 0.0)
        shown.append(d), assign.append(0 if from_a else 1), prob.append(pa / (pa + pb))
        wa, wb = wa - (weight(a, d) if d in a else 0.0), wb - (weight(b, d) if d in b else 0.0)
    return shown, assign, prob


@pytest.mark.parametrize("length", [10, 64, 65, 100])
def test_probabilistic_draws_like_the_reference_at_any_length(length):
    """Lists of at most 64 track shown ranks in a bitmask (64: the sign bit is used), longer ones in
    arrays; both draw exactly what the plain reference draws from the same generator."""
    gen = np.random.default_rng(length)
    for seed in range(20):
        if seed < 5:  # the same documents in both: every rank of both lists is shown and marked
            a, b = gen.permutation(length), gen.permutation(length)
        else:
            na, nb = gen.integers(1, length + 1, size=2)
            a, b = gen.permutation(2 * length)[:na], gen.permutation(2 * length)[:nb]
        il = Interleaver("probabilistic", length, rng=new_rng(seed))
        shown = il.interleave(a, b).tolist()
        ref = ref_probabilistic(a.tolist(), b.tolist(), length, new_rng(seed))
        assert (shown, il.assign[:len(shown)].tolist()) == tuple(ref[:2])
        assert il.prob[:len(shown)].tolist() == ref[2]


# ----- mpkato's published examples, rewritten ----------------------------------------------------
def test_mpkato_optimized_example_distribution_and_credit():
    """mpkato tests/test_optimized.py: lists [1, 2] and [2, 3]; three prefix-constrained lists with
    probabilities 3/7, 13/35, 1/5 (the LP's unique solution) and the published winners per click."""
    dist = distribution(np.array([[1, 2], [2, 3]]), np.array([2, 2]), 2)
    got = {tuple(r): p for r, p in zip(dist.lists.tolist(), dist.p)}
    assert set(got) == {(1, 2), (2, 1), (2, 3)}
    assert got[(1, 2)] == pytest.approx(3 / 7) and got[(2, 1)] == pytest.approx(13 / 35)
    assert got[(2, 3)] == pytest.approx(1 / 5)
    winners = {(1, 2): {(0, 1): 1, (0,): 1, (1,): -1, (): 0},
               (2, 1): {(0, 1): 1, (0,): -1, (1,): 1, (): 0},
               (2, 3): {(0, 1): -1, (0,): -1, (1,): -1, (): 0}}
    il, seen = Interleaver("optimized", 2, seed=0), set()
    for _ in range(200):
        shown = tuple(il.interleave(np.array([1, 2]), np.array([2, 3])).tolist())
        seen.add(shown)
        for clicks, w in winners[shown].items():
            assert il.credit(list(clicks))[0] == w
    assert seen == set(winners)


def test_mpkato_team_draft_readme_example():
    """mpkato's README: A = [1..5], B = [4, 3, 5, 1, 2], shown [1, 4, 2, 3, 5]; clicks on 1 and 2:
    A wins, on 4 and 3: B wins, on 1 and 4: a tie."""
    a, b = [1, 2, 3, 4, 5], [4, 3, 5, 1, 2]
    for seed in range(200):
        il = interleave("team-draft", a, b, seed=seed, length=5)
        if il.shown.tolist() == [1, 4, 2, 3, 5]:
            break
    else:
        pytest.fail("no seed gave the README's list")
    assert il.credit([0, 2]) == 1.0 and il.credit([1, 3]) == -1.0 and il.credit([0, 1]) == 0.0


def test_mpkato_pairwise_preference_candidates():
    """mpkato's pairwise-preference sampler: slot i draws from the rankers' top i + 1 not yet shown."""
    lists = [[1, 2, 3], [4, 5, 6]]
    for seed in range(50):
        shown = multileave("pairwise-preference", lists, seed=seed, length=3).shown.tolist()
        assert set(shown[:1]) <= {1, 4} and set(shown[:2]) <= {1, 2, 4, 5}


# ----- the reusable interleaver -------------------------------------------------------------------
@pytest.mark.parametrize("method", list(METHODS))
def test_interleaver_matches_interleave_and_takes_any_ids(method):
    a, b = ["x", "y", "z", "w"], ["z", "x", "v", "u"]
    one = interleave(method, a, b, seed=9)
    il = Interleaver(method, seed=9)
    assert il.interleave(a, b).tolist() == one.shown.tolist()
    assert il.credit([0])[0] == one.credit([0])


def test_interleaver_takes_clicks_and_rankings_in_any_form():
    il = Interleaver("team-draft", length=4, seed=4)
    shown = il.interleave(np.array([1, 2, 3, 4, 7], np.int32), np.array([3, 1, 5, 6])[::-1][::-1]).tolist()
    assert shown == [1, 3, 5, 2]                                       # int32 and a view: converted
    assert il.credit([2])[0] == il.credit(np.array([2]))[0] == il.credit([2, 2, 2, 2, 2])[0] == -1.0
    assert il.credit(np.array([True, False, False, True]))[0] == 1.0
    for bad in ([4], [-1], [1, 9], ["x"]):
        with pytest.raises(IrbanditsError, match="clicked position"):
            il.credit(bad)
    with pytest.raises(IrbanditsError, match="3 flags for a shown list of 4"):
        il.credit(np.ones(3, np.bool_))
    assert il.credit([0, 1])[1].tolist() == [1, 1]                    # still usable after an error


def test_lengths_and_click_models_extend():
    assert ClickModel.named("pbm", length=20).exam[19] == pytest.approx(1 / 20)
    assert ClickModel.named("dcm", length=50).stop_rank[49] == pytest.approx(1 - 0.9 ** 50)
    m = ClickModel.position_based([0.1, 0.9], exam=[1.0, 0.5, 0.25]).extended(6)
    assert m.exam.tolist() == [1.0, 0.5, 0.25, 0.25, 0.25, 0.25]
    with pytest.raises(IrbanditsError, match="length"):
        Interleaver("team-draft", length=0)
    assert len(interleave("balanced", range(30), range(29, -1, -1), length=25).shown) == 25


def test_service_experiments_keep_the_length_in_the_comparison():
    from irbandits.service.experiment_runtime import (
        check_experiment,
        parse_comparison,
        restored_interleaving,
        stored_interleaving,
    )

    body = dict(name="x", rankers=["a", "b"], algorithm="RUCB", comparison="optimized", length=20, seed=0)
    fields = check_experiment(body)
    assert fields["comparison"] == "optimized@20" and parse_comparison(fields["comparison"]) == ("optimized", 20)
    assert parse_comparison(check_experiment({**body, "length": 10})["comparison"]) == ("optimized", 10)
    a, b = [f"d{i}" for i in range(25)], [f"d{i}" for i in range(24, -1, -1)]
    il = interleave("optimized", a, b, seed=3, length=20)
    back = restored_interleaving(fields["comparison"], stored_interleaving(il, a, b))
    assert len(il.shown) == 20 and back.shown.tolist() == il.shown.tolist()
    assert back.credit([0, 5]) == il.credit([0, 5])
