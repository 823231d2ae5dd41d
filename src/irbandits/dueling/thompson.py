"""Thompson-sampling helpers shared by RCS, DTS and MergeDTS.

Several algorithms sample ``theta_ij ~ Beta(w_ij + 1, w_ji + 1)`` for every pair only to ask
whether ``theta_ij > 0.5``. That indicator is a Bernoulli variable with success probability
``q_ij = P(Beta(w_ij + 1, w_ji + 1) > 0.5) = 1 - I_0.5(w_ij + 1, w_ji + 1)``, which changes only when
the pair is played. Caching ``q`` per pair and drawing one uniform per indicator gives exactly the
same distribution of decisions as sampling the Betas, at a fraction of the cost.

Self-Sparring and DTS's second arm need the argmax of K independent Beta samples. Late in a run
most of those posteriors are far below the leader's, so :func:`beta_draw_above` decides lazily
whether an arm's sample beats the running maximum ``M``: a sub-Gaussian tail bound (Marchal &
Arbel 2017: Beta(a, b) is sub-Gaussian with variance proxy 1/(4(a + b + 1))) rejects most arms
with one uniform and no special function; the rest are decided exactly by inverse-CDF sampling
(``theta = F^-1(1 - u)``, evaluated only when it exceeds ``M``). The argmax has exactly the
distribution of the full draw.

The regularised incomplete Beta function and its inverse come from SciPy's compiled
``betaincc`` / ``betainccinv`` (Boost), called directly from compiled code. Kernels that call it cannot be cached on disk (numba refuses
function pointers in cached code), so they compile once per process.

>>> round(beta_above_half(3, 1), 4)  # P(Beta(4, 2) > 0.5)
0.8125
"""

from __future__ import annotations

import ctypes
import math

from numba import njit
from numba.extending import get_cython_function_address

from irbandits.rng import beta, uniform

_SIGNATURE = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double)
_betainc, _betaincc, _betainccinv = (
    _SIGNATURE(get_cython_function_address("scipy.special.cython_special", f"__pyx_fuse_0{name}"))
    for name in ("betainc", "betaincc", "betainccinv")
)
# exp(-60) ~ 1e-26 is far below the 2**-53 resolution of a uniform draw: no draw is needed there
_NEGLIGIBLE = 60.0
# below this exponent (tail bound above exp(-5) ~ 0.7 %) a plain draw costs less on average
_PLAIN = 5.0


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


@njit
def beta_draw_on_side(rng, a, b, p, above):
    """A Beta(a, b) sample conditioned on falling above 1/2 (``above``) or not, where
    p = P(Beta(a, b) > 1/2): the inverse upper-tail CDF of one uniform in (0, p) or (p, 1)."""
    u = uniform(rng)
    return _betainccinv(a, b, u * p if above else p + u * (1.0 - p))


@njit
def beta_draw_above(rng, a, b, M):
    """A Beta(a, b) sample if it exceeds ``M``, else -1.0; exact, and usually without sampling.

    Returns a value distributed as Beta(a, b) restricted to (M, 1] with probability
    P(Beta(a, b) > M), and -1.0 otherwise, so a scan keeping the running maximum yields exactly the
    argmax of independent Beta samples. Where the tail bound is weak a plain draw is cheaper than
    the special functions (about 3 us for ``betaincc`` against 0.1 us for a draw).
    """
    mean = a / (a + b)
    exponent = 2.0 * (a + b + 1.0) * (M - mean) ** 2
    if M < mean or exponent < _PLAIN:
        x = beta(rng, a, b)
        return x if x > M else -1.0
    if exponent > _NEGLIGIBLE:
        return -1.0
    u = uniform(rng)
    if u >= math.exp(-exponent) or u >= _betaincc(a, b, M):
        return -1.0
    return _betainccinv(a, b, u)
