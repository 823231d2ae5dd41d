"""A thin HTTP client of ``irbandits serve``: a method for every route of the JSON API (:data:`ROUTES`; the
contract is the documentation's "The service" page, ``docs/service.md``).

Needs ``httpx`` (the ``service`` extra). Errors come back as :class:`ServiceError` with the status
code and the server's ``detail``. ``transport`` lets tests pass an in-process app
(``httpx.ASGITransport`` is async; pass a ``fastapi.testclient.TestClient`` as ``http`` instead).

>>> c = Client("http://127.0.0.1:8000", "TOKEN")
>>> c.headers["Authorization"]
'Bearer TOKEN'
>>> c.close()
"""

from __future__ import annotations

import json
from typing import Any

import httpx


def _given(**fields) -> dict:
    """The fields that are not None (a request body's optional fields)."""
    return {k: v for k, v in fields.items() if v is not None}


class ServiceError(Exception):
    """A 4xx / 5xx answer: ``status`` and the server's ``detail``."""

    def __init__(self, status: int, detail: str):
        super().__init__(f"{status}: {detail}")
        self.status, self.detail = status, detail


class Client:
    """Calls the service at ``url`` with ``token`` (organiser, assessor or experiment client).

    Parameters
    ----------
    url
        Base URL, e.g. ``http://127.0.0.1:8000``.
    token
        Sent as ``Authorization: Bearer TOKEN``.
    http
        An ``httpx.Client``-like object to use instead of a new one (e.g. a FastAPI ``TestClient``).
    timeout
        Seconds per request.
    """

    def __init__(self, url: str, token: str, http: Any = None, timeout: float = 30.0):
        self.http = http if http is not None else httpx.Client(base_url=url, timeout=timeout)
        self.headers = {"Authorization": f"Bearer {token}"}

    def _call(self, method: str, path: str, **kw) -> httpx.Response:
        r = self.http.request(method, path, headers=self.headers, **kw)
        if r.status_code >= 400:
            try:
                detail = r.json().get("detail", r.text)
            except ValueError:
                detail = r.text
            raise ServiceError(r.status_code, str(detail))
        return r

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----- judging campaigns (organiser) ---------------------------------------------------------
    def create_campaign(self, **body) -> int:
        return self._call("POST", "/api/campaigns", json=body).json()["id"]

    def campaigns(self) -> list[dict]:
        return self._call("GET", "/api/campaigns").json()

    def campaign(self, cid: int) -> dict:
        return self._call("GET", f"/api/campaigns/{cid}").json()

    def set_state(self, cid: int, state: str) -> dict:
        """Move campaign ``cid`` to ``state``: ``"paused"`` (no work handed out; answers to pairs already
        shown are still recorded), ``"running"`` (resume), ``"closed"`` (no work, no new answers; the
        exports stay) or ``"archived"`` (read-only, hidden from the dashboard's list; ``"closed"`` again
        un-archives it). Allowed: running <-> paused, running or paused -> closed, closed <-> archived;
        any other move raises :class:`ServiceError` 409 naming the current state. Returns ``{"id", "state"}``."""
        return self._call("POST", f"/api/campaigns/{cid}", json={"state": state}).json()

    def delete_campaign(self, cid: int) -> None:
        """Delete campaign ``cid`` with its assessors, tasks and judgments, for good (export first). Only a
        closed or archived campaign can be deleted, else :class:`ServiceError` 409."""
        self._call("DELETE", f"/api/campaigns/{cid}")

    def add_assessor(self, cid: int, name: str, automatic: str | None = None) -> dict:
        """A person's link ``{"id", "token", "url"}``, or with ``automatic`` (:meth:`automatic_assessors`) a program."""
        return self._call("POST", f"/api/campaigns/{cid}/assessors", json=_given(name=name, automatic=automatic)).json()

    def automatic_assessors(self) -> list[str]:
        """The names ``automatic`` may take: the automatic assessors the server was started with."""
        return self._call("GET", "/api/automatic-assessors").json()

    def add_assessors(self, cid: int, names: list[str]) -> list[dict]:
        """One assessor per name (1 to 1,000, none twice), created together: a bad name creates nobody.
        Returns ``[{"id", "name", "token", "url"}, ...]`` in the order of ``names``; ``url`` is the
        path ``/a/TOKEN`` (prefix the server's address), and the tokens are not shown again."""
        return self._call("POST", f"/api/campaigns/{cid}/assessors/bulk", json={"names": list(names)}).json()

    def rename_assessor(self, cid: int, aid: int, name: str) -> dict:
        """Give assessor ``aid`` of campaign ``cid`` a new name (stripped, 1 to 200 characters, no control
        character); returns ``{"id", "name"}``. Their link, answers and flags stay."""
        return self.change_assessor(cid, aid, name=name)

    def change_assessor(self, cid: int, aid: int, *, name: str | None = None, flagged: bool | None = None,
                        revoked: bool | None = None, token: str | None = None) -> dict:
        """Rename, flag or clear, revoke or restore assessor ``aid``, or ``token="new"``; returns what changed."""
        return self._call("POST", f"/api/campaigns/{cid}/assessors/{aid}",
                          json=_given(name=name, flagged=flagged, revoked=revoked, token=token)).json()

    def assessors(self, cid: int) -> list[dict]:
        return self._call("GET", f"/api/campaigns/{cid}/assessors").json()

    def judgments(self, cid: int, log: bool = False) -> str:
        """The target answers as text, one a line (``log=True``: every row of the log, its kind last)."""
        return self._call("GET", f"/api/campaigns/{cid}/judgments", params={"log": 1} if log else None).text

    def judgments_csv(self, cid: int) -> str:
        """The whole judgments log as CSV: the fields of :meth:`judgments_log` and joined workers' platform ids."""
        return self._call("GET", f"/api/campaigns/{cid}/judgments", params={"format": "csv"}).text

    def judgments_log(self, cid: int) -> list[dict]:
        """The whole judgments log, one dict per entry (``?format=jsonl``): ``id``, ``kind`` (answer, test,
        repeat, retract, skip), ``topic``, ``docnos``, ``answer``, ``assessor``, ``name``, ``lease_time`` and
        ``answer_time`` (unix seconds), ``reason`` and ``comment`` (skips), ``retracts``."""
        text = self._call("GET", f"/api/campaigns/{cid}/judgments", params={"format": "jsonl"}).text
        return [json.loads(line) for line in text.splitlines()]

    def qrels(self, cid: int, best: bool = False) -> str:
        return self._call("GET", f"/api/campaigns/{cid}/qrels", params={"best": 1} if best else None).text

    def reports(self, cid: int) -> list[dict]:
        """The assessors' skips and problem reports, in order: ``{"id", "task", "topic", "docnos", "reason",
        "comment", "assessor", "name", "time"}`` each (``time`` in unix seconds)."""
        return self._call("GET", f"/api/campaigns/{cid}/reports").json()

    def quality(self, cid: int) -> dict:
        """Agreement, test accuracy over all assessors, the flag threshold and the assessors' quality signals."""
        return self._call("GET", f"/api/campaigns/{cid}/quality").json()

    # ----- crowd campaigns (organiser) -----------------------------------------------------------
    def set_crowd(self, cid: int, crowd: dict | None) -> dict | None:
        """Replace campaign ``cid``'s crowd settings (None: none); returns them as stored."""
        return self._call("POST", f"/api/campaigns/{cid}/crowd", json={"crowd": crowd}).json()["crowd"]

    def join_link(self, cid: int) -> dict:
        """The join link: ``{"url", "cap", "joined", "open"}`` (``url`` relative, None before one is made)."""
        return self._call("GET", f"/api/campaigns/{cid}/join").json()

    def set_join_link(self, cid: int, cap: int | None = None, open: bool | None = None, rotate: bool = False) -> dict:
        """Make the join link (``cap`` needed), re-cap, open, close or rotate it; answers as :meth:`join_link`."""
        body = _given(cap=cap, open=open, rotate=rotate or None)
        return self._call("POST", f"/api/campaigns/{cid}/join", json=body).json()

    def payments(self, cid: int) -> list[dict]:
        """The payment report: per assessor platform ids, completion code, stage, answers, bundles, active time."""
        return self._call("GET", f"/api/campaigns/{cid}/payments").json()

    def payments_csv(self, cid: int) -> str:
        """The payment report as CSV."""
        return self._call("GET", f"/api/campaigns/{cid}/payments", params={"format": "csv"}).text

    # ----- judging campaigns (assessor) ----------------------------------------------------------
    def next_task(self) -> dict | None:
        """The assessor's next task, or None (204: nothing waiting now)."""
        r = self._call("GET", "/api/next")
        return None if r.status_code == 204 else r.json()

    def me(self) -> dict:
        """The assessor's progress and the campaign's state; in a crowd campaign also stage, bundles, completion."""
        return self._call("GET", "/api/me").json()

    def consent(self) -> dict:
        """Agree to the campaign's consent (a crowd campaign with one asks before any task)."""
        return self._call("POST", "/api/consent", json={"agree": True}).json()

    def undo(self, client_id: str) -> dict | None:
        """Take back the latest answer; the same task again (as :meth:`next_task`), or None."""
        r = self._call("POST", "/api/undo", json={"client_id": client_id})
        return None if r.status_code == 204 else r.json()

    def answer(self, task: int, answer: str | int, client_id: str) -> dict:
        return self._call("POST", f"/api/tasks/{task}/answer", json={"answer": answer, "client_id": client_id}).json()

    def skip(self, task: int, reason: str, client_id: str, comment: str | None = None) -> dict:
        """Skip the task held: ``reason`` ``"cant-judge"``, or a problem (``"broken"``, ``"language"``,
        ``"other"``) with an optional ``comment`` (up to 1,000 characters). Not a judgment: the pair goes to
        someone else, never back to this assessor; :meth:`next_task` gives the next one."""
        body = _given(reason=reason, client_id=client_id, comment=comment)
        return self._call("POST", f"/api/tasks/{task}/skip", json=body).json()

    # ----- online experiments --------------------------------------------------------------------
    def create_experiment(self, name: str, rankers: list[str] | None = None, algorithm: str | None = None,
                          comparison: str = "team-draft", seed: int = 0, horizon: int | None = None, *,
                          learner: str | None = None, features: int | None = None) -> int:
        """A new experiment: ``rankers`` compared by the dueling-bandit ``algorithm`` (what ``irbandits
        simulate --algorithm`` takes), or an online ``learner`` to rank (what ``irbandits oltr -a`` takes)
        over documents of ``features`` features. Returns its id."""
        if learner is not None:
            body = dict(name=name, learner=learner, features=features, seed=seed)
        else:
            body = _given(name=name, rankers=rankers, algorithm=algorithm, comparison=comparison, seed=seed,
                          horizon=horizon)
        return self._call("POST", "/api/experiments", json=body).json()["id"]

    def experiments(self) -> list[dict]:
        return self._call("GET", "/api/experiments").json()

    def set_experiment_state(self, eid: int, state: str) -> dict:
        """Move experiment ``eid`` to ``state``: ``"paused"`` (no new impression; the lists and outcomes of
        impressions issued before are still recorded), ``"running"`` (resume) or ``"stopped"`` (final: no
        impression, list or outcome any more; the state stays readable). Allowed: running <-> paused,
        running or paused -> stopped; any other move raises :class:`ServiceError` 409 naming both states.
        Returns ``{"id", "state"}``."""
        return self._call("POST", f"/api/experiments/{eid}", json={"state": state}).json()

    def add_client(self, eid: int, name: str) -> dict:
        """A client token for experiment ``eid``: ``{"id", "token"}``."""
        return self._call("POST", f"/api/experiments/{eid}/clients", json={"name": name}).json()

    def clients(self, eid: int) -> list[dict]:
        """Experiment ``eid``'s client tokens (never the tokens themselves)."""
        return self._call("GET", f"/api/experiments/{eid}/clients").json()

    def change_client(self, eid: int, client: int, *, revoked: bool | None = None, token: str | None = None) -> dict:
        """Revoke or restore a client token, or ``token="new"``: a new token, the old one revoked."""
        body = _given(revoked=revoked, token=token)
        return self._call("POST", f"/api/experiments/{eid}/clients/{client}", json=body).json()

    def impression(self, eid: int, documents: list[str] | None = None, features=None) -> dict:
        """``{"impression": IID, "rankers": [a, b]}``: which rankers to compare now. For a learner
        experiment give the candidate ``documents`` and their ``features`` (a row of numbers each, a list
        or an array): ``{"impression": IID, "list": [docno, ...]}``, the list to show."""
        body = {} if documents is None else dict(documents=list(documents), features=[
            [float(x) for x in row] for row in features])
        return self._call("POST", f"/api/experiments/{eid}/impressions", json=body).json()

    def lists(self, iid: int, lists: dict[str, list[str]]) -> list[str]:
        """The combined list to show for the two rankers' lists."""
        return self._call("POST", f"/api/impressions/{iid}/lists", json={"lists": lists}).json()["list"]

    def clicks(self, iid: int, positions: list[int]) -> str | None:
        """Report clicks (0-based positions of the shown list); the winning ranker or None (always None for
        a learner, which learns from them)."""
        return self._call("POST", f"/api/impressions/{iid}/clicks", json={"clicks": [int(p) for p in positions]}).json()["winner"]

    def vote(self, iid: int, winner: str) -> dict:
        """An explicit side-by-side vote: ranker a, ranker b or ``"tie"``."""
        return self._call("POST", f"/api/impressions/{iid}/vote", json={"winner": winner}).json()

    def experiment(self, eid: int) -> dict:
        """The experiment's state: recommendation, counts, leaderboard, matrix, history."""
        return self._call("GET", f"/api/experiments/{eid}").json()


