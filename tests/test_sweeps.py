"""Sweep specs, the resumable result store, Ctrl-C and resume, the report, a Ray cluster; and the old
names of sweeps (the `experiment` command group, the [experiment] table, experiment.json) still read."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from helpers import run_cli

from irbandits.errors import IrbanditsError
from irbandits.sweeps import ResultStore, load_spec, run_sweep
from irbandits.sweeps.store import WALL_TIME
from irbandits.tasks import HOLD_AFTER

SRC = Path(__file__).resolve().parents[1] / "src"
SPEC = """
[sweep]
name = "small"
problems = ["arxiv"]
horizon = 500000
runs = 6
seed = 3

[[algorithms]]
name = "RUCB"
grid = { alpha = [0.51, 1.0] }
"""


def write_spec(folder: Path, text: str = SPEC, name: str = "spec.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.fixture(scope="session")
def reference(tmp_path_factory) -> pd.DataFrame:
    """The small grid run in this process by the local backend (shared with the Ray tests)."""
    folder = tmp_path_factory.mktemp("reference")
    return run_sweep(load_spec(write_spec(folder)), folder / "out", progress=False)


# the interrupted runs' grid: tasks long enough (~2 s each on a quiet machine) that a run cannot finish them all between
# its first indexed task and a Ctrl-C, nor the Ray head alone before the worker node has finished its first one and is killed
# a guard against a hang only: every wait here ends on an event (a task indexed, a process exited), so a
# busy machine makes the tests slower, never wrong
HANG = 1800
LONG_SPEC = SPEC.replace("horizon = 500000", "horizon = 12000000")


@pytest.fixture(scope="session")
def long_reference(tmp_path_factory) -> pd.DataFrame:
    """:data:`LONG_SPEC` run in this process by the local backend."""
    folder = tmp_path_factory.mktemp("long-reference")
    return run_sweep(load_spec(write_spec(folder, LONG_SPEC)), folder / "out", progress=False)


def same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns=WALL_TIME).reset_index(drop=True),
                                  b.drop(columns=WALL_TIME).reset_index(drop=True))


def cli_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC)}


def cli(*args: str, **kwargs) -> subprocess.Popen:
    kwargs.setdefault("env", cli_env())
    return subprocess.Popen([sys.executable, "-m", "irbandits.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def index_lines(out: Path) -> list[dict]:
    path = out / "index.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


# ----- specs -----------------------------------------------------------------------------------

def test_grid_expands_into_settings_and_tasks(tmp_path):
    spec = load_spec(write_spec(tmp_path, SPEC + '\n[[algorithms]]\nname = "MergeDTS:tuned"\n'
                                              'grid = { M = [2, 4], alpha = [0.8, 1.0] }\n'))
    labels = [s.label for s in spec.settings]
    assert labels == ["RUCB:alpha=0.51", "RUCB:alpha=1.0", "MergeDTS:tuned,M=2,alpha=0.8", "MergeDTS:tuned,M=2,alpha=1.0",
                      "MergeDTS:tuned,M=4,alpha=0.8", "MergeDTS:tuned,M=4,alpha=1.0"]
    assert spec.settings[3].spec.params["M"] == 2 and spec.settings[3].spec.params["alpha"] == 1.0
    assert spec.settings[3].grid == {"M": 2, "alpha": 1.0}
    tasks = spec.tasks()
    assert len(tasks) == 6 * 6 and len({t.key for t in tasks}) == len(tasks)


def test_two_tables_of_one_algorithm_are_two_grids_and_a_repeated_setting_is_an_error(tmp_path):
    spec = load_spec(write_spec(tmp_path, SPEC + '\n[[algorithms]]\nname = "RUCB"\ngrid = { alpha = [2.0, 3.0] }\n'))
    assert [s.family for s in spec.settings] == ["RUCB (algorithms[0])"] * 2 + ["RUCB (algorithms[1])"] * 2
    with pytest.raises(IrbanditsError, match="algorithms: the setting RUCB:alpha=1.0 is given twice"):
        load_spec(write_spec(tmp_path, SPEC + '\n[[algorithms]]\nname = "RUCB"\ngrid = { alpha = [1.0] }\n'))


def test_the_example_spec_loads():
    spec = load_spec(SRC.parent / "examples" / "grid.toml")
    assert list(spec.problems) == ["arxiv", "cycle"] and len(spec.settings) == 3 + 4 + 1
    assert spec.settings[3].label == "mergeRUCB:delta=0.01,alpha=0.51,M=2" and spec.settings[3].grid == {"alpha": 0.51, "M": 2}


def test_matrix_files_are_relative_to_the_spec(tmp_path):
    from irbandits.problems import get_problem

    get_problem("cyclic").save(tmp_path / "mine.txt")
    spec = load_spec(write_spec(tmp_path, SPEC.replace('["arxiv"]', '["arxiv", "mine.txt"]')))
    assert list(spec.problems) == ["arxiv", "mine"] and spec.problems["mine"].K == 4


@pytest.mark.parametrize("change, message", [
    (("horizon = 500000", "horizon = -3"), "sweep.horizon: must be a whole number >= 1, got -3"),
    (("runs = 6", "runs = 2.5"), "sweep.runs: must be a whole number >= 1, got 2.5"),
    (("seed = 3", "sed = 3"), "sweep.sed: unknown key"),
    (('["arxiv"]', '["arxiv", "nowhere.txt"]'), "sweep.problems[1]: 'nowhere.txt' is neither a named problem"),
    (('["arxiv"]', '[]'), "sweep.problems: must be a non-empty list"),
    (('name = "RUCB"', 'name = "RUBC"'), "algorithms[0] (RUBC:alpha=0.51): unknown algorithm 'RUBC'"),
    (("alpha = [0.51, 1.0]", "alpah = [0.51]"), "RUCB: unknown parameter 'alpah'"),
    (("alpha = [0.51, 1.0]", 'alpha = ["big"]'), "algorithms[0] (RUCB:alpha=big): RUCB: parameter alpha must be float"),
    (("alpha = [0.51, 1.0]", "alpha = []"), "algorithms[0].grid.alpha: must be a non-empty list"),
    (("grid =", "gird ="), "algorithms[0].gird: unknown key"),
    (("horizon = 500000", "horizon = 500000\nhorizon = 3"), "not valid TOML"),
    (("[[algorithms]]\nname = \"RUCB\"\ngrid = { alpha = [0.51, 1.0] }", ""), "algorithms: missing"),
])
def test_spec_errors_name_file_key_and_problem(tmp_path, change, message):
    path = write_spec(tmp_path, SPEC.replace(*change))
    with pytest.raises(IrbanditsError) as err:
        load_spec(path)
    assert str(err.value).startswith(f"{path}: ") and message in str(err.value)


def test_a_bad_matrix_file_names_the_key_and_the_line(tmp_path):
    (tmp_path / "bad.txt").write_text("0.5 0.7\n0.2 0.5\n")
    with pytest.raises(IrbanditsError, match=r"sweep.problems\[1\]: .*bad.txt"):
        load_spec(write_spec(tmp_path, SPEC.replace('["arxiv"]', '["arxiv", "bad.txt"]')))


def test_cli_spec_error_is_one_line(tmp_path):
    path = write_spec(tmp_path, SPEC.replace("runs = 6", "runs = 0"))
    proc = cli("sweep", "run", str(path), "--out", str(tmp_path / "out"))
    _, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 2
    assert err.strip() == f"error: {path}: sweep.runs: must be a whole number >= 1, got 0"


# ----- the store ------------------------------------------------------------------------------

def test_store_refuses_other_settings_and_drops_a_torn_index_line(tmp_path, reference):
    spec = load_spec(write_spec(tmp_path))
    store = ResultStore(tmp_path / "out", spec)
    rows = reference[reference.run == 0]
    key = f"arxiv|{rows.algorithm.iloc[0]}|0"
    store.add([(key, rows[rows.algorithm == rows.algorithm.iloc[0]], 1.0, "here:1")])
    with open(store.index, "a") as fh:
        fh.write('{"key": "arxiv|RUCB:alp')  # a crash while appending
    (store.batches / "000009.parquet").write_bytes(b"half")  # a crash before its index lines
    again = ResultStore(tmp_path / "out", spec)
    assert list(again.done) == [key] and not (again.batches / "000009.parquet").exists()
    same_rows(again.table(), rows[rows.algorithm == rows.algorithm.iloc[0]])
    other = load_spec(write_spec(tmp_path, SPEC.replace("seed = 3", "seed = 4"), "other.toml"))
    with pytest.raises(IrbanditsError, match="holds results made with seed 3, not 4; use --force"):
        ResultStore(tmp_path / "out", other)
    assert ResultStore(tmp_path / "out", other, force=True).done == {}


def test_ctrl_c_during_a_batch_write_comes_after_it_with_other_threads_running():
    """Masking SIGINT in the main thread let it in through any other thread (a process pool's); swapping its
    handler defers it whatever thread the kernel hands it to."""
    import threading

    from irbandits.sweeps.store import whole_block

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    written = False
    try:
        with pytest.raises(KeyboardInterrupt):
            with whole_block():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)
                written = True
    finally:
        stop.set()
        other.join()
    assert written


def test_sweep_rows_equal_simulate_with_the_same_seed(reference):
    from irbandits.problems import get_problem
    from irbandits.simulate import simulate

    table = simulate(get_problem("arxiv"), ["RUCB:alpha=0.51", "RUCB:alpha=1.0"], horizon=500_000, runs=6, seed=3,
                     progress=False)
    same_rows(reference.drop(columns="problem"), table)
    assert (reference.problem == "arxiv").all()


# ----- Ctrl-C and resume -----------------------------------------------------------------------

def test_sigint_then_resume_gives_the_identical_store(tmp_path, long_reference):
    """The task runner's test hook holds the run once one task is in; SIGINT then stops the workers."""
    spec, out = write_spec(tmp_path, LONG_SPEC), tmp_path / "out"
    proc = cli("sweep", "run", str(spec), "--out", str(out), "--workers", "2", env={**cli_env(), HOLD_AFTER: "1"})
    deadline = time.monotonic() + HANG
    while not index_lines(out) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None and len(index_lines(out)) == 1, proc.communicate(timeout=5) if proc.poll() is not None else ""
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 130, err
    assert len(index_lines(out)) == 1 and f"interrupted: 1 of 12 tasks finished and kept in {out}" in err
    assert not (out / "results.parquet").exists()
    resumed = cli("sweep", "run", str(spec), "--out", str(out), "--workers", "1")
    text, err = resumed.communicate(timeout=HANG)
    assert resumed.returncode == 0, err
    assert len(index_lines(out)) == 12 and len({e["key"] for e in index_lines(out)}) == 12
    same_rows(pd.read_parquet(out / "results.parquet"), long_reference)


# ----- the report ------------------------------------------------------------------------------

def test_report_draws_every_problem_and_marks_the_best_grid_setting(tmp_path, reference):
    from irbandits.sweeps.report import report

    spec = load_spec(write_spec(tmp_path))
    store = ResultStore(tmp_path / "out", spec)
    for (algorithm, run), rows in reference.groupby(["algorithm", "run"]):
        store.add([(f"arxiv|{algorithm}|{run}", rows, 0.1, "here:1")])
    pages = report(tmp_path / "out")
    assert [p["problem"] for p in pages] == ["arxiv"]
    page = pages[0]
    assert all(Path(f).is_file() and Path(f).stat().st_size > 0 for f in page["files"])
    assert {Path(f).name for f in page["files"]} == {"regret.png", "accuracy.png", "summary.csv", "grid-RUCB.png"}
    params, cells = page["grids"]["RUCB"]
    final = reference[reference.step == 500_000].groupby("algorithm").regret.mean()
    assert params == ["alpha"] and dict(zip(cells.algorithm, cells.regret_mean)) == pytest.approx(final.to_dict())
    summary = pd.read_csv(tmp_path / "out" / "report" / "arxiv" / "summary.csv")
    assert list(summary.runs) == [6, 6] and page["finished"] == page["expected"] == 12


# ----- the old names of sweeps, still read for one release ---------------------------------------

def one_line(text: str) -> str:
    return " ".join(text.split())


def test_the_hidden_experiment_group_runs_like_sweep_and_is_not_listed(tmp_path):
    """`irbandits experiment run|report`, the old name of `irbandits sweep run|report`, gives the same
    results table and report, with a note; `irbandits --help` lists `sweep` and not `experiment`."""
    spec = write_spec(tmp_path, SPEC.replace("horizon = 500000", "horizon = 20000").replace("runs = 6", "runs = 2"))
    stores, said = {}, {}
    for group in ("sweep", "experiment"):
        out = stores[group] = tmp_path / group
        r = run_cli(group, "run", spec, "--out", out)  # in this process: five subprocesses cost ~30 s under load
        assert r.exit_code == 0, r.output
        said[group] = one_line(r.stdout).replace(str(out), "OUT"), one_line(r.stderr)
        r = run_cli(group, "report", out)
        assert r.exit_code == 0, r.output
        said[group + " report"] = one_line(r.stderr)
    rows = pd.read_parquet(stores["sweep"] / "results.parquet")
    same_rows(pd.read_parquet(stores["experiment"] / "results.parquet"), rows)
    assert set(zip(rows.algorithm, rows.run)) == {(a, r) for a in ("RUCB:alpha=0.51", "RUCB:alpha=1.0") for r in (0, 1)}
    new, old = said["sweep"][0], said["experiment"][0]
    assert new.partition(" in OUT/results.parquet (")[0] == old.partition(" in OUT/results.parquet (")[0]
    assert f"4 tasks, {len(rows)} rows" in new and old.endswith("this time); `irbandits sweep report OUT` draws them")
    assert "note:" not in said["sweep"][1] + said["sweep report"]
    assert "note: `irbandits experiment run` is now `irbandits sweep run`" in said["experiment"][1]
    assert "note: `irbandits experiment report` is now `irbandits sweep report`" in said["experiment report"]
    summaries = [pd.read_csv(stores[g] / "report" / "arxiv" / "summary.csv").drop(columns=["seconds_per_run",
                                                                                          "steps_per_s"])
                 for g in ("sweep", "experiment")]  # less the wall times
    pd.testing.assert_frame_equal(*summaries)

    import typer

    from irbandits.cli import app

    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="irbandits")
    assert root.get_command(ctx, "experiment").hidden and not root.get_command(ctx, "sweep").hidden
    text = run_cli("--help").stdout
    listed = [line.strip("│ ").split(" ")[0] for line in text.splitlines() if line.startswith("│ ")]
    assert "sweep" in listed and "experiment-replay" in listed and "experiment" not in listed


