"""The service's pages without a browser: escaping, sessions, CSRF, roles, the creation form, the demo."""

from __future__ import annotations

import logging
import re

import pytest

from irbandits.service.demo import CAMPAIGNS, load_demo
from irbandits.service.websession import MAX_AGE, SESSION_COOKIE

from .conftest import ADMIN, SCRIPT, csrf_of, graded_body, login, preference_body


def logged_in(service) -> str:
    """Log in; returns the CSRF token of the session's forms."""
    assert login(service).status_code == 303
    return csrf_of(service.client.get("/admin"))


def upload_form(csrf: str, body: dict, **extra) -> tuple[dict, list]:
    """The creation form's fields and files for a campaign ``body`` of the JSON API."""
    files = [("topics", ("topics.tsv", "".join(f"{t}\t{q}\n" for t, q in body["topics"].items()).encode())),
             ("texts", ("passages.tsv", "".join(f"{d}\t{x}\n" for d, x in body["texts"].items()).encode()))]
    if body["kind"] == "preference":
        files.append(("qrels", ("qrels.txt", body["qrels"].encode())))
    else:
        files += [("runs", (name, text.encode())) for name, text in body["runs"].items()]
    data = {"csrf": csrf, "name": body["name"], "kind": body["kind"],
            **{f"{body['kind']}.{k}": ", ".join(map(str, v)) if isinstance(v, list) else str(v)
               for k, v in body["options"].items()}, **extra}
    return data, files


# ----- security ----------------------------------------------------------------------------------
def test_pages_escape_every_text_and_send_the_security_headers(service):
    body = preference_body()
    body["name"] = SCRIPT
    cid = service.campaign(**body)
    csrf = logged_in(service)
    made = service.client.post(f"/admin/campaigns/{cid}/assessors", data={"csrf": csrf, "name": SCRIPT})
    assert made.status_code == 201
    for page in (service.client.get("/admin"), service.client.get(f"/admin/campaigns/{cid}"), made):
        assert page.status_code in (200, 201)
        assert "<script>alert" not in page.text and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page.text
    link = re.search(r'id="new-link" readonly value="[^"]*(/a/[^"]+)"', made.text).group(1)
    page = service.client.get(link)
    assert page.status_code == 200 and "<script>alert" not in page.text and "&lt;script&gt;" in page.text
    headers = page.headers
    assert "script-src 'self'" in headers["content-security-policy"] and "unsafe-inline" not in headers["content-security-policy"]
    assert headers["referrer-policy"] == "no-referrer" and headers["x-frame-options"] == "DENY"
    assert headers["cache-control"] == "no-store"
    assert re.findall(r"<script[^>]*>", page.text) == ['<script src="/static/assessor.js" defer>']  # no inline script


def test_session_cookie_is_signed_httponly_strict_and_expires(service):
    response = login(service)
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE + "="))
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/admin" in cookie and ADMIN not in cookie
    assert service.client.get("/admin").status_code == 200
    value = service.client.cookies.get(SESSION_COOKIE)
    issued, nonce, signature = value.split(".")
    service.client.cookies.set(SESSION_COOKIE, f"{issued}.{nonce}x.{signature}", path="/admin")
    assert service.client.get("/admin", follow_redirects=False).headers["location"] == "/admin/login"
    service.client.cookies.set(SESSION_COOKIE, value, path="/admin")
    service.clock.now += MAX_AGE + 1
    assert service.client.get("/admin", follow_redirects=False).status_code == 303


def test_every_admin_form_refuses_a_post_without_its_csrf_token(service):
    cid = service.campaign(**preference_body())
    page = service.client.get("/admin/login")
    assert service.client.post("/admin/login", data={"token": ADMIN}).status_code == 403
    assert service.client.post("/admin/login", data={"token": ADMIN, "csrf": "0" * 64}).status_code == 403
    csrf = logged_in(service)
    data, files = upload_form("wrong", preference_body())
    refused = [service.client.post("/admin/campaigns", data=data, files=files),
               service.client.post(f"/admin/campaigns/{cid}/assessors", data={"name": "x"}),
               service.client.post("/admin/logout", data={"csrf": csrf_of(page)})]  # the login form's token
    assert [r.status_code for r in refused] == [403, 403, 403]
    assert service.client.get("/admin").text.count("<tr data-campaign=") == 1  # still one campaign
    assert service.admin("GET", f"/api/campaigns/{cid}/assessors").json() == []
    assert service.client.post("/admin/logout", data={"csrf": csrf}, follow_redirects=False).status_code == 303
    assert service.client.get("/admin", follow_redirects=False).status_code == 303


