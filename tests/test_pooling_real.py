"""Adjudication on the TREC 2021 DL runs: kernels against slow references, live against compiled, the paper's claims."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import DATA

from irbandits.io import read_qrels, read_runs
from irbandits.pooling import depth_pools, get_method, list_methods
from irbandits.pooling.simulate import found_at, simulate_pools, walk

DL21 = DATA / "trec-dl-2021-passage"
TOPICS = 6  # topics checked against the references (the first ones in topic order)


@pytest.fixture(scope="module")
def dl():
    pools = depth_pools(read_runs(DL21 / "runs"), depth=10)
    qrels = read_qrels(DL21 / "qrels.txt")
    return pools, {g: {t: p.relevance(qrels, g) for t, p in pools.items()} for g in (1, 2)}


# ----- slow references, written from the paper's text -----------------------------------------------
class Ref:
    """A pool as lists: run r's documents; judged set; next unjudged document of a run."""

    def __init__(self, pool):
        self.lists = [[int(d) for d in row if d >= 0] for row in pool.ranked]
        self.retrieved = [[(r, i) for r, lst in enumerate(self.lists) for i, x in enumerate(lst) if x == d]
                          for d in range(pool.size)]
        self.judged: set[int] = set()
        self.size = pool.size

    def head(self, r):
        return next((d for d in self.lists[r] if d not in self.judged), None)

    def active(self):
        return [r for r in range(len(self.lists)) if self.head(r) is not None]


def ref_mtf(pool, rel):
    p, order, prio, cur = Ref(pool), [], [0] * len(pool.runs), None
    while len(order) < p.size:
        if cur is None or p.head(cur) is None:
            cur = max(p.active(), key=lambda r: (prio[r], -r))
        d = p.head(cur)
        p.judged.add(d)
        order.append(d)
        if not rel[d]:
            prio[cur] -= 1
            cur = None
    return order


def ref_mm(pool, rel, rate):
    p, order, last = Ref(pool), [], None
    jrel, jret = [0.0] * len(pool.runs), [0.0] * len(pool.runs)
    while len(order) < p.size:
        means = {r: (1 + jrel[r]) / (2 + jret[r]) for r in p.active()}
        ties = [r for r, m in means.items() if m == max(means.values())]
        run = last if last in ties else min(ties)
        d = p.head(run)
        p.judged.add(d)
        order.append(d)
        for s, _ in p.retrieved[d]:
            jrel[s], jret[s] = rate * jrel[s] + rel[d], rate * jret[s] + 1
        last = run
    return order


def ref_ucb(pool, rel):
    p, order = Ref(pool), []
    jrel, jret = [0.0] * len(pool.runs), [0.0] * len(pool.runs)
    while len(order) < p.size:
        fresh = [r for r in p.active() if jret[r] == 0]
        if fresh:
            run = fresh[0]
        else:
            n = len(order)

            def bound(r):
                mean = jrel[r] / jret[r]
                return mean + math.sqrt(math.log(n) / jret[r] * min(0.25, mean - mean**2 + math.sqrt(2 * math.log(n) / jret[r])))

            run = max(p.active(), key=lambda r: (bound(r), -r))
        d = p.head(run)
        p.judged.add(d)
        order.append(d)
        for s, _ in p.retrieved[d]:
            jrel[s], jret[s] = jrel[s] + rel[d], jret[s] + 1
    return order


def ref_moffat(pool, rel, a, b, p_=0.8):
    p, order = Ref(pool), []
    c = [(1 - p_) * p_**i for i in range(pool.depth)]
    while len(order) < p.size:
        weight = {}
        for r, lst in enumerate(p.lists):
            res, base = p_ ** len(lst), 0.0  # residual: unjudged ranks and the ranks below the pool
            for i, d in enumerate(lst):
                res += c[i] if d not in p.judged else 0.0
                base += c[i] if d in p.judged and rel[d] else 0.0
            f = res**a * (base + res / 2) ** b
            for i, d in enumerate(lst):
                if d not in p.judged:
                    weight[d] = weight.get(d, 0.0) + c[i] * f
        d = min(d for d, w in weight.items() if w == max(weight.values()))
        p.judged.add(d)
        order.append(d)
    return order


