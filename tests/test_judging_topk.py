"""The top-k preference process as a state machine, on hand-made topics, and its CLI."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from helpers import shell

from irbandits.errors import IrbanditsError
from irbandits.io import read_qrels
from irbandits.judging.pools import grade_pools
from irbandits.judging.topk import TopKProcess, random_pairings
from irbandits.rng import new_rng


def items(k, prefix="d"):
    return [f"{prefix}{i:02d}" for i in range(k)]


def by_strength(left, right):
    """Lower number wins: d00 beats everything."""
    return min(left, right)


def answer_all(proc, judge=by_strength):
    for topic, left, right in proc.requests():
        proc.add(topic, left, right, judge(left, right))


@pytest.mark.parametrize("k, n", [(10, 7), (23, 7), (100, 7), (12, 3), (9, 8)])
def test_pairings_cover_every_item_n_times_without_repeats(k, n):
    pairs = random_pairings(k, n, new_rng(k))
    keys = {tuple(sorted(p)) for p in pairs}
    assert len(keys) == len(pairs)  # no pair twice
    counts = np.bincount(pairs.ravel(), minlength=k)
    assert counts.min() == min(n, k - 1)
    assert counts.max() <= min(n, k - 1) + 2
    assert len(pairs) <= (k * n + 1) // 2 + k // 2
    lefts = Counter(int(a) for a, _ in pairs)
    assert 0 < sum(lefts.values()) and len(lefts) > k // 2  # placement is not always low-left


def test_phases_advance_exactly_when_complete():
    proc = TopKProcess({"t": items(20)}, seed=1)
    first = proc.requests()
    assert proc.status()[0]["kind"] == "prune" and proc.status()[0]["phase"] == 1
    for topic, left, right in first[:-1]:
        proc.add(topic, left, right, by_strength(left, right))
        assert proc.status()[0]["phase"] == 1
    assert proc.requests() == [first[-1]]
    proc.add(*first[-1], by_strength(*first[-1][1:]))
    s = proc.status()[0]
    assert s["phase"] == 2 and s["pool"] < 20
    # strongest items survive: every survivor won more than n // 2 = 3 of its pairs
    assert "d00" in proc.topics["t"].pool


def test_whole_process_finds_the_best_and_top5():
    proc = TopKProcess({"a": items(40), "b": items(6, "x")}, seed=2)
    while proc.requests():
        answer_all(proc)
    assert proc.best() == {"a": ["d00"], "b": ["x00"]}
    top = proc.top()
    assert list(top["b"]) == ["x00", "x01", "x02", "x03", "x04"]  # k = 5, scores 5/5, 4/5, ...
    assert top["b"]["x00"] == 1.0 and top["b"]["x04"] == pytest.approx(1 / 5)
    # final phase: every pair of the final pool exactly once
    t = proc.topics["a"]
    assert len(t.final_log) == len(t.pool) * (len(t.pool) - 1) // 2


def test_partial_out_of_order_and_extra_answers():
    proc = TopKProcess({"t": items(7)}, seed=3, extra=1)
    req = proc.requests()
    assert len(req) == 21  # 7 items, final phase directly
    rng = np.random.default_rng(0)
    order = rng.permutation(len(req))
    # answer half, in random order, with one answer sent twice (with the sides swapped)
    for i in order[:10]:
        topic, left, right = req[i]
        proc.add(topic, left, right, by_strength(left, right))
    topic, left, right = req[order[0]]
    proc.add(topic, right, left, by_strength(left, right))
    assert len(proc.requests()) == 11 and proc.status()[0]["unused"] == 1
    for i in order[10:]:
        proc.add(*req[i], by_strength(*req[i][1:]))
    # second (extra) final phase: the banked answer is used, so that pair is not asked again
    s = proc.status()[0]
    assert s["phase"] == 2 and s["kind"] == "final" and s["outstanding"] == 20 and s["unused"] == 0
    assert tuple(sorted((left, right))) not in {tuple(sorted(r[1:])) for r in proc.requests()}


def test_extra_final_phase_judges_every_final_pair_again_and_scores_both_rounds():
    # round 1 is a cycle (a > b > c > a): three-way tie; round 2 a > b, a > c, b > c
    proc = TopKProcess({"t": ["a", "b", "c"]}, seed=6, extra=1)
    rounds = [{("a", "b"): "a", ("b", "c"): "b", ("a", "c"): "c"},
              {("a", "b"): "a", ("b", "c"): "b", ("a", "c"): "a"}]
    for answers in rounds:
        req = proc.requests()
        assert sorted(tuple(sorted(r[1:])) for r in req) == sorted(answers)
        for topic, left, right in req:
            proc.add(topic, left, right, answers[tuple(sorted((left, right)))])
    assert not proc.requests() and set(proc.pair_counts("t").values()) == {2}
    assert proc.best(finals=[1]) == {"t": ["a", "b", "c"]}
    assert proc.best(finals=[2]) == {"t": ["a"]}
    assert proc.scores("t") == {"a": 3 / 4, "b": 2 / 4, "c": 1 / 4}  # wins / judgments, both rounds
    assert proc.best() == {"t": ["a"]}


def test_no_pair_requested_twice_within_a_phase_and_assessors_bounded():
    proc = TopKProcess({"t": items(60)}, seed=4, extra=2)
    rng = np.random.default_rng(1)
    while req := proc.requests():
        keys = [tuple(sorted(r[1:])) for r in req]
        assert len(keys) == len(set(keys))
        for topic, left, right in req:
            proc.add(topic, left, right, left if rng.random() < 0.5 else right)
    # a pair is judged at most once per phase it is in
    assert max(proc.pair_counts("t").values()) <= proc.topics["t"].phase


def test_resume_from_state_file_gives_the_same_requests(tmp_path):
    proc = TopKProcess({"t": items(30), "u": items(8)}, seed=5)
    req = proc.requests()
    for r in req[:50]:
        proc.add(*r, by_strength(*r[1:]))
    path = proc.save(tmp_path / "s.json")
    again = TopKProcess.load(path)
    assert again.requests() == proc.requests()
    # both continue identically, including the next phase's random pairings
    for p in (proc, again):
        while p.requests():
            answer_all(p)
    assert again.to_json() == proc.to_json()
    assert not list(tmp_path.glob("*.tmp"))


def test_one_item_pool_needs_no_judging_and_empty_pools_are_skipped():
    proc = TopKProcess({"one": ["only"], "none": [], "two": ["a", "b"]})
    assert proc.requests() == [("two", "a", "b")] or proc.requests() == [("two", "b", "a")]
    assert proc.best() == {"one": ["only"]}
    assert "none" not in proc.topics


def test_pruning_rules():
    # n = 6: "wins" keeps wins > 3, "borda" keeps wins / pairs >= 0.5 (3 of 6 suffices)
    rng = np.random.default_rng(7)
    strength = dict(zip(items(16), rng.permutation(16)))
    noisy = lambda a, b: a if rng.random() < 0.5 + (strength[a] - strength[b]) / 40 else b  # noqa: E731
    kept = {}
    for keep in ("wins", "borda"):
        proc = TopKProcess({"t": items(16)}, n=6, keep=keep, seed=6)
        answer_all(proc, noisy)
        log = proc.topics["t"].log
        wins = Counter(w for _, _, w, _ in log)
        pairs = Counter(x for a, b, _, _ in log for x in (a, b))
        rule = (lambda x: wins[x] > 3) if keep == "wins" else (lambda x: wins[x] >= 0.5 * pairs[x])
        assert proc.topics["t"].pool == [x for x in items(16) if rule(x)]
        kept[keep] = len(proc.topics["t"].pool)
    assert kept["borda"] > kept["wins"]
    with pytest.raises(IrbanditsError, match="keep must be"):
        TopKProcess({"t": items(3)}, keep="median")


def test_bad_answers():
    proc = TopKProcess({"t": items(5)})
    with pytest.raises(IrbanditsError, match="unknown topic 9"):
        proc.add("9", "d00", "d01", "d00")
    with pytest.raises(IrbanditsError, match="neither"):
        proc.add("t", "d00", "d01", "d02")
    with pytest.raises(IrbanditsError, match="zz is not in the topic's pool"):
        proc.add("t", "d00", "zz", "d00")


def test_pools_top_down_by_grade(data):
    pools = grade_pools(read_qrels(data / "trec-dl-2021-passage" / "qrels.txt"))
    qrels = read_qrels(data / "trec-dl-2021-passage" / "qrels.txt")
    assert len(pools) == 53 and min(map(len, pools.values())) >= 5
    for topic, pool in pools.items():
        g = qrels[(qrels.topic == topic)].set_index("docno").grade
        grades = g[pool]
        assert (grades > 0).all()
        # whole grades only, and the lowest grade was needed to reach 5
        assert set(g[g >= grades.min()].index) == set(pool)
        assert len(g[g > grades.min()]) < 5 or grades.min() == g.max()


# ----- CLI (in a new process, in the campaign's folder) ------------------------------------------
def test_cli_campaign(tmp_path):
    (tmp_path / "q.txt").write_text("".join(f"7 0 d{i:02d} {3 if i < 12 else 1}\n" for i in range(15))
                                    + "8 0 solo 2\n8 0 other 1\n8 0 zero 0\n")
    r = shell("judge", "init", "q.txt", "--state", "s.json", "--minimum", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "2 topics, pool sizes 1-12" in r.stdout
    rounds = 0
    while True:
        req = shell("judge", "requests", "--state", "s.json", cwd=tmp_path).stdout.split("\n")
        lines = [x.split() for x in req if x]
        if not lines:
            break
        (tmp_path / "j.txt").write_text("".join(f"{t} {a} {b} {min(a, b)}\n" for t, a, b in lines))
        r = shell("judge", "add", "j.txt", "--state", "s.json", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        rounds += 1
    assert rounds >= 2
    best = shell("judge", "qrels", "--state", "s.json", "--best", cwd=tmp_path).stdout.split("\n")
    assert set(filter(None, best)) == {"7 Q0 d00 1", "8 Q0 solo 1"}
    top = [x.split() for x in shell("judge", "qrels", "--state", "s.json", cwd=tmp_path).stdout.split("\n") if x]
    assert [d for t, _, d, _ in top if t == "7"][:1] == ["d00"] and len([1 for t, *_ in top if t == "7"]) >= 5
    assert "2 of 2 topics done" in shell("judge", "status", "--state", "s.json", cwd=tmp_path).stdout


def test_cli_bad_input_names_file_and_line_and_keeps_state(tmp_path):
    (tmp_path / "q.txt").write_text("".join(f"7 0 d{i} 1\n" for i in range(5)))
    assert shell("judge", "init", "q.txt", "--state", "s.json", cwd=tmp_path).returncode == 0
    before = (tmp_path / "s.json").read_text()
    cases = {
        "7 d0 d1 d0\n7 d0 d1 d2\n": "j.txt, line 2, column 4: the winner d2 is neither d0 nor d1",
        "7 d0 d1 d0\n9 d0 d1 d0\n": "j.txt, line 2: unknown topic 9",
        "7 d0 d1\n": "j.txt, line 1: a judgment line has 4 columns",
        "7 d0 d1 d0\n\n7 d0 nope d0\n": "j.txt, line 3: topic 7: nope is not in the topic's pool",
    }
    for text, message in cases.items():
        (tmp_path / "j.txt").write_text(text)
        r = shell("judge", "add", "j.txt", "--state", "s.json", cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr, r.stderr
        assert (tmp_path / "s.json").read_text() == before  # nothing of the file was recorded
    assert shell("judge", "init", "q.txt", "--state", "s.json", cwd=tmp_path).returncode == 2  # no silent overwrite
    (tmp_path / "bad.json").write_text("{")
    r = shell("judge", "status", "--state", "bad.json", cwd=tmp_path)
    assert r.returncode == 2 and "bad.json: not a judging state file" in r.stderr
    json.loads(before)


def test_cli_duplicates_merged(tmp_path):
    (tmp_path / "q.txt").write_text("".join(f"7 0 d{i} 1\n" for i in range(6)))
    (tmp_path / "t.tsv").write_text("d0\tsame text\nd1\tother\nd3\tsame text\nd4\tx\n")
    r = shell("judge", "init", "q.txt", "--state", "s.json", "--texts", "t.tsv", "--merge-duplicates", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "exact duplicates: 2 items in 1 groups" in r.stdout and "7: d0 = d3" in r.stdout
    req = [x.split() for x in shell("judge", "requests", "--state", "s.json", cwd=tmp_path).stdout.split("\n") if x]
    assert len(req) == 10 and not any("d3" in x for x in req)  # 5 distinct items
    (tmp_path / "j.txt").write_text("".join(f"{t} {a} {b} {min(a, b)}\n" for t, a, b in req))
    assert shell("judge", "add", "j.txt", "--state", "s.json", cwd=tmp_path).returncode == 0
    best = set(filter(None, shell("judge", "qrels", "--state", "s.json", "--best", cwd=tmp_path).stdout.split("\n")))
    assert best == {"7 Q0 d0 1", "7 Q0 d3 1"}
