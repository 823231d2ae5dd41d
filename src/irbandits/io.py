"""TREC run files, qrels and pairwise judgments: read with errors naming file, line and column.

Formats (plain text or gzip, detected from the ``.gz`` suffix):

- run: ``topic Q0 docno rank score runid`` (6 whitespace-separated columns)
- qrels: ``topic iteration docno grade`` (4 columns; the grade is an integer, preference qrels
  may use any number)
- judgments: ``topic left right winner`` (the winner is ``left`` or ``right``)

Runs are returned in the order ``trec_eval`` ranks them: by descending score, ties broken by docno
descending (the rank column is ignored, as ``trec_eval`` ignores it). A document repeated within one
topic of one run keeps its first line and is reported once with a warning.

Runs and qrels are read by pyarrow's CSV reader when the file is plain: UTF-8 whose only whitespace
is ASCII, every rank a decimal integer, every score or grade a finite number that pyarrow parses.
Any other file, and any bad one, goes through the line-by-line reader, which gives the same table
(or names the file, line and column of the mistake): it is the one place the rules are checked.

>>> from irbandits.io import read_qrels
>>> qrels = read_qrels("../shared/data/trec-dl-2021-passage/qrels.txt")
>>> len(qrels), sorted(qrels.columns)
(10828, ['docno', 'grade', 'topic'])
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import re
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from irbandits.errors import IrbanditsError


def _text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line)`` of a plain or gzipped UTF-8 text file; a missing or unreadable
    file is one clear error."""
    path = Path(path)
    if not path.is_file():
        raise IrbanditsError(f"{path}: no such file")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            yield from enumerate(fh, 1)
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as exc:
        raise IrbanditsError(f"{path}: cannot read ({exc})") from None


def read_fields(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, fields)`` for every non-blank line of a plain or gzipped text file."""
    for number, line in _text_lines(path):
        fields = line.split()
        if fields:
            yield number, fields


def line_place(path, number: int, column: int | None = None) -> str:
    return f"{path}, line {number}" + (f", column {column}" if column else "")


def parse_field(text: str, path, number: int, column: int, what: str, kind=float):
    try:
        return kind(text)
    except ValueError:
        raise IrbanditsError(f"{line_place(path, number, column)}: {what} must be a number, got {text!r}") from None


# ----- fast path: pyarrow reads plain files; None sends the file to the line-by-line reader ----------
_RUN = ["topic", "q0", "docno", "rank", "score", "runid"]
_QRELS = ["topic", "iteration", "docno", "grade"]
_OTHER_SPACE = re.compile(r"[^\S\t\n\r\x0b\x0c\x1c-\x1f ]|\ufeff")  # what str.split() splits on beyond ASCII, and a BOM
_TO_SPACE = bytes.maketrans(b"\t\x0b\x0c\x1c\x1d\x1e\x1f", b" " * 7)  # ASCII separators str.split() knows


def read_file_bytes(path: Path) -> bytes | None:
    """The whole (gunzipped) file, or None when it cannot be read (the line reader then says why)."""
    try:
        data = path.read_bytes()
        return gzip.decompress(data) if path.suffix == ".gz" else data
    except (OSError, EOFError, zlib.error):
        return None


def is_plain_text(data: bytes) -> bool:
    """Whether ``data`` is UTF-8 with no byte-order mark and no whitespace but ASCII whitespace."""
    if data.isascii():
        return True
    try:
        return _OTHER_SPACE.search(data.decode("utf-8")) is None
    except UnicodeDecodeError:
        return False


def _table(path: Path, columns: list[str], numbered: bool = False) -> pa.Table | None:
    """The fields of a file whose lines all have ``len(columns)`` fields, as ``str.split()`` splits
    them (blank lines skipped), as strings; a ``line`` column (1-based) when ``numbered``. None when
    the file is not plain or a line has another number of fields."""
    data = read_file_bytes(path)
    if data is None or not is_plain_text(data):
        return None
    if b"\r" in data:  # universal newlines, as text mode reads them
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    other = any(bytes([c]) in data for c in b"\x0b\x0c\x1c\x1d\x1e\x1f")
    delimiter = None if other else "\t" if b" " not in data else " " if b"\t" not in data else None
    table = None if delimiter is None else _csv(data, delimiter, columns)
    if table is None:  # separators other than one tab or one space: make them one space, and retry
        data = data.translate(_TO_SPACE)
        while b"  " in data:
            data = data.replace(b"  ", b" ")
        data = data.replace(b"\n ", b"\n").replace(b" \n", b"\n").strip(b" ")
        table = _csv(data, " ", columns)
        if table is None:
            return None
    if numbered:
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == ord("\n"))
        starts = np.concatenate([[0], ends + 1])
        table = table.append_column("line", pa.array(np.flatnonzero(np.append(ends, len(data)) > starts) + 1))
    return table


def _csv(data: bytes, delimiter: str, columns: list[str]) -> pa.Table | None:
    """``data`` split at every ``delimiter``, as strings; None unless there are lines, every line has
    ``len(columns)`` fields and no field is empty."""
    try:
        table = pcsv.read_csv(
            pa.py_buffer(data),  # threads pay off only over many of pyarrow's 1 MiB blocks
            read_options=pcsv.ReadOptions(column_names=columns, use_threads=len(data) > 1 << 24),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False),
            convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(columns, pa.large_string())))
    except pa.ArrowInvalid:
        return None
    table = table.combine_chunks()
    empty = any(pc.min(pc.binary_length(column)).as_py() == 0 for column in table.columns)
    return None if empty or table.num_rows == 0 else table


def _finite(column: pa.ChunkedArray) -> np.ndarray | None:
    """The column as float64 when pyarrow parses every value to a finite number (then exactly as
    ``float()`` does), else None."""
    try:
        values = pc.cast(column, pa.float64())
    except pa.ArrowInvalid:
        return None
    return values.to_numpy() if pc.all(pc.is_finite(values)).as_py() else None


def _codes(column: pa.ChunkedArray) -> np.ndarray:
    """Integer codes of a string column, equal where the strings are."""
    return pc.dictionary_encode(column).combine_chunks().indices.to_numpy().astype(np.int64)


def _sort_ranks(column: pa.ChunkedArray) -> np.ndarray:
    """Each value's position among the distinct values in sorted (code point) order."""
    encoded = pc.dictionary_encode(column).combine_chunks()
    order = pc.array_sort_indices(encoded.dictionary).to_numpy()
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank[encoded.indices.to_numpy()]


