"""Learning-to-rank loading, tie-aware top-10 lists and the click models."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from helpers import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from irbandits.clicks import ltr
from irbandits.clicks.click_models import ClickModel, simulate_clicks
from irbandits.clicks.ltr import read_ltr, top_k
from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng

NP2004 = DATA / "ltr" / "letor3-np2004-fold1" / "test.txt.gz"
LGBM = DATA / "ltr" / "lightgbm-lambdarank-sample" / "rank.train"


def test_letor_with_qid_and_gzip():
    d = read_ltr(NP2004)
    assert (d.n_queries, d.n_features, d.grades) == (15, 64, 2)
    assert d.qids[0] == "WT04-182" and len(d.labels) == 14181 and d.labels.sum() == 15
    assert d.bounds[-1] == len(d.labels) and (np.diff(d.bounds) > 0).all()
    # first line of the file: feature 1 = 0.039163, feature 64 = 0.553870 (after the #docid comment is cut)
    assert d.features[0, 0] == pytest.approx(0.039163) and d.features[0, 63] == pytest.approx(0.553870)


def test_lightgbm_with_query_file():
    d = read_ltr(LGBM)  # rank.train.query beside it is found
    assert (d.n_queries, d.n_features, d.grades) == (201, 300, 5)
    sizes = [int(x) for x in open(f"{LGBM}.query").read().split()]
    assert np.diff(d.bounds).tolist() == sizes
    assert np.bincount(d.labels).tolist() == [645, 1211, 858, 222, 69]


def test_qids_need_not_be_contiguous(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("1 qid:b 1:3\n0 qid:a 1:1\n2 qid:b 1:2 # doc\n")
    d = read_ltr(f)
    assert d.qids == ["b", "a"] and d.labels.tolist() == [1, 2, 0] and d.features[:, 0].tolist() == [3, 2, 1]


@pytest.mark.parametrize("text, where, what", [
    ("0 qid:1 1:0.5\nx qid:1 1:0.2\n", "line 2, column 1", "the label must be a number"),
    ("0 qid:1 1:0.5\n1.5 qid:1 1:0.2\n", "line 2, column 1", "whole number"),
    ("0 qid:1 1:0.5 2=0.3\n", "line 1, column 4", "index:value"),
    ("0 qid:1 0:0.5\n", "line 1, column 3", "index >= 1"),
    ("0 qid:1 1:abc\n", "line 1, column 3", "feature 1 must be a number"),
    ("0 qid:1 1:0.5\n0 1:0.5\n", "line 2", "some lines have qid"),
    ("0 qid: 1:0.5\n", "line 1, column 2", "empty qid"),
    ("0 qid:1 1:0.5\n0 qid:1 qid:2 1:0.5\n", "line 2, column 3", "index:value"),
    ("nan qid:1 1:0.5\n", "line 1, column 1", "whole number"),
    ("0 qid:1 1:0.5 1#x:2\n", "line 1, column 4", "index:value"),
    ("0 qid:1 1:0.5 ²:2\n", "line 1, column 4", "index:value"),
    ("0 qid:1 1:0.5 2:\n", "line 1, column 4", "feature 2 must be a number"),
    ("7 qid:1 1:0.5\n", "", "labels must be 0-4"),
])
@pytest.mark.parametrize("name", ["bad.txt", "bad.txt.gz"])
def test_malformed_lines_name_file_line_and_problem(tmp_path, text, where, what, name):
    f = tmp_path / name
    with (gzip.open if name.endswith(".gz") else open)(f, "wt", encoding="utf-8") as fh:
        fh.write(text)
    if what != "labels must be 0-4":  # a layout mistake: the compiled reader leaves the file to the line reader
        assert ltr._parse_fast(f) is None
    with pytest.raises(IrbanditsError, match=name) as e:
        read_ltr(f)
    assert where in str(e.value) and what in str(e.value)


def _same(fast, slow):
    """The compiled and the line reader's (features, labels, qids) are identical, -0.0 included."""
    assert fast is not None
    for a, b in zip(fast[:2], slow[:2]):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(np.int64), b.view(np.int64))  # bit for bit
    assert (fast[2] is None) == (slow[2] is None) and (fast[2] is None or fast[2].tolist() == slow[2].tolist())


