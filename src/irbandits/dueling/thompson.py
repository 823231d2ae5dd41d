"""Thompson-sampling helpers shared by RCS, DTS and MergeDTS.

Several algorithms sample ``theta_ij ~ Beta(w_ij + 1, w_ji + 1)`` for every pair only to ask
whether ``theta_ij > 0.5``. That indicator is a Bernoulli variable with success probability
``q_ij = P(Beta(w_ij + 1, w_ji + 1) > 0.5) = 1 - I_0.5(w_ij + 1, w_ji + 1)``, which changes only when
the pair is played. Caching ``q`` per pair and drawing one uniform per indicator gives exactly the
same distribution of decisions as sampling the Betas, at a fraction of the cost.

The regularised incomplete Beta function comes from SciPy's compiled ``betainc`` (Boost), called
directly from compiled code. Kernels that call it cannot be cached on disk (numba refuses
function pointers in cached code), so they compile once per process.

>>> round(beta_above_half(3, 1), 4)  # P(Beta(4, 2) > 0.5)
0.8125
"""

from __future__ import annotations

import ctypes

from numba import njit
from numba.extending import get_cython_function_address

from irbandits.rng import uniform

_betainc = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double)(
    get_cython_function_address("scipy.special.cython_special", "__pyx_fuse_0betainc")
)


@njit
def beta_above_half(wins, losses):
    """P(theta > 0.5) for theta ~ Beta(wins + 1, losses + 1)."""
    if wins == losses:
        return 0.5
    return 1.0 - _betainc(wins + 1.0, losses + 1.0, 0.5)


@njit
def refresh_pair(q, W, c, d):
    """Recompute the cached q of the pair just played (q[lo, hi]: P(the lower-numbered arm wins))."""
    lo, hi = min(c, d), max(c, d)
    q[lo, hi] = beta_above_half(W[lo, hi], W[hi, lo])


@njit(cache=True)
def indicator(q, stamp, low_won, i, j, step, rng):
    """1(theta_ij > 0.5) in the tournament of ``step``, drawn lazily and once per pair per step."""
    lo, hi = min(i, j), max(i, j)
    if stamp[lo, hi] != step:
        stamp[lo, hi] = step
        low_won[lo, hi] = uniform(rng) < q[lo, hi]
    return low_won[lo, hi] == (i < j)