def _repeats(topic: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """True at every row whose (topic, docno) codes occurred on an earlier row."""
    return pd.Series(topic * (int(docno.max(initial=0)) + 1) + docno).duplicated().to_numpy()


def _run_columns(path: Path) -> tuple[pa.Table, str] | None:
    """``(table, runid)`` of a plain run file: ``topic, docno`` strings and float64 ``score`` as
    written, and the runid of its first line; None for any other file."""
    table = _table(path, _RUN)
    if table is None or not pc.all(pc.ascii_is_decimal(table["rank"])).as_py():
        return None
    score = _finite(table["score"])
    if score is None:
        return None
    return table.select(["topic", "docno"]).append_column("score", pa.array(score)), table["runid"][0].as_py()


def _ranked(paths: list[Path], tables: list[pa.Table], names: list[str], depth: int | None = None) -> pd.DataFrame:
    """Runs (tables of :func:`_run_columns`, one a file, named ``names``) as :func:`read_run` gives
    them, one after the other: repeats dropped with a warning, ranked as ``trec_eval`` ranks (only the
    ranks up to ``depth`` when given)."""
    table = pa.concat_tables(tables).combine_chunks()
    file = np.repeat(np.arange(len(tables)), [t.num_rows for t in tables])
    topic = _sort_ranks(table["topic"])
    group = file * (int(topic.max()) + 1) + topic  # one number a (file, topic)
    repeated = _repeats(group, _codes(table["docno"]))
    if repeated.any():
        for i, count in enumerate(np.bincount(file[repeated], minlength=len(tables))):
            if count:
                warnings.warn(f"{paths[i]}: {count} repeated document(s) within a topic; kept the first line "
                              "of each", stacklevel=3)
        rows = np.flatnonzero(~repeated)
        table, file, group = table.take(rows), file[rows], group[rows]
    order = pc.sort_indices(pa.table({"group": group, "score": table["score"], "docno": table["docno"]}),
                            [("group", "ascending"), ("score", "descending"), ("docno", "descending")]).to_numpy()
    group = group[order]
    first = np.flatnonzero(np.diff(group, prepend=-1))  # where each topic of each run starts
    rank = np.arange(len(order)) - np.repeat(first, np.diff(first, append=len(order))) + 1
    if depth is not None:
        keep = rank <= depth
        order, rank = order[keep], rank[keep]
    return _frame({"run": pa.array(names, pa.large_string()).take(file[order]),
                   "topic": table["topic"].take(order), "docno": table["docno"].take(order),
                   "rank": rank, "score": table["score"].take(order).to_numpy()})


def _qrels_fast(path: Path, lines: bool) -> pd.DataFrame | None:
    """:func:`read_qrels` by pyarrow; None for a file that is not plain or judges a document twice."""
    table = _table(path, _QRELS, numbered=lines)
    grade = None if table is None else _finite(table["grade"])
    if grade is None or _repeats(_codes(table["topic"]), _codes(table["docno"])).any():
        return None
    line = {"line": table["line"].to_numpy()} if lines else {}
    return _whole_grades(_frame({"topic": table["topic"], "docno": table["docno"], "grade": grade, **line}))


@functools.cache
def _strings() -> np.dtype | pd.StringDtype:
    """The dtype pandas gives strings (``str`` from pandas 3 on, ``object`` before), as the line
    readers make them."""
    return pd.Series(["x"]).dtype


def _frame(columns: dict) -> pd.DataFrame:
    """A DataFrame of arrow string columns and numpy arrays, strings as the line readers make them."""
    strings = _strings()
    convert = strings.__from_arrow__ if isinstance(strings, pd.StringDtype) else lambda column: column.to_pandas()
    return pd.DataFrame({name: convert(column) if isinstance(column, (pa.Array, pa.ChunkedArray)) else column
                         for name, column in columns.items()}, copy=False)


def _whole_grades(qrels: pd.DataFrame) -> pd.DataFrame:
    """``qrels`` with int64 grades when every grade is a whole number."""
    if len(qrels) and (qrels.grade == qrels.grade.round()).all():
        qrels["grade"] = qrels.grade.astype("int64")
    return qrels


# ----- readers ---------------------------------------------------------------------------------------
def read_run(path: str | Path, name: str | None = None) -> pd.DataFrame:
    """Read one TREC run file into columns ``run, topic, docno, rank, score``, in ranked order.

    ``rank`` is renumbered 1, 2, ... per topic after sorting; ``name`` defaults to the runid column.
    """
    path = Path(path)
    parsed = _run_columns(path)
    return read_run_lines(path, name) if parsed is None else _ranked([path], [parsed[0]], [name or parsed[1]])


def read_run_lines(path: Path, name: str | None) -> pd.DataFrame:
    """:func:`read_run` line by line: the reference, and the checks that name file, line and column."""
    rows, seen, runid, repeated = [], set(), None, 0
    for number, f in read_fields(path):
        if len(f) != 6:
            raise IrbanditsError(f"{line_place(path, number)}: a run line has 6 columns "
                                 f"(topic Q0 docno rank score runid), found {len(f)}")
        rank = parse_field(f[3], path, number, 4, "rank", int)
        score = parse_field(f[4], path, number, 5, "score")
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
                      stacklevel=3)
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


