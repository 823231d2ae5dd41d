"""docs/guides/crowd.md runs as written, on SQLite and PostgreSQL: its Python blocks against a live server,
with the demo's passages in the files it names; between them an MTurk preview, an MTurk worker whose
checks are wrong (a rejected bundle) and a Prolific worker who arrives through the printed link and
works to the completion link."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from irbandits.client import Client
from irbandits.service.demo import DOCS, GRADES, TEXTS, TOPICS

from .conftest import ADMIN

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "crowd.md"
SERVER = "https://judge.example.org"
NOTES = {"1": {"description": "The searcher wants the cause, not storage tips.",
               "narrative": "A passage that explains what happens to the bread is relevant; one that only says "
                            "how to keep bread fresh is not."}}


def write_files(folder: Path) -> None:
    """The guide's three files from the demo's topics, passages and grades (topic 1 with its notes)."""
    topics = [json.dumps({"qid": t, "query": q} | NOTES.get(t, {})) for t, q in TOPICS.items()]
    (folder / "topics.jsonl").write_text("\n".join(topics) + "\n")
    (folder / "passages.tsv").write_text("".join(f"{d}\t{text}\n" for d, text in TEXTS.items()))
    (folder / "qrels.txt").write_text("".join(f"{t} 0 {d}-{x} {g}\n" for t, d in DOCS.items() for x, g in GRADES.items()))


def better(task: dict, right: bool = True) -> str:
    """The side of the passage with the better demo grade (``bread-a`` over ``bread-b``, ...); the
    other side when not ``right``."""
    left, other = (item["docno"][-1] for item in task["items"])
    return "left" if (left <= other) == right else "right"


def work(who: Client, right_work: bool, stop=lambda me: False) -> dict:
    """Consent, the practice (right), then the work (right or not) until nothing is left or ``stop``."""
    assert who.me()["stage"] == "consent" and who.consent() == {"consented": True}
    n = 0
    while not stop(me := who.me()) and (task := who.next_task()) is not None:
        reply = who.answer(task["task"], better(task, right_work or me["stage"] == "practice"), f"c{n}")
        assert ("correct" in reply) == (me["stage"] == "practice"), reply   # feedback on practice pairs only
        n += 1
    return who.me()


def test_the_crowd_guide_runs_from_the_campaign_to_the_payment_report(live, tmp_path, monkeypatch, capsys):
    text = GUIDE.read_text()
    setup, paying = (block.replace(SERVER, live) for block in re.findall(r"```python\n(.*?)```", text, re.S))
    write_files(tmp_path)
    for name in ("topics.jsonl", "passages.tsv", "qrels.txt"):   # the guide shows each file's first line
        first = (tmp_path / name).read_text().splitlines()[0].replace("\t", "<TAB>")
        assert first[:60] in text, name
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRBANDITS_ADMIN_TOKEN", ADMIN)
    namespace: dict = {}
    exec(compile(setup, str(GUIDE), "exec"), namespace)
    head, prolific = capsys.readouterr().out.splitlines()
    assert head == f"{namespace['cid']} 0 40" and "{{%PROLIFIC_PID%}}" in prolific
    organiser = Client(live, ADMIN)
    join = prolific.split("?")[0]

    with httpx.Client(base_url=live) as browser:
        preview = browser.get(join, params={"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"})
        assert preview.status_code == 200 and "<h1>Which passage answers the question better?</h1>" in preview.text
        assert "frame-ancestors 'none'" in preview.headers["content-security-policy"]   # why MTurk needs a link
        assert organiser.payments(namespace["cid"]) == []
        bob = browser.get(join, params={"workerId": "BOB7", "assignmentId": "A1", "hitId": "H1"})
        ann = browser.get(prolific.replace("{{%PROLIFIC_PID%}}", "ann1").replace("{{%STUDY_ID%}}", "S1")
                          .replace("{{%SESSION_ID%}}", "X1"))
    assert bob.status_code == ann.status_code == 303
    bob, ann = (Client(live, r.headers["location"].removeprefix("/a/")) for r in (bob, ann))

    wrong = work(bob, False, stop=lambda me: me.get("bundles", {}).get("done") == 1)
    assert wrong["stage"] == "work" and wrong["bundles"]["accepted"] == 0
    done = work(ann, True)
    assert done["stage"] == "finished" and done["completion"] == {
        "code": "C1A2B3C4", "url": "https://app.prolific.com/submissions/complete?cc=C1A2B3C4"}
    assert organiser.campaign(namespace["cid"])["done"]

    exec(compile(paying, str(GUIDE), "exec"), namespace)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    paid = {p["worker"]: p for p in organiser.payments(namespace["cid"])}
    assert rows == [["mturk", "BOB7", "A1", "finished", "0", "1", paid["BOB7"]["code"]],   # the campaign is done
                    ["prolific", "ann1", "X1", "finished", str(paid["ann1"]["accepted"]), "0", paid["ann1"]["code"]]]
    assert paid["ann1"]["accepted"] >= 1 and paid["ann1"]["practice_right"] == 2
    assert (tmp_path / "payments.csv").read_text().startswith("id,name,platform,worker,study,session,code,")
    assert "BOB7" in (tmp_path / "judgments.csv").read_text()
    assert organiser.join_link(namespace["cid"])["open"] is False
    organiser.close()
