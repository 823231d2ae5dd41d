"""Assessor management (issue 24, item 3), on SQLite and PostgreSQL: renaming an assessor, creating many
at once (the JSON API, and a names file on the dashboard that answers with a CSV of links), the
organiser's client, and the topics table's queries."""

from __future__ import annotations

import csv
import io
import re

import pytest

from irbandits.client import Client, ServiceError
from irbandits.service import campaigns

from .conftest import ADMIN, csrf_of, login, preference_body


def listed(service, cid: int) -> list[str]:
    """The names of the campaign's assessors, in the order they were made."""
    return [a["name"] for a in service.admin("GET", f"/api/campaigns/{cid}/assessors").json()]


def bulk(service, cid: int, body, token: str = ADMIN):
    return service.client.post(f"/api/campaigns/{cid}/assessors/bulk", json=body,
                               headers={"Authorization": f"Bearer {token}"})


def bearer(made: dict) -> dict:
    return {"Authorization": f"Bearer {made['token']}"}


# ----- the JSON API ------------------------------------------------------------------------------
def test_bulk_creates_people_in_the_given_order_each_with_a_working_link(service):
    cid = service.campaign(**preference_body())
    names = ["  Zoë Ångström ", "worker-0042", "Smith, John"] + [f"w{i}" for i in range(997)]
    r = bulk(service, cid, {"names": names})
    assert r.status_code == 201
    made = r.json()
    assert [m["name"] for m in made] == [n.strip() for n in names] == listed(service, cid)
    assert [m["id"] for m in made] == sorted(m["id"] for m in made) and len({m["token"] for m in made}) == 1000
    assert all(m["url"] == f"/a/{m['token']}" and m.keys() == {"id", "name", "token", "url"} for m in made)
    for m in (made[0], made[-1]):
        assert service.client.get("/api/me", headers=bearer(m)).json()["name"] == m["name"]
        assert service.next(bearer(m)).status_code == 200
        assert service.client.get(m["url"]).status_code == 200
    people = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    assert {a["automatic"] for a in people} == {None} and {a["revoked"] for a in people} == {False}


@pytest.mark.parametrize("names, message", [
    ([], "names: give 1 to 1000 names, got 0"),
    (["a"] * 1001, "names: give 1 to 1000 names, got 1001"),
    (["ann", "  "], "names.1: the name is empty (give 1 to 200 characters)"),
    (["ann", "bo\x00b"], "names.1: the name contains a NUL character"),
    (["ann", "bob", "li\tne"], "names.2: the name contains a control character (U+0009)"),
    (["ann", "x\u0085y"], "names.1: the name contains a control character (U+0085)"),
    (["ann", "x" * 201], "names.1: the name has 201 characters (at most 200)"),
    (["ann", "bob", " ann"], "names: names.2 ('ann') repeats names.0"),
    (["ann", 7], "names.1: Input should be a valid string"),
    ("ann", "names: Input should be a valid list"),
])
def test_bulk_422_names_the_problem_and_creates_nobody(service, names, message):
    cid = service.campaign(**preference_body())
    service.assessor(cid, "kept")
    r = bulk(service, cid, {"names": names})
    assert r.status_code == 422 and r.json()["detail"] == message
    assert listed(service, cid) == ["kept"]


def test_bulk_refuses_other_fields_callers_and_campaigns(service):
    cid = service.campaign(**preference_body())
    someone = service.assessor(cid, "someone")
    r = bulk(service, cid, {"names": ["a"], "automatic": "oracle"})
    assert r.status_code == 422 and r.json()["detail"] == "automatic: Extra inputs are not permitted"
    assert service.client.post(f"/api/campaigns/{cid}/assessors/bulk", json={"names": ["a"]}).status_code == 401
    assert bulk(service, cid, {"names": ["a"]}, token="not-a-token").status_code == 401
    assert bulk(service, cid, {"names": ["a"]}, token=someone["Authorization"].split()[1]).status_code == 403
    assert bulk(service, cid + 1, {"names": ["a"]}).status_code == 404
    assert listed(service, cid) == ["someone"]


def test_a_failed_insert_creates_nobody(service, monkeypatch):
    """One transaction: when the database refuses the last row (here a repeated token hash), the rows
    before it are not kept either."""
    cid = service.campaign(**preference_body())
    tokens = iter(["t-one", "t-two", "t-one"])
    monkeypatch.setattr(campaigns, "new_token", lambda: next(tokens))
    reg = service.app.state.campaigns
    with pytest.raises(Exception, match="(?i)unique"):
        reg.add_people(reg.get(cid), ["a", "b", "c"])
    assert listed(service, cid) == []