def read_runs(paths: str | Path | Iterable[str | Path], depth: int | None = None) -> pd.DataFrame:
    """Read every run in a directory or list of files into one table (see :func:`read_run`).

    A run is named by its runid column; two files with the same runid are an error. Files are read
    in parallel threads (pyarrow and zlib release the GIL). ``depth``: keep only each run's top ``depth``
    documents of every topic, ranking each file as it is read and dropping the rest, so memory follows
    what is kept (a few files at a time), not the whole collection.
    """
    files = run_files(paths)
    if depth is not None:
        if int(depth) < 1:
            raise IrbanditsError(f"the depth of the runs to read must be at least 1, got {depth}")
        with ThreadPoolExecutor(min(len(files), os.cpu_count() or 1)) as pool:
            frames = list(pool.map(functools.partial(_read_top, depth=int(depth)), files))
        _unique_runids([f.run.iat[0] for f in frames])
        return pd.concat(frames, ignore_index=True)
    with ThreadPoolExecutor(min(len(files), os.cpu_count() or 1)) as pool:
        parsed = list(pool.map(_run_columns, files))
    if all(p is not None for p in parsed):  # all plain: rank them all at once
        _unique_runids([runid for _, runid in parsed])
        return _ranked(files, [table for table, _ in parsed], [runid for _, runid in parsed])
    frames = [read_run(p) for p in files]
    _unique_runids([f.run.iat[0] for f in frames])
    return pd.concat(frames, ignore_index=True)


def _read_top(path: Path, depth: int) -> pd.DataFrame:
    """One run file as :func:`read_run` reads it, only the ranks up to ``depth`` of every topic."""
    parsed = _run_columns(path)
    if parsed is None:
        run = read_run_lines(path, None)
        return run[run["rank"] <= depth].reset_index(drop=True)
    return _ranked([path], [parsed[0]], [parsed[1]], depth)


def _unique_runids(names: list[str]) -> None:
    names = pd.Series(names)
    if names.duplicated().any():
        raise IrbanditsError(f"two run files share the runid {names[names.duplicated()].iat[0]!r}")


