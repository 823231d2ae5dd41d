"""Standard measures (nDCG@10, RR, AP, ...) through ir-measures, and best-item labels.

Runs go to ir-measures with ``score = -rank``, so every measure sees the documents in the order
:func:`irbandits.io.read_runs` gave them (score, then docno, as ``trec_eval`` ranks).
"""

from __future__ import annotations

import pandas as pd

from irbandits.errors import IrbanditsError


def parse(text: str):
    """The ir-measures measures named by ``text`` (``nDCG@10``, ``RR``, ``ndcg_cut_10``, ``map``, ...).

    Returns ``None`` when ir-measures knows no such measure.
    """
    import ir_measures

    found = None
    for parser in (lambda t: [ir_measures.parse_measure(t)], lambda t: list(ir_measures.parse_trec_measure(t))):
        try:
            found = parser(text)
            break
        except (NameError, ValueError, SyntaxError, TypeError):
            continue
    for m in found or ():
        try:
            m.validate_params()
        except AssertionError as exc:
            raise IrbanditsError(f"measure {text!r}: {str(exc).split(' at 0x')[0].replace('<object object', 'not given')}") from None
    return found


def standard(runs: pd.DataFrame, qrels: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """Evaluate ir-measures measures; returns ``run, topic, measure, value`` (``measure`` as named).

    >>> import pandas as pd
    >>> run = pd.DataFrame({"run": "r", "topic": "1", "docno": ["a", "b"], "rank": [1, 2]})
    >>> qrels = pd.DataFrame({"topic": "1", "docno": ["b"], "grade": [1]})
    >>> standard(run, qrels, ["RR"]).value.tolist()
    [0.5]
    """
    import ir_measures

    if not pd.api.types.is_integer_dtype(qrels["grade"]):
        raise IrbanditsError(f"{', '.join(names)}: ir-measures needs whole-number qrels grades")
    label = {parse(name)[0]: name for name in names}
    evaluator = ir_measures.evaluator(list(label), qrels.rename(
        columns={"topic": "query_id", "docno": "doc_id", "grade": "relevance"})[["query_id", "doc_id", "relevance"]])
    rows = []
    for name, run in runs.groupby("run", sort=False):
        frame = pd.DataFrame({"query_id": run["topic"], "doc_id": run["docno"], "score": -run["rank"].astype(float)})
        rows.extend((name, m.query_id, label[m.measure], m.value) for m in evaluator.iter_calc(frame))
    return pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])


def best_items(qrels: pd.DataFrame) -> pd.DataFrame:
    """The best items of each topic: those with the topic's largest positive value, as grade 1.

    A best-item file (every value 1) is returned unchanged; graded qrels give their top grade.

    >>> import pandas as pd
    >>> q = pd.DataFrame({"topic": ["1", "1", "1", "2"], "docno": list("abcd"), "grade": [3, 3, 1, 0]})
    >>> best_items(q).docno.tolist()
    ['a', 'b']
    """
    positive = qrels[qrels["grade"] > 0]
    top = positive.groupby("topic")["grade"].transform("max")
    return positive.loc[positive["grade"] == top, ["topic", "docno"]].assign(grade=1).reset_index(drop=True)


def best_rr(runs: pd.DataFrame, best: pd.DataFrame) -> pd.DataFrame:
    """Reciprocal rank of the first best item (``best`` as :func:`best_items` returns it), via ir-measures."""
    return standard(runs, best, ["RR"]).drop(columns="measure")