def test_rename_keeps_the_link_answers_and_flag_and_survives_a_restart(service):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    task = service.next(ann).json()
    assert service.answer(ann, task["task"], "left", "c1").status_code == 200
    path = f"/api/campaigns/{cid}/assessors/{ann['id']}"
    r = service.admin("POST", path, json={"name": "  Ann Lee  "})
    assert r.status_code == 200 and r.json() == {"id": ann["id"], "name": "Ann Lee"}
    assert service.client.get("/api/me", headers={"Authorization": ann["Authorization"]}).json()["name"] == "Ann Lee"   # the token cache too
    r = service.admin("POST", path, json={"name": "Ann L.", "flagged": True})
    assert r.json() == {"id": ann["id"], "name": "Ann L.", "flagged": True}
    service.start()
    [a] = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    assert (a["name"], a["flagged"], a["judgments"]) == ("Ann L.", True, 1)
    assert service.next(ann).status_code == 200


@pytest.mark.parametrize("body, message", [
    ({"name": ""}, "name: the name is empty (give 1 to 200 characters)"),
    ({"name": " \t "}, "name: the name is empty (give 1 to 200 characters)"),
    ({"name": "a\nb"}, "name: the name contains a control character (U+000A)"),
    ({"name": "a\x00"}, "name: the name contains a NUL character"),
    ({"name": "é" * 201}, "name: the name has 201 characters (at most 200)"),
    ({"name": 5}, "name: Input should be a valid string"),
    ({"name": "", "flagged": True}, "name: the name is empty (give 1 to 200 characters)"),
    ({"name": "ok", "nick": "x"}, "nick: Extra inputs are not permitted"),
    ({}, 'body: Value error, give "name", "flagged", "revoked" or "token": "new"'),
])
def test_rename_422_names_the_problem_and_changes_nothing(service, body, message):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    r = service.admin("POST", f"/api/campaigns/{cid}/assessors/{ann['id']}", json=body)
    assert r.status_code == 422 and r.json()["detail"] == message
    [a] = service.admin("GET", f"/api/campaigns/{cid}/assessors").json()
    assert (a["name"], a["flagged"]) == ("ann", False)


@pytest.mark.parametrize("name, message", [
    ("a\x07b", "name: the name contains a control character (U+0007)"),
    (" ", "name: the name is empty (give 1 to 200 characters)"),
])
def test_one_new_assessor_has_its_name_checked_as_in_bulk_and_rename(service, name, message):
    cid = service.campaign(**preference_body())
    r = service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": name})
    assert r.status_code == 422 and r.json()["detail"] == message and listed(service, cid) == []
    assert service.admin("POST", f"/api/campaigns/{cid}/assessors", json={"name": " ann "}).status_code == 201
    assert listed(service, cid) == ["ann"]


def test_rename_is_the_organisers_and_only_in_the_assessors_campaign(service):
    first, second = service.campaign(**preference_body()), service.campaign(**preference_body())
    ann, bob = service.assessor(first, "ann"), service.assessor(second, "bob")
    r = service.admin("POST", f"/api/campaigns/{first}/assessors/{bob['id']}", json={"name": "stolen"})
    assert r.status_code == 404 and r.json()["detail"] == f"no assessor {bob['id']} in campaign {first}"
    path = f"/api/campaigns/{first}/assessors/{ann['id']}"
    assert service.client.post(path, json={"name": "x"}).status_code == 401
    assert service.client.post(path, json={"name": "x"}, headers={"Authorization": ann["Authorization"]}).status_code == 403
    assert service.admin("POST", f"/api/campaigns/{first}/assessors/{2**40}", json={"name": "x"}).status_code == 404
    assert listed(service, first) == ["ann"] and listed(service, second) == ["bob"]


def test_the_client_creates_renames_and_reports_errors(service):
    cid = service.campaign(**preference_body())
    client = Client("http://testserver", ADMIN, http=service.client)
    made = client.add_assessors(cid, ["ann", "bob"])
    assert [m["name"] for m in made] == ["ann", "bob"]
    assert client.rename_assessor(cid, made[1]["id"], "Bob B") == {"id": made[1]["id"], "name": "Bob B"}
    assert [a["name"] for a in client.assessors(cid)] == ["ann", "Bob B"]
    with pytest.raises(ServiceError) as error:
        client.add_assessors(cid, ["carl", "carl"])
    assert error.value.status == 422 and "repeats" in error.value.detail
    assert len(client.assessors(cid)) == 2


# ----- the dashboard -----------------------------------------------------------------------------
def dashboard(service, cid: int) -> str:
    """Log in and return the campaign page's CSRF token."""
    login(service)
    return csrf_of(service.client.get(f"/admin/campaigns/{cid}"))


def upload(service, cid: int, csrf: str, filename: str, content: bytes, mime: str = "text/plain"):
    return service.client.post(f"/admin/campaigns/{cid}/assessors/bulk", data={"csrf": csrf},
                               files={"names": (filename, content, mime)})


