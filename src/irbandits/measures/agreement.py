"""Do cheaper qrels rank the runs as the full qrels do? Kendall's tau, tau-ap and flipped pairs.

:class:`RunScorer` scores one set of runs against many sets of qrels with ir-measures, converting the
runs once (what a pooling simulation needs: the same runs, partial qrels per method and budget).
:func:`agreement` compares two score matrices (runs x topics): tau and tau-ap of the run means
(:mod:`irbandits.measures.correlation`) and :func:`flips`, the run pairs that a paired t-test over the
topics separates under the reference qrels and whose order the other qrels reverse.

>>> full = [[4, 3, 5, 4], [2, 2, 3, 1], [1, 0, 1, 0]]      # runs x topics: A > B > C, every pair separated
>>> partial = [[1, 1, 1, 1], [2, 2, 3, 1], [1, 0, 1, 0]]   # B > A > C: one separated pair flips
>>> {k: round(v, 3) for k, v in agreement(full, partial).items()}
{'tau': 0.333, 'tau_ap': 0.0, 'flips': 1, 'pairs': 3}
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.measures.correlation import tau, tau_ap

_SEP = "\x1f"  # joins a qrels set's number and a topic into one ir-measures query id


def separated(full: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """``bool[runs, runs]``: the pairs whose per-topic scores (rows of ``full``, runs x topics) a two-sided
    paired t-test separates at level ``alpha`` (a pair that never differs is not separated)."""
    from scipy.stats import ttest_rel

    full = np.asarray(full, float)
    i, j = np.triu_indices(len(full), 1)
    diff = full[i] - full[j]
    out = np.zeros((len(full), len(full)), bool)
    constant = np.all(diff == diff[:, :1], axis=1)  # the same difference on every topic: no variance
    out[i[constant], j[constant]] = diff[constant, 0] != 0
    test = ~constant
    if test.any():
        out[i[test], j[test]] = ttest_rel(full[i[test]], full[j[test]], axis=1).pvalue < alpha
    return out | out.T


def flips(full: np.ndarray, partial: np.ndarray, alpha: float = 0.05) -> tuple[int, int]:
    """``(flipped, pairs)``: of the ``pairs`` run pairs :func:`separated` at ``alpha`` under ``full``, those
    whose mean scores ``partial`` orders the other way round (a tie under ``partial`` is no flip).

    >>> flips([[1, 2, 3], [0, 1, 2]], [[0, 1, 1], [1, 1, 2]])
    (1, 1)
    """
    full, partial = np.asarray(full, float), np.asarray(partial, float)
    sep = np.triu(separated(full, alpha), 1)
    a, b = full.mean(axis=1), partial.mean(axis=1)
    reversed_ = np.sign(a[:, None] - a[None, :]) * np.sign(b[:, None] - b[None, :]) < 0
    return int((sep & reversed_).sum()), int(sep.sum())


def agreement(full: np.ndarray, partial: np.ndarray, alpha: float = 0.05) -> dict:
    """Kendall's tau and tau-ap (``full`` the reference) of the run means, and the :func:`flips` at ``alpha``,
    of two score matrices (runs x topics)."""
    full, partial = np.asarray(full, float), np.asarray(partial, float)
    if full.shape != partial.shape or full.ndim != 2:
        raise IrbanditsError(f"score matrices of runs x topics must match, got {full.shape} and {partial.shape}")
    a, b = full.mean(axis=1), partial.mean(axis=1)
    flipped, pairs = flips(full, partial, alpha)
    return {"tau": tau(a, b), "tau_ap": tau_ap(a, b), "flips": flipped, "pairs": pairs}


class RunScorer:
    """Score fixed runs with ir-measures against many qrels; the runs are converted once.

    ``runs`` as :func:`irbandits.io.read_runs` gives them (ranked; only each run's top documents to the
    deepest cutoff of ``measures`` are needed, all of them for condensed lists); ``topics`` the topics
    scored (a run that does not answer one, or qrels that judge nothing on it, score 0 as
    ``trec_eval -c`` does).

    >>> runs = pd.DataFrame(dict(run=["x", "x", "y", "y"], topic="1", docno=["a", "b", "b", "a"], rank=[1, 2, 1, 2]))
    >>> scorer = RunScorer(runs, ["P@1"], ["1"])
    >>> scorer.score([{"1": {"a": 1}}, {"1": {"b": 1}}])[:, 0, :, 0].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    def __init__(self, runs: pd.DataFrame, measures: list[str], topics: list[str]):
        from irbandits.measures.standard import parse

        self.measures = list(measures)
        parsed = [parse(m) for m in self.measures]
        bad = [m for m, p in zip(self.measures, parsed) if not p or len(p) != 1]
        if bad:
            raise IrbanditsError(f"--rank-runs {bad[0]!r}: not one measure ir-measures knows (nDCG@10, P@10, AP, "
                                 "ndcg_cut_10, map, bpref, ...)")
        self._parsed = [p[0] for p in parsed]
        self.topics = [str(t) for t in topics]
        self.names = sorted(runs["run"].unique())
        self._runs: dict[str, dict[str, dict[str, float]]] = {name: {} for name in self.names}
        runs = runs[runs["topic"].isin(self.topics)].sort_values(["run", "topic"], kind="stable")
        name, topic = runs["run"].to_numpy(), runs["topic"].to_numpy()
        starts = np.flatnonzero((name[1:] != name[:-1]) | (topic[1:] != topic[:-1])) + 1
        docnos, scores = runs["docno"].tolist(), (-runs["rank"].to_numpy(float)).tolist()
        for a, b in zip([0, *starts], [*starts, len(runs)]):
            if b > a:
                self._runs[name[a]][topic[a]] = dict(zip(docnos[a:b], scores[a:b]))

    @staticmethod
    def depth(measures: list[str]) -> int | None:
        """The ranks the measures read: the largest cutoff (``nDCG@10``: 10), None for a measure without one."""
        from irbandits.measures.standard import parse

        cutoffs = [m.params.get("cutoff") for text in measures for m in (parse(text) or [None]) if m is not None]
        return None if not cutoffs or None in cutoffs else int(max(cutoffs))

    def score(self, qrels: list[dict[str, dict[str, int]]], condensed: bool = False) -> np.ndarray:
        """Scores ``float[len(qrels), measures, runs, topics]``; each qrels set maps topic -> docno -> grade,
        all scored in one ir-measures call per run. ``condensed``: each run keeps only the documents the
        qrels judge, ranks closed up (Sakai, SIGIR 2007), so an unjudged document is skipped, not counted
        non-relevant."""
        import ir_measures

        keyed: dict[str, dict] = {}  # one query a distinct (topic, judgments): repetitions often agree
        slots: list[tuple[int, int, str]] = []  # (qrels set, topic column, query)
        seen: dict[tuple, str] = {}
        column = {t: i for i, t in enumerate(self.topics)}
        for k, q in enumerate(qrels):
            for topic, docs in q.items():
                if docs and topic in column:
                    key = seen.setdefault((topic, frozenset(docs.items())), f"{len(seen)}{_SEP}{topic}")
                    keyed[key] = docs
                    slots.append((k, column[topic], key))
        out = np.zeros((len(qrels), len(self._parsed), len(self.names), len(self.topics)))
        if not keyed:
            return out
        evaluator = ir_measures.evaluator(self._parsed, keyed)
        index = {id(m): i for i, m in enumerate(self._parsed)}  # ir-measures yields the objects given, slow to hash
        values = np.zeros((len(self._parsed), len(self.names), len(keyed)))
        query_index = {key: i for i, key in enumerate(keyed)}
        for r, name in enumerate(self.names):
            run = self._runs[name]
            query = {}
            for key, docs in keyed.items():
                topic = key.split(_SEP, 1)[1]
                if topic in run:
                    query[key] = ({d: s for d, s in run[topic].items() if d in docs} if condensed else run[topic])
            for m in evaluator.iter_calc({k: v for k, v in query.items() if v}):
                values[index[id(m.measure)], r, query_index[m.query_id]] = m.value
        for k, c, key in slots:
            out[k, :, :, c] = values[:, :, query_index[key]]
        return out
