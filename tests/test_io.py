"""TREC runs, qrels and judgments: real files load; malformed lines name file, line and column."""

import gzip

import pytest

from irbandits.errors import IrbanditsError
from irbandits.io import read_judgments, read_qrels, read_run, read_runs

DATA = "../shared/data"


def test_real_runs_qrels_and_judgments_load():
    runs = read_runs(f"{DATA}/trec-dl-2021-passage/runs")
    assert runs.run.nunique() == 63 and runs.topic.nunique() == 53
    assert (runs.groupby(["run", "topic"])["rank"].max() <= 100).all()
    qrels = read_qrels(f"{DATA}/trec-dl-2021-passage/qrels.txt")
    assert set(qrels.grade) == {0, 1, 2, 3}
    judgments = read_judgments(f"{DATA}/human-preferences-dl21/judgments.txt")
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
