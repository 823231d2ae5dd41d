"""Learning-to-rank data (SVMlight / LETOR) and rankers made from it.

A line is ``label [qid:Q] index:value ... [# comment]``, plain or gzipped (``.gz``). Queries come
from ``qid:`` or, for LightGBM-style files without it, from a ``.query`` file listing the number
of documents of each query in order. Every feature is a ranker (or any scoring function the caller
passes); a ranker's list for a query is its documents by descending score, ties broken at random
anew for every impression, cut at 10 (``../shared/spec/online.md``, "Interleaving and clicks").

>>> data = read_ltr("../shared/data/ltr/lightgbm-lambdarank-sample/rank.test")
>>> data.n_queries, data.n_features, int(data.labels.max())
(50, 300, 4)
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from numba import njit

from irbandits.errors import IrbanditsError
from irbandits.io import is_plain_text, line_place, parse_field, read_fields, read_file_bytes
from irbandits.rng import randint, shuffle

CUTOFF = 10


# ----- low level: tie-aware top-k lists ---------------------------------------------------------
@njit(cache=True)
def _build_lists(scores, bounds, cutoff):
    """Per ranker and query, documents by descending score, kept up to the end of the tie group
    that holds position ``cutoff``; ``gend[i]`` is the (exclusive) end of the tie group of i."""
    K, Q = scores.shape[0], len(bounds) - 1
    start = np.zeros((K, Q + 1), np.int64)
    total = 0
    for r in range(K):
        for q in range(Q):
            s = -scores[r, bounds[q]:bounds[q + 1]]
            srt = np.sort(s)
            n = min(cutoff, len(s))
            keep = n
            while keep < len(s) and n > 0 and srt[keep] == srt[n - 1]:
                keep += 1
            start[r, q] = total
            total += keep
        start[r, Q] = total
    order = np.empty(total, np.int64)
    gend = np.empty(total, np.int64)
    for r in range(K):
        for q in range(Q):
            lo = bounds[q]
            s = -scores[r, lo:bounds[q + 1]]
            idx = np.argsort(s, kind="mergesort")
            a, keep = start[r, q], start[r, q + 1] - start[r, q]
            for i in range(keep):
                order[a + i] = lo + idx[i]
            end = a + keep
            for i in range(keep - 1, -1, -1):
                if i + 1 < keep and s[idx[i]] != s[idx[i + 1]]:
                    end = a + i + 1
                gend[a + i] = end
    return order, gend, start


@njit(cache=True)
def top_k(order, gend, start, r, q, k, rng, out):
    """Write ranker ``r``'s list for query ``q`` (at most ``k`` documents) to ``out``; return its
    length. Tied documents are ordered at random (Floyd's sampling, then a shuffle)."""
    i, e = start[r, q], start[r, q + 1]
    n = 0
    while n < k and i < e:
        g = gend[i]
        m = g - i
        need = min(k - n, m)
        if m == 1:
            out[n] = order[i]
        else:
            first = n
            for j in range(m - need, m):  # Floyd: a uniform subset of size `need`
                t = randint(rng, j + 1)
                for u in range(first, n):
                    if out[u] == order[i + t]:
                        t = j
                        break
                out[n] = order[i + t]
                n += 1
            n = first
            shuffle(rng, out[first:first + need])  # then a uniform order
        n += need
        i = g
    return n


# ----- data -----------------------------------------------------------------------------------
def grades(labels: np.ndarray) -> int:
    """Number of relevance grades the click models use: 2 for binary labels, else 5 (0-4)."""
    return 2 if labels.max(initial=0) <= 1 else 5


@dataclass
class LtrData:
    """Documents of a learning-to-rank set grouped by query.

    ``features`` is float64[n_docs, n_features] (feature ``f`` of the file is column ``f - 1``),
    ``labels`` int64[n_docs], and query ``q`` holds documents ``bounds[q]:bounds[q + 1]``.
    """

    features: np.ndarray
    labels: np.ndarray
    bounds: np.ndarray
    qids: list[str]
    source: str = "ltr"

    @property
    def n_queries(self) -> int:
        return len(self.bounds) - 1

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    @property
    def grades(self) -> int:
        return grades(self.labels)

    def rankers(self, rankers: Sequence[int | Callable] | None = None, cutoff: int = CUTOFF) -> "Rankers":
        """Top-``cutoff`` lists of the given rankers: 0-based feature columns or functions mapping
        ``features`` (n_docs x n_features) to one score per document; default every feature."""
        items = list(range(self.n_features)) if rankers is None else list(rankers)
        if len(items) < 2:
            raise IrbanditsError(f"{self.source}: need at least 2 rankers, got {len(items)}")
        orders, gends, starts, total = [], [], [], 0
        for r, item in enumerate(items):  # one ranker at a time: memory stays O(documents)
            if callable(item):
                s = np.asarray(item(self.features), dtype=np.float64)
                if s.shape != (len(self.labels),):
                    raise IrbanditsError(f"ranker {r} returned shape {s.shape}, expected ({len(self.labels)},)")
            else:
                if not 0 <= int(item) < self.n_features:
                    raise IrbanditsError(f"{self.source}: feature column {item} (feature {int(item) + 1} of the file) "
                                         f"does not exist; the data has {self.n_features} features")
                s = self.features[:, int(item)]
            if np.isnan(s).any():
                raise IrbanditsError(f"ranker {r} gave a NaN score")
            order, gend, start = _build_lists(np.ascontiguousarray(s)[None, :], self.bounds, cutoff)
            orders.append(order)
            gends.append(gend + total)
            starts.append(start[0] + total)
            total += len(order)
        order, gend, start = np.concatenate(orders), np.concatenate(gends), np.stack(starts)
        names = [getattr(x, "__name__", f"ranker{r}") if callable(x) else f"feature{int(x) + 1}"
                 for r, x in enumerate(items)]
        return Rankers(order, gend, start, self.labels, cutoff, names, self.bounds)


@dataclass
class Rankers:
    """Precomputed, tie-aware ranked lists: what the compiled comparison kernels read. Query ``q``
    holds documents ``bounds[q]:bounds[q + 1]`` (as in :class:`LtrData`)."""

    order: np.ndarray
    gend: np.ndarray
    start: np.ndarray
    labels: np.ndarray
    cutoff: int
    names: list[str]
    bounds: np.ndarray

    @property
    def K(self) -> int:
        return self.start.shape[0]

    @property
    def n_queries(self) -> int:
        return self.start.shape[1] - 1

    @property
    def grades(self) -> int:
        return grades(self.labels)

    def arrays(self) -> tuple:
        return self.order, self.gend, self.start, self.labels

    def ranking(self, r: int, q: int, seed: int = 0) -> np.ndarray:
        """One impression of ranker ``r``'s list for query ``q`` (document indices)."""
        from irbandits.rng import new_rng

        out = np.empty(self.cutoff, np.int64)
        n = top_k(self.order, self.gend, self.start, r, q, self.cutoff, new_rng(seed), out)
        return out[:n]


# ----- readers --------------------------------------------------------------------------------
def read_ltr(path: str | Path, query_file: str | Path | None = None) -> LtrData:
    """Read an SVMlight / LETOR file; queries from ``qid:`` or from ``query_file`` (counts).

    Without ``qid:`` and without ``query_file``, ``PATH.query`` is used when it exists. Errors name
    the file, line and problem. A compiled reader takes plain files (UTF-8, only ASCII whitespace,
    each feature once a line); any other file, and every bad one, goes through the line-by-line
    reader, which gives the same arrays and is the one that names the mistake.
    """
    path = Path(path)
    if query_file is None and Path(str(path) + ".query").is_file():
        query_file = Path(str(path) + ".query")
    parsed = _parse_fast(path)
    features, labels, qids = _parse_lines(path) if parsed is None else parsed
    y = labels.astype(np.int64)
    if qids is not None:
        names, first = np.unique(qids, return_index=True)
        order = np.argsort(first, kind="stable")
        code = np.searchsorted(names, qids)
        rank_of = np.empty(len(names), np.int64)
        rank_of[order] = np.arange(len(names))
        perm = np.argsort(rank_of[code], kind="stable")
        if (np.diff(perm) != 1).any():  # queries not yet one block each
            features, y = features[perm], y[perm]
        counts = np.bincount(rank_of[code], minlength=len(names))
        qid_names = [str(n) for n in names[order]]
        if query_file is not None and not np.array_equal(_query_sizes(query_file, len(y), path), counts):
            raise IrbanditsError(f"{query_file}: the query sizes disagree with the qid: groups of {path}")
    else:
        if query_file is None:
            raise IrbanditsError(f"{path}: no qid: on the lines and no query file (give --query-file or put PATH.query beside it)")
        counts = _query_sizes(query_file, len(y), path)
        qid_names = [str(i + 1) for i in range(len(counts))]
    if y.max() > 4:
        raise IrbanditsError(f"{path}: labels must be 0-4 (or 0/1), found {y.max()}")
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return LtrData(features, y, bounds, qid_names, source=str(path))


def _parse_lines(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(features, labels, qids)`` of an SVMlight file, line by line: the reference reader, and the
    checks that name file, line and column. ``qids`` is one string a document, or None without qid:."""
    labels: list[float] = []
    qids: list[str | None] = []
    rows, cols, vals = array("q"), array("q"), array("d")  # compact: MSLR has 5 * 10^8 values
    for number, fields in read_fields(path):
        if fields[0].startswith("#"):
            continue
        cut = next((i for i, f in enumerate(fields) if f.startswith("#")), len(fields))
        fields = fields[:cut]
        label = parse_field(fields[0], path, number, 1, "the label")
        if label < 0 or not label.is_integer():
            raise IrbanditsError(f"{line_place(path, number, 1)}: the label must be a whole number >= 0, got {fields[0]!r}")
        qid = None
        rest = fields[1:]
        if rest and rest[0].startswith("qid:"):
            qid, rest = rest[0][4:], rest[1:]
            if not qid:
                raise IrbanditsError(f"{line_place(path, number, 2)}: empty qid")
        if qids and (qid is None) != (qids[-1] is None):
            raise IrbanditsError(f"{line_place(path, number)}: some lines have qid: and others do not")
        for column, item in enumerate(rest, 3 if qid is not None else 2):
            index, sep, value = item.partition(":")
            if not sep or not (index.isascii() and index.isdigit()) or int(index) < 1:
                raise IrbanditsError(f"{line_place(path, number, column)}: expected index:value with index >= 1, got {item!r}")
            rows.append(len(labels))
            cols.append(int(index) - 1)
            vals.append(parse_field(value, path, number, column, f"feature {index}"))
        labels.append(label)
        qids.append(qid)
    if not labels:
        raise IrbanditsError(f"{path}: no documents")
    rows, cols, vals = (np.frombuffer(x, dtype=t) for x, t in ((rows, np.int64), (cols, np.int64), (vals, np.float64)))
    features = np.zeros((len(labels), int(cols.max(initial=-1)) + 1))
    features[rows, cols] = vals
    return features, np.asarray(labels), None if qids[0] is None else np.asarray(qids)


# ----- compiled reader -------------------------------------------------------------------------
_SEPARATOR = np.zeros(256, np.bool_)  # what str.split() splits on in ASCII, but the line ends
_SEPARATOR[[9, 11, 12, 28, 29, 30, 31, 32]] = True
_SPACE = _SEPARATOR.copy()
_SPACE[[10, 13]] = True
_POWERS = np.array([float(10 ** k) for k in range(23)])  # exact doubles


@njit(cache=True)
def _decimal(buf, s, e):
    """``(ok, value)`` of the number ``buf[s:e]`` when it is ``[+-]digits[.digits][(e|E)[+-]digits]``
    with at most 15 significant digits and a power of ten within 10^+-22: then ``m * 10^k`` (or
    ``m / 10^-k``) is one correctly rounded operation on exact doubles (Clinger's fast path), the
    value ``float()`` gives. Anything else is not ok, and left to ``float()``."""
    i, negative = s, False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        negative = buf[i] == 45
        i += 1
    m, digits, power, seen, fraction = 0, 0, 0, False, False
    while i < e:
        d = np.int64(buf[i]) - 48
        if 0 <= d <= 9:
            seen = True
            if m or d:  # leading zeros do not count
                m = m * 10 + d
                digits += 1
            power -= fraction
        elif d == -2 and not fraction:  # the decimal point
            fraction = True
        else:
            break
        i += 1
    if digits > 15 or not seen:
        return False, 0.0
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        sign = 1
        if i < e and (buf[i] == 43 or buf[i] == 45):
            sign = -1 if buf[i] == 45 else 1
            i += 1
        exponent, start = 0, i
        while i < e and 48 <= buf[i] <= 57 and i - start < 6:
            exponent = exponent * 10 + buf[i] - 48
            i += 1
        if i == start:
            return False, 0.0
        power += sign * exponent
    if i != e:
        return False, 0.0
    if m == 0:
        return True, -0.0 if negative else 0.0
    if power < -22 or power > 22:
        return False, 0.0
    value = m * _POWERS[power] if power >= 0 else m / _POWERS[-power]
    return True, -value if negative else value


@njit(cache=True)
def _svmlight(buf, fill, labels, features, qid_start, qid_end):
    """One pass over an SVMlight file (bytes): ``(ok, documents, width, with_qid, hard)``. The first
    pass (``fill=False``) checks the layout and counts documents and features; the second writes
    ``labels``, ``features`` and each document's qid as byte offsets. ``hard`` lists
    ``(document, column or -1 for the label, start, end)`` of the numbers :func:`_decimal` leaves to
    ``float()``. Not ok: a line the line reader must judge (bad layout, a feature given twice), or,
    filling, a feature past the columns of ``features``, returned as ``width`` for the caller to widen."""
    n, i, doc, width, with_qid = len(buf), 0, 0, 0, -1
    last = np.full(features.shape[1], -1, np.int64)
    hard, nh = np.empty((16, 4), np.int64), 0
    failed = (False, 0, 0, 0, hard[:0])
    while i < n:
        t, qid = 0, 0
        while True:
            while i < n and _SEPARATOR[buf[i]]:
                i += 1
            if i >= n:
                break
            if buf[i] == 10 or buf[i] == 13:
                i += 1
                break
            s = i
            while i < n and not _SPACE[buf[i]]:
                i += 1
            e = i
            if buf[s] == 35:  # "#": a comment to the end of the line
                while i < n and buf[i] != 10 and buf[i] != 13:
                    i += 1
                continue
            column, vs = -1, s
            if t == 1 and e - s >= 4 and buf[s] == 113 and buf[s + 1] == 105 and buf[s + 2] == 100 and buf[s + 3] == 58:
                if e - s == 4:
                    return failed
                qid = 1
                if fill:
                    qid_start[doc], qid_end[doc] = s + 4, e
                t += 1
                continue
            if t > 0:  # index:value
                colon = s
                while colon < e and buf[colon] != 58:
                    colon += 1
                if colon == s or colon == e or colon - s > 18:
                    return failed
                index = 0
                for j in range(s, colon):
                    if not 48 <= buf[j] <= 57:
                        return failed
                    index = index * 10 + buf[j] - 48
                if index < 1:
                    return failed
                width = max(width, index)
                column, vs = index - 1, colon + 1
            if fill:
                if column >= features.shape[1]:  # wider than the first pass said (see _parse_fast)
                    return False, doc, column + 1, 0, hard[:0]
                if column >= 0:
                    if last[column] == doc:
                        return failed
                    last[column] = doc
                ok, value = _decimal(buf, vs, e)
                if not ok:
                    if nh == len(hard):
                        hard = np.concatenate((hard, np.empty_like(hard)))
                    hard[nh, 0], hard[nh, 1], hard[nh, 2], hard[nh, 3] = doc, column, vs, e
                    nh += 1
                elif column >= 0:
                    features[doc, column] = value
                else:
                    labels[doc] = value
            t += 1
        if t > 0:
            if with_qid != -1 and with_qid != qid:
                return failed
            with_qid = qid
            doc += 1
    return True, doc, width, with_qid, hard[:nh]


def _parse_fast(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """:func:`_parse_lines` compiled, for plain files (UTF-8, whitespace only ASCII, each feature once a
    line); None for any other file, or a bad one."""
    data = read_file_bytes(path)
    if data is None or not is_plain_text(data):
        return None
    buf = np.frombuffer(data, np.uint8)
    none = np.empty(0, np.int64)
    first = data.rfind(b"\n", 0, 1 << 20) + 1 or len(data)  # the width of the first MiB's lines
    ok, _, width, _, _ = _svmlight(buf[:first], False, np.empty(0), np.empty((0, 0)), none, none)
    if not ok:
        return None
    rows = data.count(b"\n") + data.count(b"\r") + 1
    while True:
        labels, features = np.zeros(rows), np.zeros((rows, width))  # zero pages: rows to spare cost nothing
        qid_start, qid_end = np.zeros(rows, np.int64), np.zeros(rows, np.int64)
        ok, documents, needed, with_qid, hard = _svmlight(buf, True, labels, features, qid_start, qid_end)
        if ok or needed <= width:
            break
        ok, _, width, _, _ = _svmlight(buf, False, np.empty(0), np.empty((0, 0)), none, none)  # wider later
        if not ok:
            return None
    if not ok or documents == 0:
        return None
    labels, features, qid_start, qid_end = labels[:documents], features[:documents], qid_start[:documents], qid_end[:documents]
    for doc, column, start, end in hard.tolist():
        try:
            value = float(data[start:end].decode())
        except ValueError:
            return None
        if column >= 0:
            features[doc, column] = value
        else:
            labels[doc] = value
    if not (np.isfinite(labels) & (labels >= 0) & (labels == np.floor(labels))).all():
        return None
    if not with_qid:
        return features, labels, None
    new = np.flatnonzero(np.concatenate([[True], _changed(buf, qid_start, qid_end)]))
    names = np.array([data[qid_start[d]:qid_end[d]].decode() for d in new])
    return features, labels, np.repeat(names, np.diff(new, append=documents))


@njit(cache=True)
def _changed(buf, start, end):
    """Whether each document's qid (bytes ``start:end``) differs from the previous document's."""
    out = np.zeros(len(start) - 1, np.bool_)
    for d in range(1, len(start)):
        a, b = start[d - 1], start[d]
        n = end[d] - b
        if end[d - 1] - a != n:
            out[d - 1] = True
            continue
        for j in range(n):
            if buf[a + j] != buf[b + j]:
                out[d - 1] = True
                break
    return out


def _query_sizes(query_file: str | Path, documents: int, path: Path) -> np.ndarray:
    """The documents-per-query counts of a LightGBM ``.query`` file, checked against the data."""
    counts = np.array([parse_field(f[0], query_file, n, 1, "a query size", int) for n, f in read_fields(Path(query_file))])
    if (counts < 1).any():
        raise IrbanditsError(f"{query_file}: query sizes must be positive")
    if counts.sum() != documents:
        raise IrbanditsError(f"{query_file}: the query sizes add up to {counts.sum()} documents but {path} has {documents}")
    return counts
