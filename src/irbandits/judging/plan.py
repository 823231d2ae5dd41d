"""Plan a preference-judging campaign before launch: simulate the top-k process on the campaign's
pools with assessors of an assumed accuracy, many times.

The model (the thesis's Case A, seed 000 chapter 4, on every pool): each topic's items have a hidden
strict order, and an answer prefers the better item with probability ``accuracy``. With
``assessors_per_pair`` r, each request is answered by r assessors and the process takes the majority
(a tie, for even r, goes to the first answer, as the service does): the process sees the better item
win with the majority's accuracy, and every request costs r judgments. Per run: the judgments paid, the
"assessors" (the most answers any one pair received: the distinct people a campaign needs at least)
and, per topic, whether the best set holds the truly best item.

With an automatic assessor in front (``auto``, a :class:`~irbandits.judging.hybrid.SimulatedJudge` with the
same hidden order as its truth), each request goes through the hybrid rule
(:class:`~irbandits.judging.hybrid.Hybrid`): people answer only its unsure pairs, its audits and every pair
after a cut-off, and each run also counts ``automatic`` (pairs it was asked) and ``cutoff`` (whether it was
cut off). The people's answers to a request are drawn whether it reaches them or not, so an assessor unsure
of every pair leaves the all-human runs of the same seed unchanged.

>>> df = simulate({"q": 12}, accuracy=0.9, runs=3, seed=1)
>>> list(df.columns), len(df)
(['run', 'judgments', 'assessors', 'best_found'], 3)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.judging.hybrid import AUDIT, THRESHOLD, Hybrid, SimulatedJudge
from irbandits.judging.topk import TopKProcess


def majority_accuracy(accuracy: float, r: int) -> float:
    """P(the process sees the better item win) with r answers per request, a tie going to the first."""
    p = 0.0
    for k in range(r + 1):  # k answers prefer the better item
        chance = math.comb(r, k) * accuracy ** k * (1 - accuracy) ** (r - k)
        if 2 * k > r:
            p += chance
        elif 2 * k == r:
            p += chance * k / r  # the first answer is one of the k with probability k / r
    return p


def simulate(sizes: dict[str, int], accuracy: float, runs: int = 200, seed: int = 0, assessors_per_pair: int = 1,
             auto: SimulatedJudge | None = None, audit: float = AUDIT, threshold: float = THRESHOLD,
             **params) -> pd.DataFrame:
    """One row per run: ``judgments`` (paid to people), ``assessors``, ``best_found`` (share of the topics
    with more than one item whose best set holds the truly best item), and with ``auto`` (its ``audit`` share
    and cut-off ``threshold``, module docstring) ``automatic`` and ``cutoff``; ``df.attrs["topics"]``: per
    topic, the share of runs that found its best item. ``params`` go to
    :class:`~irbandits.judging.topk.TopKProcess` (``n``, ``m``, ``extra``, ``keep``)."""
    if not 0.5 <= accuracy <= 1:
        raise IrbanditsError(f"the assessor accuracy must be in [0.5, 1], got {accuracy}")
    if assessors_per_pair < 1:
        raise IrbanditsError(f"assessors per pair must be at least 1, got {assessors_per_pair}")
    p = majority_accuracy(accuracy, assessors_per_pair)
    judged = [t for t, k in sizes.items() if k > 1]
    rows, topics = [], []
    for run, s in enumerate(np.random.SeedSequence(seed).generate_state(runs)):
        rng = np.random.default_rng(s)
        rank = {t: rng.permutation(k) for t, k in sizes.items()}  # item i's place in the hidden order
        proc = TopKProcess({t: [str(i) for i in range(k)] for t, k in sizes.items()}, seed=int(s), **params)
        rule = auto and Hybrid(auto, np.random.default_rng([s, 1]), audit, threshold)
        while requests := proc.requests():
            draws = rng.random(len(requests))
            for (topic, left, right), u in zip(requests, draws):
                better, worse = sorted((left, right), key=lambda x: rank[topic][int(x)])
                human = better if u < p else worse
                proc.add(topic, left, right, rule.answer(left, right, better, lambda: human) if rule else human)
        best = proc.best()
        found = [str(int(np.argmin(rank[t]))) in best[t] for t in judged]
        topics.append(found)
        asked = rule.humans if rule else sum(len(proc.topics[t].log) for t in proc.topics)
        rows.append(dict(run=run, judgments=asked * assessors_per_pair,
                         assessors=max((max(proc.pair_counts(t).values()) for t in judged), default=0)
                         * assessors_per_pair,
                         best_found=float(np.mean(found)) if found else 1.0)
                    | (dict(automatic=rule.automatic, cutoff=rule.cutoff is not None) if rule else {}))
    df = pd.DataFrame(rows)
    df.attrs["topics"] = dict(zip(judged, np.mean(topics, axis=0).round(4).tolist())) if judged else {}
    return df


def summary(df: pd.DataFrame, cost_per_judgment: float | None = None, cost_per_pair: float | None = None) -> dict:
    """``{"judgments": {"mean", "p5", "p95", "min", "max"}, "best_found": {"mean", "topics"},
    "assessors": {"mean", "p95", "max"}, "runs"}``; for runs with an automatic assessor also
    ``"automatic"`` (its pairs, the judgments' keys) and ``"cutoff"`` (share of the runs that cut it off);
    when priced, ``"cost"`` with the judgments' keys: people's judgments at ``cost_per_judgment`` plus the
    automatic assessor's pairs at ``cost_per_pair``."""
    a = df.assessors
    out = dict(runs=len(df), judgments=_spread(df.judgments, 1),
               best_found=dict(mean=round(float(df.best_found.mean()), 4), topics=df.attrs.get("topics", {})),
               assessors=dict(mean=round(float(a.mean()), 2), p95=float(a.quantile(0.95)), max=int(a.max())))
    if "automatic" in df:
        out |= dict(automatic=_spread(df.automatic, 1), cutoff=round(float(df.cutoff.mean()), 4))
    if cost_per_judgment is not None or cost_per_pair is not None:
        cost = df.judgments * (cost_per_judgment or 0) + df.get("automatic", 0) * (cost_per_pair or 0)
        out["cost"] = {k: round(float(v), 2) for k, v in _spread(cost, 2).items()}
    return out


def _spread(x: pd.Series, digits: int) -> dict:
    """Mean (rounded to ``digits``), 5th and 95th percentiles, min and max of ``x``."""
    return dict(mean=round(float(x.mean()), digits), p5=float(x.quantile(0.05)), p95=float(x.quantile(0.95)),
                min=x.min().item(), max=x.max().item())
