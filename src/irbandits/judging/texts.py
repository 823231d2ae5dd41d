"""Passages and topics to judge: from TSV, CSV and JSONL files, or from a local ``ir_datasets`` collection.

The one home of reading them, for the CLI (``--texts``, ``--queries``, ``irbandits judge texts``) and
the service (campaign uploads and ``POST /api/campaigns``). Three file formats:

- **TSV**: ``id<TAB>text`` lines, no header (the text is everything after the first tab);
- **CSV**: a header row naming the columns, read with :mod:`csv` (quoted fields may hold commas and
  newlines);
- **JSONL**: one JSON object a line, with the same names as keys (other keys are ignored).

The column (or key) names; of each list, the first that is present is read:

- passages: ``docno`` / ``id`` / ``doc_id``, and ``text`` / ``body`` / ``passage``;
- topics: ``topic`` / ``qid`` / ``query_id`` / ``id``, ``query`` / ``title`` / ``text``, and optionally
  ``description`` and ``narrative`` (shown to assessors beside the query).

The format comes from the name's extension (``.tsv`` / ``.txt``, ``.csv``, ``.jsonl`` / ``.ndjson`` /
``.json``, the last read as JSON lines), else from the content: a first non-blank character ``{`` is
JSONL, a tab in the first non-blank line TSV, anything else CSV. Blank lines are skipped and ids are
stripped. Every mistake is one :class:`~irbandits.errors.IrbanditsError` naming the file, the line and
the problem.

>>> parse_passages('docno,text\\nd1,"one, two"\\n', "p.csv")
{'d1': 'one, two'}
>>> parse_topics('{"qid": "7", "title": "cats", "narrative": "any cat"}', "topics")
({'7': 'cats'}, {'7': {'narrative': 'any cat'}})
>>> parse_passages("d1\\tx\\nd1\\ty\\n", "p.tsv")
Traceback (most recent call last):
irbandits.errors.IrbanditsError: p.tsv, line 2: docno d1 is given twice (first on line 1)
"""

from __future__ import annotations

import csv
import itertools
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Iterable, Iterator

from irbandits.errors import IrbanditsError

