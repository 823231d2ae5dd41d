"""The one small kernel every interleaving and multileaving method shares."""

from numba import njit


@njit(cache=True)
def position(x, n, d):
    """Index of ``d`` among the first ``n`` entries of ``x``, or -1."""
    for i in range(n):
        if x[i] == d:
            return i
    return -1
