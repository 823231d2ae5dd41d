"""Judging campaigns: checking what the organiser sends, building and replaying the processes, exports.

The service drives the library's own objects, the same ones the CLI drives:

- ``preference``: :func:`irbandits.judging.pools.build_pools` over the graded qrels and one
  :class:`irbandits.judging.topk.TopKProcess` (the ``irbandits judge init`` options);
- ``graded``: :func:`irbandits.pooling.pools.build_pools` over the runs and one
  :class:`irbandits.pooling.state.Campaign` (the ``irbandits pool init`` options), stopped on each
  topic after ``budget`` judgments.

Answers are applied in the order of the judgments table, which is the order they were committed in
(the top-k process draws the pairings of every topic from one generator, so order matters); a
restart replays the table the same way. With ``assessors_per_pair`` r > 1 a request is answered by r
different assessors, and the process is fed once all r are in: the item more of them preferred, a
tie (even r) going to the first answer's choice. The judgments export lists every answer.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.params import Param
from irbandits.service.validation import MAX_SEED, check_text

_NAME = re.compile(r"^[A-Za-z0-9._+-]{1,100}$")


def _at_least(low: int) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: low <= v <= 10**6), f"in [{low}, 10**6]"


def _seed() -> tuple[Callable[[Any], bool], str]:
    return (lambda v: 0 <= v <= MAX_SEED), "a whole number in [0, 2**63)"


OPTIONS: dict[str, tuple[Param, ...]] = {
    "preference": (
        Param("n", int, 7, "pairs per item in a pruning phase", *_at_least(1)),
        Param("m", int, 9, "pools of at most m items go to the final phase", *_at_least(1)),
        Param("minimum", int, 5, "add grades top-down until a pool has this many items", *_at_least(1)),
        Param("extra", int, 0, "extra finalization phases", *_at_least(0)),
        Param("k", int, 5, "depth of the preference qrels (extended for ties)", *_at_least(1)),
        Param("keep", str, "wins", "pruning rule: wins or borda", lambda v: v in ("wins", "borda"), "wins or borda"),
        Param("seed", int, 0, "seeds the pairings and the left / right placement", *_seed()),
        Param("assessors_per_pair", int, 1, "different assessors answering each request", *_at_least(1)),
        Param("test_rate", float, 3 / 13, "share of each assessor's tasks that are quality checks (study: 3 in 13)",
              lambda v: 0 <= v < 1, "in [0, 1)"),
        Param("threshold", float, 0.75, "flag an assessor whose test-pair accuracy is below this",
              lambda v: 0 < v < 1, "in (0, 1)"),
        Param("min_agreement", float, 0.5, "flag an assessor whose consistency or agreement with the majority "
              "is below this", lambda v: 0 <= v < 1, "in [0, 1)"),
        Param("stop_settled", int, 0, "1: hand out no more requests of a settled topic (its best item is decided)",
              lambda v: v in (0, 1), "0 or 1"),
    ),
    "graded": (
        Param("depth", int, 10, "pool depth: the top depth documents of every run", *_at_least(1)),
        Param("method", str, "MM-NS", "pooling method, NAME or NAME:param=value"),
        Param("budget", int, None, "judgments per topic (default: the whole pool)", *_at_least(1)),
        Param("grades", list, [0, 1, 2, 3], "the grades an assessor may give"),
        Param("relevant_grade", float, 1.0, "grades >= this count as relevant for the method"),
        Param("seed", int, 0, "seed of a random method", *_seed()),
    ),
}


def check_options(kind: str, given: dict[str, Any]) -> dict[str, Any]:
    """The options of a ``kind`` campaign with defaults filled in; an unknown or bad one is an error."""
    known = {p.name: p for p in OPTIONS[kind]}
    for name in given:
        if name not in known:
            raise IrbanditsError(f"options: unknown option {name!r} for a {kind} campaign; known: {', '.join(known)}")
    out = {name: p.check("options", given.get(name, p.default)) for name, p in known.items()}
    if kind == "graded":
        grades = out["grades"]
        if not grades or any(isinstance(g, bool) or not isinstance(g, int) for g in grades) or len(set(grades)) < len(grades):
            raise IrbanditsError(f"options: grades must be a list of different whole numbers, got {grades!r}")
        from irbandits.pooling import parse_method

        out["method"] = parse_method(out["method"]).label
    return out


def _read(reader: Callable, target: str, files: dict[str, str]):
    """Run a file reader of :mod:`irbandits.io` on texts written to ``files`` (relative paths) in a
    temporary folder; its errors name the relative path (``qrels, line 3: ...``)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            path = Path(tmp, name)
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
        try:
            return reader(Path(tmp, target))
        except IrbanditsError as exc:
            raise IrbanditsError(str(exc).replace(tmp + os.sep, "")) from None


