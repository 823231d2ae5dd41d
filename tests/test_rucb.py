"""RUCB's incremental bounds against a slow reference that recomputes U every step (thesis Alg. 2)."""

from __future__ import annotations

import numpy as np
import pytest

from irbandits.dueling import RUCB
from irbandits.problems import get_problem
from irbandits.rng import new_rng, randint, uniform
from irbandits.synthetic import random_bradley_terry


def reference_select(W, t, alpha, hyp, rng):
    K = len(W)
    N = W + W.T
    with np.errstate(divide="ignore", invalid="ignore"):
        U = np.where(N > 0, W / np.maximum(N, 1) + np.sqrt(alpha * np.log(t) / np.maximum(N, 1)), 2.0)
    np.fill_diagonal(U, 0.5)
    C = [i for i in range(K) if (U[i] >= 0.5).all()]
    if hyp[0] not in C:
        hyp[0] = -1
    if not C:
        c = randint(rng, K)
    elif len(C) == 1:
        hyp[0] = c = C[0]
    elif hyp[0] >= 0:
        if uniform(rng) < 0.5:
            c = hyp[0]
        else:
            rest = [i for i in C if i != hyp[0]]
            c = rest[0] if len(rest) == 1 else rest[randint(rng, len(rest))]
    else:
        c = C[randint(rng, len(C))]
    col = U[:, c]
    ties = [j for j in range(K) if col[j] == col.max() and j != c]
    if not ties:
        return c, c
    return c, ties[0] if len(ties) == 1 else ties[randint(rng, len(ties))]


@pytest.mark.parametrize("problem", [get_problem("bt-10"), random_bradley_terry(30, seed=3)])
def test_rucb_matches_the_reference(problem):
    K, P = problem.K, problem.p
    algo = RUCB(K, seed=7)
    rng, env = algo._rng.copy(), new_rng(8)
    W, hyp = np.zeros((K, K), np.int64), [-1]
    for t in range(1, 2001):
        c, d = algo.select()
        assert (c, d) == reference_select(W, t, 0.51, hyp, rng), f"step {t}"
        won = uniform(env) < P[c, d]
        algo.update(c, d, won)
        if c != d:
            W[(c, d) if won else (d, c)] += 1
