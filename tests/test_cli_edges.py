"""What a new user meets first on the command line (issue 10): --version, completion, py.typed,
``-`` for standard input / output, judged topics only, refused judge answers, path mistakes as one
line, --out formats, --jobs, names checked before any data is read, outputs only under --out."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path

import pandas as pd
import pytest
from helpers import DATA, ROOT, cli_error, shell

from irbandits.cli import app

DL21 = DATA / "trec-dl-2021-passage"
SCRIPT = Path(sys.executable).parent / "irbandits"


# ----- --version, completion, py.typed -----------------------------------------------------------
def test_version(cli):
    r = cli("--version")
    assert r.exit_code == 0 and r.output.strip() == f"irbandits {version('irbandits')}"


def test_shell_completion():
    r = subprocess.run([SCRIPT, "--show-completion", "bash"], capture_output=True, text=True)
    assert r.returncode == 0 and "_IRBANDITS_COMPLETE=complete_bash" in r.stdout, r.stderr
    env = dict(os.environ, _IRBANDITS_COMPLETE="complete_bash", COMP_WORDS="irbandits reproduce best",
               COMP_CWORD="2")
    r = subprocess.run([SCRIPT], capture_output=True, text=True, env=env)
    assert r.stdout.split() == ["best-item-study"], r.stderr


def test_the_package_ships_py_typed():
    assert files("irbandits").joinpath("py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()


# ----- - for standard input and output ------------------------------------------------------------
QRELS = "".join(f"7 0 d{i:02d} {3 if i < 3 else 1}\n" for i in range(12)) + "8 0 x 1\n8 0 y 1\n"


def test_judge_reads_and_writes_standard_streams(tmp_path, cli):
    state = tmp_path / "S.json"
    assert cli("judge", "init", "-", "--state", state, "--minimum", "12", input=QRELS).exit_code == 0
    r = cli("judge", "requests", "--state", state, "--out", "-")
    pairs = [line.split() for line in r.output.splitlines()]
    assert len(pairs) > 12 and all(len(p) == 3 for p in pairs)
    answers = "".join(f"{t} {a} {b} {min(a, b)}\n" for t, a, b in pairs)
    r = cli("judge", "add", "-", "--state", state, input=answers)
    assert r.exit_code == 0 and f"added {len(pairs)} judgments" in r.output
    assert "8 Q0 x 1" in cli("judge", "qrels", "--state", state, "--best").output
    cli("judge", "qrels", "--state", state, "--best", "--out", tmp_path / "best.qrels")
    assert (tmp_path / "best.qrels").read_text() == "8 Q0 x 1\n"
    # gzip on standard input; errors name <stdin> and the line
    r = cli("judge", "init", "-", "--state", tmp_path / "G.json", input=gzip.compress(QRELS.encode()))
    assert r.exit_code == 0, r.output
    assert cli_error("judge", "add", "-", "--state", state, input="7 d00 d01\n").startswith(
        "<stdin>, line 1: a judgment line has 4 columns")


def test_pool_reads_standard_input(tmp_path, cli):
    run = "".join(f"{t} Q0 {d} {r} {10 - r} R\n" for t in ("1", "2") for r, d in enumerate("abc", 1))
    state = tmp_path / "c.json"
    assert cli("pool", "init", "--runs", "-", "--state", state, "--depth", "3", input=run).exit_code == 0
    chosen = cli("pool", "next", "--state", state).output.split()
    assert len(chosen) == 6  # topic docno run, for both topics
    r = cli("pool", "add", "-", "--state", state, input=f"{chosen[0]} 0 {chosen[1]} 1\n")
    assert r.exit_code == 0 and "1 judgments added" in r.output
    msg = cli_error("pool", "add", "-", "--state", state, input=f"{chosen[0]} 0 {chosen[1]} 1\n")
    assert msg.startswith("<stdin>, line 1:") and "already judged" in msg
    out = tmp_path / "pool"
    assert cli_error("pool", "simulate", "--runs", "-", "--qrels", "-", "--out", out, input=run) == \
        "--runs and --qrels cannot both be - (one standard input)"
    qrels = "1 0 a 1\n2 0 c 1\n"
    (tmp_path / "run.txt").write_text(run)
    r = cli("pool", "simulate", "--runs", tmp_path / "run.txt", "--qrels", "-", "--out", out, "-m", "DocID", input=qrels)
    assert r.exit_code == 0 and (out / "curves.parquet").exists(), r.output


# ----- judged topics only -------------------------------------------------------------------------
def _with_extra_topics(tmp_path: Path, names: list[str]) -> Path:
    """Copies of DL-2021 runs, each answering 5 more topics that no qrels judge."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in names:
        lines = gzip.open(DL21 / "runs" / name, "rt").read().splitlines()
        runid = lines[0].split()[5]
        extra = [f"99{t} Q0 doc{r} {r} {100 - r} {runid}" for t in range(5) for r in range(1, 21)]
        (folder / name.removesuffix(".gz")).write_text("\n".join(lines + extra) + "\n")
    return folder


