"""Learning-to-rank data as online learners to rank expect it: features normalised per query, and
queries cut to the documents a first-stage ranker retrieves.

The OLTR papers (Hofmann et al. 2013, Schuth et al. 2016, Oosterhuis & de Rijke 2018) use LETOR's
``QueryLevelNorm`` files: every feature min-max scaled to [0, 1] within each query. The NP2004 copy in
``../shared/data`` is normalised over the whole set instead (a query's BM25 spans a tenth of [0, 1]),
which leaves DBGD and MGD (top-k lists, invariant to the scale) unchanged but makes PDGD's
Plackett-Luce lists nearly uniform until its weights grow tenfold (``docs/guides/oltr.md``).

>>> import numpy as np
>>> from irbandits.clicks.ltr import LtrData
>>> d = LtrData(np.array([[1.0, 5.0], [3.0, 5.0], [0.0, 1.0]]), np.array([1, 0, 0]), np.array([0, 2, 3]), ["a", "b"])
>>> normalize_queries(d).features.tolist()
[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]
>>> top_documents(d, feature=0, k=1).labels.tolist()
[0, 0]
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.clicks.ltr import LtrData
from irbandits.errors import IrbanditsError


@njit(cache=True)
def _normalize(X, bounds, out):
    for q in range(len(bounds) - 1):
        lo, hi = bounds[q], bounds[q + 1]
        for f in range(X.shape[1]):
            a, b = np.inf, -np.inf
            for i in range(lo, hi):
                a, b = min(a, X[i, f]), max(b, X[i, f])
            span = b - a
            for i in range(lo, hi):
                out[i, f] = (X[i, f] - a) / span if span > 0 else 0.0


def normalize_queries(data: LtrData) -> LtrData:
    """A copy of ``data`` with every feature min-max scaled to [0, 1] within each query (a feature
    constant over a query becomes 0), as LETOR's ``QueryLevelNorm`` files."""
    X = np.ascontiguousarray(data.features, dtype=np.float64)
    out = np.empty_like(X)
    _normalize(X, data.bounds, out)
    return LtrData(out, data.labels, data.bounds, data.qids, data.source)


def top_documents(data: LtrData, feature: int, k: int) -> LtrData:
    """A copy of ``data`` keeping each query's ``k`` documents of highest ``feature`` (0-based column;
    ties by file order), in file order: a first-stage ranker's candidates."""
    if not 0 <= feature < data.n_features:
        raise IrbanditsError(f"feature must be a column of {data.source} (0-{data.n_features - 1}), got {feature}")
    if k < 1:
        raise IrbanditsError(f"k must be >= 1, got {k}")
    keep, bounds = [], [0]
    for q in range(data.n_queries):
        lo, hi = data.bounds[q], data.bounds[q + 1]
        idx = np.sort(lo + np.argsort(-data.features[lo:hi, feature], kind="stable")[:k])
        keep.append(idx)
        bounds.append(bounds[-1] + len(idx))
    rows = np.concatenate(keep)
    return LtrData(data.features[rows], data.labels[rows], np.array(bounds, np.int64), data.qids, data.source)
