"""Passages and topics from TSV, CSV and JSONL files and from a local ir_datasets collection
(:mod:`irbandits.judging.texts`), and ``irbandits judge texts``."""

from __future__ import annotations

import json
import uuid

import pytest
from helpers import DATA, cli_error, cli_output

from irbandits.errors import IrbanditsError
from irbandits.judging.texts import (
    load_passages,
    load_topics,
    parse_passages,
    parse_topics,
    read_passages,
    read_texts,
    read_topics,
)

QUERIES = DATA / "trec-dl-2021-passage" / "queries.tsv"
CSV_TOPICS = ('qid,title,description,narrative\n'
              '7,cats,"About cats, big or small",\n'
              '8,dogs,,"A relevant passage names a breed,\nor two."\n')


# ----- files ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, content", [
    ("p.tsv", "d1\tone, two\n\nd2\tthree\tfour\n"),
    ("p.csv", 'docno,text\nd1,"one, two"\nd2,three\tfour\n'),
    ("p.csv", "\ufeffID , Body\r\nd1,\"one, two\"\r\n\r\nd2,three\tfour\r\n"),  # BOM, spaces and case, CRLF
    ("p.jsonl", '{"doc_id": "d1", "passage": "one, two", "url": "x"}\n\n{"doc_id": "d2", "passage": "three\\tfour"}\n'),
    ("p", '{"docno": "d1", "text": "one, two"}\n{"docno": "d2", "text": "three\\tfour"}'),  # detected: JSONL
    ("p", "d1\tone, two\nd2\tthree\tfour\n"),                                                # detected: TSV
    ("p", 'text,docno\n"one, two",d1\nthree\tfour,d2\n'),                                     # detected: CSV
])
def test_passages_read_alike_from_every_format(tmp_path, name, content):
    expected = {"d1": "one, two", "d2": "three\tfour"}
    assert parse_passages(content, name) == expected
    (tmp_path / name).write_text(content, encoding="utf-8", newline="")
    assert read_passages(tmp_path / name) == expected == read_texts(tmp_path / name)
    assert parse_passages(content, name, docnos=["d2", "nope"]) == {"d2": "three\tfour"}


def test_topics_carry_description_and_narrative_from_csv_and_jsonl():
    queries, notes = parse_topics(CSV_TOPICS, "t.csv")
    assert queries == {"7": "cats", "8": "dogs"}
    assert notes == {"7": {"description": "About cats, big or small"},
                     "8": {"narrative": "A relevant passage names a breed,\nor two."}}
    lines = "".join(json.dumps({"topic": t, "query": q, **notes.get(t, {}), "extra": 1}) + "\n" for t, q in queries.items())
    assert parse_topics(lines, "t.jsonl") == (queries, notes)
    assert parse_topics('{"query_id": "7", "text": "cats", "description": null}', "topics") == ({"7": "cats"}, {})


@pytest.mark.skipif(not QUERIES.exists(), reason="needs ../shared/data")
def test_a_real_topics_file_reads_the_same_in_every_format(tmp_path):
    excerpt = QUERIES.read_text(encoding="utf-8").splitlines()[:5]
    (tmp_path / "q.tsv").write_text("\n".join(excerpt) + "\n", encoding="utf-8")
    queries, notes = read_topics(tmp_path / "q.tsv")
    assert len(queries) == 5 and notes == {}
    assert queries["540006"] == "was friedrich nietzsche an atheist"
    import csv
    import io

    out = io.StringIO()
    csv.writer(out).writerows([("query_id", "query"), *queries.items()])
    assert parse_topics(out.getvalue(), "q.csv") == (queries, {})
    jsonl = "".join(json.dumps({"qid": t, "title": q}) + "\n" for t, q in queries.items())
    assert parse_topics(jsonl, "q.jsonl") == (queries, {})
    assert read_texts(tmp_path / "q.tsv", key="topic") == queries


