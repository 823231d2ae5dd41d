"""The judgments log as JSON Lines and CSV (issue 24, item 6), on SQLite and PostgreSQL: one row per log
entry of every kind, with assessor names, lease and answer times, skips' reasons and comments; the
client and the dashboard's downloads."""

from __future__ import annotations

import csv
import io
import json

from irbandits.client import Client
from irbandits.service.judges import LOG_FIELDS

from .conftest import ADMIN, graded_body, login, oracle, preference_body


def run_a_campaign(service) -> tuple[int, dict, list[dict]]:
    """A preference campaign with two test pairs where ann answers (checks come in), undoes one answer and
    reports a pair; returns its id, ann and what she was shown, in order, with the lease times."""
    cid = service.campaign(**preference_body() | dict(tests=[["1", "d0", "d11"], ["2", "e0", "e3"]]))
    ann = service.assessor(cid, "Ann, \"the\" reader")   # a comma and quotes for the CSV
    shown = []
    for n in range(8):
        service.clock.now += 7
        task = service.next(ann).json()
        shown.append(task | {"leased": service.clock.now})
        service.clock.now += 3
        assert service.answer(ann, task["task"], oracle(task), f"a{n}").status_code == 200
    service.clock.now += 1
    r = service.client.post("/api/undo", json={"client_id": "u1"}, headers={"Authorization": ann["Authorization"]})
    assert r.status_code == 200
    redo = r.json()
    service.clock.now += 2
    assert service.answer(ann, redo["task"], oracle(redo), "a-redo").status_code == 200
    task = service.next(ann).json()
    r = service.client.post(f"/api/tasks/{task['task']}/skip", headers={"Authorization": ann["Authorization"]},
                            json={"reason": "broken", "comment": 'cut off, "mid"\nsentence', "client_id": "s1"})
    assert r.status_code == 200
    return cid, ann, shown


def test_the_log_as_json_lines_and_csv_has_every_entry_with_names_and_times(service):
    cid, ann, shown = run_a_campaign(service)
    r = service.admin("GET", f"/api/campaigns/{cid}/judgments?format=jsonl")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in r.text.splitlines()]
    assert all(tuple(row) == LOG_FIELDS for row in rows)
    kinds = [row["kind"] for row in rows]
    assert len(rows) == 11
    assert {"answer", "test"} <= set(kinds[:8]) and kinds[8:] == ["retract", "answer", "skip"]
    for row, task in zip(rows, shown):                   # the first eight: one answer or check each
        assert row["topic"] == task["topic"] and row["docnos"] == [i["docno"] for i in task["items"]]
        assert row["answer"] == task["items"][0 if oracle(task) == "left" else 1]["docno"]
        assert (row["assessor"], row["name"]) == (ann["id"], 'Ann, "the" reader')
        assert (row["lease_time"], row["answer_time"]) == (task["leased"], task["leased"] + 3)
        assert row["reason"] is None and row["comment"] is None and row["retracts"] is None
    retract, redo, skip = rows[8:]
    assert retract["retracts"] == rows[7]["id"] and retract["answer"] == rows[7]["answer"]
    assert redo["docnos"] == retract["docnos"] and redo["lease_time"] == retract["answer_time"]
    assert (skip["answer"], skip["reason"], skip["comment"]) == (None, "broken", 'cut off, "mid"\nsentence')
    assert skip["lease_time"] == redo["answer_time"] and skip["answer_time"] == skip["lease_time"]

    r = service.admin("GET", f"/api/campaigns/{cid}/judgments?format=csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(r.text)))
    assert len(table) == len(rows) and tuple(table[0]) == LOG_FIELDS
    for line, row in zip(table, rows):
        assert line == {k: "" if row[k] is None else " ".join(row[k]) if k == "docnos" else str(row[k])
                        for k in LOG_FIELDS}
    assert table[-1]["comment"] == 'cut off, "mid"\nsentence' and table[0]["name"] == 'Ann, "the" reader'

    assert Client("http://testserver", ADMIN, http=service.client).judgments_log(cid) == rows
    assert service.admin("GET", f"/api/campaigns/{cid}/judgments?format=xml").status_code == 422
    assert service.client.get(f"/api/campaigns/{cid}/judgments?format=csv").status_code == 401
    assert service.admin("GET", f"/api/campaigns/{cid + 9}/judgments?format=jsonl").status_code == 404


def test_a_graded_log_has_grades_and_the_dashboard_links_both_downloads(service):
    cid, _, _ = run_a_campaign(service)
    login(service)
    page = service.client.get(f"/admin/campaigns/{cid}")
    assert f'href="/admin/campaigns/{cid}/judgments.jsonl"' in page.text and f'href="/admin/campaigns/{cid}/judgments.csv"' in page.text
    for fmt, media in (("jsonl", "application/x-ndjson"), ("csv", "text/csv")):
        r = service.client.get(f"/admin/campaigns/{cid}/judgments.{fmt}")
        assert r.status_code == 200 and r.headers["content-type"].startswith(media)
        assert r.headers["content-disposition"] == f'attachment; filename="campaign-{cid}-log.{fmt}"'
        assert r.text == service.admin("GET", f"/api/campaigns/{cid}/judgments?format={fmt}").text
    service.client.cookies.clear()                      # no session: no download
    assert service.client.get(f"/admin/campaigns/{cid}/judgments.csv", follow_redirects=False).status_code != 200

    gid = service.campaign(**graded_body())
    bob = service.assessor(gid, "bob")
    task = service.next(bob).json()
    assert service.answer(bob, task["task"], 2, "g1").status_code == 200
    [row] = [json.loads(line) for line in service.admin("GET", f"/api/campaigns/{gid}/judgments?format=jsonl").text.splitlines()]
    assert (row["kind"], row["docnos"], row["answer"], row["name"]) == ("answer", [task["items"][0]["docno"]], 2, "bob")


def test_csv_cells_an_assessor_typed_cannot_run_as_spreadsheet_formulas(service):
    cid = service.campaign(**preference_body())
    eve = service.assessor(cid, "@SUM(1+1)")
    task = service.next(eve).json()
    r = service.client.post(f"/api/tasks/{task['task']}/skip", headers={"Authorization": eve["Authorization"]},
                            json={"reason": "other", "comment": "=HYPERLINK(\"http://x\")", "client_id": "s1"})
    assert r.status_code == 200
    [row] = csv.DictReader(io.StringIO(service.admin("GET", f"/api/campaigns/{cid}/judgments?format=csv").text))
    assert (row["name"], row["comment"]) == ("'@SUM(1+1)", "'=HYPERLINK(\"http://x\")")
    [entry] = [json.loads(line) for line in service.admin("GET", f"/api/campaigns/{cid}/judgments?format=jsonl")
               .text.splitlines()]
    assert (entry["name"], entry["comment"]) == ("@SUM(1+1)", "=HYPERLINK(\"http://x\")")  # JSON keeps them as typed