def check_campaign(body: dict[str, Any]) -> dict[str, Any]:
    """Validate a ``POST /api/campaigns`` body; returns the campaign row's fields.

    Raises :class:`IrbanditsError` with one message naming the field and the problem.
    """
    from irbandits.io import read_qrels, read_runs

    check_text(body, "campaign")
    kind, topics, texts = body["kind"], body["topics"], body["texts"]
    options = check_options(kind, body.get("options") or {})
    if kind == "preference":
        if not body.get("qrels") or body.get("runs"):
            raise IrbanditsError("a preference campaign needs qrels (and no runs): its pools are built from graded qrels")
        from irbandits.judging.pools import build_pools

        qrels = _read(read_qrels, "qrels", {"qrels": body["qrels"]})
        pools = {t: p for t, p in build_pools(qrels, options["minimum"]).items() if p}
        topk_process(pools, options)  # checks n, m, k, keep
        pooled = stored = pools
        tests = _tests(body.get("tests"), qrels, pools, body["texts"], options["seed"])
    else:
        if body.get("tests"):
            raise IrbanditsError("tests: known-answer test pairs are for preference campaigns")
        tests = None
        if not body.get("runs") or body.get("qrels"):
            raise IrbanditsError("a graded campaign needs runs (and no qrels): its pools are built from runs")
        bad = [name for name in body["runs"] if not _NAME.match(name) or not name.strip(".")]
        if bad:
            raise IrbanditsError(f"runs: the run name {bad[0]!r} may only use letters, digits and . _ + - "
                                 f"(and not only dots)")
        from irbandits.pooling import build_pools

        runs = _read(read_runs, "runs", {f"runs/{name}": text for name, text in body["runs"].items()})
        built = build_pools(runs, options["depth"])
        pooled = {t: p.docnos.tolist() for t, p in built.items()}
        stored = {"runs": list(next(iter(built.values())).runs),
                  "topics": {t: {"docnos": p.docnos.tolist(), "ranked": p.ranked.tolist()} for t, p in built.items()}}
    if not pooled:
        raise IrbanditsError(f"{'qrels' if kind == 'preference' else 'runs'}: no topic has anything to judge")
    for topic, docnos in pooled.items():
        if topic not in topics:
            raise IrbanditsError(f"topics: no query for topic {topic}")
        for docno in docnos:
            if docno not in texts:
                raise IrbanditsError(f"texts: no text for document {docno} (topic {topic})")
    keep = {d for docnos in pooled.values() for d in docnos} | {d for _, a, b in tests or () for d in (a, b)}
    return dict(name=body["name"], kind=kind, options=options, pools=stored, tests=tests,
                topics={t: topics[t] for t in pooled}, texts={d: texts[d] for d in keep})


def _tests(given: list | None, qrels, pools: dict[str, list[str]], texts: dict[str, str], seed: int) -> list[list[str]]:
    """The campaign's known-answer test pairs ``[topic, better, worse]``: the organiser's, else drawn
    from the graded qrels (see :func:`irbandits.service.quality.derived_tests`)."""
    from irbandits.service.quality import derived_tests

    if not given:
        grades = {str(t): dict(zip(g.docno, g.grade)) for t, g in qrels.groupby("topic")}
        return derived_tests(grades, pools, texts, seed)
    for i, pair in enumerate(given):
        if not (isinstance(pair, list) and len(pair) == 3 and all(isinstance(x, str) for x in pair)):
            raise IrbanditsError(f"tests[{i}]: a test pair is [topic, better docno, worse docno], got {pair!r}")
        topic, better, worse = pair
        if topic not in pools:
            raise IrbanditsError(f"tests[{i}]: topic {topic} has no judging pool")
        if better == worse:
            raise IrbanditsError(f"tests[{i}]: an item cannot be tested against itself ({better})")
        for docno in (better, worse):
            if docno not in texts:
                raise IrbanditsError(f"tests[{i}]: no text for document {docno}")
    return [list(p) for p in given]


