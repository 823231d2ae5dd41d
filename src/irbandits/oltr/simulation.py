"""Simulated online learning to rank: a learner, queries from a training set, users from a click model.

Every impression draws a query of the training set at random, the learner ranks its documents, a
simulated user clicks (:mod:`irbandits.clicks.click_models`), and the learner updates; the loop is
compiled and calls the learner's own kernels (:mod:`irbandits.oltr.base`). Two measures (Hofmann,
Whiteson & de Rijke 2011/2013):

- offline performance: NDCG@10 of the current ranker on a test set (the mean over its queries with a
  relevant document, ties ordered at random), every ``every`` impressions;
- online performance: the discounted cumulative NDCG@10 of the lists shown,
  ``sum_t discount^t NDCG(list_t)`` (discount 0.9995; a query without a relevant document counts 0).

The learner, the users (query choice and clicks) and the offline evaluation's tie-breaking each have
their own stream derived from ``seed``, so the learner's trajectory does not depend on ``every``.

>>> from irbandits.clicks.ltr import read_ltr
>>> data = read_ltr("../shared/data/ltr/lightgbm-lambdarank-sample/rank.test")
>>> curve = simulate_learner("PDGD", data, impressions=2000, every=1000, seed=1)
>>> curve.columns.tolist(), curve.impression.tolist()
(['impression', 'offline_ndcg', 'online_ndcg'], [0, 1000, 2000])
>>> bool(curve.offline_ndcg.iloc[-1] > curve.offline_ndcg.iloc[0])
True
"""

from __future__ import annotations

import numpy as np
from numba import njit

from irbandits.clicks.click_models import ClickModel, simulate_clicks
from irbandits.clicks.ltr import LtrData
from irbandits.errors import IrbanditsError
from irbandits.oltr.base import OnlineLearner, parse_learner
from irbandits.oltr.linear import dcg, ideal_dcgs, linear_score, mean_ndcg
from irbandits.rng import new_rng, randint

DISCOUNT = 0.9995
NDCG_CUTOFF = 10


@njit
def run_impressions(rank_k, update_k, plug1, plug2, st, rng, user, data, model, steps, shown, acc):
    """``steps`` impressions of a learner (its kernels and state) on queries of ``data`` =
    (features, bounds, labels, ideal DCG@10) with clicks from ``model``; ``shown`` holds one list
    (its length is the learner's) and ``acc`` = [online performance, discount factor now, discount]
    carries over from call to call."""
    features, bounds, labels, idcg = data
    click, stop, exam, stop_rank = model
    grades = np.empty(shown.shape[0], np.int64)
    clicks = np.zeros(shown.shape[0], np.bool_)
    Q = len(bounds) - 1
    for _ in range(steps):
        q = randint(user, Q)
        lo = bounds[q]
        X = features[lo:bounds[q + 1]]
        n = rank_k(st, rng, X, shown, plug1, plug2)
        for i in range(n):
            grades[i] = labels[lo + shown[i]]
        simulate_clicks(grades, n, click, stop, exam, stop_rank, user, clicks)
        if idcg[q] > 0.0:
            acc[0] += acc[1] * dcg(grades, min(n, NDCG_CUTOFF)) / idcg[q]
        acc[1] *= acc[2]
        update_k(st, rng, X, shown, n, clicks[:n], plug1, plug2)


def _arrays(data: LtrData) -> tuple:
    return (np.ascontiguousarray(data.features, dtype=np.float64), data.bounds, data.labels,
            ideal_dcgs(data.labels, data.bounds, NDCG_CUTOFF))


def offline_ndcg(weights, data: LtrData, seed: int = 0) -> float:
    """NDCG@10 of the linear ranker ``weights`` on ``data``, averaged over the queries with a relevant
    document (ties ordered at random with ``seed``).

    >>> from irbandits.clicks.ltr import read_ltr
    >>> data = read_ltr("../shared/data/ltr/lightgbm-lambdarank-sample/rank.test")
    >>> round(offline_ndcg(np.zeros(data.n_features), data), 3) < round(offline_ndcg(data.features.mean(0), data), 3)
    True
    """
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != (data.n_features,):
        raise IrbanditsError(f"weights must be {data.n_features} numbers (one per feature of {data.source}), "
                             f"got shape {w.shape}")
    features, bounds, labels, idcg = _arrays(data)
    return float(mean_ndcg(linear_score, (w.reshape(1, -1),), features, bounds, labels, idcg, NDCG_CUTOFF,
                           new_rng(seed)))


