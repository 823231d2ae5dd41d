"""TREC runs, qrels and judgments: real files load; malformed lines name file, line and column."""

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from helpers import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from irbandits import io
from irbandits.errors import IrbanditsError
from irbandits.io import read_judgments, read_qrels, read_run, read_runs


def test_real_runs_qrels_and_judgments_load():
    runs = read_runs(DATA / "trec-dl-2021-passage" / "runs")
    assert runs.run.nunique() == 63 and runs.topic.nunique() == 53
    assert (runs.groupby(["run", "topic"])["rank"].max() <= 100).all()
    qrels = read_qrels(DATA / "trec-dl-2021-passage" / "qrels.txt")
    assert set(qrels.grade) == {0, 1, 2, 3}
    judgments = read_judgments(DATA / "human-preferences-dl21" / "judgments.txt")
    assert len(judgments) == 11681
    assert ((judgments.winner == judgments.left) | (judgments.winner == judgments.right)).all()


def test_run_order_follows_trec_eval_and_repeats_keep_first(tmp_path):
    path = tmp_path / "r.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("1 Q0 a 1 2.0 x\n1 Q0 b 2 3.0 x\n1 Q0 c 3 3.0 x\n1 Q0 a 4 9.0 x\n")
    with pytest.warns(UserWarning, match="1 repeated"):
        run = read_run(path)
    assert list(run.docno) == ["c", "b", "a"]          # score desc, ties by docno desc
    assert list(run["rank"]) == [1, 2, 3] and run.run.iat[0] == "x"


@pytest.mark.parametrize("reader, text, message", [
    (read_run, "1 Q0 a 1 2.0\n", "line 1: a run line has 6 columns"),
    (read_run, "1 Q0 a 1 2.0 x\n1 Q0 b 2 high x\n", "line 2, column 5: score must be a number"),
    (read_qrels, "1 0 a 1\n1 0 a 2\n", "line 2: document a of topic 1 is already judged on line 1"),
    (read_qrels, "1 0 a\n", "a qrels line has 4 columns"),
    (read_judgments, "1 a b c\n", "line 1, column 4: the winner c is neither a nor b"),
    (read_judgments, "1 a a a\n", "cannot be compared with itself"),
])
def test_malformed_lines_are_named(tmp_path, reader, text, message):
    path = tmp_path / "f.txt"
    path.write_text(text)
    with pytest.raises(IrbanditsError, match=f"f.txt, {message}" if message[0] == "l" else message):
        reader(path)


# ----- fast readers (pyarrow) against the line-by-line readers, which stay the validators -------------
RUNS = sorted((DATA / "trec-dl-2021-passage" / "runs").iterdir())
QRELS = [DATA / "trec-dl-2021-passage" / "qrels.txt", *sorted((DATA / "human-preferences-dl21").glob("*.qrels"))]


def _run_fast(path: Path, name: str | None):
    """:func:`read_run` by pyarrow only: None where it leaves the file to the line reader."""
    return None if io._run_columns(path) is None else read_run(path, name)


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.name)
def test_fast_run_reader_equals_line_reader_on_every_real_run(path):
    fast = _run_fast(path, None)
    assert fast is not None  # a plain file takes the fast path
    pd.testing.assert_frame_equal(fast, io.read_run_lines(path, None), check_exact=True)


def test_all_runs_ranked_at_once_equal_each_run_read_line_by_line():
    expected = pd.concat([io.read_run_lines(p, None) for p in RUNS], ignore_index=True)
    pd.testing.assert_frame_equal(read_runs(RUNS), expected, check_exact=True)