@pytest.mark.parametrize("name, content, message", [
    ("p.tsv", "a\tx\nb x\n", "p.tsv, line 2: expected docno<TAB>text"),
    ("p.tsv", "a\tx\n\na\ty\n", "p.tsv, line 3: docno a is given twice (first on line 1)"),
    ("p.tsv", "a\tx\n \ty\n", "p.tsv, line 2: empty docno"),
    ("p.csv", "docno,title\nd1,x\n", "p.csv, line 1: no text column; the header names none of text, body, passage"),
    ("p.csv", "name,text\nd1,x\n", "p.csv, line 1: no docno column; the header names none of docno, id, doc_id"),
    ("p.csv", 'docno,text\nd1,"a\nb"\nd1,c\n', "p.csv, line 4: docno d1 is given twice (first on line 2)"),
    ("p.csv", "docno,text\nd1,x,y\n", "p.csv, line 2: 3 cells; the header has 2"),
    ("p.csv", 'docno,text\nd1,"x\n', "p.csv, line 2: not valid CSV (unexpected end of data)"),
    ("p.jsonl", '{"docno": "a", "text": "x"}\n{"docno": "b", "text": \n', "p.jsonl, line 2: not a JSON object (Expecting value)"),
    ("p.jsonl", '{"docno": 3, "text": "x"}\n', "p.jsonl, line 1: docno must be a string, got 3"),
    ("p.jsonl", '{"id": "a", "body": ["x"]}\n', "p.jsonl, line 1: body must be a string, got [\"x\"]"),
    ("p.jsonl", '\n["a", "x"]\n', 'p.jsonl, line 2: expected a JSON object, got ["a", "x"]'),
    ("p.jsonl", '{"doc": "a", "text": "x"}\n', "p.jsonl, line 1: no docno; give one of the keys docno, id, doc_id"),
    ("texts", "\n \n", "texts: no docno found; give docno<TAB>text lines, a CSV with a header or JSON lines naming "
                       "docno / id / doc_id and text / body / passage"),
])
def test_a_bad_passages_file_is_one_message_naming_file_and_line(tmp_path, name, content, message):
    with pytest.raises(IrbanditsError) as caught:
        parse_passages(content, name)
    assert str(caught.value) == message
    (tmp_path / name).write_text(content, encoding="utf-8", newline="")
    with pytest.raises(IrbanditsError) as caught:
        read_passages(tmp_path / name)
    assert str(caught.value) == message.replace(name, str(tmp_path / name), 1)


@pytest.mark.parametrize("name, content, message", [
    ("t.tsv", "7\tcats\n8 dogs\n", "t.tsv, line 2: expected topic<TAB>query"),
    ("t.csv", "topic,description\n7,x\n", "t.csv, line 1: no query column; the header names none of query, title, text"),
    ("t.jsonl", '{"qid": "7", "title": "cats", "narrative": 1}\n', "t.jsonl, line 1: narrative must be a string, got 1"),
])
def test_a_bad_topics_file_is_one_message(name, content, message):
    with pytest.raises(IrbanditsError, match=f"^{message}$"):
        parse_topics(content, name)


def test_a_file_that_is_not_utf8_or_missing_is_named(tmp_path):
    (tmp_path / "p.tsv").write_bytes(b"a\tfine\nb\tcaf\xe9\n")
    with pytest.raises(IrbanditsError, match=r"p.tsv, line 2: not UTF-8 text$"):
        read_passages(tmp_path / "p.tsv")
    with pytest.raises(IrbanditsError, match=r"nope.tsv: cannot read \(No such file or directory\)$"):
        read_topics(tmp_path / "nope.tsv")


# ----- ir_datasets -----------------------------------------------------------------------------------
TREC_TOPICS = """<top>
<num> Number: 7
<title> cats
<desc> Description:
What do cats eat?
<narr> Narrative:
A relevant passage names a food.
</top>
<top>
<num> Number: 8
<title> dogs
<desc> Description:
Dog breeds.
<narr> Narrative:
Any breed.
</top>
"""


