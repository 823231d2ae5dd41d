"""Pools beyond depth-k (RRF, RBP-sum, RBP-max) on hand-computed examples, and runs read only to the depth a
pool needs."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest
from helpers import DATA, shell

from irbandits.errors import IrbanditsError
from irbandits.io import read_runs
from irbandits.pooling import depth_pools, get_method
from irbandits.pooling.pools import fused_pools

DL21 = DATA / "trec-dl-2021-passage"
# run x: a b c d, run y: c a e, run z: f (one topic)
RUNS = pd.DataFrame(dict(run=list("xxxxyyyz"), topic="1", docno=list("abcdcaef"), rank=[1, 2, 3, 4, 1, 2, 3, 1]))


def test_rrf_pool_by_hand():
    # k = 60: a 1/61 + 1/62, c 1/63 + 1/61, b 1/62, f 1/61, e 1/63, d 1/64
    weights = {"a": 1 / 61 + 1 / 62, "c": 1 / 63 + 1 / 61, "f": 1 / 61, "b": 1 / 62, "e": 1 / 63, "d": 1 / 64}
    assert sorted(weights, key=lambda d: -weights[d])[:3] == ["a", "c", "f"]
    pool = fused_pools(RUNS, 3, "rrf")["1"]
    assert pool.docnos.tolist() == ["a", "c", "f"]
    # each run's pooled documents in rank order, ranks closed up (x: a c, y: c a, z: f)
    assert pool.ranked.tolist() == [[0, 1], [1, 0], [2, -1]]
    # k = 0: a 1 + 1/2, c 1/3 + 1, f 1, b 1/2: the top 4 are a, c, f, then b (1/2) over e (1/3), d (1/4)
    assert fused_pools(RUNS, 4, "rrf", k=0)["1"].docnos.tolist() == ["a", "b", "c", "f"]


def test_rbp_sum_and_max_pools_by_hand():
    # p = 0.5, weight (1 - p) p^(rank - 1): x gives a .5, b .25, c .125, d .0625; y c .5, a .25, e .125; z f .5
    # sum: a .75, c .625, f .5, b .25, e .125, d .0625; max: a, c, f .5, b .25, e .125, d .0625
    assert fused_pools(RUNS, 2, "rbp-sum", p=0.5)["1"].docnos.tolist() == ["a", "c"]
    assert fused_pools(RUNS, 2, "rbp-max", p=0.5)["1"].docnos.tolist() == ["a", "c"]  # a tie of three: smaller docnos
    assert fused_pools(RUNS, 3, "rbp-max", p=0.5)["1"].docnos.tolist() == ["a", "c", "f"]
    # p = 0.9: sum a .1 + .09 = .19, c .081 + .1 = .181, b .09, f .1; max: a, c, f .1, then b .09
    assert fused_pools(RUNS, 3, "rbp-sum", p=0.9)["1"].docnos.tolist() == ["a", "c", "f"]
    assert fused_pools(RUNS, 4, "rbp-max", p=0.9)["1"].docnos.tolist() == ["a", "b", "c", "f"]
    big = fused_pools(RUNS, 100, "rbp-sum")["1"]
    assert big.docnos.tolist() == list("abcdef") and big.ranked[0].tolist() == [0, 1, 2, 3]


def test_fused_pools_errors():
    for kwargs, message in [(dict(size=0), "pool size"), (dict(size=2, pool="top"), "unknown fused pool"),
                            (dict(size=2, pool="rbp-sum", p=1.0), "persistence"), (dict(size=2, k=-1), "RRF")]:
        with pytest.raises(IrbanditsError, match=message):
            fused_pools(RUNS, **kwargs)


def test_methods_run_on_fused_pools():
    pool = fused_pools(RUNS, 3, "rrf")["1"]
    m = get_method("MTF")(pool)
    seen = []
    while (d := m.next()) is not None:
        m.judge(d, d == "c")
        seen.append(d)
    assert sorted(seen) == ["a", "c", "f"]


def test_dl21_fused_pools_have_the_size_and_rbp_max_keeps_every_first_document():
    runs = read_runs(DL21 / "runs")
    first = depth_pools(runs, 1)
    for kind in ("rrf", "rbp-sum", "rbp-max"):
        pools = fused_pools(runs, 50, kind)
        assert {p.size for p in pools.values()} == {50}
    # RBP-max weighs every run's first document (1 - p), the largest weight: all of them are pooled
    assert all(np.isin(first[t].docnos, pools[t].docnos).all() for t in pools if first[t].size <= 50)


def test_read_runs_to_a_depth_keeps_the_same_top(tmp_path):
    full = read_runs(DL21 / "runs")
    top = read_runs(DL21 / "runs", depth=10)
    assert top.equals(full[full["rank"] <= 10].reset_index(drop=True))
    # a file the line reader takes (tab and space mixed) and a repeated document: the same top
    (tmp_path / "r1").write_text("1 Q0 a 1 3 r1\n1\tQ0 b 2 2 r1\n1 Q0 a 3 1 r1\n1 Q0 c 4 1 r1\n")
    with gzip.open(tmp_path / "r2.gz", "wt") as fh:
        fh.write("1 Q0 c 1 5 r2\n1 Q0 d 2 4 r2\n2 Q0 e 1 1 r2\n")
    with pytest.warns(UserWarning, match="repeated"):
        whole = read_runs(tmp_path)
    with pytest.warns(UserWarning, match="repeated"):
        two = read_runs(tmp_path, depth=2)
    assert two.equals(whole[whole["rank"] <= 2].reset_index(drop=True))
    with pytest.raises(IrbanditsError, match="depth"):
        read_runs(tmp_path, depth=0)


def test_cli_simulates_an_rbp_pool(tmp_path):
    out = tmp_path / "out"
    r = shell("pool", "simulate", "--runs", DL21 / "runs", "--qrels", DL21 / "qrels.txt", "--pool", "rbp-sum",
              "--pool-size", "30", "--rbp-p", "0.9", "-m", "MoffatC", "--out", out)
    assert r.returncode == 0, r.stderr
    assert "rbp-sum pools of 30 documents" in r.stdout
    curves = pd.read_parquet(out / "curves.parquet")
    assert curves.judgments.max() == 30 and curves.groupby("topic").judgments.max().eq(30).all()