# every route of the JSON API -> the Client method that calls it (tests/test_client_routes.py checks both ways)
ROUTES = {
    ("POST", "/api/campaigns"): "create_campaign",
    ("GET", "/api/campaigns"): "campaigns",
    ("GET", "/api/campaigns/{cid}"): "campaign",
    ("POST", "/api/campaigns/{cid}"): "set_state",
    ("DELETE", "/api/campaigns/{cid}"): "delete_campaign",
    ("POST", "/api/campaigns/{cid}/assessors"): "add_assessor",
    ("POST", "/api/campaigns/{cid}/assessors/bulk"): "add_assessors",
    ("GET", "/api/automatic-assessors"): "automatic_assessors",
    ("GET", "/api/campaigns/{cid}/assessors"): "assessors",
    ("POST", "/api/campaigns/{cid}/assessors/{aid}"): "change_assessor",
    ("GET", "/api/campaigns/{cid}/quality"): "quality",
    ("GET", "/api/campaigns/{cid}/judgments"): "judgments",
    ("GET", "/api/campaigns/{cid}/reports"): "reports",
    ("GET", "/api/campaigns/{cid}/qrels"): "qrels",
    ("POST", "/api/campaigns/{cid}/crowd"): "set_crowd",
    ("GET", "/api/campaigns/{cid}/join"): "join_link",
    ("POST", "/api/campaigns/{cid}/join"): "set_join_link",
    ("GET", "/api/campaigns/{cid}/payments"): "payments",
    ("GET", "/api/next"): "next_task",
    ("GET", "/api/me"): "me",
    ("POST", "/api/consent"): "consent",
    ("POST", "/api/undo"): "undo",
    ("POST", "/api/tasks/{tid}/answer"): "answer",
    ("POST", "/api/tasks/{tid}/skip"): "skip",
    ("POST", "/api/experiments"): "create_experiment",
    ("GET", "/api/experiments"): "experiments",
    ("POST", "/api/experiments/{eid}"): "set_experiment_state",
    ("GET", "/api/experiments/{eid}"): "experiment",
    ("POST", "/api/experiments/{eid}/clients"): "add_client",
    ("GET", "/api/experiments/{eid}/clients"): "clients",
    ("POST", "/api/experiments/{eid}/clients/{client}"): "change_client",
    ("POST", "/api/experiments/{eid}/impressions"): "impression",
    ("POST", "/api/impressions/{iid}/lists"): "lists",
    ("POST", "/api/impressions/{iid}/clicks"): "clicks",
    ("POST", "/api/impressions/{iid}/vote"): "vote",
}