RUN_NAMES = ["Fast_ForwardP_2.gz", "Fast_Forward_3.gz", "NLE_P_v1.gz"]


@pytest.mark.skipif(not DL21.exists(), reason="needs ../shared/data")
def test_evaluate_scores_judged_topics_only(tmp_path):
    extended = _with_extra_topics(tmp_path, RUN_NAMES)
    args = ["-m", "ndcg_cut_10", "-m", "RR", "--qrels", DL21 / "qrels.txt", "--format", "csv"]
    original = shell("evaluate", *sum((["--runs", DL21 / "runs" / n] for n in RUN_NAMES), []), *args)
    padded = shell("evaluate", "--runs", extended, *args)
    assert original.returncode == padded.returncode == 0, padded.stderr
    assert padded.stdout == original.stdout
    assert "left out 5 of the 58 run topics" in padded.stderr and "left out" not in original.stderr
    old = shell("evaluate", "--runs", extended, *args, "--include-unjudged")
    means = pd.read_csv(pd.io.common.StringIO(old.stdout)).set_index(["run", "measure"]).value
    now = pd.read_csv(pd.io.common.StringIO(padded.stdout)).set_index(["run", "measure"]).value
    assert (means - now * 53 / 58).abs().max() < 1e-5  # unjudged topics counted as 0


@pytest.mark.skipif(not DL21.exists(), reason="needs ../shared/data")
def test_pool_simulate_scores_judged_topics_only(tmp_path, cli):
    extended = _with_extra_topics(tmp_path, RUN_NAMES)
    original = tmp_path / "original"
    original.mkdir()
    for n in RUN_NAMES:
        (original / n).symlink_to(DL21 / "runs" / n)
    args = ["--qrels", DL21 / "qrels.txt", "-m", "DocID", "-m", "MM-NS", "--depth", "5"]
    a = cli("pool", "simulate", "--runs", original, *args, "--out", tmp_path / "a")
    b = cli("pool", "simulate", "--runs", extended, *args, "--out", tmp_path / "b")
    assert a.exit_code == b.exit_code == 0, b.output
    assert "left out 5 of the 58 run topics" in b.output and "left out" not in a.output
    ta, tb = (pd.read_csv(tmp_path / x / "table.csv", index_col=0) for x in "ab")
    pd.testing.assert_frame_equal(ta, tb)
    c = cli("pool", "simulate", "--runs", extended, *args, "--out", tmp_path / "c", "--include-unjudged")
    tc = pd.read_csv(tmp_path / "c" / "table.csv", index_col=0)
    assert c.exit_code == 0 and (tc["10"] < ta["10"]).all()  # the old behaviour: means over 58 topics


def test_judged_pools_and_evaluate_filter_in_the_library():
    from irbandits.measures import evaluate
    from irbandits.pooling import depth_pools
    from irbandits.pooling.pools import judged_pools

    runs = pd.DataFrame(dict(run="r", topic=["1", "1", "2"], docno=["a", "b", "c"], rank=[1, 2, 1]))
    qrels = pd.DataFrame(dict(topic=["1"], docno=["b"], grade=[1]))
    assert list(judged_pools(depth_pools(runs), qrels)) == ["1"]
    assert evaluate(runs, ["RR"], qrels=qrels).topic.tolist() == ["1"]
    assert evaluate(runs, ["RR"], qrels=qrels, include_unjudged=True).value.tolist() == [0.5, 0.0]