def topk_process(pools: dict[str, list[str]], options: dict[str, Any]):
    """The :class:`~irbandits.judging.topk.TopKProcess` that ``irbandits judge init`` makes with these options."""
    from irbandits.judging.topk import TopKProcess

    return TopKProcess(pools, n=options["n"], m=options["m"], extra=options["extra"], k=options["k"],
                       keep=options["keep"], seed=options["seed"])


# ----- the processes -----------------------------------------------------------------------------
class PreferenceJudge:
    """A top-k process fed with answers; ``assessors_per_pair`` answers make one judgment."""

    def __init__(self, pools: dict[str, list[str]], options: dict[str, Any]):
        self.process = topk_process(pools, options)
        self.per_pair = options["assessors_per_pair"]
        self.stop_settled = bool(options.get("stop_settled", 0))
        self.pending: dict[tuple[str, str, str], list[str]] = {}  # (topic, a, b), a < b -> winners so far
        self.fed: dict[tuple[str, str, str], list[str]] = {}      # the votes of each request's last judgment
        self._open = {topic: t.outstanding() for topic, t in self.process.topics.items()}
        self.settled = {topic: self.process.settled(topic) for topic in self.process.topics}
        self._route()

    def _route(self) -> None:
        """Routing: unsettled topics first, most open requests first (stable in topic order); settled
        topics last, or not at all with ``stop_settled``."""
        order = sorted(self._open, key=lambda t: (self.settled[t], -len(self._open[t])))
        self._order = [t for t in order if not (self.stop_settled and self.settled[t])]

    def _changed(self, topic: str) -> None:
        self._open[topic] = self.process.topics[topic].outstanding()  # only this topic's requests changed
        self.settled[topic] = self.process.settled(topic)
        self._route()

    @staticmethod
    def key(topic: str, left: str, right: str | None) -> tuple[str, str, str]:
        """The request's key: the topic and the unordered pair."""
        return (topic, left, right) if left < right else (topic, right, left)

    def requests(self) -> Iterator[tuple[str, str, str]]:
        """``(topic, left, right)`` for every judgment the process needs now, in its order."""
        return ((topic, a, b) for topic in self._order for a, b in self._open[topic])

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
                out[topic] = (len(self._open[topic]) + later) * self.per_pair - sum(
                    len(v) for k, v in self.pending.items() if k[0] == topic)
        return out

    def state(self) -> dict[str, Any]:
        """The whole state (process and pending answers), JSON-ready: equal states compare equal."""
        return dict(process=self.process.to_json(), pending={" ".join(k): v for k, v in self.pending.items()})


class GradedJudge:
    """A pooling :class:`~irbandits.pooling.state.Campaign`, each topic stopped after ``budget`` judgments."""

    def __init__(self, pools: dict[str, Any], options: dict[str, Any]):
        from irbandits.pooling.pools import TopicPool
        from irbandits.pooling.state import Campaign

        runs = tuple(pools["runs"])
        built = {t: TopicPool(t, np.array(p["docnos"]), runs, np.array(p["ranked"], np.int64))
                 for t, p in pools["topics"].items()}
        self.process = Campaign(built, options["method"], options["relevant_grade"], options["seed"])
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
        m = self.process.topics[topic]
        return m.judgments >= min(m.pool.size, self.budget or m.pool.size)

    def offer(self, topic: str) -> str | None:
        """The document the method wants judged next on ``topic`` (None when the topic is done).

        It is chosen as soon as the previous judgment of the topic is in (and at the start), so the
        state is a function of the judgments alone, whoever asked for what in between.
        """
        return None if self.done(topic) else self.process.topics[topic].next()

    def apply(self, topic: str, docno: str, _right: None, grade: float) -> None:
        """Record one grade of the document the method offered, and choose the topic's next one."""
        self.process.add(pd.DataFrame(dict(topic=[topic], docno=[docno], grade=[grade])))
        self.offer(topic)

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
    with ``kinds`` each line ends with the row's kind."""
    end = (lambda j: f" {j.kind}\n") if kinds else (lambda j: "\n")
    return "".join(
        f"{j.topic} {j.left} {j.right} {j.winner} {j.assessor_id} {int(j.created_at)}{end(j)}" if j.right is not None
        else f"{j.topic} {j.left} {_grade(j.grade)} {j.assessor_id} {int(j.created_at)}{end(j)}" for j in rows)
