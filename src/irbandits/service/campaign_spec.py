"""What an organiser sends to start a judging campaign, checked: options, uploaded files, test pairs.

:func:`check_campaign` builds the pools the way the CLI does and returns the campaign row's fields:

- ``preference``: :func:`irbandits.judging.pools.grade_pools` over the graded qrels, checked by
  building the :class:`irbandits.judging.topk.TopKProcess` (the ``irbandits judge init`` options);
- ``graded``: :func:`irbandits.pooling.pools.depth_pools` over the runs (the ``irbandits pool init``
  options), stopped on each topic after ``budget`` judgments.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

from irbandits.errors import IrbanditsError
from irbandits.judging.texts import NOTES, parse_passages, parse_topics
from irbandits.params import Param
from irbandits.service.crowd import check_crowd, check_known_pair
from irbandits.service.judges import topk_process
from irbandits.service.validation import MAX_SEED, check_text

_NAME = re.compile(r"[A-Za-z0-9._+-]{1,100}")
MAX_NOTE = 10_000  # characters of a topic's description or narrative
MAX_TOPIC, MAX_DOCNO = 100, 200   # characters of a topic id and a document id (the judgments table's columns)
MAX_GRADE = 2**31 - 1   # a grade is stored as a float: whole numbers this large are exact


def _at_least(low: int) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: low <= v <= 10**6), f"in [{low}, 10**6]"


def _seed() -> tuple[Callable[[Any], bool], str]:
    return (lambda v: 0 <= v <= MAX_SEED), "a whole number in [0, 2**63)"


def _split() -> tuple[Callable[[Any], bool], str]:
    def valid(value: str) -> bool:
        from irbandits.pooling.budget import parse_split

        try:
            return value == "per-topic" or parse_split(value) is not None
        except IrbanditsError:
            return False
    return valid, "per-topic or global[:w=W,min=M] (W >= 1, M >= 0)"


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
        Param("audit", float, 0.1, "share of an automatic assessor's sure answers also sent to people, who "
              "score it (0 for a campaign without people)", lambda v: 0 <= v <= 1, "in [0, 1]"),
        Param("auto_threshold", float, 0.7, "an automatic assessor's answers stop counting once its accuracy on "
              "checks and audits is below this", lambda v: 0 < v < 1, "in (0, 1)"),
        Param("stop_settled", int, 0, "1: hand out no more requests of a settled topic (its best item is decided)",
              lambda v: v in (0, 1), "0 or 1"),
    ),
    "graded": (
        Param("depth", int, 10, "pool depth: the top depth documents of every run", *_at_least(1)),
        Param("method", str, "MM-NS", "pooling method, NAME or NAME:param=value"),
        Param("budget", int, None, "judgments per topic (default: the whole pool)", *_at_least(1)),
        Param("budget_split", str, "per-topic", "per-topic (budget each) or global[:w=10,min=10]: budget times the "
              "topics judgments, moved to the topics still yielding relevant documents", *_split()),
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
        if (not grades or any(isinstance(g, bool) or not isinstance(g, int) or abs(g) > MAX_GRADE for g in grades)
                or len(set(grades)) < len(grades)):
            raise IrbanditsError(f"options: grades must be a list of different whole numbers from -{MAX_GRADE} to "
                                 f"{MAX_GRADE}, got {grades!r}")
        from irbandits.pooling import parse_method

        out["method"] = parse_method(out["method"]).label
    return out


def read_upload(reader: Callable, target: str, files: dict[str, str]):
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
    kind = body["kind"]
    topics, notes = _topics(body["topics"])
    texts = _texts(body["texts"])
    options = check_options(kind, body.get("options") or {})
    if kind == "preference":
        if not body.get("qrels") or body.get("runs"):
            raise IrbanditsError("a preference campaign needs qrels (and no runs): its pools are built from graded qrels")
        from irbandits.judging.pools import grade_pools

        qrels = read_upload(read_qrels, "qrels", {"qrels": body["qrels"]})
        pools = {t: p for t, p in grade_pools(qrels, options["minimum"]).items() if p}
        topk_process(pools, options)  # checks n, m, k, keep
        pooled = stored = pools
        tests = _tests(body.get("tests"), qrels, pools, texts, options["seed"])
    else:
        if body.get("tests"):
            raise IrbanditsError("tests: known-answer test pairs are for preference campaigns")
        tests = None
        if not body.get("runs") or body.get("qrels"):
            raise IrbanditsError("a graded campaign needs runs (and no qrels): its pools are built from runs")
        bad = [name for name in body["runs"] if not _NAME.fullmatch(name) or not name.strip(".")]
        if bad:
            raise IrbanditsError(f"runs: the run name {bad[0]!r} may only use letters, digits and . _ + - "
                                 f"(and not only dots)")
        from irbandits.pooling import depth_pools

        runs = read_upload(read_runs, "runs", {f"runs/{name}": text for name, text in body["runs"].items()})
        built = depth_pools(runs, options["depth"])
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
    crowd = check_crowd(body.get("crowd"), kind, topics, texts, tests)
    practice = [p[:3] for p in (crowd or {}).get("practice", [])]
    keep = {d for docnos in pooled.values() for d in docnos} | {d for _, a, b in (tests or []) + practice for d in (a, b)}
    shown = list(pooled) + [t for t in dict.fromkeys(t for t, _, _ in practice) if t not in pooled]   # pool order
    for what, ids, most in (("topics: the topic id", shown, MAX_TOPIC), ("texts: the document id", keep, MAX_DOCNO)):
        long = next((x for x in ids if len(x) > most), None)
        if long is not None:
            raise IrbanditsError(f"{what} {long[:40]!r}... has {len(long):,} characters; at most {most}")
    return dict(name=body["name"], kind=kind, options=options, pools=stored, tests=tests, crowd=crowd,
                topics={t: topics[t] for t in shown}, texts={d: texts[d] for d in keep},
                notes={t: notes[t] for t in shown if t in notes} or None)


def _texts(given: str | dict[str, str]) -> dict[str, str]:
    """``texts``: ``{docno: text}``, or a passages file's content (TSV, CSV or JSONL,
    :func:`irbandits.judging.texts.parse_passages`)."""
    if not isinstance(given, str):
        return given
    texts = parse_passages(given, "texts")
    check_text(texts, "texts")
    return texts


def _topics(given: str | dict[str, Any]) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """``topics`` as ``{topic: query}`` and the notes of the topics with a description or narrative:
    from ``{topic: query}``, ``{topic: {"query", "description", "narrative"}}`` or a topics file's
    content (:func:`irbandits.judging.texts.parse_topics`)."""
    if isinstance(given, str):
        queries, notes = parse_topics(given, "topics")
        check_text(queries, "topics")
        check_text(notes, "topics")
    else:
        queries = {t: q if isinstance(q, str) else q["query"] for t, q in given.items()}
        notes = {t: note for t, q in given.items()
                 if isinstance(q, dict) and (note := {k: q[k] for k in NOTES if q.get(k)})}
    for topic, note in notes.items():
        for field, text in note.items():
            if len(text) > MAX_NOTE:
                raise IrbanditsError(f"topics: the {field} of topic {topic} has {len(text):,} characters "
                                     f"(at most {MAX_NOTE:,})")
    return queries, notes


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
        check_known_pair(f"tests[{i}]", better, worse, texts)
    return [list(p) for p in given]