def read_qrels(path: str | Path, lines: bool = False) -> pd.DataFrame:
    """Read a qrels file into columns ``topic, docno, grade`` (float grades are kept as floats).

    A document judged twice for one topic is an error naming both lines. ``lines=True`` adds a
    ``line`` column (the line number in the file), for checks that name the line.
    """
    path = Path(path)
    fast = _qrels_fast(path, lines)
    return _read_qrels_lines(path, lines) if fast is None else fast


def _read_qrels_lines(path: Path, lines: bool) -> pd.DataFrame:
    """:func:`read_qrels` line by line: the reference, and the checks that name file, line and column."""
    rows, first = [], {}
    for number, f in read_fields(path):
        if len(f) != 4:
            raise IrbanditsError(f"{line_place(path, number)}: a qrels line has 4 columns "
                                 f"(topic iteration docno grade), found {len(f)}")
        grade = parse_field(f[3], path, number, 4, "grade")
        key = (f[0], f[2])
        if key in first:
            raise IrbanditsError(f"{line_place(path, number)}: document {f[2]} of topic {f[0]} is already "
                                 f"judged on line {first[key]}")
        first[key] = number
        rows.append((f[0], f[2], grade, number))
    df = _whole_grades(pd.DataFrame(rows, columns=["topic", "docno", "grade", "line"]))
    return df if lines else df.drop(columns="line")


def read_judgments(path: str | Path) -> pd.DataFrame:
    """Read pairwise judgments ``topic left right winner`` into a table with a ``line`` column."""
    path = Path(path)
    rows = []
    for number, f in read_fields(path):
        if len(f) != 4:
            raise IrbanditsError(f"{line_place(path, number)}: a judgment line has 4 columns "
                                 f"(topic left right winner), found {len(f)}")
        topic, left, right, winner = f
        if left == right:
            raise IrbanditsError(f"{line_place(path, number)}: an item cannot be compared with itself ({left})")
        if winner not in (left, right):
            raise IrbanditsError(f"{line_place(path, number, 4)}: the winner {winner} is neither "
                                 f"{left} nor {right}")
        rows.append((number, topic, left, right, winner))
    return pd.DataFrame(rows, columns=["line", "topic", "left", "right", "winner"])


def json_lines(path: str | Path) -> Iterator[tuple[str, dict]]:
    """Yield ``(where, object)`` for every JSON line of a plain or gzipped file (``where`` is
    ``"PATH, line N"`` for messages); blank lines and lines starting with ``#`` are skipped."""
    import json

    for number, line in _text_lines(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise IrbanditsError(f"{line_place(path, number)}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise IrbanditsError(f"{line_place(path, number)}: expected a JSON object {{...}}")
        yield line_place(path, number), obj


def write_parquet(table: pd.DataFrame, path: str | Path) -> None:
    """Write ``table`` to the Parquet file ``path`` whole or not at all: into ``path.part``, then renamed
    over ``path``, so an interrupted write leaves no half file for a resumed job to read."""
    path = Path(path)
    part = path.with_name(path.name + ".part")
    table.to_parquet(part, index=False)
    os.replace(part, path)


def write_state(state: dict, path: str | Path) -> Path:
    """Write an object's saved state (``arrays``: name -> numpy array, ``rng``: its generator's words, the
    rest plain JSON) as JSON, atomically: a crash never leaves half a file."""
    s = dict(state)
    s["arrays"] = {n: {"dtype": str(a.dtype), "data": a.tolist()} for n, a in state["arrays"].items()}
    s["rng"] = [int(x) for x in state["rng"]]
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(s))
    tmp.replace(path)
    return path


def read_state(path: str | Path, what: str) -> dict:
    """A state :func:`write_state` wrote, its arrays back as numpy arrays; a file that is not one is an error
    naming it (``what``: "algorithm", "learner")."""
    try:
        s = json.loads(Path(path).read_text())
        s["arrays"] = {n: np.array(v["data"], dtype=v["dtype"]) for n, v in s["arrays"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise IrbanditsError(f"{path}: not a saved {what} state ({exc})") from None
    return s


def restore_state(owner: str, names: Iterable[str], arrays: Iterable[np.ndarray], rng: np.ndarray,
                  state: dict) -> None:
    """Copy ``state``'s arrays (by name) and generator words into an object's own ``arrays`` and ``rng``;
    a saved array of another shape is an error naming ``owner`` and the array."""
    for name, arr in zip(names, arrays):
        saved = np.asarray(state["arrays"][name], dtype=arr.dtype)
        if saved.shape != arr.shape:
            raise IrbanditsError(f"{owner}: state array {name} has shape {saved.shape}, expected {arr.shape}")
        arr[...] = saved
    rng[...] = np.asarray(state["rng"], dtype=np.uint64)
