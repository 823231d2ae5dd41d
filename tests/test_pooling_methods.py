"""Adjudication methods on hand-made runs whose next choice is known, and the shared pool rules."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irbandits.errors import IrbanditsError
from irbandits.pooling import depth_pools, get_method, list_methods, parse_method
from irbandits.pooling.simulate import simulate_pools


def pool_of(runs: dict[str, str], depth: int = 10, topic: str = "1"):
    """A one-topic pool from ``{"run": "abc"}`` (one-letter docnos, best first)."""
    rows = [(name, topic, doc, rank) for name, docs in runs.items() for rank, doc in enumerate(docs, 1)]
    return depth_pools(pd.DataFrame(rows, columns=["run", "topic", "docno", "rank"]), depth)[topic]


def drive(method, relevant: str, steps: int | None = None) -> str:
    """Judge what ``method`` offers (relevant: the docnos in ``relevant``); the documents offered, in order."""
    seen = []
    while (doc := method.next()) is not None and (steps is None or len(seen) < steps):
        seen.append(doc)
        method.judge(doc, doc in relevant)
    return "".join(seen)


def counts(method):
    own = dict(zip(method._own_names, method._own))
    return own["jrel"].tolist(), own["jret"].tolist()


def test_pools_take_the_top_k_of_every_run_in_name_and_docno_order():
    pool = pool_of({"y": "cab", "x": "bd"}, depth=2)
    assert pool.runs == ("x", "y") and pool.docnos.tolist() == ["a", "b", "c", "d"]
    assert pool.ranked.tolist() == [[1, 3], [2, 0]] and pool.length.tolist() == [2, 2]
    # document b: retrieved by x at rank 1 only (y has it at rank 3, below the depth)
    b = pool.index("b")
    assert pool.doc_run[pool.doc_ptr[b]:pool.doc_ptr[b + 1]].tolist() == [0]
    assert pool.index("zz") == -1


def test_docid_and_rank_orders():
    pool = pool_of({"x": "dca", "y": "bde", "z": "f"})
    assert drive(get_method("DocID")(pool), "") == "abcdef"
    # rank 1 of x, y, z; then rank 2 (c, d already judged); then rank 3
    assert drive(get_method("Rank")(pool), "") == "dbfcae"


def test_moffat_weights_by_hand():
    # p = 0.8: contributions 0.2, 0.16, 0.128 at ranks 1, 2, 3
    pool = pool_of({"x": "abc", "y": "cb", "z": "dc"})
    # A: a .2; b .16 + .16 = .32; c .128 + .2 + .16 = .488; d .2 -> c, b, then a and d tie (a first)
    assert drive(get_method("MoffatA")(pool), "") == "cbad"
    # C after c (relevant) and b (not): base x = .128, y = .2, z = .16; residuals x = 1 - .288, y = .64, z = .84
    # w_a = .2 * .712 * (.128 + .356)^3 = 0.0161; w_d = .2 * .84 * (.16 + .42)^3 = 0.0328 -> d first
    m = get_method("MoffatC")(pool)
    assert drive(m, "c", steps=2) == "cb" and m.next() == "d"
    w = dict(zip(m._own_names, m._own))["weight"]
    assert np.isclose(w[pool.index("a")], 0.2 * 0.712 * (0.128 + 0.356) ** 3)
    assert np.isclose(w[pool.index("d")], 0.2 * 0.84 * (0.16 + 0.42) ** 3)


def test_mtf_stays_after_relevant_and_leaves_after_non_relevant():
    pool = pool_of({"x": "abc", "y": "def", "z": "ghi"})
    m = get_method("MTF")(pool)
    assert drive(m, "ab", steps=3) == "abc"      # a, b relevant: stay on x; c not: leave
    assert m.next() == "d"                        # to the next run of top priority
    assert drive(m, "", steps=2) == "dg"          # d not relevant: leave y at once for z
    # every run has priority -1 now; ties go to x, which is exhausted, so y resumes at e
    assert m.next() == "e" and m.offered_run == "y"


def test_judged_documents_are_skipped_at_no_cost():
    pool = pool_of({"x": "abc", "y": "bd"})
    m = get_method("MTF")(pool)
    assert drive(m, "", steps=2) == "ab"          # x gives a (not relevant), y gives b
    # back on x, whose b is judged: c comes next, and only two judgments were spent
    assert m.next() == "c" and m.judgments == 2
    assert drive(m, "") == "cd"


def test_out_of_turn_judgments_update_evidence_but_play_no_run():
    pool = pool_of({"x": "abc", "y": "de"})
    m = get_method("MTF")(pool)
    assert m.next() == "a"
    m.judge("d", False)                           # the assessor judged another document
    assert m.next() == "a" and m.offered_run == "x"
    m.judge("a", True)
    assert m.next() == "b"                        # x gave a relevant document: stay
    with pytest.raises(IrbanditsError, match="already judged"):
        m.judge("d", True)
    with pytest.raises(IrbanditsError, match="not in the depth-10 pool of topic 1"):
        m.judge("q", True)


@pytest.mark.parametrize("name", ["eps-greedy", "UCB1-Tuned", "BLA", "MM", "BLA-NS", "MM-NS"])
def test_evidence_reaches_every_run_that_retrieved_the_document(name):
    # c is retrieved by x (rank 3), y (rank 1) and z (rank 2); w never retrieved it
    pool = pool_of({"w": "ef", "x": "abc", "y": "cg", "z": "hc"})
    m = get_method(name)(pool, seed=1)
    m.next()
    m.judge("c", True)
    jrel, jret = counts(m)
    assert jrel == [0, 1, 1, 1] and jret == [0, 1, 1, 1]
    m.judge("a", False)
    jrel, jret = counts(m)
    rate = m.param_values.get("rate", 1.0)
    assert jret == [0, rate + 1, 1, 1] and jrel == [0, rate, 1, 1]


def test_mm_ns_reinitialises_counts_where_mm_remembers():
    pool = pool_of({"x": "abcdef", "y": "ghijkl"})
    mm, ns = get_method("MM")(pool), get_method("MM-NS")(pool)
    # x gives four relevant documents, then a non-relevant one
    assert drive(mm, "abcd", steps=5) == "abcde" and drive(ns, "abcd", steps=5) == "abcde"
    assert counts(ns) == ([0, 0], [1, 0])          # only the last judgment counts: Beta(1, 2), mean 1/3
    assert counts(mm) == ([4, 0], [5, 0])          # mean 5/7 still beats y's 1/2
    assert mm.next() == "f" and ns.next() == "g"


def test_mm_ns_without_propagation_credits_only_the_run_played():
    # c is retrieved by x (rank 3), y (rank 1) and z (rank 2)
    pool = pool_of({"w": "ef", "x": "abc", "y": "cg", "z": "hc"})
    on, off = get_method("MM-NS")(pool), get_method("MM-NS")(pool, rate=0.5, propagate=0)
    for m in (on, off):
        assert drive(m, "", steps=1) == "e" and m.next() == "a"     # w played e; all tie at 1/2: x offers a
        m.judge("c", True)                                           # out of turn: no run was played
    assert counts(on) == ([0, 1, 1, 1], [1, 1, 1, 1])                # every run that retrieved c
    assert counts(off) == ([0, 0, 0, 0], [1, 0, 0, 0])               # no run
    assert off.next() == "a" and drive(off, "a", steps=2) == "ab"     # x plays a (relevant), then b (not)
    assert counts(off) == ([0, 0.5, 0, 0], [1, 1.5, 0, 0])           # only x: 0.5 * 1 + 0, 0.5 * 1 + 1
    with pytest.raises(IrbanditsError, match="propagate=2 is invalid"):
        parse_method("MM-NS:propagate=2")


def test_mm_ns_propagates_by_default_as_before():
    # rate 0 and 0.5 with propagation: the orders MM-NS gave before it had the propagate parameter
    pool = pool_of({"w": "aefq", "x": "abcd", "y": "cgbh", "z": "hcij", "v": "kbcl"})
    orders = {(0.0, 1): "kbclaghijefqd", (0.5, 1): "kbclaghijdefq", (0.0, 0): "kbcladghijefq"}
    for (rate, propagate), order in orders.items():
        assert drive(get_method("MM-NS")(pool, rate=rate, propagate=propagate), "bcfhk") == order
    assert get_method("MM-NS")(pool).param_values == {"rate": 0.0, "propagate": 1}
    # the saved state of the default has the arrays it had, so campaigns saved before still load
    assert get_method("MM-NS")(pool).state["arrays"]["rate"]["data"] == [0.0]
    rel = {"1": pool.relevance(pd.DataFrame(dict(topic="1", docno=list("bcfhk"), grade=1)))}
    curves = simulate_pools({"1": pool}, rel, ["MM-NS", "MM-NS:propagate=0"], repetitions=1)
    by = {m: c.relevant_found.tolist() for m, c in curves.groupby("method", observed=True)}
    assert by["MM-NS"] == [1, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5] != by["MM-NS:propagate=0"]


def test_mm_ties_go_to_the_run_just_played():
    m = get_method("MM")(pool_of({"r0": "abc", "r1": "def"}))
    m.judge("d", True)                            # out of turn: r1 reaches 2/3
    assert drive(m, "", steps=1) == "e"           # r1 plays e (not relevant): 2/4, tied with r0's 1/2
    assert m.next() == "f"                        # the tie goes to r1, just played, not to r0
    # ties with no played run among them go to the smaller run number: y before z
    m = get_method("MM")(pool_of({"x": "ab", "y": "dc", "z": "ec"}))
    m.judge("c", True)                            # out of turn: y and z reach 2/3, no run was played
    assert m.next() == "d"


def test_ucb_plays_every_run_once_then_the_best_bound():
    pool = pool_of({"x": "ab", "y": "cd", "z": "ef"})
    m = get_method("UCB1-Tuned")(pool)
    assert drive(m, "c", steps=3) == "ace"
    # n = 3: x and z have mean 0, y mean 1 -> y
    assert m.next() == "d"


def test_eps_greedy_explores_while_eps_is_one_and_exploits_after():
    pool = pool_of({f"r{i}": f"{chr(97 + i)}{chr(65 + i)}" for i in range(5)})
    greedy = get_method("eps-greedy")(pool, seed=0, c=1e-9)
    assert drive(greedy, "a", steps=1) == "a" and greedy.next() == "A"   # r0: mean 1 against 0.5
    # c = 1: eps = min(1, 1 * 5 / (0.01 n)) = 1 for hundreds of rounds: runs are drawn at random
    firsts = {get_method("eps-greedy")(pool, seed=s, c=1.0).next() for s in range(40)}
    assert firsts == set("abcde")


def test_exhausted_runs_leave_the_game():
    pool = pool_of({"x": "a", "y": "bcd"})
    for name in list_methods().name:
        m = get_method(name)(pool, seed=3)
        assert sorted(drive(m, "abcd")) == list("abcd"), name


def test_parameters_are_checked():
    assert parse_method("MM-NS:rate=0.5").params == {"rate": 0.5}
    with pytest.raises(IrbanditsError, match="unknown parameter 'rate'; parameters: none"):
        parse_method("MM:rate=1")
    with pytest.raises(IrbanditsError, match="rate=-1.0 is invalid"):
        parse_method("BLA-NS:rate=-1")
    with pytest.raises(IrbanditsError, match="unknown pooling method 'MMNS'"):
        parse_method("MMNS")


def test_rate_one_is_the_stationary_method():
    pool = pool_of({"x": "abcdef", "y": "ghijkl", "z": "gbmnop"})
    rel = {"1": pool.relevance(pd.DataFrame(dict(topic="1", docno=list("abgkn"), grade=1)))}
    curves = simulate_pools({"1": pool}, rel, ["MM", "MM-NS:rate=1", "BLA", "BLA-NS:rate=1"], repetitions=3)
    by = {m: c.relevant_found.to_numpy() for m, c in curves.groupby("method", observed=True)}
    assert np.array_equal(by["MM"], by["MM-NS:rate=1"]) and np.array_equal(by["BLA"], by["BLA-NS:rate=1"])


@pytest.mark.parametrize("a, b", [(1, 1), (4, 1), (1, 3), (3, 5), (11, 2), (2.5, 1.5)])
def test_bla_beta_draws_follow_the_beta_distribution(a, b):
    from numba import njit
    from scipy import stats

    from irbandits.rng import beta_draw, new_rng

    @njit
    def draws(rng, n):
        return np.array([beta_draw(rng, float(a), float(b)) for _ in range(n)])

    x = draws(new_rng(7), 20_000)
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-3
