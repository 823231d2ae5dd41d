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
from irbandits.io import _lines, _number, _where
from irbandits.rng import randint

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
            for u in range(need - 1, 0, -1):  # then a uniform order
                v = randint(rng, u + 1)
                out[first + u], out[first + v] = out[first + v], out[first + u]
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
        return Rankers(order, gend, start, self.labels, cutoff, names)


@dataclass
class Rankers:
    """Precomputed, tie-aware ranked lists: what the compiled comparison kernels read."""

    order: np.ndarray
    gend: np.ndarray
    start: np.ndarray
    labels: np.ndarray
    cutoff: int
    names: list[str]

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
    the file, line and problem.
    """
    path = Path(path)
    if query_file is None and Path(str(path) + ".query").is_file():
        query_file = Path(str(path) + ".query")
    labels: list[float] = []
    qids: list[str | None] = []
    rows, cols, vals = array("q"), array("q"), array("d")  # compact: MSLR has 5 * 10^8 values
    for number, fields in _lines(path):
        if fields[0].startswith("#"):
            continue
        cut = next((i for i, f in enumerate(fields) if f.startswith("#")), len(fields))
        fields = fields[:cut]
        label = _number(fields[0], path, number, 1, "the label")
        if label < 0 or label != int(label):
            raise IrbanditsError(f"{_where(path, number, 1)}: the label must be a whole number >= 0, got {fields[0]!r}")
        qid = None
        rest = fields[1:]
        if rest and rest[0].startswith("qid:"):
            qid, rest = rest[0][4:], rest[1:]
            if not qid:
                raise IrbanditsError(f"{_where(path, number, 2)}: empty qid")
        if qids and (qid is None) != (qids[-1] is None):
            raise IrbanditsError(f"{_where(path, number)}: some lines have qid: and others do not")
        for column, item in enumerate(rest, 3 if qid is not None else 2):
            index, sep, value = item.partition(":")
            if not sep or not index.isdigit() or int(index) < 1:
                raise IrbanditsError(f"{_where(path, number, column)}: expected index:value with index >= 1, got {item!r}")
            rows.append(len(labels))
            cols.append(int(index) - 1)
            vals.append(_number(value, path, number, column, f"feature {index}"))
        labels.append(label)
        qids.append(qid)
    if not labels:
        raise IrbanditsError(f"{path}: no documents")
    rows, cols, vals = (np.frombuffer(x, dtype=t) for x, t in ((rows, np.int64), (cols, np.int64), (vals, np.float64)))
    features = np.zeros((len(labels), int(cols.max(initial=-1)) + 1))
    features[rows, cols] = vals
    y = np.asarray(labels, dtype=np.int64)
    if qids[0] is not None:
        names, first = np.unique(np.asarray(qids), return_index=True)
        order = np.argsort(first, kind="stable")
        code = np.searchsorted(names, np.asarray(qids))
        rank_of = np.empty(len(names), np.int64)
        rank_of[order] = np.arange(len(names))
        perm = np.argsort(rank_of[code], kind="stable")
        features, y = features[perm], y[perm]
        counts = np.bincount(rank_of[code], minlength=len(names))
        qid_names = [str(n) for n in names[order]]
        if query_file is not None and not np.array_equal(_query_sizes(query_file, len(labels), path), counts):
            raise IrbanditsError(f"{query_file}: the query sizes disagree with the qid: groups of {path}")
    else:
        if query_file is None:
            raise IrbanditsError(f"{path}: no qid: on the lines and no query file (give --query-file or put PATH.query beside it)")
        counts = _query_sizes(query_file, len(labels), path)
        qid_names = [str(i + 1) for i in range(len(counts))]
    if y.max() > 4:
        raise IrbanditsError(f"{path}: labels must be 0-4 (or 0/1), found {y.max()}")
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return LtrData(features, y, bounds, qid_names, source=str(path))


def _query_sizes(query_file: str | Path, documents: int, path: Path) -> np.ndarray:
    """The documents-per-query counts of a LightGBM ``.query`` file, checked against the data."""
    counts = np.array([_number(f[0], query_file, n, 1, "a query size", int) for n, f in _lines(Path(query_file))])
    if (counts < 1).any():
        raise IrbanditsError(f"{query_file}: query sizes must be positive")
    if counts.sum() != documents:
        raise IrbanditsError(f"{query_file}: the query sizes add up to {counts.sum()} documents but {path} has {documents}")
    return counts
