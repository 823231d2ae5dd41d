"""Agreement between two measures over a set of runs: Kendall's tau, tau-ap, bootstrap intervals.

The interval resamples topics: each bootstrap sample draws the topics with replacement, averages
each measure over its own topics in the sample, and computes tau over the runs: the uncertainty
that comes from the topic set, the thing that differs between two studies of the same runs.

>>> round(tau([1, 2, 3, 4], [1, 2, 4, 3]), 3), round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), 3)
(0.667, 0.778)
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from irbandits.errors import IrbanditsError


def tau(x, y) -> float:
    """Kendall's tau-b between two score vectors (ties counted as in scipy)."""
    return float(kendalltau(x, y).statistic)


def tau_ap(x, y) -> float:
    """AP correlation of Yilmaz, Aslam & Robertson (SIGIR 2008), ``x`` as the reference ranking.

    For every run, the share of the runs ``x`` scores strictly higher that ``y`` also scores
    higher (a tie in ``y`` counts one half); tau-ap = 2 * mean share - 1 over the runs with at least
    one run above them. Without ties this is the published formula; it is not symmetric.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    above = x[None, :] > x[:, None]                  # above[i, j]: j above i in x
    agree = (y[None, :] > y[:, None]) + 0.5 * (y[None, :] == y[:, None])
    count = above.sum(axis=1)
    keep = count > 0
    if not keep.any():
        return float("nan")
    share = (above * agree).sum(axis=1)[keep] / count[keep]
    return float(2.0 * share.mean() - 1.0)


def _matrix(table: pd.DataFrame, measure: str, runs, topics) -> np.ndarray:
    part = table[table["measure"] == measure]
    if part.empty:
        raise IrbanditsError(f"no values of measure {measure!r} in the table")
    return part.pivot(index="run", columns="topic", values="value").reindex(index=runs, columns=topics).to_numpy()


def compare(table: pd.DataFrame, a: str, b: str, samples: int = 1000, level: float = 0.95, seed: int = 0,
            method: str = "BCa") -> dict:
    """Kendall's tau and tau-ap between measures ``a`` and ``b`` with a topic-bootstrap interval.

    Parameters
    ----------
    table
        Per-topic values ``run, topic, measure, value`` (:func:`irbandits.measures.evaluate`).
    a, b
        The measures; ``a`` is the reference ranking of tau-ap.
    samples, level, seed
        Bootstrap samples, interval level, seed.
    method
        ``BCa`` (bias-corrected and accelerated) or ``percentile``, as :func:`scipy.stats.bootstrap`
        computes them. Resampled topic sets hold repeated topics, which adds noise to the per-run means
        and pulls the bootstrap taus below the observed one; BCa corrects for that shift.

    Returns
    -------
    dict with ``a, b, runs, topics, tau, tau_low, tau_high, tau_ap``.
    """
    from scipy.stats import bootstrap

    runs = sorted(set(table["run"]))
    topics = sorted(set(table.loc[table["measure"].isin([a, b]), "topic"]))
    X, Y = _matrix(table, a, runs, topics), _matrix(table, b, runs, topics)

    def statistic(idx):
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return tau(np.nanmean(X[:, idx], axis=1), np.nanmean(Y[:, idx], axis=1))

    every = np.arange(len(topics))
    ci = bootstrap((every,), statistic, vectorized=False, n_resamples=samples, confidence_level=level,
                   method=method, random_state=np.random.default_rng(seed)).confidence_interval
    mean_a, mean_b = np.nanmean(X, axis=1), np.nanmean(Y, axis=1)
    return {"a": a, "b": b, "runs": len(runs), "topics": len(topics), "tau": statistic(every),
            "tau_low": float(ci.low), "tau_high": float(ci.high), "tau_ap": tau_ap(mean_a, mean_b)}
