"""Exact duplicates in judging pools: character-for-character identical items.

Thesis (seed 000) section 5.2: 460 of 1,570 pooled passages had an exact duplicate in the same
pool. :func:`find_duplicates` groups a pool's items by identical text; :func:`merge_duplicates`
keeps one representative per group (the first in pool order) so assessors never compare two
identical items; the other members get the representative's result afterwards.

>>> texts = {"a": "x", "b": "y", "c": "x"}
>>> find_duplicates({"1": ["a", "b", "c"]}, texts)
{'1': [['a', 'c']]}
>>> merge_duplicates({"1": ["a", "b", "c"]}, {"1": [["a", "c"]]})
({'1': ['a', 'b']}, {'1': {'c': 'a'}})
"""

from __future__ import annotations

from pathlib import Path

from irbandits.errors import IrbanditsError


def read_texts(path: str | Path, key: str = "docno") -> dict[str, str]:
    """Read a ``docno<TAB>text`` file; a line without a tab or a docno given twice is an error.

    ``key`` names the first column in messages (``topic`` for a ``topic<TAB>query`` file).
    """
    path = Path(path)
    texts: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                line = line.rstrip("\n").rstrip("\r")
                if not line.strip():
                    continue
                docno, tab, text = line.partition("\t")
                if not tab or not docno:
                    raise IrbanditsError(f"{path}, line {number}: expected {key}<TAB>text")
                if docno in texts:
                    raise IrbanditsError(f"{path}, line {number}: {key} {docno} is given twice")
                texts[docno] = text
    except (OSError, UnicodeDecodeError) as exc:
        raise IrbanditsError(f"{path}: cannot read ({exc})") from None
    return texts


def find_duplicates(pools: dict[str, list[str]], texts: dict[str, str]) -> dict[str, list[list[str]]]:
    """Per topic, the groups (two or more items, pool order) of items with identical text.

    Items without a text are never duplicates of anything.
    """
    found = {}
    for topic, items in pools.items():
        groups: dict[str, list[str]] = {}
        for docno in items:
            if docno in texts:
                groups.setdefault(texts[docno], []).append(docno)
        dups = [g for g in groups.values() if len(g) > 1]
        if dups:
            found[topic] = dups
    return found


def merge_duplicates(pools: dict[str, list[str]], groups: dict[str, list[list[str]]]
                     ) -> tuple[dict[str, list[str]], dict[str, dict[str, str]]]:
    """Pools with one item per duplicate group, and per topic ``{duplicate: representative}``."""
    merged, aliases = {}, {}
    for topic, items in pools.items():
        alias = {d: g[0] for g in groups.get(topic, []) for d in g[1:]}
        merged[topic] = [d for d in items if d not in alias]
        if alias:
            aliases[topic] = alias
    return merged, aliases
