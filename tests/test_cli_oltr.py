"""`irbandits oltr` as a user meets it: the results folder, the table, resume (after Ctrl-C too), and
one-line errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
from helpers import DATA, shell

from irbandits.tasks import HOLD_AFTER

LGB = DATA / "ltr" / "lightgbm-lambdarank-sample"
pytestmark = pytest.mark.skipif(not LGB.exists(), reason="needs ../shared/data")
BASE = ["oltr", "--train", LGB / "rank.train", "--test", LGB / "rank.test", "--impressions", "300", "--every", "100",
        "--seed", "4", "--no-progress"]


def test_runs_write_table_figures_and_resume_skips_finished_pairs(tmp_path):
    out = tmp_path / "o"
    first = shell(*BASE, "-a", "DBGD", "--runs", "1", "--out", out)
    assert first.returncode == 0, first.stderr
    piece = out / "runs" / "DBGD--0.parquet"
    marked = pd.read_parquet(piece).assign(offline_ndcg=-1.0)   # a finished pair rerun would lose the mark
    marked.to_parquet(piece)

    again = shell(*BASE, "-a", "DBGD", "-a", "PDGD", "--runs", "2", "--out", out)
    assert again.returncode == 0, again.stderr
    table = pd.read_parquet(out / "results.parquet")
    assert table.columns.tolist() == ["algorithm", "run", "impression", "offline_ndcg", "online_ndcg"]
    assert sorted(set(zip(table.algorithm, table.run))) == [("DBGD", 0), ("DBGD", 1), ("PDGD", 0), ("PDGD", 1)]
    assert table.impression.unique().tolist() == [0, 100, 200, 300]
    assert (table[(table.algorithm == "DBGD") & (table.run == 0)].offline_ndcg == -1.0).all()
    fresh = table[~((table.algorithm == "DBGD") & (table.run == 0))]
    assert fresh.offline_ndcg.between(0, 1).all() and (fresh.online_ndcg >= 0).all()
    summary = pd.read_csv(out / "table.csv")
    assert summary.algorithm.tolist() == ["DBGD", "PDGD"] and summary.runs.tolist() == [2, 2]
    assert {"offline_ndcg_mean", "offline_ndcg_se", "online_ndcg_mean", "online_ndcg_se"} <= set(summary.columns)
    assert (out / "offline.png").stat().st_size > 0 and (out / "online.png").stat().st_size > 0
    assert "online performance (mean ± SE)" in again.stdout

    # the same settings from scratch, in two worker processes, give the same numbers for the pairs not marked
    whole = shell(*BASE, "-a", "DBGD", "-a", "PDGD", "--runs", "2", "--jobs", "2", "--out", tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    ref = pd.read_parquet(tmp_path / "whole" / "results.parquet")
    pd.testing.assert_frame_equal(ref[ref.index.isin(fresh.index)], fresh)


@pytest.mark.parametrize("args, message", [
    (["-a", "NOPE"], "NOPE"),
    (["-a", "MGD:m=3"], "MGD"),
    (["--click-model", "nosuch"], "nosuch"),
    (["--impressions", "ten"], "--impressions"),
    (["--top", "5", "--by", "999"], "--by"),
])
def test_a_bad_option_is_one_line_error(tmp_path, args, message):
    r = shell(*BASE, "--runs", "1", *args, "--out", tmp_path / "o")
    assert r.returncode == 2, r.stdout
    assert message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_other_settings_in_out_are_refused(tmp_path):
    out = tmp_path / "o"
    assert shell(*BASE, "-a", "PDGD", "--runs", "1", "--out", out).returncode == 0
    r = shell(*BASE, "-a", "PDGD", "--runs", "1", "--click-model", "navigational", "--out", out)
    assert r.returncode == 2 and "--force" in r.stderr and "navigational" in r.stderr, r.stderr


def test_ctrl_c_keeps_finished_runs_and_the_same_command_resumes(tmp_path):
    """The task runner's test hook holds the job once two (learner, run) pairs are written; SIGINT then."""
    out = tmp_path / "o"
    args = [*map(str, BASE), "-a", "PDGD", "--runs", "4", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "irbandits.cli", *args], env={**os.environ, HOLD_AFTER: "2"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while len(list((out / "runs").glob("*.parquet")) if (out / "runs").exists() else []) < 2 \
            and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate(timeout=5)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted: 2 of 4 runs finished and kept" in stderr, stderr
    assert "Traceback" not in stderr and not (out / "results.parquet").exists()
    resumed = shell(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(pd.read_parquet(out / "results.parquet").run.unique()) == [0, 1, 2, 3]
