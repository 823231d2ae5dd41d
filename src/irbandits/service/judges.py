"""The processes a judging campaign's answers feed, and the judgments export.

The service drives the library's own objects, the same ones the CLI drives: a ``preference``
campaign one :class:`irbandits.judging.topk.TopKProcess`, a ``graded`` one one
:class:`irbandits.pooling.state.Campaign` stopped on each topic after ``budget`` judgments.

Answers are applied in the order of the judgments table, which is the order they were committed in
(the top-k process draws the pairings of every topic from one generator, so order matters); a
restart replays the table the same way. With ``assessors_per_pair`` r > 1 a request is answered by r
different assessors, and the process is fed once all r are in: the item more of them preferred, a
tie (even r) going to the first answer's choice. The judgments export lists every answer.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from typing import Any, Iterator

import numpy as np
import pandas as pd

from irbandits.judging.assessors import USAGE
from irbandits.service.validation import csv_text


def topk_process(pools: dict[str, list[str]], options: dict[str, Any]):
    """The :class:`~irbandits.judging.topk.TopKProcess` that ``irbandits judge init`` makes with these options."""
    from irbandits.judging.topk import TopKProcess

    return TopKProcess(pools, n=options["n"], m=options["m"], extra=options["extra"], k=options["k"],
                       keep=options["keep"], seed=options["seed"])


class PreferenceJudge:
    """A top-k process fed with answers; ``assessors_per_pair`` answers make one judgment."""

    def __init__(self, pools: dict[str, list[str]], options: dict[str, Any]):
        self.process = topk_process(pools, options)
        self.per_pair = options["assessors_per_pair"]
        self.stop_settled = bool(options.get("stop_settled", 0))
        self.pending: dict[tuple[str, str, str], list[str]] = {}  # (topic, a, b), a < b -> winners so far
        self.fed: dict[tuple[str, str, str], list[str]] = {}      # the votes of each request's last judgment
        self.open = {topic: t.outstanding() for topic, t in self.process.topics.items()}
        self.settled = {topic: self.process.settled(topic) for topic in self.process.topics}
        self._route()

    def _route(self) -> None:
        """Routing: unsettled topics first, most open requests first (stable in topic order); settled
        topics last, or not at all with ``stop_settled``."""
        order = sorted(self.open, key=lambda t: (self.settled[t], -len(self.open[t])))
        self._order = [t for t in order if not (self.stop_settled and self.settled[t])]

    def _changed(self, topic: str) -> None:
        self.open[topic] = self.process.topics[topic].outstanding()  # only this topic's requests changed
        self.settled[topic] = self.process.settled(topic)
        self._route()

    @staticmethod
    def key(topic: str, left: str, right: str | None) -> tuple[str, str, str]:
        """The request's key: the topic and the unordered pair."""
        return (topic, left, right) if left < right else (topic, right, left)

    def requests(self) -> Iterator[tuple[str, str, str]]:
        """``(topic, left, right)`` for every judgment the process needs now, in its order."""
        return ((topic, a, b) for topic in self._order for a, b in self.open[topic])

    def answered(self, key: tuple[str, str, str]) -> int:
        """Answers already in for the open request ``key``."""
        return len(self.pending.get(key, ()))

    def apply(self, topic: str, left: str, right: str | None, answer: str) -> None:
        """Record one answer (the winning docno); feed the process once the request has all its answers."""
        key = self.key(topic, left, right)
        votes = self.pending.setdefault(key, [])
        votes.append(answer)
        if len(votes) < self.per_pair:
            return
        del self.pending[key]
        self.fed[key] = votes
        counts = Counter(votes)
        other = right if votes[0] == left else left
        winner = other if counts[other] > counts[votes[0]] else votes[0]
        self.process.add(topic, left, right, winner)
        self._changed(topic)

    def retract(self, topic: str, left: str, right: str, answer: str) -> None:
        """Take one answer back: from the votes still pending, else from the process's open phase (the
        request's other votes wait again); raises IrbanditsError when its phase is closed."""
        key = self.key(topic, left, right)
        votes = self.pending.get(key)
        if votes is not None and answer in votes:
            votes.remove(answer)
            if not votes:
                del self.pending[key]
            return
        self.process.retract(topic, left, right)
        rest = list(self.fed.pop(key))
        rest.remove(answer)
        if rest:
            self.pending[key] = rest
        self._changed(topic)

    def phase(self, topic: str) -> int:
        """The topic's phase number (an answer can be retracted while it is unchanged)."""
        return self.process.topics[topic].phase

    def done(self, topic: str) -> bool:
        return self.process.topics[topic].kind == "done"

    def qrels(self, best: bool = False) -> str:
        """``topic Q0 docno value`` lines of the finished topics, as ``irbandits judge qrels`` prints them;
        with ``stop_settled`` the best-item qrels also name each settled topic's decided best item."""
        top = self.process.top(best=best)
        if best and self.stop_settled:
            top |= {t: {self.process.leader(t): 1} for t, s in self.settled.items() if s and t not in top}
        return "".join(f"{topic} Q0 {docno} {1 if best else f'{value:.6g}'}\n"
                       for topic in self.process.topics if topic in top for docno, value in top[topic].items())

    def saved(self) -> dict[str, int]:
        """Per settled, unfinished topic: the requests its open phase (and later final phases) would
        still ask for, i.e. the judgments saved by stopping it now."""
        out = {}
        for topic, s in self.settled.items():
            t = self.process.topics[topic]
            if s and t.kind != "done":
                later = (self.process.params["extra"] + 1 - t.finals) * len(t.pool) * (len(t.pool) - 1) // 2
                out[topic] = (len(self.open[topic]) + later) * self.per_pair - sum(
                    len(v) for k, v in self.pending.items() if k[0] == topic)
        return out

    def state(self) -> dict[str, Any]:
        """The whole state (process and pending answers), JSON-ready: equal states compare equal."""
        return dict(process=self.process.to_json(), pending={" ".join(k): v for k, v in self.pending.items()})