@pytest.mark.parametrize("path", [NP2004, LGBM, LGBM.with_name("rank.test"), NP2004.with_name("vali.txt.gz")],
                         ids=lambda p: p.name)
def test_compiled_reader_equals_line_reader_on_every_real_file(path):
    _same(ltr._parse_fast(path), ltr._parse_lines(path))


def test_compiled_reader_takes_odd_but_valid_files(tmp_path):
    f = tmp_path / "odd.txt"
    f.write_text("# a comment line\r\n\t2 qid:b\x0c3:1e-30 1:-0 # docid = x\r\n\n1.0 qid:a 2:0.12345678901234567 "
                 "3:inf 1:1_000 10:.5e+3\r1 qid:b 4:3.", newline="")
    _same(ltr._parse_fast(f), ltr._parse_lines(f))
    d = read_ltr(f)
    assert d.qids == ["b", "a"] and d.labels.tolist() == [2, 1, 1] and d.features.shape == (3, 10)
    assert d.features[2, 1] == 0.12345678901234567 and d.features[2, 0] == 1000 and np.signbit(d.features[0, 0])


@settings(max_examples=3000, deadline=None)
@given(st.from_regex(r"\A[+-]?[0-9]{0,12}(\.[0-9]{0,12})?([eE][+-]?[0-9]{1,3})?\Z"))
def test_compiled_numbers_are_what_float_gives(text):
    buf = np.frombuffer(text.encode(), np.uint8)
    ok, value = ltr._decimal(buf, 0, len(buf))
    try:
        expected = float(text)
    except ValueError:
        assert not ok
        return
    if ok:
        assert np.float64(value).view(np.int64) == np.float64(expected).view(np.int64)  # bit for bit
    significant = text.lstrip("+-").replace(".", "").lstrip("0")
    if "e" not in text.lower() and len(significant) <= 15:  # the common case stays compiled
        assert ok


@pytest.mark.parametrize("end", ["\n", "\r"])
def test_a_feature_wider_than_the_first_mebibyte_and_old_mac_line_ends(tmp_path, end):
    f = tmp_path / "wide.txt"
    lines = [f"{i % 3} qid:{i // 50} 1:{i / 7:.6f} 2:{i % 11}" for i in range(40_000)] + ["1 qid:x 40:2.5 2:1"]
    f.write_text(end.join(lines) + end, newline="")
    assert f.stat().st_size > 1 << 20
    fast, slow = ltr._parse_fast(f), ltr._parse_lines(f)
    _same(fast, slow)
    assert fast[0].shape == (40_001, 40) and fast[0][-1, 39] == 2.5


def test_query_file_must_add_up(tmp_path):
    f, q = tmp_path / "r.txt", tmp_path / "r.q"
    f.write_text("0 1:1\n1 1:2\n2 1:3\n")
    q.write_text("2\n2\n")
    with pytest.raises(IrbanditsError, match="add up to 4 documents but .* has 3"):
        read_ltr(f, q)
    with pytest.raises(IrbanditsError, match="no qid"):
        read_ltr(f)
    q.write_text("2\n1\n")
    assert read_ltr(f, q).bounds.tolist() == [0, 2, 3]


def test_lists_are_sorted_and_cut_at_ten_with_ties_at_random():
    d = read_ltr(NP2004)
    R = d.rankers([22, 5])  # feature 6 is the same for every document of a query: all ties
    lo, hi = d.bounds[0], d.bounds[1]
    scores = d.features[lo:hi, 22]
    top = R.ranking(0, 0, seed=1)
    assert len(top) == 10 and (np.diff(d.features[top, 22]) <= 0).all()
    assert d.features[top, 22].min() >= np.sort(scores)[-10]
    firsts = np.array([R.ranking(1, 0, seed=s)[0] for s in range(3000)]) - lo
    counts = np.bincount(firsts, minlength=hi - lo)
    assert counts.max() <= 12 and (counts > 0).sum() > 900  # ~uniform over the 1000 tied documents
    rng, out = new_rng(3), np.empty(10, np.int64)
    for _ in range(200):
        n = top_k(R.order, R.gend, R.start, 1, 2, 10, rng, out)
        assert n == 10 and len(set(out.tolist())) == 10