def test_runs_with_repeats_and_one_odd_file_read_as_each_alone(tmp_path):
    (tmp_path / "a").write_text("2 Q0 x 1 1 A\n10 Q0 x 1 1 A\n2 Q0 y 2 3 A\n2 Q0 x 3 9 A\n")
    (tmp_path / "b").write_text("2 Q0 x 1 1 B\n1 Q0 z 2 1 B\n1 Q0 z 3 5 B\n")
    with pytest.warns(UserWarning) as caught:
        together = read_runs(tmp_path)
    assert [str(w.message).split(":")[0] for w in caught] == [str(tmp_path / "a"), str(tmp_path / "b")]
    with pytest.warns(UserWarning):
        expected = pd.concat([io.read_run_lines(tmp_path / n, None) for n in "ab"], ignore_index=True)
    pd.testing.assert_frame_equal(together, expected, check_exact=True)
    (tmp_path / "c").write_text("3\xa0Q0\xa0w\xa01\xa01\xa0C\n")  # the line reader's file
    with pytest.warns(UserWarning):
        mixed = read_runs(tmp_path)
    pd.testing.assert_frame_equal(mixed.iloc[:len(together)], together, check_exact=True)
    assert mixed.iloc[-1].tolist() == ["C", "3", "w", 1, 1.0]
    (tmp_path / "d").write_text("3 Q0 w 1 1 C\n")
    with pytest.raises(IrbanditsError, match="two run files share the runid 'C'"), pytest.warns(UserWarning):
        read_runs(tmp_path)


@pytest.mark.parametrize("lines", [False, True])
@pytest.mark.parametrize("path", QRELS, ids=lambda p: p.name)
def test_fast_qrels_reader_equals_line_reader_on_every_real_qrels(path, lines):
    fast = io._qrels_fast(path, lines)
    assert fast is not None
    pd.testing.assert_frame_equal(fast, io._read_qrels_lines(path, lines), check_exact=True)


def _variants(rows: list[list[str]]) -> dict[str, tuple[str, bool]]:
    """The same lines written in the ways the line reader accepts: (text, whether pyarrow takes it)."""
    return {
        "tabs": ("\n".join("\t".join(r) for r in rows) + "\n", True),
        "spaces": ("\n".join(" ".join(r) for r in rows), True),
        "many spaces and tabs": ("\n".join("  \t".join(r) + " \t" for r in rows), True),
        "indented, blank lines, CRLF": ("\r\n\r\n".join("\t " + "\t".join(r) for r in rows) + "\r\n \r\n", True),
        "old Mac line ends": ("\r".join("\t".join(r) for r in rows), True),
        "form feeds and unit separators": ("\n".join("\x0c".join(r[:2]) + "\x1f" + " ".join(r[2:]) for r in rows), True),
        "no-break spaces (str.split splits on them)": ("\n".join("\xa0".join(r) for r in rows), False),
        "byte-order mark": ("\ufeff" + "\n".join(" ".join(r) for r in rows), False),
    }


@pytest.mark.parametrize("variant", list(_variants([])))
def test_whitespace_variants_read_as_the_line_reader_reads_them(tmp_path, variant):
    with gzip.open(DATA / "trec-dl-2021-passage" / "runs" / "p_bm25.gz", "rt") as fh:
        rows = [line.replace("msmarco_passage_45", "passage_é").split() for line in fh.readlines()[:300]]
    qrels_rows = [[r[0], "0", r[2], str(int(r[3]) % 4)] for r in rows]
    for path in (tmp_path / "f.txt", tmp_path / "f.gz"):
        for lines, fast, slow in [(rows, _run_fast, io.read_run_lines), (qrels_rows, io._qrels_fast, io._read_qrels_lines)]:
            content, fast_path = _variants(lines)[variant]
            with (gzip.open if path.suffix == ".gz" else open)(path, "wt", encoding="utf-8", newline="") as fh:
                fh.write(content)
            option = None if fast is _run_fast else True
            assert (fast(path, option) is not None) == fast_path
            expected = slow(path, option)
            assert len(expected) == 300
            pd.testing.assert_frame_equal(fast(path, option) if fast_path else expected, expected, check_exact=True)