@pytest.fixture
def irds(tmp_path):
    """A tiny dataset registered with ir_datasets' own API over files in ``tmp_path``: ``irds:ID``."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQueries, TsvDocs
    from ir_datasets.util import LocalDownload

    (tmp_path / "docs.tsv").write_text("d1\tfirst passage\nd2\tsecond passage\nd3\tthird\n", encoding="utf-8")
    (tmp_path / "topics.trec").write_text(TREC_TOPICS, encoding="utf-8")
    ident = f"irbandits-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(ident, Dataset(TsvDocs(LocalDownload(tmp_path / "docs.tsv")),
                                                 TrecQueries(LocalDownload(tmp_path / "topics.trec"))))
    return f"irds:{ident}"


def test_a_local_ir_datasets_collection_gives_passages_and_topics_with_notes(irds):
    assert load_passages(irds, ["d3", "d1", "missing"]) == {"d1": "first passage", "d3": "third"}
    assert load_passages(irds) == {"d1": "first passage", "d2": "second passage", "d3": "third"}
    queries, notes = load_topics(irds)
    assert queries == {"7": "cats", "8": "dogs"}
    assert notes == {"7": {"description": "What do cats eat?", "narrative": "A relevant passage names a food."},
                     "8": {"description": "Dog breeds.", "narrative": "Any breed."}}


def test_ir_datasets_never_downloads_and_names_unknown_datasets(tmp_path):
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvDocs
    from ir_datasets.util import Download, RequestsDownload

    remote = RequestsDownload("https://example.invalid/docs.tsv")
    ident = f"irbandits-test/{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(ident, Dataset(TsvDocs(Download([remote], cache_path=tmp_path / "docs.tsv"))))
    with pytest.raises(IrbanditsError, match=f"^irds:{ident}: the dataset's files are not on this machine and "
                                             "irbandits does not download them; fetch them with ir_datasets first"):
        load_passages(f"irds:{ident}", ["d1"])
    assert "stream" in RequestsDownload.__dict__ and RequestsDownload.stream.__name__ == "stream"  # put back
    with pytest.raises(IrbanditsError, match=f"^irds:{ident}: the dataset has no queries$"):
        load_topics(f"irds:{ident}")
    with pytest.raises(IrbanditsError, match=r"^irds:no/such-set: ir_datasets knows no dataset 'no/such-set'$"):
        load_topics("irds:no/such-set")


def test_without_ir_datasets_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ir_datasets", None)
    with pytest.raises(IrbanditsError, match=r"^irds:x: reading ir_datasets collections needs the ir_datasets "
                                             r"package: pip install 'irbandits\[datasets\]'$"):
        load_passages("irds:x")


# ----- irbandits judge texts -------------------------------------------------------------------------
def test_judge_texts_writes_the_qrels_documents_and_topics_as_json_lines(tmp_path, irds):
    (tmp_path / "q.txt").write_text("7 0 d1 2\n7 0 d3 0\n8 0 d9 1\n")
    (tmp_path / "t.csv").write_text(CSV_TOPICS)
    out = cli_output("judge", "texts", irds, "--qrels", tmp_path / "q.txt", "--topics", tmp_path / "t.csv",
                     "--out", tmp_path / "campaign")
    out = " ".join(out.split())   # the lines may wrap after a long path
    assert "2 passages of the 3 documents" in out and "no text for 1: d9" in out
    assert "2 of the 2 topics, 2 with a description or narrative" in out
    texts = (tmp_path / "campaign" / "texts.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line) for line in texts.splitlines()] == [{"docno": "d1", "text": "first passage"},
                                                                {"docno": "d3", "text": "third"}]
    topics = (tmp_path / "campaign" / "topics.jsonl").read_text(encoding="utf-8")
    assert parse_topics(topics, "topics.jsonl") == parse_topics(CSV_TOPICS, "t.csv")
    assert parse_passages(texts, "texts") == {"d1": "first passage", "d3": "third"}
    # the topics may come from the dataset too; a file mistake names the option
    cli_output("judge", "texts", irds, "--qrels", tmp_path / "q.txt", "--topics", irds, "--out", tmp_path / "c2")
    assert load_topics(tmp_path / "c2" / "topics.jsonl") == load_topics(irds)
    assert cli_error("judge", "texts", tmp_path / "none.tsv", "--qrels", tmp_path / "q.txt",
                     "--out", tmp_path / "c3") == f"SOURCE {tmp_path / 'none.tsv'}: no such file"


def test_judge_init_and_run_read_any_format(tmp_path, irds):
    (tmp_path / "q.txt").write_text("".join(f"7 0 d{i} 1\n" for i in (1, 2, 3)))
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"docno": f"d{i}", "text": "same" if i != 2 else "other"}) + "\n"
                                              for i in (1, 2, 3)))
    out = cli_output("judge", "init", tmp_path / "q.txt", "--state", tmp_path / "s.json", "--texts", tmp_path / "p.jsonl")
    assert "exact duplicates: 2 items in 1 groups" in out and "7: d1 = d3" in out
    out = cli_output("judge", "run", tmp_path / "q.txt", "--assessor", "irbandits.judging.assessors:lexical",
                     "--queries", irds, "--texts", irds, "--state", tmp_path / "r.json")
    assert "1 topics done" in out