# ----- judge add refuses unrequested and surplus answers -------------------------------------------
def test_judge_add_refuses_unrequested_and_repeated_answers(tmp_path, cli):
    state = tmp_path / "S.json"
    cli("judge", "init", "-", "--state", state, "--minimum", "12", input=QRELS)
    pairs = [line.split() for line in cli("judge", "requests", "--state", state).output.splitlines()]
    asked = {frozenset(p[1:]) for p in pairs if p[0] == "7"}
    a, b = next((f"d{i:02d}", f"d{j:02d}") for i in range(12) for j in range(i + 1, 12)
                if frozenset((f"d{i:02d}", f"d{j:02d}")) not in asked)
    answers = tmp_path / "answers.txt"
    answers.write_text("".join(f"{t} {x} {y} {x}\n" for t, x, y in pairs[:3]))
    before = state.read_text()
    (tmp_path / "bad.txt").write_text(f"{pairs[0][0]} {pairs[0][1]} {pairs[0][2]} {pairs[0][1]}\n7 {a} {b} {a}\n")
    msg = cli_error("judge", "add", tmp_path / "bad.txt", "--state", state)
    assert msg == (f"{tmp_path / 'bad.txt'}, line 2: topic 7: no open or past phase asked for the pair {a} {b}; "
                   "--allow-unrequested keeps it")
    assert state.read_text() == before  # all or none
    assert cli("judge", "add", answers, "--state", state).exit_code == 0
    msg = cli_error("judge", "add", answers, "--state", state)  # the same file twice
    assert msg.startswith(f"{answers}, line 1: topic {pairs[0][0]}: the pair") and "answers added twice" in msg
    r = cli("judge", "add", answers, "--state", state, "--allow-unrequested")
    assert r.exit_code == 0
    status = json.loads(state.read_text())["topics"][pairs[0][0]]
    assert len(status["log"]) == 6 and status["bank"]  # kept for later phases


def test_judge_add_help_explains_the_answer_format(cli):
    text = " ".join(cli("judge", "add", "--help").output.replace("│", " ").split())
    assert "docno of the preferred item" in text and "--allow-unrequested" in text


# ----- path mistakes: one line naming the option ---------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["simulate", "--out", "{file}", "-a", "RUCB"], "--out {file}: is a file, expected a directory"),
    (["simulate", "--matrix", "{dir}", "-a", "RUCB"], "--matrix {dir}: is a directory, expected a file"),
    (["simulate", "--out", "{dir}/no/out", "-a", "RUCB"], "--out {dir}/no/out: the directory {dir}/no does not exist"),
    (["evaluate", "--runs", "{dir}", "-m", "RR", "--qrels", "{dir}"], "--qrels {dir}: is a directory, expected a file"),
    (["evaluate", "--runs", "{dir}", "-m", "RR", "--qrels", "{file}", "--out", "{dir}/no/e.csv"],
     "--out {dir}/no/e.csv: the directory {dir}/no does not exist"),
    (["evaluate", "--runs", "{dir}", "-m", "RR", "--qrels", "{file}", "--out", "{dir}"],
     "--out {dir}: is a directory, expected a file"),
    (["compare-measures", "--runs", "{dir}", "-m", "RR", "-m", "AP", "--qrels", "{file}", "--plot", "{dir}"],
     "--plot {dir}: is a directory, expected a file"),
    (["judge", "init", "{dir}", "--state", "{dir}/s.json"], "QRELS {dir}: is a directory, expected a file"),
    (["judge", "init", "{file}", "--state", "{file}/s.json"], "--state {file}/s.json: the directory {file} is a file"),
    (["judge", "status", "--state", "{dir}/missing.json"], "--state {dir}/missing.json: no such file"),
    (["judge", "qrels", "--state", "{file}", "--out", "{dir}"], "--out {dir}: is a directory, expected a file"),
    (["pool", "simulate", "--runs", "{dir}", "--qrels", "{file}", "--out", "{file}"],
     "--out {file}: is a file, expected a directory"),
    (["pool", "init", "--runs", "{dir}", "--state", "{dir}"], "--state {dir}: is a directory, expected a file"),
    (["matrix", "--ltr", "{dir}", "--out", "{dir}/m.txt"], "--ltr {dir}: is a directory, expected a file"),
    (["reproduce", "mergedts-large-scale", "--out", "{file}"], "--out {file}: is a file, expected a directory"),
    (["reproduce", "judging-replay", "--data", "{file}"], "--data {file}: is a file, expected a directory"),
])
def test_path_mistakes_are_one_line_naming_the_option(tmp_path, args, message):
    (tmp_path / "f.txt").write_text("7 0 a 1\n")
    fill = {"file": tmp_path / "f.txt", "dir": tmp_path}
    args = [a.format(**fill) for a in args]
    assert cli_error(*args) == message.format(**fill)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes everything")