def make_learner(learner: str | OnlineLearner, n_features: int, seed=0) -> OnlineLearner:
    """A learner from a ``NAME:k=v`` spec (seeded with ``seed``), or a copy of a learner object."""
    if isinstance(learner, OnlineLearner):
        if learner.n_features != n_features:
            raise IrbanditsError(f"{learner.name} has {learner.n_features} features, the data {n_features}")
        return type(learner).from_state(learner.state)
    cls, params = parse_learner(learner)
    return cls(n_features, seed=seed, **params)


def simulate_learner(learner: str | OnlineLearner, train: LtrData, test: LtrData | None = None,
                     click_model: str | ClickModel = "perfect", impressions: int = 10_000, every: int = 1000,
                     seed: int = 0, discount: float = DISCOUNT):
    """Run one learner for ``impressions`` impressions on ``train`` with simulated users.

    Parameters
    ----------
    learner
        A spec such as ``"DBGD"`` or ``"MGD:n=9,update=winner"`` (built with a seed derived from
        ``seed``), or a learner object, which is copied and continued (its own generator included).
    train, test
        Queries the users issue, and the set offline performance is measured on (default: ``train``).
    click_model
        ``perfect``, ``navigational``, ``informational`` (any name :meth:`ClickModel.named` knows, or a
        fitted model's ``.json``), or a :class:`ClickModel`.
    impressions, every
        Impressions in all; offline NDCG@10 after every ``every`` of them (and at the start and end).
    seed
        Seeds the learner (for a spec), the users and the offline evaluation's tie-breaking.

    Returns
    -------
    pandas.DataFrame
        ``impression``, ``offline_ndcg`` (NDCG@10 on ``test`` then) and ``online_ndcg`` (the
        discounted cumulative NDCG@10 of the lists shown up to then).
    """
    import pandas as pd

    test = train if test is None else test
    if test.n_features != train.n_features:
        raise IrbanditsError(f"{test.source} has {test.n_features} features but {train.source} has {train.n_features}")
    impressions, every = int(impressions), int(every)
    if impressions < 0 or every < 1:
        raise IrbanditsError(f"impressions must be >= 0 and every >= 1, got {impressions} and {every}")
    if not 0.0 < discount <= 1.0:
        raise IrbanditsError(f"discount must be in (0, 1], got {discount}")
    streams = np.random.SeedSequence(int(seed)).spawn(3)
    obj = make_learner(learner, train.n_features, streams[0])
    L = obj._length
    obj._prepare(int(np.diff(train.bounds).max()))
    if isinstance(click_model, ClickModel):
        model = click_model.extended(L)
    else:
        model = ClickModel.named(str(click_model), grades=train.grades, length=L)
    if train.labels.max() >= model.grades or test.labels.max() >= model.grades:
        raise IrbanditsError(f"the {model.name} click model has {model.grades} grades; {train.source} has labels "
                             f"up to {int(train.labels.max())}")
    data, tdata = _arrays(train), _arrays(test)
    user, evaluator = new_rng(streams[1]), new_rng(streams[2])
    shown, acc = np.empty(L, np.int64), np.array([0.0, 1.0, float(discount)])
    st, rng, plugs = obj._st, obj._rng, obj._plugs
    rows, done = [], 0
    while True:
        rows.append((done, float(mean_ndcg(obj._score, st, *tdata, NDCG_CUTOFF, evaluator)), float(acc[0])))
        if done >= impressions:
            break
        steps = min(every, impressions - done)
        run_impressions(obj._rank, obj._update, *plugs, st, rng, user, data, model.arrays(), steps, shown, acc)
        done += steps
    return pd.DataFrame(rows, columns=["impression", "offline_ndcg", "online_ndcg"])