def test_an_old_experiment_table_still_loads_and_errors_name_the_table_written(tmp_path):
    old_text = SPEC.replace("[sweep]", "[experiment]")
    old, new = load_spec(write_spec(tmp_path, old_text, "old.toml")), load_spec(write_spec(tmp_path))
    assert (old.table, new.table) == ("experiment", "sweep")
    assert old.tasks() == new.tasks() and old.describe() == new.describe()
    for text, table in ((SPEC, "sweep"), (old_text, "experiment")):
        path = write_spec(tmp_path, text.replace("horizon = 500000\n", ""), f"{table}-no-horizon.toml")
        with pytest.raises(IrbanditsError) as err:
            load_spec(path)
        assert str(err.value) == f"{path}: {table}.horizon: missing"
    path = write_spec(tmp_path, '[[algorithms]]\nname = "RUCB"\n', "none.toml")
    with pytest.raises(IrbanditsError) as err:
        load_spec(path)
    assert str(err.value) == f"{path}: sweep: missing table [sweep] (problems, horizon, runs, seed)"


def test_a_spec_with_both_tables_is_refused_with_one_clear_line(tmp_path):
    both = write_spec(tmp_path, SPEC + '\n[experiment]\nname = "small"\nhorizon = 1000\n', "both.toml")
    message = (f"{both}: experiment: a spec has one [sweep] table, and [experiment] is its old name; move its keys "
               "into [sweep] and remove [experiment]")
    with pytest.raises(IrbanditsError) as err:
        load_spec(both)
    assert str(err.value) == message
    proc = cli("sweep", "run", str(both), "--out", str(tmp_path / "out"))
    _, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 2 and err.strip() == f"error: {message}"
    assert not (tmp_path / "out").exists()
    # the old table alone runs, with a note naming the new one
    old = write_spec(tmp_path, SPEC.replace("[sweep]", "[experiment]").replace("horizon = 500000", "horizon = 1000")
                     .replace("runs = 6", "runs = 1"), "old.toml")
    proc = cli("sweep", "run", str(old), "--out", str(tmp_path / "old-out"))
    _, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 0, err
    assert f"note: {old}: the table [experiment] is now [sweep]" in one_line(err)
    rows = pd.read_parquet(tmp_path / "old-out" / "results.parquet")
    assert set(zip(rows.algorithm, rows.run)) == {("RUCB:alpha=0.51", 0), ("RUCB:alpha=1.0", 0)}
    assert rows.step.max() == 1000


