"""Synthetic preference matrices from the papers, and utility-model generators.

>>> cycle().condorcet_winner, cycle().K
(0, 20)
>>> P = bradley_terry([3.0, 1.0]); float(P.p[0, 1])
0.75
"""

from __future__ import annotations

import numpy as np

from irbandits.problems import PreferenceMatrix, register_problem


def _round_table(K: int, winner_margin: float, cycle_p: float, name: str) -> PreferenceMatrix:
    """Arm 0 beats every arm with ``winner_margin``; arms 1..K-1 sit at a round table and each
    beats the (K-2)//2 arms to its left with ``cycle_p`` (MergeDTS paper, Section 5.2)."""
    n = K - 1
    P = np.full((K, K), 0.5)
    P[0, 1:] = winner_margin
    P[1:, 0] = 1 - winner_margin
    for a in range(n):
        for step in range(1, n // 2 + 1):
            b = (a + step) % n
            P[1 + a, 1 + b] = cycle_p
            P[1 + b, 1 + a] = 1 - cycle_p
    return PreferenceMatrix(P, name=name)


@register_problem("cycle", "MergeDTS paper's Cycle: K=20, arm 0 beats all by 0.51, the rest a 1.0 round table")
def cycle() -> PreferenceMatrix:
    return _round_table(20, 0.51, 1.0, "cycle")


@register_problem("cycle2", "MergeDTS paper's Cycle2: K=20, arm 0 beats all by 0.6, the rest a 0.51 round table")
def cycle2() -> PreferenceMatrix:
    return _round_table(20, 0.6, 0.51, "cycle2")


@register_problem("thesis-4arm", "thesis 2.1.2 example: a thin Condorcet winner over a 3-cycle; arm 1 is the Borda winner")
def thesis_4arm() -> PreferenceMatrix:
    P = [[0.5, 0.51, 0.51, 0.51], [0.49, 0.5, 1.0, 0.4], [0.49, 0.0, 0.5, 0.75], [0.49, 0.6, 0.25, 0.5]]
    return PreferenceMatrix(P, name="thesis-4arm")


@register_problem("case-a", "judging study Case A: 100 items in a total order, 0.75 / 0.25")
def case_a(K: int = 100) -> PreferenceMatrix:
    i, j = np.indices((K, K))
    P = np.where(i < j, 0.75, np.where(i > j, 0.25, 0.5))
    return PreferenceMatrix(P, name="case-a")


@register_problem("case-b", "judging study Case B: items 0 and 1 tie and beat the rest by 0.75; all else 0.5")
def case_b(K: int = 100) -> PreferenceMatrix:
    P = np.full((K, K), 0.5)
    P[:2, 2:] = 0.75
    P[2:, :2] = 0.25
    return PreferenceMatrix(P, name="case-b")


@register_problem("copeland-500", "thesis ch. 7: 500 arms, three cyclic Copeland winners of score 498, no Condorcet winner")
def copeland_500(K: int = 500, margin: float = 0.6) -> PreferenceMatrix:
    """Arms 0 -> 1 -> 2 -> 0 form a cycle and beat every other arm; arms 3..K-1 are a total order,
    so their Copeland scores run from K-4 down to 0. Every decided pair is won with ``margin``."""
    i, j = np.indices((K, K))
    P = np.where(i < j, margin, np.where(i > j, 1 - margin, 0.5))
    P[2, 0], P[0, 2] = margin, 1 - margin
    return PreferenceMatrix(P, name="copeland-500")


def bradley_terry(utilities, name: str = "bradley-terry") -> PreferenceMatrix:
    """p_ij = u_i / (u_i + u_j) for positive utilities (the pairwise marginals of Plackett-Luce)."""
    u = np.asarray(utilities, dtype=np.float64)
    if (u <= 0).any():
        raise ValueError("Bradley-Terry utilities must be positive")
    return PreferenceMatrix(u[:, None] / (u[:, None] + u[None, :]), name=name)


def plackett_luce(utilities, name: str = "plackett-luce") -> PreferenceMatrix:
    """Pairwise preferences of a Plackett-Luce model: equal to Bradley-Terry on the same utilities."""
    return bradley_terry(utilities, name=name)


def linear(utilities, name: str = "linear") -> PreferenceMatrix:
    """p_ij = 0.5 + (u_i - u_j) / 2 for utilities in [0, 1]."""
    u = np.asarray(utilities, dtype=np.float64)
    if (u < 0).any() or (u > 1).any():
        raise ValueError("linear-model utilities must lie in [0, 1]")
    return PreferenceMatrix(0.5 + (u[:, None] - u[None, :]) / 2, name=name)


def random_bradley_terry(K: int, seed: int = 0, name: str | None = None) -> PreferenceMatrix:
    """Bradley-Terry with log-utilities drawn N(0, 1) from ``seed``; a unique Condorcet winner."""
    u = np.exp(np.random.default_rng(seed).normal(size=K))
    return bradley_terry(u, name=name or f"bt-{K}")


@register_problem("bt-10", "Bradley-Terry, 10 arms, log-utilities N(0,1) with seed 0")
def bt_10() -> PreferenceMatrix:
    return random_bradley_terry(10, seed=0)


@register_problem("bt-700", "Bradley-Terry, 700 arms (a Yahoo-sized synthetic problem), seed 0")
def bt_700() -> PreferenceMatrix:
    return random_bradley_terry(700, seed=0)
