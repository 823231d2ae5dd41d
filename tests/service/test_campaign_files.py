"""Campaigns from passages and topics files (TSV, CSV, JSONL) through the JSON API and the creation
form; topic descriptions and narratives stored and served in ``GET /api/next``."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import csrf_of, login, preference_body

TOPICS_CSV = ('topic,query,description,narrative\n'
              '1,"first, question","What the first question is about","A relevant passage says why,\nin a line or two."\n'
              '2,second,,\n'
              '3,not pooled,ignored,ignored\n')
NOTE_1 = {"description": "What the first question is about", "narrative": "A relevant passage says why,\nin a line or two."}


def texts_jsonl() -> str:
    return "".join(json.dumps({"doc_id": d, "text": t}) + "\n" for d, t in preference_body()["texts"].items())


def served(service, cid: int) -> dict[str, dict]:
    """The ``GET /api/next`` body of each topic an assessor is given, leasing until both were seen."""
    who, seen = service.assessor(cid, "reader"), {}
    for n in range(100):
        task = service.next(who).json()
        seen.setdefault(task["topic"], task)
        if len(seen) == 2:
            return seen
        assert service.answer(who, task["task"], "left", f"r{n}").status_code == 200
    raise AssertionError(f"only topics {sorted(seen)} were handed out")


def test_api_campaign_from_file_strings_serves_the_topic_notes(service):
    cid = service.campaign(**preference_body() | dict(topics=TOPICS_CSV, texts=texts_jsonl()))
    runtime = service.app.state.campaigns.campaigns[cid]
    assert runtime.topics == {"1": "first, question", "2": "second"}
    assert runtime.notes == {"1": NOTE_1}        # only pooled topics, only those with a note
    assert runtime.texts == preference_body()["texts"]
    for restarted in (False, True):              # stored in campaigns.notes: a restart serves them too
        if restarted:
            service.start()
        tasks = served(service, cid)
        assert {k: tasks["1"][k] for k in ("query", "description", "narrative")} == {"query": "first, question", **NOTE_1}
        assert tasks["2"]["query"] == "second" and not {"description", "narrative"} & tasks["2"].keys()


def test_api_topics_as_objects_with_notes(service):
    topics = {"1": {"query": "first", "narrative": "Only narrative."}, "2": "second"}
    cid = service.campaign(**preference_body() | dict(topics=topics))
    tasks = served(service, cid)
    assert tasks["1"]["narrative"] == "Only narrative." and "description" not in tasks["1"]
    assert "narrative" not in tasks["2"]
    assert service.app.state.campaigns.campaigns[cid].topics == {"1": "first", "2": "second"}


@pytest.mark.parametrize("change, message", [
    (dict(texts='docno,text\nd0,"never closed\n'), "texts, line 2: not valid CSV (unexpected end of data)"),
    (dict(texts='{"docno": "d0", "text": 3}\n'), "texts, line 1: text must be a string, got 3"),
    (dict(texts="d0\tx\nd0\ty\n"), "texts, line 2: docno d0 is given twice (first on line 1)"),
    (dict(texts='{"docno": "d0", "text": "a\\u0000b"}'), "texts['d0']: the text contains a NUL character"),
    (dict(topics="topic,title\n1,x\n\n2,\"y\",z\n"), "topics, line 4: 3 cells; the header has 2"),
    (dict(topics="topic,description\n1,x\n"), "topics, line 1: no query column; the header names none of query, title, text"),
    (dict(topics={"1": {"query": "q", "description": "x" * 10_001}, "2": "q2"}),
     "topics: the description of topic 1 has 10,001 characters (at most 10,000)"),
    (dict(topics={"1": {"query": "q", "colour": "red"}, "2": "q2"}), "topics.object.1.object.colour: Extra inputs are not permitted"),
    (dict(topics={"1": {"description": "no query"}, "2": "q2"}), "topics.object.1.object.query: Field required"),
])
def test_a_bad_file_string_or_topic_is_422_naming_field_and_line(service, change, message):
    r = service.admin("POST", "/api/campaigns", json=preference_body() | change)
    assert r.status_code == 422 and message in r.json()["detail"], r.text
    assert service.admin("GET", "/api/campaigns").json() == []


def test_form_takes_a_csv_topics_file_and_a_jsonl_texts_file(service):
    assert login(service).status_code == 303
    page = service.client.get("/admin/campaigns/new")
    accept = re.findall(r'<input id="(topics|texts)" name="\1" type="file" accept="([^"]+)"', page.text)
    assert [(field, set(types.split(","))) for field, types in accept] == [
        (field, {".tsv", ".txt", ".csv", ".jsonl", ".json", ".ndjson"}) for field in ("topics", "texts")]
    body = preference_body()
    data = {"csrf": csrf_of(page), "name": "from files", "kind": "preference", "preference.seed": "3"}
    files = [("topics", ("topics.csv", TOPICS_CSV.encode())), ("texts", ("passages.jsonl", texts_jsonl().encode())),
             ("qrels", ("qrels.txt", body["qrels"].encode()))]
    r = service.client.post("/admin/campaigns", data=data, files=files, follow_redirects=False)
    assert r.status_code == 303, r.text
    cid = int(r.headers["location"].rsplit("/", 1)[1])
    assert service.app.state.campaigns.campaigns[cid].notes == {"1": NOTE_1}
    assert served(service, cid)["1"]["narrative"] == NOTE_1["narrative"]
    # a mistake names the uploaded file and the line, on the form
    files[0] = ("topics", ("topics.csv", b'topic,query\n1,first\n1,again\n'))
    r = service.client.post("/admin/campaigns", data=data, files=files)
    error = re.search(r'<p class="error"[^>]*>([^<]*)</p>', r.text).group(1)
    assert r.status_code == 422 and error == "topics.csv, line 3: topic 1 is given twice (first on line 2)"
    files[0] = ("topics", ("topics.tsv", b"1\tfirst\n2\tcaf\xe9\n"))
    r = service.client.post("/admin/campaigns", data=data, files=files)
    assert r.status_code == 422 and "topics file topics.tsv, line 2: not UTF-8 text" in r.text