def test_a_partly_tied_list_keeps_the_strictly_better_documents():
    from irbandits.clicks.ltr import LtrData

    scores = np.array([5.0, 1.0, 3.0, 3.0, 3.0, 0.0])
    d = LtrData(scores[:, None], np.zeros(6, np.int64), np.array([0, 6]), ["q"])
    R = d.rankers([0, 0], cutoff=3)
    seen = set()
    for s in range(200):
        top = R.ranking(0, 0, seed=s).tolist()
        assert top[0] == 0 and set(top[1:]) <= {2, 3, 4} and len(set(top)) == 3
        seen.add(tuple(top[1:]))
    assert len(seen) == 6  # all ordered pairs of the three tied documents


def _click_rates(model, grades, n=100_000, seed=0):
    g = np.asarray(grades, np.int64)
    out, total, rng = np.zeros(10, np.bool_), np.zeros(len(g)), new_rng(seed)
    for _ in range(n):
        simulate_clicks(g, len(g), *model.arrays(), rng, out)
        total += out[:len(g)]
    return total / n


def test_cascade_click_rates_match_hand_computation():
    m = ClickModel.named("navigational", grades=5)
    # rank 1: 0.95; rank 2 reached unless click-and-stop at rank 1 (1 - 0.95 * 0.9 = 0.145), clicked 0.05;
    # rank 3 reached with 0.145 * (1 - 0.05 * 0.2), clicked 0.95
    expected = [0.95, 0.145 * 0.05, 0.145 * 0.99 * 0.95]
    np.testing.assert_allclose(_click_rates(m, [4, 0, 4]), expected, atol=0.004)
    binary = ClickModel.named("informational", grades=2)
    np.testing.assert_allclose(_click_rates(binary, [1, 0]), [0.9, (1 - 0.9 * 0.5) * 0.4], atol=0.004)


def test_position_based_and_dependent_click_models():
    pbm = ClickModel.position_based([0.1, 0.8], eta=1.0)
    np.testing.assert_allclose(_click_rates(pbm, [1, 1, 0, 1]), [0.8, 0.4, 0.1 / 3, 0.2], atol=0.005)
    dcm = ClickModel.dependent([0.0, 1.0], [0.5] * 10)
    np.testing.assert_allclose(_click_rates(dcm, [1, 1, 1]), [1.0, 0.5, 0.25], atol=0.005)
    user = ClickModel.cascade([0.2, 0.6], [0.0, 1.0])
    np.testing.assert_allclose(_click_rates(user, [1, 1]), [0.6, 0.4 * 0.6], atol=0.005)


def test_click_model_mistakes_are_clear():
    with pytest.raises(IrbanditsError, match="unknown click model 'navigation'"):
        ClickModel.named("navigation")
    with pytest.raises(IrbanditsError, match=r"probabilities in \[0, 1\]"):
        ClickModel.cascade([0.1, 1.2], [0, 0])
    with pytest.raises(IrbanditsError, match="grades must be 0..1"):
        ClickModel.named("perfect", grades=2).simulate([0, 3], np.zeros(2, np.bool_), new_rng(0))


@pytest.mark.parametrize("path", [NP2004, LGBM], ids=lambda p: p.name)
def test_every_list_is_a_valid_top_ten_for_every_query(path):
    """Reference: a list is valid when its scores are the 10 highest of the query, in order."""
    d = read_ltr(path)
    features = [0, 5, 22, 40] if d.n_features == 64 else [0, 10, 99, 185, 250]
    R = d.rankers(features)
    for r, f in enumerate(features):
        for q in range(d.n_queries):
            scores = d.features[d.bounds[q]:d.bounds[q + 1], f]
            top = R.ranking(r, q, seed=r * 1000 + q)
            assert len(set(top.tolist())) == len(top) == min(10, len(scores))
            assert ((top >= d.bounds[q]) & (top < d.bounds[q + 1])).all()
            np.testing.assert_array_equal(d.features[top, f], np.sort(scores)[::-1][:len(top)])
