"""Interleaving and multileaving kernels against pure-Python references and hand-computed credit."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import DATA, ROOT

from irbandits.clicks.interleaving import CUTOFF, TAU, get_method, interleave
from irbandits.clicks.multileaving import multileave, multileave_wins
from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, randint


def _lists(rng, n_docs=14):
    """Two random top-k lists over a small pool, so they overlap a lot."""
    a = rng.permutation(n_docs)[: rng.integers(1, CUTOFF + 1)]
    b = rng.permutation(n_docs)[: rng.integers(1, CUTOFF + 1)]
    return a.tolist(), b.tolist()


def ref_team_draft(a, b, rng):
    """Algorithm 2 of the slides (Radlinski et al. 2008), cut at 10."""
    shown, teams, size_a, size_b = [], [], 0, 0
    while len(shown) < CUTOFF and any(d not in shown for d in a) and any(d not in shown for d in b):
        if size_a < size_b or (size_a == size_b and randint(rng, 2) == 1):
            shown.append(next(d for d in a if d not in shown)); teams.append(0); size_a += 1
        else:
            shown.append(next(d for d in b if d not in shown)); teams.append(1); size_b += 1
    return shown, teams


def ref_balanced(a, b, rng):
    """Balanced interleaving (Joachims 2003), cut at 10."""
    a_first = randint(rng, 2) == 1
    shown, ka, kb = [], 0, 0
    while len(shown) < CUTOFF and ka < len(a) and kb < len(b):
        if ka < kb or (ka == kb and a_first):
            d, ka = a[ka], ka + 1
        else:
            d, kb = b[kb], kb + 1
        if d not in shown:
            shown.append(d)
    return shown


@pytest.mark.parametrize("method, ref", [("team-draft", ref_team_draft), ("balanced", ref_balanced)])
def test_kernels_match_the_published_algorithms_draw_for_draw(method, ref):
    gen = np.random.default_rng(0)
    for seed in range(300):
        a, b = _lists(gen)
        il = interleave(method, a, b, rng=new_rng(seed))
        expected = ref(a, b, new_rng(seed))
        if method == "team-draft":
            assert (il.shown.tolist(), il.assign.tolist()) == expected
        else:
            assert il.shown.tolist() == expected


def test_team_draft_credit_counts_clicks_per_team():
    il = interleave("team-draft", [1, 2, 3, 4], [3, 1, 5, 6], seed=4)
    assert (il.shown.tolist(), il.assign.tolist()) == ([1, 3, 5, 2, 6], [0, 1, 1, 0, 1])
    assert il.credit([]) == 0.0 and il.credit([0]) == 1.0 and il.credit([0, 1]) == 0.0
    assert il.credit([0, 1, 4]) == -1.0 and il.credit([0, 3, 4]) == 1.0


def test_balanced_credit_by_hand():
    a, b = [1, 2, 3, 4], [5, 1, 6, 2]
    il = interleave("balanced", a, b, seed=0)
    pos = {d: i for i, d in enumerate(il.shown.tolist())}
    # lowest click on 2: rank 2 in A, rank 4 in B, k = 2; A's top 2 {1, 2} has 2 clicks, B's {5, 1} one
    assert il.credit([pos[1], pos[2]]) == 1.0
    # clicks on 5 and 6: lowest is 6 (B rank 3, not in A): k = 3; A's top 3 has 0, B's top 3 has 2
    assert il.credit([pos[5], pos[6]]) == -1.0
    # one click on 1: k = min(1, 2) = 1; A's top 1 is {1}, B's top 1 is {5}
    assert il.credit([pos[1]]) == 1.0


def _softmax(lst, remaining, d):
    w = {x: 1.0 / (i + 1) ** TAU for i, x in enumerate(lst) if x in remaining}
    return w.get(d, 0.0) / sum(w.values()) if w else 0.0


def test_probabilistic_slot_posteriors_and_marginalised_credit_by_enumeration():
    gen = np.random.default_rng(1)
    for seed in range(200):
        a, b = _lists(gen)
        il = interleave("probabilistic", a, b, seed=seed)
        remaining = set(a) | set(b)
        for s, d in enumerate(il.shown.tolist()):
            pa, pb = _softmax(a, remaining, d), _softmax(b, remaining, d)
            assert il.prob[s] == pytest.approx(pa / (pa + pb))
            assert (pa > 0 if il.assign[s] == 0 else pb > 0)
            remaining.discard(d)
        clicks = [s for s in range(len(il.shown)) if gen.random() < 0.4]
        expected = 0.0  # E[sign(#A-clicks - #B-clicks)] over every assignment of every slot
        for assign in itertools.product([0, 1], repeat=len(il.shown)):
            w = np.prod([il.prob[s] if x == 0 else 1 - il.prob[s] for s, x in enumerate(assign)])
            diff = sum(1 if assign[s] == 0 else -1 for s in clicks)
            expected += w * np.sign(diff)
        assert il.credit(clicks) == pytest.approx(expected, abs=1e-12)


def test_probabilistic_first_result_follows_the_softmax_mixture():
    a, b = list(range(10)), list(range(9, -1, -1))
    rng = new_rng(5)
    firsts = np.array([interleave("probabilistic", a, b, rng=rng).shown[0] for _ in range(40_000)])
    z = sum(1 / r**3 for r in range(1, 11))
    p0 = 0.5 / z + 0.5 * (1 / 10**3) / z
    assert abs(np.mean(firsts == 0) - p0) < 4 * np.sqrt(p0 * (1 - p0) / 40_000)


def test_live_api_takes_any_document_ids():
    il = interleave("team-draft", ["d1", "d2", "d3"], ["d3", "d9"], seed=4)
    ref = interleave("team-draft", [1, 2, 3], [3, 9], seed=4)
    assert il.shown.tolist() == ["d" + str(x) for x in ref.shown.tolist()]
    assert il.credit([0]) == ref.credit([0])


def test_live_api_checks_its_input():
    with pytest.raises(IrbanditsError, match="unknown interleaving method 'team_draft'"):
        get_method("team_draft")
    with pytest.raises(IrbanditsError, match="distinct documents"):
        interleave("team-draft", [1, 1, 2], [2, 3])
    with pytest.raises(IrbanditsError, match="clicked position 7"):
        interleave("team-draft", [1, 2], [2, 3]).credit([7])


def test_team_draft_multileaving_picks_in_rounds():
    gen = np.random.default_rng(2)
    for seed in range(200):
        m = int(gen.integers(2, 6))
        lens = gen.integers(1, CUTOFF + 1, m)
        rankings = [gen.permutation(20)[:lens[r]].tolist() for r in range(m)]
        ml = multileave("team-draft", rankings, seed=seed)
        shown = ml.shown.tolist()
        assert len(set(shown)) == len(shown)
        for s, (d, r) in enumerate(zip(shown, ml.assign.tolist())):
            # each pick is its ranker's best result not yet shown
            assert d == next(x for x in rankings[r] if x not in shown[:s])
        sizes = np.bincount(ml.assign, minlength=m)
        for r in range(m):  # a ranker falls more than a round behind only when it has run out
            assert sizes[r] >= sizes.max() - 1 or set(rankings[r]) <= set(shown)
        clicks = [s for s in range(len(shown)) if gen.random() < 0.5]
        credit = ml.credit(clicks)
        assert credit.sum() == len(clicks) and all(credit[ml.assign[s]] >= 1 for s in clicks)


def test_probabilistic_multileaving_credit_is_a_distribution_over_rankers():
    ml = multileave("probabilistic", [[1, 2, 3], [3, 2, 1], [4, 5, 6]], seed=2)
    np.testing.assert_allclose(ml.prob.sum(axis=1), 1.0)
    assert sorted(ml.shown.tolist()) == [1, 2, 3, 4, 5, 6]
    for s, d in enumerate(ml.shown.tolist()):
        assert ml.prob[s, 2] == (1.0 if d >= 4 else 0.0)
    assert ml.credit(range(6)).sum() == pytest.approx(6.0)


@pytest.mark.parametrize("method", ["team-draft", "probabilistic"])
def test_multileaving_prefers_the_strong_ranker(method):
    from irbandits.clicks.ltr import read_ltr

    data = read_ltr(DATA / "ltr" / "lightgbm-lambdarank-sample" / "rank.test")
    rankers = data.rankers([lambda X: np.zeros(len(X)), lambda X: data.labels + 0.0, lambda X: -data.labels + 0.0])
    W = multileave_wins(rankers, "perfect", method, steps=3000, seed=1)
    p = W / (W + W.T + np.eye(3))
    assert p[1, 0] > 0.65 and p[0, 2] > 0.6 and p[1, 2] > 0.8  # ideal > random > worst (ties count half)



def test_readme_interleaving_example_runs(capsys):
    import re

    text = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "clicks.interleaving" in b)
    ns: dict = {}
    exec(compile(block, "README.md", "exec"), ns)
    il = ns["il"]
    assert sorted(il.shown.tolist()) == [11, 12, 13, 14, 15, 16]
    # a click on the first result: A gets credit in proportion to how likely A placed it there
    assert il.credit([0]) == pytest.approx(2 * il.prob[0] - 1)
    assert capsys.readouterr().out.split()[-1] == str(il.credit([0]))
