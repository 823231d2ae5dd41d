"""`irbandits pool ...` as an assessment campaign meets it: simulate, init / next / add, clear errors."""

from __future__ import annotations

import gzip
import threading
import time

import numpy as np
import pandas as pd
import pytest
from helpers import ROOT, shell

from irbandits.errors import IrbanditsError
from irbandits.io import read_qrels, read_runs
from irbandits.pooling import depth_pools
from irbandits.pooling.simulate import walk
from irbandits.pooling.state import Campaign, editing

RUNS = {  # run -> topic -> docs, best first
    "alpha": {"1": "abcdef", "2": "pqrs"},
    "beta": {"1": "bgahij", "2": "tuvp"},
    "gamma": {"1": "kblmcn", "2": "qwxt"},
}
QRELS = "1 0 a 1\n1 0 b 2\n1 0 c 1\n1 0 h 1\n1 0 m 0\n2 0 p 1\n2 0 q 3\n2 0 w 1\n"


@pytest.fixture
def campaign_files(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, topics in RUNS.items():
        lines = [f"{t} Q0 {d} {i} {100 - i} {name}\n" for t, docs in topics.items() for i, d in enumerate(docs, 1)]
        opener = gzip.open if name == "beta" else open
        with opener(runs / (name + (".gz" if name == "beta" else "")), "wt") as fh:
            fh.writelines(lines)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def test_simulate_writes_curves_plot_table_and_time(campaign_files):
    out = campaign_files / "out"
    r = shell("pool", "simulate", "--runs", str(campaign_files / "runs"), "--qrels", str(campaign_files / "qrels.txt"),
              "--depth", "3", "--method", "MTF", "-m", "Random", "-m", "MM-NS", "--repetitions", "4", "--out", str(out))
    assert r.returncode == 0, r.stderr
    curves = pd.read_parquet(out / "curves.parquet")
    assert {"method", "topic", "repetition", "judgments", "relevant_found"} <= set(curves.columns)
    assert curves[curves.method == "Random"].repetition.nunique() == 4 and set(curves[curves.method == "MTF"].repetition) == {0}
    # depth 3: topic 1 pools a b c g k l, topic 2 p q r t u v w x; relevant (grade >= 1): a b c and p q w
    assert curves.groupby("topic").judgments.max().to_dict() == {"1": 6, "2": 8}
    assert (curves.groupby(["method", "topic", "repetition"], observed=True).relevant_found.max() == 3).all()
    assert (out / "curves.png").stat().st_size > 10_000 and (out / "table.csv").exists()
    assert "MM-NS" in r.stdout and "compiling" in r.stdout and "judging" in r.stdout


def test_simulate_relevant_grade_two(campaign_files):
    pools = depth_pools(read_runs(campaign_files / "runs"), depth=3)
    rel = pools["1"].relevance(read_qrels(campaign_files / "qrels.txt"), 2)
    assert pools["1"].docnos[rel == 1].tolist() == ["b"]


def test_campaign_init_next_add(campaign_files, cli):
    state = campaign_files / "state.json"
    runs = str(campaign_files / "runs")
    assert cli("pool", "init", "--runs", runs, "--depth", "3", "--method", "MTF", "--state", str(state)).exit_code == 0
    r = cli("pool", "next", "--state", str(state))
    assert r.exit_code == 0, r.output
    assert r.stdout.split("\n")[:2] == ["1 a alpha", "2 p alpha"]
    assert cli("pool", "next", "--state", str(state)).stdout == r.stdout  # no judgment: the same documents
    judgments = campaign_files / "j1.txt"
    judgments.write_text("1 0 a 1\n2 0 p 0\n")
    r = cli("pool", "add", str(judgments), "--state", str(state))
    assert r.exit_code == 0, r.output
    # MTF: a relevant -> stay on alpha (b); p not relevant -> beta's first unjudged document (t)
    assert cli("pool", "next", "--state", str(state), "--topic", "2").stdout == "2 t beta\n"
    assert cli("pool", "next", "--state", str(state), "--topic", "1").stdout == "1 b alpha\n"
    r = shell("pool", "init", "--runs", runs, "--state", str(state))      # the real CLI: one line, exit 2
    assert r.returncode == 2 and "exists; pass --force" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("text, message", [
    ("1 0 b 1\n1 0 zz 1\n", "j.txt, line 2: document zz is not in the depth-3 pool of topic 1"),
    ("1 0 b 1\n\n9 0 a 1\n", "j.txt, line 3: topic 9 is not in the pool"),
    ("1 0 b 1\n1 0 a 0\n", "j.txt, line 2: document a of topic 1 is already judged"),
    ("1 0 b 1\n1 0 c\n", "j.txt, line 2: a qrels line has 4 columns"),
    ("1 0 b one\n", "j.txt, line 1, column 4: grade must be a number"),
])
def test_bad_judgments_name_file_and_line_and_leave_the_state_alone(campaign_files, text, message, cli):
    state = campaign_files / "state.json"
    cli("pool", "init", "--runs", str(campaign_files / "runs"), "--depth", "3", "--method", "BLA", "--state", str(state))
    (campaign_files / "a.txt").write_text("1 0 a 1\n")
    assert cli("pool", "add", str(campaign_files / "a.txt"), "--state", str(state)).exit_code == 0
    before = state.read_bytes()
    (campaign_files / "j.txt").write_text(text)
    r = cli("pool", "add", str(campaign_files / "j.txt"), "--state", str(state))
    assert isinstance(r.exception, IrbanditsError) and message in str(r.exception)
    assert state.read_bytes() == before                     # b (line 1) was not applied either
    assert not list(campaign_files.glob(".state.json*"))    # no temporary file left behind


def test_repeated_documents_warn_and_keep_the_first(campaign_files):
    (campaign_files / "runs" / "delta").write_text("1 Q0 z 1 9 delta\n1 Q0 y 2 8 delta\n1 Q0 z 3 10 delta\n")
    r = shell("pool", "init", "--runs", str(campaign_files / "runs"), "--depth", "1", "--method", "DocID",
              "--state", str(campaign_files / "s.json"))
    assert r.returncode == 0 and "delta: 1 repeated document(s) within a topic; kept the first" in r.stderr
    # delta's rank 1 is z (score 9, the first line), not z at score 10 -> topic 1 pools a, b, k, z
    assert Campaign.load(campaign_files / "s.json").topics["1"].pool.docnos.tolist() == ["a", "b", "k", "z"]


def test_malformed_run_and_missing_state(campaign_files, cli):
    (campaign_files / "runs" / "delta").write_text("1 Q0 a 1 9 delta\n1 Q0 b two 8 delta\n")
    r = shell("pool", "init", "--runs", str(campaign_files / "runs"), "--state", str(campaign_files / "s.json"))
    assert r.returncode == 2 and "delta, line 2, column 4: rank must be a number" in r.stderr
    r = cli("pool", "next", "--state", str(campaign_files / "none.json"))
    assert str(r.exception).endswith("none.json: no such file")


@pytest.mark.parametrize("method", ["MM-NS", "BLA", "MoffatC"])
def test_a_live_campaign_finds_what_the_simulation_finds(campaign_files, tmp_path, method):
    pools = depth_pools(read_runs(campaign_files / "runs"), depth=6)
    qrels = read_qrels(campaign_files / "qrels.txt")
    campaign = Campaign(pools, method, relevant_grade=1, seed=5)
    found = {t: [] for t in pools}
    while len(chosen := campaign.next()):
        graded = chosen.merge(qrels, how="left").fillna({"grade": 0})
        campaign.add(graded).save(tmp_path / "s.json")
        campaign = Campaign.load(tmp_path / "s.json")
        for row in graded.itertuples():
            found[row.topic].append(int(row.grade >= 1))
    # the compiled walk of each topic, seeded as the campaign seeds it, judges the same documents
    for t, topic in enumerate(sorted(pools)):
        m = Campaign(pools, method, 1, seed=5).topics[topic]
        assert np.array_equal(walk(m, pools[topic].relevance(qrels, 1)), np.cumsum(found[topic]))


def test_concurrent_judging_processes_lose_no_judgment(campaign_files):
    state = campaign_files / "state.json"
    Campaign(depth_pools(read_runs(campaign_files / "runs"), depth=3), "MM").save(state)

    def judge(docno):
        with editing(state) as campaign:
            time.sleep(0.1)                      # both would read the old state without the lock
            campaign.add(pd.DataFrame(dict(topic=["1"], docno=[docno], grade=[1])))

    threads = [threading.Thread(target=judge, args=(d,)) for d in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(d for _, d, _ in Campaign.load(state).log) == ["a", "b", "c"]


def test_the_guides_pool_study_example_prints_its_table(tmp_path, monkeypatch, capsys):
    import re

    text = (ROOT / "docs" / "guides" / "pooling.md").read_text()
    block, printed = next((b, t) for b, t in re.findall(r"```python\n(.*?)```\s*```text\n(.*?)```", text, re.S)
                          if "pool_study" in b)
    monkeypatch.chdir(ROOT)
    exec(compile(block.replace('"pool-results"', repr(str(tmp_path / "out"))), "pooling.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == printed.splitlines()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["curves.parquet", "curves.png", "table.csv"]