class GradedJudge:
    """A pooling :class:`~irbandits.pooling.state.Campaign`, each topic stopped after ``budget`` judgments;
    with ``budget_split`` ``global[:w=..,min=..]``, ``budget`` times the topics judgments over all topics,
    moved across topics by the bandit of :mod:`irbandits.pooling.budget` (one judgment handed out ahead
    per topic, so as many assessors as topics can work at once)."""

    def __init__(self, pools: dict[str, Any], options: dict[str, Any]):
        from irbandits.pooling.pools import TopicPool
        from irbandits.pooling.state import Campaign

        runs = tuple(pools["runs"])
        built = {t: TopicPool(t, np.array(p["docnos"]), runs, np.array(p["ranked"], np.int64))
                 for t, p in pools["topics"].items()}
        split = options.get("budget_split", "per-topic")
        self.shared = split != "per-topic"
        total = options["budget"] * len(built) if self.shared and options["budget"] else None
        self.process = Campaign(built, options["method"], options["relevant_grade"], options["seed"],
                                **(dict(budget=total, split=split, parallel=len(built)) if self.shared else {}))
        self.budget = options["budget"]
        self.grades = options["grades"]
        for topic in self.process.topics:
            self.offer(topic)

    @staticmethod
    def key(topic: str, docno: str, _right: None) -> tuple[str, str]:
        """The request's key: the topic and the document."""
        return topic, docno

    def done(self, topic: str) -> bool:
        """Budget spent or every pooled document judged (then every run is exhausted)."""
        if self.shared:
            return self.process.done(topic)
        m = self.process.topics[topic]
        return m.judgments >= min(m.pool.size, self.budget or m.pool.size)

    def offer(self, topic: str) -> str | None:
        """The document the method wants judged next on ``topic`` (None when the topic is done).

        It is chosen as soon as the previous judgment of the topic is in (and at the start), so the
        state is a function of the judgments alone, whoever asked for what in between.
        """
        if self.shared:
            return self.process.topics[topic].next() if self.process.open(topic) else None
        return None if self.done(topic) else self.process.topics[topic].next()

    def apply(self, topic: str, docno: str, _right: None, grade: float) -> None:
        """Record one grade of the document the method offered, and choose the topic's next one."""
        self.process.add(pd.DataFrame(dict(topic=[topic], docno=[docno], grade=[grade])))
        for t in self.process.topics if self.shared else [topic]:   # the bandit may have opened another topic
            self.offer(t)

    def qrels(self, best: bool = False) -> str:
        """``topic 0 docno grade`` lines of every judgment so far."""
        return "".join(f"{t} 0 {d} {g}\n" for t, d, g in self.process.log)

    def state(self) -> dict[str, Any]:
        return dict(log=self.process.log, topics={t: m.state for t, m in self.process.topics.items()})