def test_permission_denied_is_one_line(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert cli_error("simulate", "--out", locked / "out", "-a", "RUCB") == \
        f"--out {locked / 'out'}: permission denied (cannot write in {locked})"


def test_a_path_mistake_is_one_line_and_exit_code_2_from_the_shell(tmp_path):
    (tmp_path / "file").write_text("")
    r = shell("simulate", "--out", tmp_path / "file", "-a", "RUCB")
    assert r.returncode == 2 and r.stderr.strip() == f"error: --out {tmp_path / 'file'}: is a file, expected a directory"


# ----- --out formats --------------------------------------------------------------------------------
@pytest.mark.skipif(not DL21.exists(), reason="needs ../shared/data")
@pytest.mark.parametrize("suffix, read", [(".csv", pd.read_csv), (".tsv", lambda p: pd.read_csv(p, sep="\t")),
                                          (".parquet", pd.read_parquet), (".json", pd.read_json)])
def test_evaluate_out_format_follows_the_extension(tmp_path, suffix, read, cli):
    out = tmp_path / f"ev{suffix}"
    r = cli("evaluate", "--runs", DL21 / "runs" / RUN_NAMES[0], "-m", "RR", "--qrels", DL21 / "qrels.txt", "--out", out)
    assert r.exit_code == 0, r.output
    df = read(out)
    assert list(df.columns) == ["run", "topic", "measure", "value"] and len(df) == 54


def test_out_with_an_unknown_extension_is_refused_before_reading(tmp_path):
    assert cli_error("evaluate", "--runs", tmp_path / "missing", "-m", "RR", "--qrels", tmp_path / "missing",
                     "--out", tmp_path / "ev.txt").startswith(f"--out {tmp_path / 'ev.txt'}: cannot tell the format")


# ----- the same options everywhere; names checked before reading ----------------------------------
def _commands(group, prefix=()):
    from typer.main import get_command

    command = get_command(group) if not hasattr(group, "params") else group
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, prefix + (name,))
    if not hasattr(command, "commands"):
        yield prefix, command


def test_jobs_zero_means_all_cores_in_every_command():
    with_jobs = {" ".join(name): p for name, c in _commands(app) for p in c.params if p.name == "jobs"}
    assert {"simulate", "matrix", "reproduce judging-study", "reproduce mergedts-large-scale"} <= set(with_jobs)
    for name, p in with_jobs.items():
        assert p.min == 0 and "0: all cores" in p.help, name


def test_simulate_accepts_jobs_zero(tmp_path, cli):
    r = cli("simulate", "--problem", "arithmetic", "-a", "RUCB", "--horizon", "500", "--runs", "2", "--jobs", "0",
            "--out", tmp_path / "o", "--no-progress")
    assert r.exit_code == 0, r.output
    assert pd.read_parquet(tmp_path / "o" / "results.parquet").run.nunique() == 2


@pytest.mark.parametrize("args, message", [
    (["pool", "simulate", "-m", "MMNS", "--runs", "{m}", "--qrels", "{m}"], "unknown pooling method 'MMNS'"),
    (["pool", "init", "--method", "MMNS", "--runs", "{m}", "--state", "{m}.json"], "unknown pooling method 'MMNS'"),
    (["evaluate", "-m", "pgc", "--runs", "{m}", "--qrels", "{m}"], "measure pgc needs --judgments"),
    (["evaluate", "-m", "nDGC@10", "--runs", "{m}", "--qrels", "{m}"], "unknown measure 'nDGC@10'"),
    (["compare-measures", "-m", "RR", "-m", "pgc", "--runs", "{m}", "--qrels", "{m}"], "measure pgc needs --judgments"),
    (["simulate", "-a", "RUCC", "--matrix", "{m}"], "RUCC"),
])
def test_names_are_checked_before_any_data_is_read(tmp_path, args, message):
    msg = cli_error(*[a.format(m=tmp_path / "missing") for a in args])
    assert message in msg and "missing" not in msg


# ----- outputs go where --out says -----------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not DL21.exists(), reason="needs ../shared/data")
def test_best_item_study_writes_under_out_only(tmp_path):
    r = shell("reproduce", "best-item-study", "--data", DATA, "--samples", "10", "--draws", "10", "--out", "study",
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study"]
    written = sorted(p.name for p in (tmp_path / "study").iterdir())
    assert "best-item-study.md" in written and sum(n.endswith(".png") for n in written) == 3
    assert "](best-item-fig5.1.png)" in (tmp_path / "study" / "best-item-study.md").read_text()
