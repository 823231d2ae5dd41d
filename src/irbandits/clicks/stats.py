"""Statistics of an interleaving experiment: per pair, per ranker, Bradley-Terry, power analysis.

**Per pair** (:func:`pair_stats`): wins, losses and ties of ranker a against b, the win share with
ties as half ``(wins + ties / 2) / n`` (the p_ab that :mod:`irbandits.clicks.matrix` estimates),
its standard error, a two-sided sign test (``scipy.stats.binomtest`` of the wins among the
decisive comparisons against 1/2) and a bootstrap interval of the win share (multinomial redraws
of the (wins, losses, ties) counts).

**Per experiment** (:func:`leaderboard`): Bradley-Terry scores. The model: i beats j with
probability ``exp(s_i) / (exp(s_i) + exp(s_j))``. The strengths ``s`` maximise the log-likelihood
(a tie counts half a win each way) with a weak Gaussian prior ``-lambda/2 * |s|^2`` (lambda =
0.01) so that a ranker that never lost keeps a finite strength; they are centred on 0. Fitted with
scipy's L-BFGS on the analytic gradient. Intervals: the 2.5 and 97.5 percentiles over bootstrap
samples, each a multinomial redraw of the observed outcomes (every (winner, loser) or tie cell).
The experiments service and its ``/admin`` page show this leaderboard.

**Power** (:func:`impressions_needed`, :func:`detectable_effect`): for a two-sided sign test at
level ``alpha``, the impressions a pair needs so that a win share of ``1/2 + effect`` is detected
with probability ``power`` (normal approximation; with a tie rate t only ``1 - t`` of the
impressions are decisive, and among them the win rate is ``1/2 + effect / (1 - t)``), and the
smallest effect detectable with given impressions.

**A/B tests** of an absolute metric (:func:`ab_test`, :func:`ab_impressions_needed`), for
comparison: two independent samples, a two-sided z-test of the difference of their means with
unpooled variances (Welch's test for large samples), and the impressions (half to each arm) that
detect a given difference with probability ``power``.

**The comparison log** (:func:`read_comparison_log`): JSON lines, one comparison a line::

    {"rankers": ["bm25", "lm"], "teams": [0, 1, 1, 0, 1], "clicks": [1, 4]}

``rankers`` names the rankers compared (two for interleaving, more for multileaving); ``teams``
gives, for each shown result, the index in ``rankers`` of the ranker it was credited to (-1: none);
``clicks`` the 0-based positions clicked. A ranker's clicks are the clicks on its team; of every
two rankers of a line, the one with more clicks wins, equal counts are a tie. For methods that do
not credit clicks per team (teams -1), a two-ranker line may carry ``"outcome"`` (a number; > 0:
the first ranker won, < 0: the second, 0: a tie) and a line of any number of rankers ``"credit"``
(one number per ranker, the method's credit: of every two, the larger wins); it then decides the
comparison::

    {"rankers": ["bm25", "lm", "dense"], "teams": [-1, -1, -1], "clicks": [2], "credit": [0.2, 0.3, 0.5]}

Other keys
(``query``, ``docs``, ``algorithm``, ``run``) are kept for the reader and ignored here; blank
lines and lines starting with ``#`` are skipped. ``irbandits simulate --ltr ...
--log-comparisons PATH`` (with ``--multileave M``: multileaved lines) writes such a log and
``irbandits interleaving-report PATH`` reports it.

>>> W = np.array([[0, 8, 9], [2, 0, 6], [1, 4, 0]])
>>> rows = leaderboard(["x", "y", "z"], W, np.zeros((3, 3), int), samples=50)
>>> [r["name"] for r in rows], rows[0]["low"] < rows[0]["score"] < rows[0]["high"]
(['x', 'y', 'z'], True)
>>> impressions_needed(0.01)          # a 51 % win share, alpha 0.05, power 0.8, no ties
19620
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.optimize import brentq, minimize

from irbandits.errors import IrbanditsError

PRIOR = 0.01


# ----- Bradley-Terry ----------------------------------------------------------------------------
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
    """Rows ``{name, score, low, high, comparisons}``, best first: Bradley-Terry scores and their
    bootstrap intervals from ``wins[i, j]`` (i beat j) and the symmetric ``ties``."""
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
    return [dict(name=names[i], score=round(float(score[i]), 4) + 0.0, low=round(float(low[i]), 4) + 0.0,
                 high=round(float(high[i]), 4) + 0.0, comparisons=int(n[i])) for i in order]


# ----- one pair ---------------------------------------------------------------------------------
def win_share_interval(wins: int, losses: int, ties: int, samples: int = 1000, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Bootstrap percentile interval of the win share (ties as half) of one pair's counts."""
    n = wins + losses + ties
    if n == 0:
        return 0.5, 0.5
    draw = np.random.default_rng(seed).multinomial(n, np.array([wins, losses, ties]) / n, size=samples)
    share = (draw[:, 0] + 0.5 * draw[:, 2]) / n
    lo, hi = np.percentile(share, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided p-value of the sign test: wins among the decisive comparisons against 1/2."""
    return float(sps.binomtest(int(wins), int(wins + losses), 0.5).pvalue) if wins + losses else 1.0


def pair_stats(names: list[str], wins: np.ndarray, ties: np.ndarray, samples: int = 1000, seed: int = 0,
               alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """One row per compared pair a < b (in ``names`` order): comparisons, wins, losses, ties,
    win_share (ties as half), se, p_value (sign test), low / high (bootstrap 95 % interval) and
    detectable (the win-share effect these comparisons detect at ``alpha`` with ``power``; NaN
    when every comparison was a tie)."""
    wins, ties = np.asarray(wins, np.int64), np.asarray(ties, np.int64)
    rows = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            w, l, t = int(wins[a, b]), int(wins[b, a]), int(ties[a, b])
            n = w + l + t
            if not n:
                continue
            x = np.array([1.0] * w + [0.0] * l + [0.5] * t)
            low, high = win_share_interval(w, l, t, samples, seed + a * len(names) + b)
            rows.append(dict(a=names[a], b=names[b], comparisons=n, wins=w, losses=l, ties=t,
                             win_share=float(x.mean()), se=float(x.std() / np.sqrt(n)), p_value=sign_test(w, l),
                             low=low, high=high,
                             detectable=detectable_effect(n, alpha, power, t / n) if w + l else np.nan))
    return pd.DataFrame(rows, columns=["a", "b", "comparisons", "wins", "losses", "ties", "win_share", "se",
                                       "p_value", "low", "high", "detectable"])


# ----- power ------------------------------------------------------------------------------------
def _check_power(effect: float, alpha: float, power: float, tie_rate: float) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise IrbanditsError(f"alpha and power must be in (0, 1), got {alpha} and {power}")
    if not 0 <= tie_rate < 1:
        raise IrbanditsError(f"the tie rate must be in [0, 1), got {tie_rate}")
    if not 0 < effect < 0.5 * (1 - tie_rate):
        raise IrbanditsError(f"the effect (win share - 1/2) must be in (0, {0.5 * (1 - tie_rate):g}) with tie rate "
                             f"{tie_rate:g}, got {effect}")


def _decisive_needed(p: float, alpha: float, power: float) -> float:
    za, zb = sps.norm.ppf(1 - alpha / 2), sps.norm.ppf(power)
    return ((0.5 * za + zb * np.sqrt(p * (1 - p))) / (p - 0.5)) ** 2


def impressions_needed(effect: float, alpha: float = 0.05, power: float = 0.8, tie_rate: float = 0.0) -> int:
    """Impressions of one pair needed to detect a win share of ``1/2 + effect`` (ties as half) with a
    two-sided sign test at level ``alpha`` and probability ``power``; ``tie_rate``: the share of ties."""
    _check_power(effect, alpha, power, tie_rate)
    p = 0.5 + effect / (1 - tie_rate)
    return int(np.ceil(_decisive_needed(p, alpha, power) / (1 - tie_rate)))


def detectable_effect(impressions: int, alpha: float = 0.05, power: float = 0.8, tie_rate: float = 0.0) -> float:
    """The smallest win-share effect (win share - 1/2) that ``impressions`` of one pair detect (see
    :func:`impressions_needed`); 0.5 * (1 - tie_rate) when even a certain winner is not detected."""
    top = 0.5 * (1 - tie_rate)
    _check_power(top / 2, alpha, power, tie_rate)
    decisive = impressions * (1 - tie_rate)
    if decisive <= _decisive_needed(1 - 1e-12, alpha, power):
        return top
    return float(brentq(lambda e: _decisive_needed(0.5 + e / (1 - tie_rate), alpha, power) - decisive,
                        1e-12, top * (1 - 1e-12)))


# ----- A/B tests -------------------------------------------------------------------------------
def ab_test(mean_a, var_a, n_a, mean_b, var_b, n_b):
    """Two-sided p-value that two independent samples (means, variances, sizes; arrays broadcast)
    have equal means: ``z = (mean_a - mean_b) / sqrt(var_a / n_a + var_b / n_b)``. 1 where a sample
    is empty or both are constant."""
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.asarray(var_a) / n_a + np.asarray(var_b) / n_b)
        z = np.abs(np.asarray(mean_a) - np.asarray(mean_b)) / se
        p = 2 * sps.norm.sf(z)
    return np.where((np.asarray(n_a) > 0) & (np.asarray(n_b) > 0) & (se > 0), p, 1.0)


def ab_impressions_needed(effect: float, variance: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Impressions (both arms together, split evenly) for :func:`ab_test` at level ``alpha`` to detect
    a difference of means ``effect`` with probability ``power``. ``variance``: the impressions times the
    variance of the estimated difference, ``2 (var_a + var_b)`` for a metric every impression has and
    ``2 (var_a / r_a + var_b / r_b)`` for one only a share r of them has (e.g. reciprocal rank of clicks)."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise IrbanditsError(f"alpha and power must be in (0, 1), got {alpha} and {power}")
    if effect == 0 or not variance > 0:
        raise IrbanditsError(f"need a non-zero effect and a positive variance, got {effect} and {variance}")
    z = sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power)
    return int(np.ceil(z * z * variance / (effect * effect)))


# ----- the comparison log -------------------------------------------------------------------------
@dataclass
class ComparisonCounts:
    """The counts of a comparison log: ``wins[i, j]`` (i beat j), symmetric ``ties``, and per ranker
    the comparisons (lines) it took part in and the clicks on its team."""

    names: list[str]
    wins: np.ndarray
    ties: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    lines: int = 0
    index: dict = field(default_factory=dict, repr=False)

    def ranker(self, name: str) -> int:
        """The row of ``name``, added (with zero counts) when new."""
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
            K = len(self.names)
            grow = lambda a: np.pad(a, [(0, K - a.shape[0])] * a.ndim)  # noqa: E731
            self.wins, self.ties = grow(self.wins), grow(self.ties)
            self.impressions, self.clicks = grow(self.impressions), grow(self.clicks)
        return self.index[name]

    def add(self, rankers: list[str], teams, clicks, outcome: float | None = None, credit=None) -> None:
        """Count one comparison (see the module's log format)."""
        rows = [self.ranker(r) for r in rankers]
        per = np.zeros(len(rows), np.int64)
        for p in clicks:
            if teams[p] >= 0:
                per[teams[p]] += 1
        self.impressions[rows] += 1
        self.clicks[rows] += per
        self.lines += 1
        if outcome is not None:
            per = np.array([outcome, -outcome])
        if credit is not None:
            per = np.asarray(credit, np.float64)
        for x in range(len(rows)):
            for y in range(x + 1, len(rows)):
                i, j = rows[x], rows[y]
                if per[x] > per[y]:
                    self.wins[i, j] += 1
                elif per[x] < per[y]:
                    self.wins[j, i] += 1
                else:
                    self.ties[i, j] += 1
                    self.ties[j, i] += 1

    @classmethod
    def empty(cls) -> "ComparisonCounts":
        z = np.zeros((0, 0), np.int64)
        return cls([], z, z.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64))


def _log_line(where: str, rec: dict) -> tuple[list[str], list[int], list[int], float | None, list | None]:
    for key in ("rankers", "teams", "clicks"):
        if not isinstance(rec.get(key), list):
            raise IrbanditsError(f"{where}: {key!r} must be a list" + ("" if key in rec else ", and is missing"))
    rankers, teams, clicks, outcome = rec["rankers"], rec["teams"], rec["clicks"], rec.get("outcome")
    if len(rankers) < 2 or len(set(map(str, rankers))) != len(rankers):
        raise IrbanditsError(f"{where}: 'rankers' must name at least two different rankers, got {rankers}")
    if not all(isinstance(t, int) and -1 <= t < len(rankers) for t in teams):
        raise IrbanditsError(f"{where}: 'teams' must be ranker indices 0..{len(rankers) - 1} (or -1), got {teams}")
    if not all(isinstance(p, int) and 0 <= p < len(teams) for p in clicks) or len(set(clicks)) != len(clicks):
        raise IrbanditsError(f"{where}: 'clicks' must be distinct positions 0..{len(teams) - 1} of the shown list, "
                             f"got {clicks}")
    if outcome is not None and (len(rankers) != 2 or not isinstance(outcome, (int, float))):
        raise IrbanditsError(f"{where}: 'outcome' must be a number, and only on a line of two rankers")
    credit = rec.get("credit")
    if credit is not None and (not isinstance(credit, list) or len(credit) != len(rankers) or outcome is not None
                               or not all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in credit)):
        raise IrbanditsError(f"{where}: 'credit' must be one number per ranker ({len(rankers)}), and not beside "
                             f"'outcome', got {credit}")
    return [str(r) for r in rankers], teams, clicks, outcome, credit


def read_comparison_log(path: str | Path) -> ComparisonCounts:
    """Count the comparisons of a log (JSON lines, see the module; plain or ``.gz``)."""
    from irbandits.io import json_lines

    counts = ComparisonCounts.empty()
    for where, rec in json_lines(path):
        counts.add(*_log_line(where, rec))
    if not counts.lines:
        raise IrbanditsError(f"{path}: no comparisons (expected JSON lines with rankers, teams and clicks)")
    return counts


def ranker_stats(counts: ComparisonCounts, samples: int = 100, seed: int = 0) -> pd.DataFrame:
    """One row per ranker, best first: Bradley-Terry score with its interval, impressions, clicks on
    its team and clicks per impression."""
    board = pd.DataFrame(leaderboard(counts.names, counts.wins, counts.ties, samples, seed))
    k = [counts.index[n] for n in board.name]
    board["impressions"] = counts.impressions[k]
    board["clicks"] = counts.clicks[k]
    board["clicks_per_impression"] = counts.clicks[k] / np.maximum(counts.impressions[k], 1)
    return board.rename(columns={"name": "ranker", "comparisons": "pair_comparisons"})
