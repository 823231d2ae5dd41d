"""SOSM (sample-only scored multileaving, Brost et al. 2016) and document constraints (He, Zhai & Li
2009): credit by hand, against plain-Python readings of the published algorithms, fidelity (random
clicks give no preference, a dominated list loses) and the NP2004 matrices they estimate."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DATA
from scipy.stats import binomtest

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.interleaving import METHODS, Interleaver, constraint_credit, interleave
from irbandits.clicks.multileaving import METHODS as MULTI
from irbandits.clicks.multileaving import multileave
from irbandits.rng import new_rng

NP2004 = DATA / "ltr" / "letor3-np2004-fold1" / "test.txt.gz"
W = 1.0 / np.arange(1.0, 30.0) ** 3  # SOSM's weight of (0-based) rank k in a ranker's ranking of the sample


def w(k: int) -> float:
    return float(W[k])


# ----- by hand ------------------------------------------------------------------------------------
def test_registries_hold_both_methods():
    assert "sosm" in METHODS and "document-constraints" in METHODS and "sosm" in MULTI
    assert "document-constraints" not in MULTI  # a two-list method


def test_sosm_interleaving_by_hand():
    """A = 1 2 3 4, B = 1 2 5 3: the common prefix 1 2 comes first (no team), then team-draft picks.
    A ranks the sample 1 2 3 4 and leaves 5 out (it takes rank 4's weight); B ranks it 1 2 5 3 and
    leaves 4 out."""
    for seed in range(20):
        il = interleave("sosm", [1, 2, 3, 4], [1, 2, 5, 3], seed=seed)
        shown = il.shown.tolist()
        assert shown[:2] == [1, 2] and il.assign[:2].tolist() == [-1, -1] and sorted(shown) == [1, 2, 3, 4, 5]
        wa = {1: w(0), 2: w(1), 3: w(2), 4: w(3), 5: w(4)}
        wb = {1: w(0), 2: w(1), 5: w(2), 3: w(3), 4: w(4)}
        np.testing.assert_allclose(il.prob, [wa[d] - wb[d] for d in shown], rtol=0, atol=1e-12)
        at = shown.index
        assert il.credit([at(5)]) == -1.0  # 1/125 against B's 1/27
        assert il.credit([at(3)]) == 1.0  # 1/27 against 1/64
        assert il.credit([at(3), at(4)]) == 1.0  # 1/27 + 1/64 against 1/64 + 1/125
        assert il.credit([at(5), at(4)]) == -1.0  # 1/125 + 1/64 against 1/27 + 1/125
        assert il.credit([0, 1]) == 0.0  # the prefix: both rank it alike
        assert il.credit([]) == 0.0


def test_sosm_multileaving_by_hand():
    """Three rankers; a result outside a ranker's list shares the mean weight of the ranks below its
    own results (here ranks 3-5), so each ranker's weights add up to the same sum."""
    ml = multileave("sosm", [[1, 2, 3], [3, 2, 1], [4, 5, 6]], seed=1)
    shown = ml.shown.tolist()
    assert sorted(shown) == [1, 2, 3, 4, 5, 6]
    rest = (w(3) + w(4) + w(5)) / 3
    weights = [
        {1: w(0), 2: w(1), 3: w(2), 4: rest, 5: rest, 6: rest},
        {3: w(0), 2: w(1), 1: w(2), 4: rest, 5: rest, 6: rest},
        {4: w(0), 5: w(1), 6: w(2), 1: rest, 2: rest, 3: rest},
    ]
    np.testing.assert_allclose(ml.prob, [[weights[r][d] for r in range(3)] for d in shown], rtol=0, atol=1e-12)
    assert len(set(ml.prob.sum(axis=0).tolist())) == 1  # the same sum for each, exactly
    np.testing.assert_allclose(ml.prob.sum(axis=0), W[:6].sum(), rtol=0, atol=1e-12)
    at = shown.index
    c = ml.credit([at(2)])
    assert c[0] == c[1] > c[2]  # both rank 2 second among the shown results
    c = ml.credit([at(1), at(5)])
    np.testing.assert_allclose(c, [w(0) + rest, w(2) + rest, rest + w(1)], rtol=0, atol=1e-12)
    assert c[0] > c[2] > c[1]


def _sosm_reference(lists, shown):
    """Plain-Python SOSM weights: each ranker sorts the shown results by its own ranks (results it
    does not list last); a result outside its list gets the mean weight of the ranks they fill."""
    n, out = len(shown), []
    for x in lists:
        own = sorted((d for d in shown if d in x), key=x.index)
        rest = W[len(own) : n].mean() if len(own) < n else 0.0
        out.append([w(own.index(d)) if d in own else rest for d in shown])
    return np.array(out).T


def test_sosm_matches_its_reading_of_the_published_algorithm():
    """Random lists of 2-5 rankers, some with a common prefix: the list is the prefix and then
    rounds of team-draft picks; the weights are the reference's."""
    gen = np.random.default_rng(3)
    for seed in range(150):
        m = int(gen.integers(2, 6))
        prefix = gen.permutation(30)[: int(gen.integers(0, 3))].tolist()
        rest = [d for d in range(30) if d not in prefix]
        lists = [prefix + gen.permutation(rest)[: int(gen.integers(1, 9))].tolist() for _ in range(m)]
        ml = multileave("sosm", lists, seed=seed)
        shown, assign = ml.shown.tolist(), ml.assign.tolist()
        p = len(prefix)
        while p < min(map(len, lists)) and len({x[p] for x in lists}) == 1:  # by chance longer
            p += 1
        prefix = lists[0][:p]
        assert shown[:p] == prefix and assign[:p] == [-1] * p and -1 not in assign[p:]
        assert len(set(shown)) == len(shown) == min(10, len(set().union(*map(set, lists))))
        for s in range(p, len(shown)):  # each pick is its ranker's best result not yet shown
            assert shown[s] == next(d for d in lists[assign[s]] if d not in shown[:s])
        sizes = np.bincount(assign[p:], minlength=m)
        for r in range(m):  # a ranker falls more than a round behind only when it has run out
            assert sizes[r] >= sizes.max() - 1 or set(lists[r]) <= set(shown)
        np.testing.assert_allclose(ml.prob, _sosm_reference(lists, shown), rtol=0, atol=1e-12)
        clicks = np.flatnonzero(gen.random(len(shown)) < 0.4)
        np.testing.assert_array_equal(ml.credit(clicks), ml.prob[clicks].sum(axis=0))  # exact sums
        tied = ml.credit(clicks[::-1])  # summed in another order: the same numbers
        np.testing.assert_array_equal(tied, ml.credit(clicks))


def _dc(a, b, shown, clicked):
    """Document constraints as He et al. state them (and Lerot's ``DocumentConstraints`` counts them):
    a clicked result beats every unclicked one above it and the first unclicked one below it; a list
    violates a constraint when it holds the loser and ranks it above the winner or leaves the winner
    out. Fewer violations wins."""

    def violations(x):
        v = 0
        for hi in clicked:
            below = [i for i in range(hi + 1, len(shown)) if i not in clicked][:1]
            for lo in [i for i in range(hi) if i not in clicked] + below:
                if shown[lo] in x and (shown[hi] not in x or x.index(shown[lo]) < x.index(shown[hi])):
                    v += 1
        return v

    return float(np.sign(violations(b) - violations(a)))


def _dc_kernel(a, b, shown, clicked):
    clicks = np.zeros(len(shown), np.bool_)
    clicks[list(clicked)] = True
    a_, b_, s_ = (np.array(x, np.int64) for x in (a, b, shown))
    return constraint_credit(
        a_, len(a), b_, len(b), s_, len(shown), np.zeros(len(shown), np.int64), np.zeros(len(shown)), clicks
    )


def test_document_constraints_credit_by_hand():
    """A = 1 2 3 4, B = 3 1 5 2, the list 3 1 2 5."""
    a, b, shown = [1, 2, 3, 4], [3, 1, 5, 2], [3, 1, 2, 5]
    # a click on 1: 1 > 3 (above; B violates), 1 > 2 (next; neither)
    assert _dc_kernel(a, b, shown, {1}) == 1.0
    # a click on 3: 3 > 1 (next; A violates)
    assert _dc_kernel(a, b, shown, {0}) == -1.0
    # clicks on 3 and 1: 3 > 2 (the first unclicked below; A violates), 1 > 2 (neither)
    assert _dc_kernel(a, b, shown, {0, 1}) == -1.0
    # clicks on 1 and 5: 1 > 3 (B), 1 > 2 (-), 5 > 3 (A: holds 3, not 5; B: 3 first), 5 > 2 (A): 2 each, a tie
    assert _dc_kernel(a, b, shown, {1, 3}) == 0.0
    assert _dc_kernel(a, b, shown, set()) == 0.0
    il = interleave("document-constraints", a, b, seed=0)  # the list is balanced interleaving's
    assert il.shown.tolist() == interleave("balanced", a, b, seed=0).shown.tolist()


def test_document_constraints_matches_its_reading_of_the_published_method():
    gen = np.random.default_rng(4)
    for _ in range(300):
        a, b = (
            gen.permutation(12)[: int(gen.integers(1, 9))].tolist(),
            gen.permutation(12)[: int(gen.integers(1, 9))].tolist(),
        )
        shown = gen.permutation(list(set(a) | set(b)))[:10].tolist()
        clicked = set(np.flatnonzero(gen.random(len(shown)) < 0.4).tolist())
        assert _dc_kernel(a, b, shown, clicked) == _dc(a, b, shown, clicked), (a, b, shown, clicked)


# ----- fidelity -----------------------------------------------------------------------------------
def _wins(method, a, b, p, n, seed):
    """Wins and losses of A under a user who clicks every shown result with probability ``p``."""
    gen, il = np.random.default_rng(seed), Interleaver(method, 10, seed=seed)
    won = lost = 0
    for _ in range(n):
        shown = il.interleave(a, b)
        o = il.credit(gen.random(len(shown)) < p)[0]
        won, lost = won + (o > 0), lost + (o < 0)
    return won, lost


PAIRS = {  # fixed pairs of lists, overlapping in several ways
    "reversed": (np.arange(10), np.arange(10)[::-1].copy()),
    "shifted": (np.arange(10), np.arange(5, 15)),
    "interlaced": (np.arange(10), np.array([3, 0, 11, 1, 12, 2, 13, 4, 5, 14])),
    "permuted": (np.random.default_rng(1).permutation(10), np.random.default_rng(2).permutation(10)),
}


@pytest.mark.parametrize("pair", list(PAIRS))
def test_sosm_random_clicks_give_no_preference_for_any_pair(pair):
    """With clicks at probability 1/2 SOSM is unbiased for every pair: each ranker's weights add up to
    the same sum, so the clicked and the unclicked results give opposite score differences, and a
    click set is as likely as its complement (binomial test of wins against losses)."""
    won, lost = _wins("sosm", *PAIRS[pair], 0.5, 6000, seed=5)
    assert won + lost > 4000 and binomtest(won, won + lost).pvalue > 1e-3, (pair, won, lost)


def test_sosm_multileaving_random_clicks_give_no_preference():
    lists = [list(range(10)), list(range(9, -1, -1)), [3, 0, 11, 1, 12, 2, 13, 4, 5, 14]]
    gen = np.random.default_rng(6)
    beats = np.zeros((3, 3), np.int64)
    for seed in range(3000):
        ml = multileave("sosm", lists, seed=seed)
        c = ml.credit(np.flatnonzero(gen.random(len(ml.shown)) < 0.5))
        beats += c[:, None] > c[None, :]
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        assert binomtest(int(beats[i, j]), int(beats[i, j] + beats[j, i])).pvalue > 1e-3, beats


@pytest.mark.parametrize("method", ["sosm", "document-constraints"])
def test_random_clicks_give_no_preference_to_either_side(method):
    """Rankings drawn at random (which one is A is chance): neither side is preferred, at a click
    probability of 1/2 and of 0.2 (binomial test of A's wins against its losses)."""
    gen = np.random.default_rng(8)
    il = Interleaver(method, 10, seed=9)
    for p in (0.5, 0.2):
        won = lost = 0
        for _ in range(6000):
            a, b = gen.permutation(15)[:10], gen.permutation(15)[:10]
            shown = il.interleave(a, b)
            o = il.credit(gen.random(len(shown)) < p)[0]
            won, lost = won + (o > 0), lost + (o < 0)
        assert won + lost > 3000 and binomtest(won, won + lost).pvalue > 1e-3, (method, p, won, lost)


def test_document_constraints_favours_the_list_that_holds_fewer_shown_results():
    """The method's known blind spot (Hofmann et al., CIKM 2011, call it biased): a list violates
    only constraints on results it holds, so under random clicks B = 5..14, which holds half of the
    shown results, beats A = 0..9, which holds them all."""
    won, lost = _wins("document-constraints", *PAIRS["shifted"], 0.5, 3000, seed=5)
    assert lost > 1.5 * won and binomtest(won, won + lost).pvalue < 1e-9, (won, lost)


GRADES = np.zeros(20, np.int64)
GRADES[[0, 1]] = [4, 3]  # results 0 and 1 are relevant
NAVIGATIONAL = ClickModel.named("navigational", grades=5, length=10)


@pytest.mark.parametrize("method", ["sosm", "document-constraints"])
def test_a_dominated_list_loses(method):
    """B is A with its relevant results moved down (grade 4 from 1st to 6th, grade 3 from 2nd to
    8th): under navigational clicks A wins far more than half of the decided comparisons."""
    a, b = np.arange(10), np.array([2, 3, 4, 5, 6, 0, 7, 1, 8, 9])
    state, clicks, il = new_rng(12), np.zeros(10, np.bool_), Interleaver(method, 10, seed=13)
    won = lost = 0
    for _ in range(2000):
        shown = il.interleave(a, b)
        NAVIGATIONAL.simulate(GRADES[shown], clicks, state)
        o = il.credit(clicks[: len(shown)].copy())[0]
        won, lost = won + (o > 0), lost + (o < 0)
    assert won > 3 * lost and binomtest(won, won + lost).pvalue < 1e-12, (method, won, lost)


def test_sosm_multileaving_ranks_a_dominated_ranker_below():
    """Three orders of the same ten results, each relevant result lower in the next: the credit
    order follows (pairs of rankers by how often one's credit beats the other's)."""
    lists = [list(range(10)), [2, 3, 0, 4, 1, 5, 6, 7, 8, 9], [2, 3, 4, 5, 6, 7, 8, 9, 0, 1]]
    state, clicks = new_rng(14), np.zeros(10, np.bool_)
    beats = np.zeros((3, 3), np.int64)
    for seed in range(2000):
        ml = multileave("sosm", lists, seed=seed)
        shown = np.array(ml.shown)
        NAVIGATIONAL.simulate(GRADES[shown], clicks, state)
        c = ml.credit(np.flatnonzero(clicks[: len(shown)]))
        beats += c[:, None] > c[None, :]
    assert beats[0, 1] > 3 * beats[1, 0] and beats[1, 2] > 3 * beats[2, 1], beats


# ----- NP2004 -------------------------------------------------------------------------------------
@pytest.mark.skipif(not NP2004.exists(), reason="needs ../shared/data")
def test_np2004_matrices_agree_with_team_draft_where_it_is_sure():
    """10 NP2004 features, navigational clicks, 1,000 comparisons per pair: on every pair whose
    team-draft interval (1.96 SE) excludes 1/2, SOSM and document constraints (interleaved pairs)
    prefer the same ranker; multileaved SOSM (4 rankers per list) agrees with team-draft
    multileaving of 4 on every pair that one is sure of at 2.58 SE (multileaving changes p_ij with
    the other rankers in the list, so it is compared with multileaving)."""
    from irbandits.clicks.ltr import read_ltr
    from irbandits.clicks.matrix import estimate_matrix
    from irbandits.clicks.multileaving import estimate_by_multileaving

    rankers = read_ltr(NP2004).rankers([0, 2, 10, 14, 20, 22, 27, 40, 46, 60])
    iu = np.triu_indices(rankers.K, 1)

    def sure(est, z):
        p, se = est.matrix.p[iu], est.se[iu]
        return np.abs(p - 0.5) > z * se, np.sign(p - 0.5)

    ok, sign = sure(estimate_matrix(rankers, "navigational", "team-draft", 1000, seed=1, progress=False), 1.96)
    assert ok.sum() >= 30  # most pairs are decided: the check has teeth
    for method in ("sosm", "document-constraints"):
        _, other = sure(estimate_matrix(rankers, "navigational", method, 1000, seed=2, progress=False), 0)
        assert (other[ok] == sign[ok]).all(), (method, np.flatnonzero(other[ok] != sign[ok]))
    ok, sign = sure(estimate_by_multileaving(rankers, "navigational", "team-draft", 1000, 4, seed=1), 2.58)
    _, other = sure(estimate_by_multileaving(rankers, "navigational", "sosm", 1000, 4, seed=2), 0)
    assert ok.sum() >= 20 and (other[ok] == sign[ok]).all()


# ----- where the methods are used ---------------------------------------------------------------
@pytest.mark.parametrize("method", ["sosm", "document-constraints"])
def test_service_experiments_take_the_new_methods(method):
    from irbandits.service.experiment_runtime import check_experiment, restored_interleaving, stored_interleaving

    fields = check_experiment(dict(name="x", rankers=["a", "b"], algorithm="RUCB", comparison=method, seed=0))
    assert fields["comparison"] == method
    a, b = [f"d{i}" for i in range(12)], [f"d{i}" for i in (3, 0, 20, 1, 21, 2, 22, 4, 5, 23, 6, 7)]
    for seed in range(5):
        il = interleave(method, a, b, seed=seed)
        back = restored_interleaving(method, stored_interleaving(il, a, b))
        assert back.shown.tolist() == il.shown.tolist()
        for clicked in ([0], [2], [1, 4], [3, 5, 8]):
            assert back.credit(clicked) == il.credit(clicked)


@pytest.mark.skipif(not NP2004.exists(), reason="needs ../shared/data")
def test_multileaving_study_compares_mergedts_with_the_papers_sosm_baseline(tmp_path, monkeypatch):
    """The study's RQ6 pairing: MergeDTS + PI against UCB-Multileave + SOSM (feature 23 and three
    features that never rank the named page in the top 10); the claims name SOSM, not the stand-ins."""
    from irbandits.studies import multileaving as study

    monkeypatch.setattr(study, "IMPRESSIONS", 5000)  # each ranker's own lists: enough to find the best
    configs = ("MergeDTS + PI", "UCB-Multileave + SOSM", "UCB-Multileave + TDM")
    table = study.run_study(horizon=2000, runs=1, features=[22, 15, 51, 58], out=tmp_path, configs=configs)
    assert tuple(table.algorithm.unique()) == configs and table.attrs["winner"] == 0
    assert table.attrs["candidates"]["UCB-Multileave + SOSM"]["C = 4,000,000"][2000] < 4  # it narrows
    text = study.report(table)
    claim = next(line for line in text.splitlines() if "baseline on NDCG@10" in line)
    assert "UCB-Multileave + SOSM" in claim and "TDM" not in claim, claim
    assert "| UCB-Multileave + SOSM | " in text