def test_ids_stay_strings_as_written_and_line_numbers_skip_blank_lines(tmp_path):
    run, qrels = tmp_path / "r.txt", tmp_path / "q.txt"
    run.write_text("0012 Q0 007 1 1.5 r\n0012 Q0 7 2 1.5 r\n12 Q0 1e3 1 2 r\n")
    df = read_run(run)
    assert df.topic.tolist() == ["0012", "0012", "12"] and df.docno.tolist() == ["7", "007", "1e3"]
    qrels.write_text("0012 0 007 1\n\n   \n0012 0 7 2.5\n")
    q = read_qrels(qrels, lines=True)
    assert q.docno.tolist() == ["007", "7"] and q.line.tolist() == [1, 4] and q.grade.tolist() == [1.0, 2.5]
    assert io._qrels_fast(qrels, True) is not None


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("reader, slow, text, message", [
    (read_run, io.read_run_lines, "1 Q0 a 1 2.0 x\n1 Q0 b 2 3.0\n", "line 2: a run line has 6 columns"),
    (read_run, io.read_run_lines, "1 Q0 a 1 2.0 x\n1 Q0 b 2 3.0 x y\n", "line 2: a run line has 6 columns"),
    (read_run, io.read_run_lines, "1 Q0 a 1 2.0 x\n1 Q0 b 2 high x\n", "line 2, column 5: score must be a number"),
    (read_run, io.read_run_lines, "1 Q0 a 1 nan(1) x\n", "line 1, column 5: score must be a number"),
    (read_run, io.read_run_lines, "1 Q0 a 0x1F 2.0 x\n", "line 1, column 4: rank must be a number"),
    (read_run, io.read_run_lines, "", "the run file is empty"),
    (read_run, io.read_run_lines, "\n \n\t\n", "the run file is empty"),
    (read_qrels, io._read_qrels_lines, "1 0 a 1\n1 0 b high\n", "line 2, column 4: grade must be a number"),
    (read_qrels, io._read_qrels_lines, "1 0 a 1\n1 0 b 2 x\n", "line 2: a qrels line has 4 columns"),
    (read_qrels, io._read_qrels_lines, "1 0 a 1\n2 0 a 1\n1 0 a 2\n", "line 3: document a of topic 1 is already judged on line 1"),
])
def test_broken_files_get_the_line_readers_message(tmp_path, gz, reader, slow, text, message):
    path = tmp_path / ("f.txt.gz" if gz else "f.txt")
    with (gzip.open if gz else open)(path, "wt") as fh:
        fh.write(text)
    option = True if reader is read_qrels else None
    assert (io._qrels_fast if reader is read_qrels else _run_fast)(path, option) is None
    with pytest.raises(IrbanditsError) as error:
        reader(path)
    with pytest.raises(IrbanditsError) as expected:
        slow(path, option)
    assert str(error.value) == str(expected.value)
    assert str(error.value).startswith(f"{path}, {message}" if message.startswith("line") else f"{path}: {message}")


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.text(alphabet="0123456789+-.eEinfatyx_ ", max_size=14),
                 st.from_regex(r"\A[+-]?[0-9]{0,20}(\.[0-9]{0,20})?([eE][+-]?[0-9]{1,3})?\Z")))
def test_a_score_pyarrow_takes_is_the_float_python_gives(text):
    value = io._finite(pa.chunked_array([pa.array([text], pa.large_string())]))
    if value is not None:  # else the line reader decides
        assert np.float64(float(text)).view(np.int64) == value.view(np.int64)[0]


@pytest.mark.parametrize("text", ["", "\n\n", " \n\t\n"])
def test_qrels_without_lines_read_as_the_line_reader_reads_them(tmp_path, text):
    path = tmp_path / "q.txt"
    path.write_text(text)
    assert io._qrels_fast(path, True) is None
    pd.testing.assert_frame_equal(read_qrels(path, lines=True), io._read_qrels_lines(path, True))