IRDS = "irds:"
NOTES = ("description", "narrative")
FORMATS = {".tsv": "tsv", ".txt": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


@dataclass(frozen=True)
class Column:
    """A column of a passages or topics file: the names it may have (the first is used in messages)."""

    names: tuple[str, ...]
    required: bool = True

    @property
    def name(self) -> str:
        return self.names[0]


PASSAGES = (Column(("docno", "id", "doc_id")), Column(("text", "body", "passage")))
TOPICS = (Column(("topic", "qid", "query_id", "id")), Column(("query", "title", "text")),
          *(Column((note,), required=False) for note in NOTES))
Records = dict[str, dict[str, str]]


# ----- files ---------------------------------------------------------------------------------------
def parse_passages(text: str, name: str, docnos: Iterable[str] | None = None) -> dict[str, str]:
    """``{docno: text}`` of a passages file's content; ``name`` (a file name or a field) is in every message.

    With ``docnos``, only those documents are kept (a collection's other documents are not held, nor
    checked for repeats)."""
    return _passages(_collect(_text_lines(text), name, PASSAGES, docnos))


def parse_topics(text: str, name: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """``({topic: query}, {topic: {"description": ..., "narrative": ...}})`` of a topics file's content;
    a topic is in the notes only when it has a non-empty description or narrative, with just those."""
    return _topics(_collect(_text_lines(text), name, TOPICS))


def read_passages(path: str | Path, docnos: Iterable[str] | None = None, progress: bool = False) -> dict[str, str]:
    """:func:`parse_passages` of a file, read line by line; ``progress`` shows a bar (bytes read) on standard error."""
    with _open(path, progress) as fh:
        return _passages(_collect(_byte_lines(fh, path), str(path), PASSAGES, docnos))


def read_topics(path: str | Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """:func:`parse_topics` of a file."""
    with _open(path, False) as fh:
        return _topics(_collect(_byte_lines(fh, path), str(path), TOPICS))


def read_texts(path: str | Path, key: str = "docno") -> dict[str, str]:
    """``{id: text}`` of a passages file (``key`` docno) or the queries of a topics file (``key`` topic)."""
    return read_passages(path) if key == "docno" else read_topics(path)[0]


def _passages(records: Records) -> dict[str, str]:
    return {docno: record["text"] for docno, record in records.items()}


def _topics(records: Records) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    notes = {topic: note for topic, record in records.items()
             if (note := {k: record[k] for k in NOTES if record.get(k)})}
    return {topic: record["query"] for topic, record in records.items()}, notes


@contextmanager
def _open(path: str | Path, progress: bool) -> Iterator[Any]:
    try:
        if progress:
            import rich.progress
            from rich.console import Console

            cm = rich.progress.open(path, "rb", description=f"reading {Path(path).name}",
                                    console=Console(stderr=True), transient=True)
        else:
            cm = open(path, "rb")
        with cm as fh:
            yield fh
    except OSError as exc:
        raise IrbanditsError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _byte_lines(fh: Iterable[bytes], path: str | Path) -> Iterator[str]:
    for number, line in enumerate(fh, 1):
        try:
            yield line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            raise IrbanditsError(f"{path}, line {number}: not UTF-8 text") from None


def _text_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their ends, split at ``\\n`` only, as a file is read."""
    *lines, last = text.removeprefix("\ufeff").split("\n")
    return itertools.chain((line + "\n" for line in lines), [last] if last else [])


def _collect(lines: Iterator[str], name: str, columns: tuple[Column, ...],
             docnos: Iterable[str] | None = None) -> Records:
    """The records of a file by id, each ``{column name: value}``; an empty or repeated id is an error."""
    head = []  # up to the first non-blank line, which tells the format when the name does not
    for line in lines:
        head.append(line)
        if line.strip():
            break
    kind = FORMATS.get(PurePath(name).suffix.lower()) or _detect(head[-1] if head else "")
    rows = {"tsv": _tsv, "csv": _csv, "jsonl": _jsonl}[kind](itertools.chain(head, lines), name, columns)
    wanted = None if docnos is None else set(docnos)
    key, found, first, count = columns[0].name, {}, {}, 0
    for number, record in rows:
        count += 1
        ident = record.pop(key).strip()
        if not ident:
            raise IrbanditsError(f"{name}, line {number}: empty {key}")
        if wanted is not None and ident not in wanted:
            continue
        if ident in found:
            raise IrbanditsError(f"{name}, line {number}: {key} {ident} is given twice (first on line {first[ident]})")
        found[ident], first[ident] = record, number
    if not count:
        raise IrbanditsError(f"{name}: no {key} found; give {_describe(columns)}")
    return found


def _detect(first: str) -> str:
    """The format of content whose first non-blank line is ``first``.

    >>> _detect('{"docno": "a"}'), _detect("a\\tb"), _detect("docno,text")
    ('jsonl', 'tsv', 'csv')
    """
    return "jsonl" if first.lstrip().startswith("{") else "tsv" if "\t" in first else "csv"


def _describe(columns: tuple[Column, ...]) -> str:
    key, text = columns[0], columns[1]
    return (f"{key.name}<TAB>{text.name} lines, a CSV with a header or JSON lines naming "
            f"{' / '.join(key.names)} and {' / '.join(text.names)}")


def _tsv(lines: Iterable[str], name: str, columns: tuple[Column, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    key, text = columns[0].name, columns[1].name
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\n").rstrip("\r")
        if not line.strip():
            continue
        ident, tab, value = line.partition("\t")
        if not tab:
            raise IrbanditsError(f"{name}, line {number}: expected {key}<TAB>{text}")
        yield number, {key: ident, text: value}


def _csv(lines: Iterable[str], name: str, columns: tuple[Column, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.reader(lines, strict=True)
    header, at = None, 0  # at: the line the last record read ended on
    try:
        for row in reader:
            start, at = at + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if header is None:
                header = [cell.strip().lower() for cell in row]
                found = _where(header, columns, f"{name}, line {start}: no {{}} column; the header names none of {{}}")
                where = {column: header.index(found_as) for column, found_as in found.items()}
            elif len(row) != len(header):
                raise IrbanditsError(f"{name}, line {start}: {len(row)} cells; the header has {len(header)}")
            else:
                yield start, {column: row[i] for column, i in where.items()}
    except csv.Error as exc:
        raise IrbanditsError(f"{name}, line {at + 1}: not valid CSV ({exc})") from None


def _jsonl(lines: Iterable[str], name: str, columns: tuple[Column, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise IrbanditsError(f"{name}, line {number}: not a JSON object ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(record, dict):
            raise IrbanditsError(f"{name}, line {number}: expected a JSON object, got {json.dumps(record)[:50]}")
        given = [k for k, v in record.items() if v is not None]
        out = {}
        for column, key in _where(given, columns, f"{name}, line {number}: no {{}}; give one of the keys {{}}").items():
            if not isinstance(record[key], str):
                raise IrbanditsError(f"{name}, line {number}: {key} must be a string, got {json.dumps(record[key])[:50]}")
            out[column] = record[key]
        yield number, out


def _where(names: list[str], columns: tuple[Column, ...], missing: str) -> dict[str, str]:
    """Per column, the first of its names in ``names``; a required column without one is an error
    (``missing`` formatted with the column's name and its accepted names)."""
    where = {}
    for column in columns:
        found = next((n for n in column.names if n in names), None)
        if found is not None:
            where[column.name] = found
        elif column.required:
            raise IrbanditsError(missing.format(column.name, ", ".join(column.names)))
    return where


# ----- sources: a file or irds:DATASET_ID ----------------------------------------------------------
def load_passages(source: str | Path, docnos: Iterable[str] | None = None, progress: bool = False) -> dict[str, str]:
    """``{docno: text}`` from a file (:func:`read_passages`) or from ``irds:DATASET_ID``, a collection of
    the ``ir_datasets`` package (``pip install 'irbandits[datasets]'``) whose files are on this machine.

    Only the ``docnos`` asked for are kept (all documents without them); from ``ir_datasets`` they are
    looked up in the dataset's document store. A document's text is its ``text`` field, else its
    ``body``, else its other string fields joined by newlines. See :func:`load_topics` on downloads."""
    if str(source).startswith(IRDS):
        return _irds_passages(str(source), docnos)
    return read_passages(source, docnos, progress)


def load_topics(source: str | Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """``({topic: query}, notes)`` from a file (:func:`read_topics`) or from ``irds:DATASET_ID``: the
    dataset's queries, the query text its ``text`` field, else ``title``, else ``query``, with the
    ``description`` and ``narrative`` of query types that have them (TREC topics).

    ``ir_datasets`` downloads a collection that is not on the machine the first time it is used;
    irbandits never lets it. ``ir_datasets`` has no general test of whether a dataset's files are
    local (some format handlers tell their path without fetching it, many do not), so while an ``irds:``
    source is read every download it would start (a remote download class's ``stream``) raises
    instead, and the error says how to fetch the files with ``ir_datasets`` itself."""
    if str(source).startswith(IRDS):
        return _irds_topics(str(source))
    return read_topics(source)


_PATCHING = threading.Lock()  # the download classes are patched for one irds: source at a time


class _Refused(Exception):
    """A download ``ir_datasets`` tried to start while an ``irds:`` source was read."""


@contextmanager
def _dataset(source: str) -> Iterator[Any]:
    """The ``ir_datasets`` dataset of ``irds:ID``; in the block, downloads are refused and the library's
    errors become one-line :class:`IrbanditsError` messages."""
    ident = source[len(IRDS):]
    try:
        import ir_datasets
        from ir_datasets.util import download
    except ImportError:
        raise IrbanditsError(f"{source}: reading ir_datasets collections needs the ir_datasets package: "
                             "pip install 'irbandits[datasets]'") from None
    try:
        dataset = ir_datasets.load(ident)
    except KeyError:
        raise IrbanditsError(f"{source}: ir_datasets knows no dataset {ident!r}") from None

    refused = []

    def refuse(self, *args, **kwargs):
        refused.append(self)
        raise _Refused(f"irbandits refuses to download {self!r}")

    remote = [c for c in _subclasses(download.BaseDownload) if not issubclass(c, download.LocalDownload)]
    with _PATCHING:
        saved = {c: c.__dict__.get("stream") for c in remote}
        for c in remote:
            c.stream = refuse
        try:
            yield dataset
        except IrbanditsError:
            raise
        except Exception as exc:
            if refused:  # ir_datasets may wrap the refusal (its mirrors' errors in one)
                raise IrbanditsError(
                    f"{source}: the dataset's files are not on this machine and irbandits does not download them; "
                    f"fetch them with ir_datasets first (e.g. `ir_datasets export {ident} docs > /dev/null`, or "
                    f"`queries`), or point IR_DATASETS_HOME at where they are") from None
            if isinstance(exc, OSError):
                raise IrbanditsError(f"{source}: cannot read the dataset's files ({exc})") from None
            raise
        finally:
            for c, stream in saved.items():
                if stream is None:
                    del c.stream
                else:
                    c.stream = stream


def _subclasses(cls: type) -> set[type]:
    return {s for c in cls.__subclasses__() for s in (c, *_subclasses(c))}


def _irds_passages(source: str, docnos: Iterable[str] | None) -> dict[str, str]:
    with _dataset(source) as dataset:
        if not dataset.has_docs():
            raise IrbanditsError(f"{source}: the dataset has no documents")
        docs = dataset.docs_iter() if docnos is None else dataset.docs_store().get_many(set(docnos)).values()
        return {doc.doc_id: _doc_text(doc) for doc in docs}


def _doc_text(doc: Any) -> str:
    for field in ("text", "body"):
        if isinstance(getattr(doc, field, None), str):
            return getattr(doc, field)
    return "\n".join(v for k, v in zip(doc._fields, doc) if k != "doc_id" and isinstance(v, str) and v)


def _irds_topics(source: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    with _dataset(source) as dataset:
        if not dataset.has_queries():
            raise IrbanditsError(f"{source}: the dataset has no queries")
        fields = dataset.queries_cls()._fields
        field = next((f for f in ("text", "title", "query") if f in fields), None)
        if field is None:
            raise IrbanditsError(f"{source}: its queries have no text, title or query field ({', '.join(fields)})")
        queries, notes = {}, {}
        for query in dataset.queries_iter():
            queries[query.query_id] = getattr(query, field)
            note = {k: getattr(query, k) for k in NOTES if k in fields and getattr(query, k)}
            if note:
                notes[query.query_id] = note
        return queries, notes
