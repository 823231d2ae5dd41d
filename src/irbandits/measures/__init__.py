"""Measures for preference-based evaluation, and the one function that evaluates runs with them.

A measure is named ``NAME`` or ``NAME:param=value,...``. The measures declared here read one kind
of labels each:

- ``compatibility`` (qrels: graded, preference-valued or best-item), ``pgc`` (pairwise
  judgments), ``best_rr`` (best items: a best-item qrels file, else the top grade of the qrels);
- ``ppref``, ``wpref``, ``rpref`` and ``pref_ndcg`` (preference pairs: the majority of the pairwise
  judgments, or with ``source=qrels`` the pairs of graded qrels; :mod:`irbandits.measures.preference`);
- any other name goes to ir-measures (``nDCG@10``, ``RR``, ``AP``, ``ndcg_cut_10``, ``map``, ...)
  and reads the qrels.

Topics: a measure is averaged over the topics that have its labels and that at least one of the
evaluated runs answers; a run that does not answer such a topic scores 0 on it (``trec_eval -c``).
Topics without labels are left out, as trec_eval leaves them out; ``include_unjudged=True`` scores
every topic the runs answer, those without labels as 0.

>>> import pandas as pd
>>> runs = pd.DataFrame({"run": "r", "topic": "1", "docno": ["a", "b", "c"], "rank": [1, 2, 3]})
>>> qrels = pd.DataFrame({"topic": "1", "docno": ["b", "c"], "grade": [1, 2]})
>>> evaluate(runs, ["best_rr", "RR"], qrels=qrels).value.tolist()
[0.3333333333333333, 0.5]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.measures.preference import ppref, pref_ndcg, rpref, wpref
from irbandits.measures.rbo import compatibility, fas_ranking, pgc
from irbandits.measures.standard import best_items, best_rr, standard
from irbandits.params import Param, Registry, check_params, split_name

__all__ = ["MEASURES", "Measure", "best_items", "best_rr", "compatibility", "evaluate", "fas_ranking", "mean_over_topics",
           "parse_measure", "pgc", "ppref", "pref_ndcg", "rpref", "standard", "wpref"]


@dataclass(frozen=True)
class Measure:
    """A declared measure: its name, what it means, the labels it reads, its parameter table."""

    name: str
    description: str
    labels: str  # "qrels", "judgments", "best" or "prefs" (judgments, or qrels with source=qrels)
    params: tuple[Param, ...] = ()
    compute: Callable[..., pd.DataFrame] | None = None  # (runs, labels, **params) -> run, topic, value


def _in_01(x: float) -> bool:
    return 0.0 < x < 1.0


_RBO = (Param("p", float, 0.95, "RBO persistence", _in_01, "in (0, 1)"),
        Param("depth", int, 1000, "RBO evaluation depth", lambda d: d >= 1, ">= 1"))

_K = Param("k", int, 10, "cutoff rank", lambda k: k >= 1, ">= 1")
_SOURCE = Param("source", str, "judgments", "preferences from the judgments (majority per pair) or the qrels "
                "(higher grade preferred)", lambda s: s in ("judgments", "qrels"), "judgments or qrels")
_PAIRS = (_K, Param("pairs", str, "all", "ordered pairs counted: all (one or both in the top k), explicit (both), "
                    "implicit (exactly one)", lambda s: s in ("all", "explicit", "implicit"),
                    "all, explicit or implicit"), _SOURCE)

MEASURES = Registry("measure", (
    Measure("compatibility", "RBO with the ideal ranking of the qrels, normalised", "qrels", _RBO, compatibility),
    Measure("pgc", "preference graph compatibility: RBO with the feedback-arc-set order of the judgments",
            "judgments", _RBO, pgc),
    Measure("best_rr", "reciprocal rank of the first best item (MRR as the mean)", "best", (), best_rr),
    Measure("ppref", "precision of preferences at k: correctly ordered / ordered preference pairs", "prefs",
            _PAIRS, ppref),
    Measure("wpref", "ppref with each pair weighted by 1/(log2 r + 1), r its higher rank", "prefs", _PAIRS, wpref),
    Measure("rpref", "recall of preferences at k: correctly ordered / all preference pairs", "prefs", _PAIRS, rpref),
    Measure("pref_ndcg", "nDCG@k whose gain is the share of its preference pairs a document wins", "prefs",
            (_K, _SOURCE), pref_ndcg),
    Measure("standard", "any ir-measures or trec_eval name: nDCG@10, RR, AP, ndcg_cut_10, map, ...", "qrels"),
))


@dataclass(frozen=True)
class _Parsed:
    label: str
    measure: Measure
    params: dict[str, Any]


def parse_measure(text: str) -> _Parsed:
    """Parse ``NAME``, ``NAME:param=value,...`` or an ir-measures / trec_eval measure name."""
    from irbandits.measures.standard import parse

    name, items, rest = split_name(text)
    if name in MEASURES and name != "standard":
        m = MEASURES[name]
        table = [p.name for p in m.params]
        for key, value in items:
            if value is None or key not in table:
                item = key if value is None else f"{key}={value}"
                raise IrbanditsError(f"{name}: {item!r} is not param=value with a parameter of {', '.join(table) or 'none'}")
        return _Parsed(text.strip(), m, check_params(name, m.params, dict(items)))
    found = None if rest else parse(name)
    if found and len(found) == 1:
        return _Parsed(name, MEASURES["standard"], {})
    if found:
        raise IrbanditsError(f"{text!r} names {len(found)} measures ({', '.join(map(str, found[:3]))}, ...): name one")
    own = ", ".join(n for n in MEASURES if n != "standard")
    raise IrbanditsError(f"unknown measure {text!r}: use {own}, or an ir-measures or trec_eval name "
                         "(nDCG@10, RR, AP, ndcg_cut_10, recip_rank, map, ...)")


def label_kind(parsed: _Parsed) -> str:
    """The labels a parsed measure reads: ``qrels``, ``judgments`` or ``best`` (a preference measure
    reads its ``source``)."""
    return parsed.params["source"] if parsed.measure.labels == "prefs" else parsed.measure.labels


def _label_topics(kind: str, labels: pd.DataFrame) -> set:
    if kind == "qrels":
        return set(labels.loc[labels["grade"] > 0, "topic"])
    return set(labels["topic"])


def evaluate(runs: pd.DataFrame, measures: Sequence[str], qrels: pd.DataFrame | None = None,
             judgments: pd.DataFrame | None = None, best: pd.DataFrame | None = None,
             include_unjudged: bool = False) -> pd.DataFrame:
    """Evaluate every run on every topic with every measure.

    Parameters
    ----------
    runs
        Ranked runs as :func:`irbandits.io.read_runs` returns them.
    measures
        Measure names (see the module docstring).
    qrels, judgments, best
        The labels: ``topic, docno, grade`` qrels; ``topic, left, right, winner`` judgments; best
        items as qrels (default: the top grade of ``qrels``).
    include_unjudged
        Also score the topics the runs answer but a measure's labels do not judge, as 0.

    Returns
    -------
    A new tidy table ``run, topic, measure, value``, in the order of ``measures``.
    """
    top = best if best is not None else qrels
    sources = {"qrels": qrels, "judgments": judgments, "best": None if top is None else best_items(top)}
    option = {"qrels": "qrels", "judgments": "judgments", "best": "best-item qrels (or qrels)"}
    parsed = [parse_measure(m) for m in measures]
    for p in parsed:
        if sources[label_kind(p)] is None:
            raise IrbanditsError(f"measure {p.label} needs {option[label_kind(p)]}")
    names = runs["run"].unique()
    answered = set(runs["topic"])
    frames = {}
    plain = [p.label for p in parsed if p.measure.name == "standard"]
    if plain:
        done = standard(runs, qrels, plain)
        frames.update({m: g.drop(columns="measure") for m, g in done.groupby("measure", sort=False)})
    for p in parsed:
        if p.measure.compute is not None:
            frames[p.label] = p.measure.compute(runs, sources[label_kind(p)], **p.params)
    out = []
    for p in parsed:
        labelled = answered if include_unjudged else _label_topics(label_kind(p), sources[label_kind(p)])
        topics = sorted(labelled & answered)
        grid = pd.MultiIndex.from_product([names, topics], names=["run", "topic"])
        values = frames.get(p.label, pd.DataFrame(columns=["run", "topic", "value"]))
        values = values.set_index(["run", "topic"])["value"].reindex(grid, fill_value=0.0).astype(float)
        out.append(values.reset_index().assign(measure=p.label))
    if not out:
        return pd.DataFrame(columns=["run", "topic", "measure", "value"])
    return pd.concat(out, ignore_index=True)[["run", "topic", "measure", "value"]]


def mean_over_topics(table: pd.DataFrame) -> pd.DataFrame:
    """The mean of each run and measure over its topics, as rows with ``topic == "all"``."""
    mean = table.groupby(["run", "measure"], sort=False)["value"].mean().reset_index()
    return mean.assign(topic="all")[["run", "topic", "measure", "value"]]