def compiled_order(name, pool, rel, **params):
    m = get_method(name)(pool, **params)
    order = []
    while (doc := m.next()) is not None:
        order.append(pool.index(doc))
        m.judge(doc, bool(rel[order[-1]]))
    return order


REFERENCES = {
    "MTF": lambda pool, rel: ref_mtf(pool, rel),
    "MM": lambda pool, rel: ref_mm(pool, rel, 1.0),
    "MM-NS": lambda pool, rel: ref_mm(pool, rel, 0.0),
    "MM-NS:rate=0.5": lambda pool, rel: ref_mm(pool, rel, 0.5),
    "UCB1-Tuned": ref_ucb,
    "MoffatA": lambda pool, rel: ref_moffat(pool, rel, 0, 0),
    "MoffatB": lambda pool, rel: ref_moffat(pool, rel, 1, 0),
    "MoffatC": lambda pool, rel: ref_moffat(pool, rel, 1, 3),
}


@pytest.mark.parametrize("label", list(REFERENCES))
def test_kernels_follow_the_slow_references(dl, label):
    pools, rels = dl
    name, _, param = label.partition(":")
    params = {"rate": float(param.split("=")[1])} if param else {}
    for topic in sorted(pools)[:TOPICS]:
        pool, rel = pools[topic], rels[2][topic]
        assert compiled_order(name, pool, rel, **params) == REFERENCES[label](pool, rel), (label, topic)


@pytest.mark.parametrize("name", list(list_methods().name))
def test_live_object_compiled_walk_and_saved_state_agree(dl, name):
    pools, rels = dl
    topic = sorted(pools)[7]
    pool, rel = pools[topic], rels[1][topic]
    found = walk(get_method(name)(pool, seed=11), rel)
    live, docs = get_method(name)(pool, seed=11), []
    while (doc := live.next()) is not None:
        assert live.next() == doc                          # asking again gives the same document
        docs.append(doc)
        live.judge(doc, bool(rel[pool.index(doc)]))
        if len(docs) == 30:                                # save, reload and go on from the copy
            live = type(live).from_state(pool, live.state)
    assert sorted(docs) == pool.docnos.tolist()            # every pooled document exactly once
    assert np.array_equal(np.cumsum([rel[pool.index(d)] for d in docs]), found)
    assert found[-1] == rel.sum()


def test_table_on_the_53_topics(dl):
    pools, rels = dl
    sizes = [p.size for p in pools.values()]
    assert len(pools) == 53 and len(next(iter(pools.values())).runs) == 63 and max(sizes) == 253
    curves = simulate_pools(pools, rels[1], ["DocID", "Rank", "MoffatC", "MTF", "Random", "MM", "MM-NS"],
                            repetitions=10, seed=1)
    assert {"method", "topic", "repetition", "judgments", "relevant_found"} <= set(curves.columns)
    table = found_at(curves, [10, 20, 50, 100])
    # every method ends with every relevant document of the pools
    assert np.allclose(found_at(curves, [])["all"], sum(r.sum() for r in rels[1].values()) / 53)
    # DocID is the worst at every level; MM and MM-NS beat Random and Rank at 50 and 100 judgments
    assert (table.loc["DocID"] == table.min()).all()
    for n in ("50", "100"):
        assert min(table.loc["MM", n], table.loc["MM-NS", n]) > max(table.loc[m, n] for m in ("Random", "Rank"))


def test_the_dl_pools_are_judged_but_for_84_documents(dl):
    pools, rels = dl
    qrels = read_qrels(DL21 / "qrels.txt")
    assert sum(p.size for p in pools.values()) == 7447 and sum(p.unjudged(qrels) for p in pools.values()) == 84
    assert sum(r.sum() for r in rels[1].values()) == 4025 and sum(r.sum() for r in rels[2].values()) == 1939
