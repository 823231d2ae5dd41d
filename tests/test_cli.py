"""The command line as a user meets it: outputs written, one clear line and exit code 2 on mistakes."""

from __future__ import annotations

import pandas as pd
import pytest
from helpers import shell


def test_simulate_writes_table_and_plots(tmp_path):
    out = tmp_path / "res"
    r = shell("simulate", "--problem", "arithmetic", "-a", "RUCB", "-a", "RUCB:alpha=0.3",
              "--horizon", "2e4", "--runs", "3", "--seed", "4", "--out", str(out))
    assert r.returncode == 0, r.stderr
    df = pd.read_parquet(out / "results.parquet")
    assert {"algorithm", "run", "step", "regret", "copeland_regret", "recommended", "correct"} <= set(df.columns)
    assert set(df.algorithm) == {"RUCB", "RUCB:alpha=0.3"} and df.run.nunique() == 3
    assert df.step.max() == 20_000
    assert (out / "regret.png").stat().st_size > 10_000 and (out / "accuracy.png").stat().st_size > 10_000
    assert "RUCB:alpha=0.3" in r.stdout and "steps_per_s" in r.stdout


def test_simulate_from_a_matrix_file(tmp_path):
    m = tmp_path / "m.txt"
    m.write_text("0.5 0.7\n0.3 0.5\n")
    r = shell("simulate", "--matrix", str(m), "-a", "RUCB", "--horizon", "1000", "--runs", "2",
              "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    assert pd.read_parquet(tmp_path / "o" / "results.parquet").correct.iloc[-1]


@pytest.mark.parametrize(
    "args, message",
    [
        (["-a", "RUBC"], "unknown algorithm 'RUBC'"),
        (["-a", "RUCB:gamma=1"], "unknown parameter 'gamma'"),
        (["-a", "RUCB:alpha=abc"], "alpha must be float"),
        (["-a", "RUCB:alpha=1e999"], "alpha must be a finite number, got inf"),
        (["--problem", "nope"], "unknown problem 'nope'"),
        (["--horizon", "ten"], "--horizon must be a number"),
    ],
)
def test_mistakes_give_one_line_and_exit_2(tmp_path, args, message):
    r = shell("simulate", "--out", str(tmp_path / "o"), *args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_matrix_names_file_and_cell(tmp_path):
    m = tmp_path / "bad.txt"
    m.write_text("0.5 0.7\n0.4 0.5\n")
    r = shell("simulate", "--matrix", str(m), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and "bad.txt" in r.stderr and "row 1, column 2" in r.stderr


def test_listings():
    r = shell("problems")
    assert r.returncode == 0 and "copeland-500" in r.stdout and "Condorcet" in r.stdout
    r = shell("algorithms")
    assert r.returncode == 0 and "RUCB" in r.stdout and "alpha" in r.stdout
