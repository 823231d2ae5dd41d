"""A Bradley-Terry leaderboard with bootstrap intervals, from a matrix of wins and ties.

The model: i beats j with probability ``exp(s_i) / (exp(s_i) + exp(s_j))``. The strengths ``s`` are
the maximum of the log-likelihood (a tie counts half a win each way) with a weak Gaussian prior
``-lambda/2 * |s|^2`` (lambda = 0.01) so that a system that never lost keeps a finite strength; they
are centred on 0. Fitted with scipy's L-BFGS on the analytic gradient: our own twenty lines rather
than the ``choix`` package, because scipy is already a dependency and the regularisation and the
bootstrap stay in view. Intervals: the 2.5 and 97.5 percentiles over bootstrap samples, each a
multinomial redraw of the observed outcomes (every (winner, loser) or tie cell).

>>> W = np.array([[0, 8, 9], [2, 0, 6], [1, 4, 0]])
>>> rows = leaderboard(["x", "y", "z"], W, np.zeros((3, 3), int), samples=50)
>>> [r["name"] for r in rows], rows[0]["low"] < rows[0]["score"] < rows[0]["high"]
(['x', 'y', 'z'], True)
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

PRIOR = 0.01


def bradley_terry(wins: np.ndarray) -> np.ndarray:
    """Centred log-strengths maximising the (weakly regularised) likelihood of ``wins[i, j]`` (may be
    fractional: a tie is half a win each way)."""
    wins = np.asarray(wins, np.float64)
    n = wins + wins.T

    def loss(s):
        diff = s[:, None] - s[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))                       # P(i beats j)
        nll = -(wins * np.log(np.clip(p, 1e-300, None))).sum() + 0.5 * PRIOR * s @ s
        grad = -(wins - n * p).sum(axis=1) + PRIOR * s
        return nll, grad

    s = minimize(loss, np.zeros(len(wins)), jac=True, method="L-BFGS-B").x
    return s - s.mean()


def leaderboard(names: list[str], wins: np.ndarray, ties: np.ndarray, samples: int = 100,
                seed: int = 0) -> list[dict]:
    """Rows ``{name, score, low, high, comparisons}``, best first; ``ties`` is symmetric."""
    K = len(names)
    wins, ties = np.asarray(wins, np.int64), np.asarray(ties, np.int64)
    score = bradley_terry(wins + 0.5 * ties)
    upper = np.triu(ties, 1)
    cells = np.concatenate([wins.ravel(), upper.ravel()])
    total = int(cells.sum())
    if total:
        rng = np.random.default_rng(seed)
        boot = []
        for _ in range(samples):
            draw = rng.multinomial(total, cells / total)
            w, t = draw[:K * K].reshape(K, K), draw[K * K:].reshape(K, K)
            boot.append(bradley_terry(w + 0.5 * (t + t.T)))
        low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    else:
        low = high = score
    n = (wins + wins.T + ties).sum(axis=1)
    order = np.argsort(-score, kind="stable")
    return [dict(name=names[i], score=round(float(score[i]), 4), low=round(float(low[i]), 4),
                 high=round(float(high[i]), 4), comparisons=int(n[i])) for i in order]
