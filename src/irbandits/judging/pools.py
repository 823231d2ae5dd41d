"""Judging pools from graded qrels: top-down by grade until a minimum size, never grade 0.

Thesis (seed 000) section 5.1 and Clarke et al.'s ``candidates``: per topic, take every item of the
highest grade; while the pool has fewer than ``minimum`` items, add the whole next grade; grade 0
(and below) is never added. A topic without a positive grade gets no pool.

>>> import pandas as pd
>>> q = pd.DataFrame({"topic": ["1"] * 5, "docno": list("abcde"), "grade": [3, 2, 2, 1, 0]})
>>> grade_pools(q, minimum=2)
{'1': ['a', 'b', 'c']}
"""

from __future__ import annotations

import pandas as pd

from irbandits.errors import IrbanditsError


def grade_pools(qrels: pd.DataFrame, minimum: int = 5) -> dict[str, list[str]]:
    """Judging pool per topic from a qrels table (``topic, docno, grade``), in qrels order per grade.

    Parameters
    ----------
    qrels
        Table as returned by :func:`irbandits.io.read_qrels`.
    minimum
        Grades are added top-down until the pool has at least this many items (or none are left).
    """
    if int(minimum) < 1:
        raise IrbanditsError(f"the pool minimum must be at least 1, got {minimum}")
    pools: dict[str, list[str]] = {}
    for topic, rows in qrels[qrels.grade > 0].groupby("topic", sort=False):
        pool: list[str] = []
        for _, tier in sorted(rows.groupby("grade"), key=lambda g: -g[0]):
            if len(pool) >= minimum:
                break
            pool.extend(tier.docno)
        pools[str(topic)] = pool
    return pools


def pool_sizes(pools: dict[str, list[str]]) -> pd.DataFrame:
    """One row per topic: ``topic, size``."""
    return pd.DataFrame({"topic": list(pools), "size": [len(p) for p in pools.values()]})
