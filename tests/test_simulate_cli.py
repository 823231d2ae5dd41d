"""`irbandits simulate` as a user meets it: Ctrl-C keeps finished runs and resumes, an output directory
of other settings is refused, the table says what its numbers are and names winners."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from helpers import shell

from irbandits.problems import get_problem
from irbandits.tasks import HOLD_AFTER


def pieces(out) -> set[str]:
    return {p.name for p in (out / "runs").glob("*.parquet")} if (out / "runs").exists() else set()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_keeps_finished_runs_and_the_same_command_resumes(tmp_path, jobs):
    """The task runner's test hook holds the simulation once two runs are written; SIGINT then (the
    workers' runs in flight with --jobs 2 are stopped, never written)."""
    out = tmp_path / "o"
    args = ["--problem", "arxiv", "-a", "RUCB", "--horizon", "1e6", "--runs", "10", "--seed", "3", "--jobs", jobs,
            "--no-progress"]
    proc = subprocess.Popen([sys.executable, "-m", "irbandits.cli", "simulate", *args, "--out", str(out)],
                            env={**os.environ, HOLD_AFTER: "2"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 600
    while len(pieces(out)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    finished = pieces(out)
    assert proc.poll() is None and len(finished) == 2, proc.communicate(timeout=5) if proc.poll() is not None else ""
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert pieces(out) == finished
    assert f"interrupted: 2 of 10 runs finished and kept in {out}; run the same command again" in stderr
    assert "Traceback" not in stderr and not (out / "results.parquet").exists()

    resumed = shell("simulate", *args, "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    if jobs == "2":  # one uninterrupted reference is enough: results do not depend on --jobs
        whole = shell("simulate", *args, "--out", str(tmp_path / "whole"))
        assert whole.returncode == 0, whole.stderr
        a, b = (pd.read_parquet(d / "results.parquet").drop(columns="run_seconds") for d in (out, tmp_path / "whole"))
        pd.testing.assert_frame_equal(a, b)


def test_an_out_dir_of_other_settings_is_refused_unless_force(tmp_path):
    out = tmp_path / "o"
    first = shell("simulate", "--problem", "arithmetic", "-a", "RUCB", "--horizon", "1000", "--runs", "3", "--out", str(out))
    assert first.returncode == 0, first.stderr
    before = {name: (out / name).read_bytes() for name in ("results.parquet", "config.json", "accuracy.png")}
    r = shell("simulate", "--problem", "arithmetic", "-a", "RUCB", "-a", "DTS", "--horizon", "1000", "--runs", "5",
              "--out", str(out))
    assert r.returncode == 2
    message = r.stderr.strip()
    assert len(message.splitlines()) == 1 and "{" not in message and "Traceback" not in message
    assert f"results in {out} were made with --runs 3, not 5; -a RUCB, not -a RUCB -a DTS;" in message
    assert "--force" in message and "--out" in message
    assert before == {name: (out / name).read_bytes() for name in before}

    forced = shell("simulate", "--problem", "arithmetic", "-a", "RUCB", "-a", "DTS", "--horizon", "1000", "--runs", "5",
                   "--out", str(out), "--force")
    assert forced.returncode == 0, forced.stderr
    table = pd.read_parquet(out / "results.parquet")
    assert set(table.algorithm) == {"RUCB", "DTS"} and table.run.nunique() == 5
    assert len(pieces(out)) == 10


def test_table_says_mean_se_prints_plain_numbers_and_names_winners(tmp_path):
    m = tmp_path / "m.txt"
    P = get_problem("arithmetic").p[:4, :4]
    np.savetxt(m, P[::-1, ::-1], header="rankers: bm25 dense splade colbert")  # colbert is the Condorcet winner
    r = shell("simulate", "--matrix", str(m), "-a", "RUCB", "--horizon", "3e5", "--runs", "2", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert "Condorcet winner(s) colbert;" in r.stdout
    assert "regret (mean ± SE)" in r.stdout and "seconds_per_run" in r.stdout and "mean" in r.stdout
    assert "e+" not in r.stdout and "e-0" not in r.stdout
    row = next(line for line in r.stdout.splitlines() if "RUCB" in line)
    steps_per_s = row.split("│")[-2].strip()
    assert steps_per_s.replace(",", "").isdigit() and "," in steps_per_s  # e.g. 2,345,678, not 2.346e+06