def test_a_store_with_an_old_experiment_json_resumes_without_redoing_tasks_and_is_reported(tmp_path, reference):
    """A store an older irbandits left (its expanded spec in experiment.json): read as it is by the report
    and by the check of its seed, horizon and matrices; renamed to sweep.json when resumed."""
    from irbandits.sweeps.report import report

    spec, out = load_spec(write_spec(tmp_path)), tmp_path / "out"
    store = ResultStore(out, spec)
    kept = reference[reference.run < 2].assign(run_seconds=123.0)  # marked: a task run again would not carry it
    for (algorithm, run), rows in kept.groupby(["algorithm", "run"]):
        store.add([(f"arxiv|{algorithm}|{run}", rows, 0.1, "before:1")])
    (out / "sweep.json").rename(out / "experiment.json")
    before = index_lines(out)
    assert len(before) == 4

    pages = report(out)  # reading leaves the old store as it is
    assert [(p["problem"], p["finished"], p["expected"]) for p in pages] == [("arxiv", 4, 12)]
    assert (out / "experiment.json").is_file() and not (out / "sweep.json").exists()
    other = load_spec(write_spec(tmp_path, SPEC.replace("seed = 3", "seed = 4"), "other.toml"))
    with pytest.raises(IrbanditsError, match="holds results made with seed 3, not 4; use --force"):
        run_sweep(other, out, progress=False)
    assert (out / "experiment.json").is_file() and not (out / "sweep.json").exists()

    table = run_sweep(spec, out, progress=False)
    assert (out / "sweep.json").is_file() and not (out / "experiment.json").exists()
    assert json.loads((out / "sweep.json").read_text()) == json.loads(json.dumps(spec.describe()))
    after = index_lines(out)
    assert after[:4] == before and len(after) == 12 and len({e["key"] for e in after}) == 12
    assert not [e for e in after[4:] if e["worker"] == "before:1" or e["key"] in {b["key"] for b in before}]
    same_rows(table, reference)
    assert (table[table.run < 2].run_seconds == 123.0).all() and (table[table.run >= 2].run_seconds != 123.0).all()
    pages = report(out)
    assert [(p["problem"], p["finished"], p["expected"]) for p in pages] == [("arxiv", 12, 12)]
    assert all(Path(f).is_file() for f in pages[0]["files"])