@pytest.mark.parametrize("filename, content, names", [
    ("names.txt", b"ann\r\n\r\n  Smith, John \r\nzo\xc3\xab\r\n", ["ann", "Smith, John", "zoë"]),
    ("workers.csv", b"\xef\xbb\xbfid,Name,email\n1,ann,a@x\n,,\n2,\"Smith, John\",j@x\n", ["ann", "Smith, John"]),
    ("workers.csv", b"ann,a@x\nbob,b@x\n", ["ann", "bob"]),
])
def test_names_file_gives_a_csv_of_working_links_once(service, filename, content, names):
    cid = service.campaign(**preference_body())
    r = upload(service, cid, dashboard(service, cid), filename, content)
    assert r.status_code == 200 and r.headers["content-type"] == "text/csv; charset=utf-8"
    assert r.headers["content-disposition"] == f'attachment; filename="campaign-{cid}-links.csv"'
    assert r.headers["cache-control"] == "no-store"
    rows = list(csv.reader(io.StringIO(r.text)))
    assert rows[0] == ["name", "url"] and [row[0] for row in rows[1:]] == names == listed(service, cid)
    for _, url in rows[1:]:
        assert re.fullmatch(r"http://testserver/a/[A-Za-z0-9_-]{43}", url)
        assert service.client.get(url).status_code == 200
    page = service.client.get(f"/admin/campaigns/{cid}").text
    assert all(row[1] not in page for row in rows[1:])       # the links are not shown again


@pytest.mark.parametrize("filename, content, message", [
    ("names.txt", b"ann\nbob\nca\x01rl\n", "names file names.txt, line 3: the name contains a control character (U+0001)"),
    ("names.txt", b"ann\n\nbob\nann\n", "names file names.txt, line 4: &#39;ann&#39; is already on line 1"),
    ("names.csv", b"id,name\n1,ann\n2,\n", "names file names.csv, line 3: the name is empty (give 1 to 200 characters)"),
    ("names.csv", b"name\n" + b"x" * 201 + b"\n", "names file names.csv, line 2: the name has 201 characters (at most 200)"),
    ("names.csv", b"name\n\"ann\n", "names file names.csv: not a valid CSV file (unexpected end of data)"),
    ("names.txt", b"\n\n", "names file names.txt: no name found (one name a line, or a CSV with a name column)"),
    ("names.txt", "".join(f"w{i}\n" for i in range(1001)).encode(), "names file names.txt: 1001 names; at most 1000 at a time"),
    ("names.txt", b"\xff\xfeann", "names file names.txt: not UTF-8 text"),
    ("", b"", "names file: choose a file of names (one a line, or a CSV with a name column)"),
])
def test_a_bad_names_file_is_one_line_on_the_page_and_creates_nobody(service, filename, content, message):
    cid = service.campaign(**preference_body())
    service.assessor(cid, "kept")
    r = upload(service, cid, dashboard(service, cid), filename, content)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert f'id="assessor-error">{message}</p>' in r.text
    assert listed(service, cid) == ["kept"]


def test_names_file_and_rename_forms_need_the_csrf_token(service):
    cid = service.campaign(**preference_body())
    ann = service.assessor(cid, "ann")
    dashboard(service, cid)
    assert upload(service, cid, "0" * 64, "n.txt", b"bob\n").status_code == 403
    r = service.client.post(f"/admin/campaigns/{cid}/assessors/{ann['id']}/name", data={"name": "x"})
    assert r.status_code == 403 and listed(service, cid) == ["ann"]


def test_rename_form_renames_or_shows_the_problem(service):
    cid, other = service.campaign(**preference_body()), service.campaign(**preference_body())
    ann, bob = service.assessor(cid, "ann"), service.assessor(other, "bob")
    csrf = dashboard(service, cid)
    page = service.client.get(f"/admin/campaigns/{cid}").text
    assert f'action="/admin/campaigns/{cid}/assessors/{ann["id"]}/name"' in page and 'name="name" value="ann"' in page
    path = f"/admin/campaigns/{cid}/assessors/{ann['id']}/name"
    r = service.client.post(path, data={"csrf": csrf, "name": " Ann <Lee> "}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/admin/campaigns/{cid}"
    assert listed(service, cid) == ["Ann <Lee>"]
    assert "<td>Ann &lt;Lee&gt;</td>" in service.client.get(f"/admin/campaigns/{cid}").text
    r = service.client.post(path, data={"csrf": csrf, "name": "tab\there"})
    assert r.status_code == 422
    assert 'id="assessor-error">rename Ann &lt;Lee&gt;: the name contains a control character (U+0009)</p>' in r.text
    r = service.client.post(f"/admin/campaigns/{cid}/assessors/{bob['id']}/name", data={"csrf": csrf, "name": "x"})
    assert r.status_code == 404
    assert listed(service, cid) == ["Ann <Lee>"] and listed(service, other) == ["bob"]


def test_topics_table_shows_each_query_with_its_full_text_in_the_title(service):
    body = preference_body()
    body["topics"]["2"] = "a long question " * 30
    cid = service.campaign(**body)
    dashboard(service, cid)
    page = service.client.get(f"/admin/campaigns/{cid}").text
    for topic, query in (("1", "first &lt;b&gt;question&lt;/b&gt;"), ("2", ("a long question " * 30).strip())):
        assert re.search(rf'<tr data-topic="{topic}"><td class="topic"><strong>{topic}</strong>\s*'
                         rf'<span class="topic-query" title="{re.escape(query)}\s*">{re.escape(query)}\s*</span></td>', page)
