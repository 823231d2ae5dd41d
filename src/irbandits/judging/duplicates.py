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