JUDGES = {"preference": PreferenceJudge, "graded": GradedJudge}


def make_judge(kind: str, pools: dict[str, Any], options: dict[str, Any]) -> PreferenceJudge | GradedJudge:
    """The judge of a stored campaign, before any answer."""
    return JUDGES[kind](pools, options)


def answer_value(judgment) -> str | float:
    """What a judgments row feeds the process: the winning docno, or the grade."""
    return judgment.winner if judgment.right is not None else _grade(judgment.grade)


def _grade(value: float) -> int | float:
    return int(value) if value == int(value) else value


def judgments_text(rows, kinds: bool = False) -> str:
    """The judgments export: ``topic left right winner assessor_id unix_time`` (preference) or
    ``topic docno grade assessor_id unix_time`` (graded), one recorded answer a line, in log order;
    with ``kinds`` each line ends with the row's kind. A skip (only with ``kinds``) has ``-`` for its
    winner or grade and ends with its reason and its comment as a JSON string (``""`` when none)."""
    return "".join(_line(j, kinds) for j in rows)


def _line(j, kinds: bool) -> str:
    skip = j.kind == "skip"
    value = "-" if skip else j.winner if j.right is not None else _grade(j.grade)
    end = f" skip {j.reason} {json.dumps(j.comment or '')}" if skip else f" {j.kind}" if kinds else ""
    docs = j.left if j.right is None else f"{j.left} {j.right}"
    return f"{j.topic} {docs} {value} {j.assessor_id} {int(j.created_at)}{end}\n"


# the rows of the JSON Lines and CSV log exports, in this order
LOG_FIELDS = ("id", "kind", "topic", "docnos", "answer", "assessor", "name", "automatic", "platform", "worker",
              "study", "session", "lease_time", "answer_time", "reason", "comment", "retracts", *USAGE)


def log_row(j, name: str | None, automatic: str | None, lease_time: float | None,
            platform: dict[str, str | None]) -> dict[str, Any]:
    """One judgments row for the log exports: its kind (answer, test, repeat, audit, practice, retract,
    skip), the documents, the answer (the preferred docno or the grade; for a retract the one taken
    back; none for a skip), who gave it: the assessor's id, name, the registered name of an automatic
    one (``automatic``) and a person's platform ids (``platform``:
    :func:`irbandits.service.crowd.platform_columns`), the lease and answer times (unix seconds), a
    skip's reason and comment, the id a retract takes back, and what an automatic assessor's call cost
    (:data:`~irbandits.judging.assessors.USAGE`; none for a person's row)."""
    skip = j.kind == "skip"
    answer = None if skip else j.winner if j.right is not None else _grade(j.grade)
    usage = getattr(j, "usage", None) or {}
    return dict(id=j.id, kind=j.kind, topic=j.topic, docnos=[j.left] if j.right is None else [j.left, j.right],
                answer=answer, assessor=j.assessor_id, name=name, automatic=automatic, **platform, lease_time=lease_time,
                answer_time=j.created_at, reason=j.reason if skip else None, comment=j.comment if skip else None,
                retracts=j.retracts, **{k: usage.get(k) for k in USAGE})


def log_jsonl(rows: list[dict[str, Any]]) -> str:
    """The log export as JSON Lines: one object a row, keys :data:`LOG_FIELDS`."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def log_csv(rows: list[dict[str, Any]]) -> str:
    """The log export as CSV with a header (:data:`LOG_FIELDS`); docnos joined by a space, none as empty."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LOG_FIELDS)
    for r in rows:
        writer.writerow(["" if r[k] is None else " ".join(r[k]) if k == "docnos" else csv_text(r[k])
                         if k in ("name", "comment", "worker", "study", "session") else r[k] for k in LOG_FIELDS])
    return out.getvalue()