def test_report_on_a_folder_that_is_no_store_says_so(tmp_path):
    from irbandits.sweeps.report import report

    with pytest.raises(IrbanditsError) as err:
        report(tmp_path)
    assert str(err.value) == f"{tmp_path}: not a sweep result store (no sweep.json; see `irbandits sweep run`)"


# ----- a real Ray cluster on loopback ----------------------------------------------------------

def _marked(name: str, value: str) -> list[int]:
    """The processes whose environment holds ``name=value`` (the ones this module started)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if f"{name}={value}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Ray head (1 CPU) and one worker node (1 CPU) on 127.0.0.1, with their own token; yields
    (address, environment for drivers, the marker of the worker node's processes). Every process
    the nodes start carries IRBANDITS_TEST_RAY_NODE in its environment, by which the test and the
    teardown kill exactly them (never `ray stop`, which would stop every Ray on the machine)."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'irbandits[distributed]')")
    import secrets
    from shutil import which

    ray_cli = str(Path(sys.executable).parent / "ray") if (Path(sys.executable).parent / "ray").exists() else which("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    session = secrets.token_hex(8)
    env = {**os.environ, "PYTHONPATH": str(SRC), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32),
           "RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "4"}
    address = f"127.0.0.1:{port}"
    common = ["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    try:
        subprocess.run([ray_cli, "start", "--head", f"--port={port}", "--include-dashboard=false", *common],
                       env={**env, "IRBANDITS_TEST_RAY_NODE": f"head-{session}"}, check=True, capture_output=True, timeout=HANG)
        subprocess.run([ray_cli, "start", f"--address={address}", *common],
                       env={**env, "IRBANDITS_TEST_RAY_NODE": f"worker-{session}"}, check=True, capture_output=True,
                       timeout=HANG)
        yield address, env, f"worker-{session}"
    finally:
        for _ in range(3):  # the raylets may start an agent while the others die
            _kill(_marked("IRBANDITS_TEST_RAY_NODE", f"head-{session}") + _marked("IRBANDITS_TEST_RAY_NODE", f"worker-{session}"))
            time.sleep(0.5)


def test_ray_cluster_survives_a_killed_worker_node_with_identical_rows(tmp_path, cluster, long_reference):
    address, env, worker_node = cluster
    spec, out = write_spec(tmp_path, LONG_SPEC), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "irbandits.cli", "sweep", "run", str(spec), "--out", str(out),
                             "--backend", "ray", "--address", address], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    node_pids = set(_marked("IRBANDITS_TEST_RAY_NODE", worker_node))
    deadline = time.monotonic() + HANG
    while proc.poll() is None and time.monotonic() < deadline:  # until the worker node has finished a task
        done_there = [e for e in index_lines(out) if int(e["worker"].rsplit(":", 1)[1]) in node_pids]
        if done_there:
            break
        node_pids |= set(_marked("IRBANDITS_TEST_RAY_NODE", worker_node))
        time.sleep(0.05)
    killed = _marked("IRBANDITS_TEST_RAY_NODE", worker_node)
    _kill(killed)  # the raylet and its workers, mid-run
    kept = len(index_lines(out))
    text, err = proc.communicate(timeout=HANG)
    assert done_there and 1 <= kept < 12, (kept, err)
    assert proc.returncode == 0, err
    entries = index_lines(out)
    assert len(entries) == 12 and len({e["key"] for e in entries}) == 12
    # a task the node finished just before the kill may be indexed after `kept`; the rest ran on the head
    assert any(int(e["worker"].rsplit(":", 1)[1]) not in killed for e in entries[kept:])
    same_rows(pd.read_parquet(out / "results.parquet"), long_reference)


def test_judging_study_on_the_cluster_equals_the_local_run(tmp_path, cluster):
    from irbandits.studies.judging_study import run_study

    address, env, _ = cluster
    out = tmp_path / "study.parquet"
    r = subprocess.run([sys.executable, "-m", "irbandits.cli", "reproduce", "judging-study", "--runs", "30", "-a", "SELECT",
                        "--out", str(out), "--backend", "ray", "--address", address], env=env,
                       capture_output=True, text=True, timeout=HANG)
    assert r.returncode == 0, r.stderr
    local = run_study(["SELECT"], runs=30)
    remote = pd.read_parquet(out)
    assert len(remote) == len(local) == 2 * 30  # Case A and B, in chunks of 25 runs
    pd.testing.assert_frame_equal(remote.drop(columns="best"), local.drop(columns="best"))
    assert list(remote.best) == [" ".join(map(str, b)) for b in local.best]