def test_an_assessor_token_opens_no_organiser_page(service):
    cid = service.campaign(**preference_body())
    who = service.assessor(cid)
    token = who["Authorization"].split()[1]
    for path in ("/admin", f"/admin/campaigns/{cid}", f"/admin/campaigns/{cid}/stats.json",
                 f"/admin/campaigns/{cid}/judgments.txt"):
        r = service.client.get(path, headers={"Authorization": f"Bearer {token}"}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/admin/login"
    r = login(service, token)
    assert r.status_code == 403 and "assessor token" in r.text and SESSION_COOKIE not in r.headers.get("set-cookie", "")
    r = login(service, "not-a-token")
    assert r.status_code == 401 and "unknown token" in r.text
    assert service.client.get("/admin", follow_redirects=False).status_code == 303


def test_no_token_reaches_the_log(service, caplog):
    cid = service.campaign(**preference_body())
    token = service.assessor(cid)["Authorization"].split()[1]
    with caplog.at_level(logging.INFO, logger="irbandits.service"):
        assert service.client.get(f"/a/{token}").status_code == 200
        login(service)
        service.client.get("/admin")
    assert "/a/***" in caplog.text and token not in caplog.text and ADMIN not in caplog.text


def test_unknown_or_revoked_link_gets_a_404_page(service):
    assert service.client.get("/a/no-such-token").status_code == 404
    assert "not valid" in service.client.get("/a/no-such-token").text


# ----- the organiser's work ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["preference", "graded"])
def test_form_creates_the_campaign_the_api_would(service, kind):
    body = preference_body() if kind == "preference" else graded_body(grades=[0, 1, 2])
    via_api = service.campaign(**body)
    csrf = logged_in(service)
    data, files = upload_form(csrf, body)
    r = service.client.post("/admin/campaigns", data=data, files=files, follow_redirects=False)
    assert r.status_code == 303, r.text
    via_form = int(r.headers["location"].rsplit("/", 1)[1])
    campaigns = service.app.state.campaigns.campaigns
    a, b = campaigns[via_api], campaigns[via_form]
    assert (a.kind, a.options, a.topics, a.texts) == (b.kind, b.options, b.topics, b.texts)
    assert a.judge.state() == b.judge.state()
    page = service.client.get(r.headers["location"])
    assert page.status_code == 200 and all(f'data-topic="{t}"' in page.text for t in a.topics)


def test_form_errors_are_one_line_on_the_form(service):
    csrf = logged_in(service)
    body = preference_body()
    data, files = upload_form(csrf, body)
    files[1] = ("texts", ("passages.tsv", b"d0\tfine\nd1 has no tab\n"))
    r = service.client.post("/admin/campaigns", data=data, files=files)
    assert r.status_code == 422
    error = re.search(r'<p class="error"[^>]*>([^<]*)</p>', r.text).group(1)
    assert error == "passages.tsv, line 2: expected docno&lt;TAB&gt;text"
    assert f'value="{body["name"]}"' in r.text   # what was typed is kept
    data, files = upload_form(csrf, body, **{"preference.n": "many"})
    r = service.client.post("/admin/campaigns", data=data, files=files)
    assert r.status_code == 422 and "parameter n must be int, got &#39;many&#39;" in r.text
    data, files = upload_form(csrf, body)
    r = service.client.post("/admin/campaigns", data=data, files=[f for f in files if f[0] != "qrels"])
    assert r.status_code == 422 and "qrels: choose a TREC qrels file" in r.text
    assert service.admin("GET", "/api/campaigns").json() == []


def test_dashboard_shows_answers_and_downloads_equal_the_api_exports(service):
    cid = service.campaign(**preference_body())
    who = service.assessor(cid, "ann")
    for n in range(3):
        task = service.next(who).json()
        assert service.answer(who, task["task"], "left", f"c{n}").status_code == 200
    logged_in(service)
    stats = service.client.get(f"/admin/campaigns/{cid}/stats.json").json()
    assert stats["judgments"] == 3 and stats["last_hour"] == 3
    assert [a["judgments"] for a in stats["assessors"]] == [3] and stats["series"][-1][1] == 3
    assert sum(h["judgments"] for h in stats["per_hour"]) == 3
    page = service.client.get(f"/admin/campaigns/{cid}").text
    assert re.search(r'id="judgments">3<', page) and re.search(r"<td>ann</td><td class=\"num\">3</td>", page)
    for path, api in (("judgments.txt", "judgments"), ("qrels.txt", "qrels"), ("qrels.txt?best=1", "qrels?best=1")):
        download = service.client.get(f"/admin/campaigns/{cid}/{path}")
        assert download.headers["content-disposition"].startswith("attachment")
        assert download.text == service.admin("GET", f"/api/campaigns/{cid}/{api}").text
    assert len(service.client.get(f"/admin/campaigns/{cid}/judgments.txt").text.splitlines()) == 3


def test_demo_loads_both_kinds_once_and_gives_working_links(service):
    first, second = load_demo(service.app), load_demo(service.app)
    assert list(first) == list(second) == list(CAMPAIGNS) and first != second   # new assessors, same campaigns
    kinds = {r.name: r.kind for r in service.app.state.campaigns.campaigns.values()}
    assert kinds == {name: c["kind"] for name, c in CAMPAIGNS.items()}
    for path in first.values():
        token = path.split("/")[2]
        assert service.client.get(path).status_code == 200
        task = service.client.get("/api/next", headers={"Authorization": f"Bearer {token}"})
        assert task.status_code == 200 and all(len(i["text"]) > 100 for i in task.json()["items"])
