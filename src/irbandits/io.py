"""TREC run files, qrels and pairwise judgments: read with errors naming file, line and column.

Formats (plain text or gzip, detected from the ``.gz`` suffix):

- run: ``topic Q0 docno rank score runid`` (6 whitespace-separated columns)
- qrels: ``topic iteration docno grade`` (4 columns; the grade is an integer, preference qrels
  may use any number)
- judgments: ``topic left right winner`` (the winner is ``left`` or ``right``)

Runs are returned in the order ``trec_eval`` ranks them: by descending score, ties broken by docno
descending (the rank column is ignored, as ``trec_eval`` ignores it). A document repeated within one
topic of one run keeps its first line and is reported once with a warning.

>>> from irbandits.io import read_qrels
>>> qrels = read_qrels("../shared/data/trec-dl-2021-passage/qrels.txt")
>>> len(qrels), sorted(qrels.columns)
(10828, ['docno', 'grade', 'topic'])
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path
from typing import Iterable, Iterator

import pandas as pd

from irbandits.errors import IrbanditsError


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for every non-blank line of a plain or gzipped text file."""
    path = Path(path)
    if not path.is_file():
        raise IrbanditsError(f"{path}: no such file")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                fields = line.split()
                if fields:
                    yield number, fields
    except (OSError, UnicodeDecodeError) as exc:
        raise IrbanditsError(f"{path}: cannot read ({exc})") from None


def _where(path, number: int, column: int | None = None) -> str:
    return f"{path}, line {number}" + (f", column {column}" if column else "")


def _number(text: str, path, number: int, column: int, what: str, kind=float):
    try:
        return kind(text)
    except ValueError:
        raise IrbanditsError(f"{_where(path, number, column)}: {what} must be a number, got {text!r}") from None


def read_run(path: str | Path, name: str | None = None) -> pd.DataFrame:
    """Read one TREC run file into columns ``run, topic, docno, rank, score``, in ranked order.

    ``rank`` is renumbered 1, 2, ... per topic after sorting; ``name`` defaults to the runid column.
    """
    path = Path(path)
    rows, seen, runid, repeated = [], set(), None, 0
    for number, f in _lines(path):
        if len(f) != 6:
            raise IrbanditsError(f"{_where(path, number)}: a run line has 6 columns "
                                 f"(topic Q0 docno rank score runid), found {len(f)}")
        rank = _number(f[3], path, number, 4, "rank", int)
        score = _number(f[4], path, number, 5, "score")
        if (f[0], f[2]) in seen:
            repeated += 1
            continue
        seen.add((f[0], f[2]))
        runid = runid or f[5]
        rows.append((f[0], f[2], rank, score))
    if not rows:
        raise IrbanditsError(f"{path}: the run file is empty")
    if repeated:
        warnings.warn(f"{path}: {repeated} repeated document(s) within a topic; kept the first line of each",
                      stacklevel=2)
    df = pd.DataFrame(rows, columns=["topic", "docno", "rank", "score"])
    df = df.sort_values(["topic", "score", "docno"], ascending=[True, False, False], kind="mergesort")
    df["rank"] = df.groupby("topic").cumcount() + 1
    df.insert(0, "run", name or runid)
    return df.reset_index(drop=True)


def run_files(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """Expand a directory (every file in it, sorted) or a list of files into run file paths."""
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    for item in map(Path, items):
        if item.is_dir():
            files.extend(sorted(p for p in item.iterdir() if p.is_file() and not p.name.startswith(".")))
        elif item.is_file():
            files.append(item)
        else:
            raise IrbanditsError(f"{item}: no such run file or directory")
    if not files:
        raise IrbanditsError(f"no run files in {', '.join(map(str, items))}")
    return files


def read_runs(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Read every run in a directory or list of files into one table (see :func:`read_run`).

    A run is named by its runid column; two files with the same runid are an error.
    """
    frames = [read_run(p) for p in run_files(paths)]
    names = pd.Series([f.run.iat[0] for f in frames])
    if names.duplicated().any():
        raise IrbanditsError(f"two run files share the runid {names[names.duplicated()].iat[0]!r}")
    return pd.concat(frames, ignore_index=True)


def read_qrels(path: str | Path, lines: bool = False) -> pd.DataFrame:
    """Read a qrels file into columns ``topic, docno, grade`` (float grades are kept as floats).

    A document judged twice for one topic is an error naming both lines. ``lines=True`` adds a
    ``line`` column (the line number in the file), for checks that name the line.
    """
    path = Path(path)
    rows, first = [], {}
    for number, f in _lines(path):
        if len(f) != 4:
            raise IrbanditsError(f"{_where(path, number)}: a qrels line has 4 columns "
                                 f"(topic iteration docno grade), found {len(f)}")
        grade = _number(f[3], path, number, 4, "grade")
        key = (f[0], f[2])
        if key in first:
            raise IrbanditsError(f"{_where(path, number)}: document {f[2]} of topic {f[0]} is already "
                                 f"judged on line {first[key]}")
        first[key] = number
        rows.append((f[0], f[2], grade, number))
    df = pd.DataFrame(rows, columns=["topic", "docno", "grade", "line"])
    if len(df) and (df.grade == df.grade.round()).all():
        df["grade"] = df.grade.astype("int64")
    return df if lines else df.drop(columns="line")


def read_judgments(path: str | Path) -> pd.DataFrame:
    """Read pairwise judgments ``topic left right winner`` into a table with a ``line`` column."""
    path = Path(path)
    rows = []
    for number, f in _lines(path):
        if len(f) != 4:
            raise IrbanditsError(f"{_where(path, number)}: a judgment line has 4 columns "
                                 f"(topic left right winner), found {len(f)}")
        topic, left, right, winner = f
        if left == right:
            raise IrbanditsError(f"{_where(path, number)}: an item cannot be compared with itself ({left})")
        if winner not in (left, right):
            raise IrbanditsError(f"{_where(path, number, 4)}: the winner {winner} is neither "
                                 f"{left} nor {right}")
        rows.append((number, topic, left, right, winner))
    return pd.DataFrame(rows, columns=["line", "topic", "left", "right", "winner"])
