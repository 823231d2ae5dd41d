"""A small random number generator that compiled kernels and Python share.

Every algorithm keeps its generator state in a ``uint64[4]`` array (xoshiro256**, Blackman &
Vigna 2018) that travels with the rest of its state. The interactive objects and the compiled
simulation call the same kernels on the same array, so one seed gives one trajectory on both
paths, and saving the array saves the stream position.

Samplers: uniform doubles, bounded integers, shuffles, standard normals (polar method), Gamma
(Marsaglia & Tsang 2000), Beta (ratio of Gammas) and a Beta draw specialised for small integer
shapes.

>>> rng = new_rng(7)
>>> 0.0 <= uniform(rng) < 1.0
True
>>> a, b = new_rng(7), new_rng(7)
>>> [randint(a, 10) for _ in range(5)] == [randint(b, 10) for _ in range(5)]
True
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_U = np.uint64


def new_rng(seed: int | np.random.SeedSequence) -> np.ndarray:
    """Return a fresh generator state seeded from an integer or a ``SeedSequence``."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    state = ss.generate_state(4, np.uint64)
    if not state.any():  # the all-zero state is the one xoshiro cannot leave
        state[0] = 1
    return state


@njit(cache=True, inline="always")
def _rotl(x, k):
    return (x << _U(k)) | (x >> _U(64 - k))


@njit(cache=True)
def next_u64(s):
    """Advance the state and return 64 random bits."""
    result = _rotl(s[1] * _U(5), 7) * _U(9)
    t = s[1] << _U(17)
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@njit(cache=True)
def uniform(s):
    """A double uniform on [0, 1) with 53 random bits."""
    return float(next_u64(s) >> _U(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def randint(s, n):
    """An integer uniform on ``0 .. n-1`` (Lemire's unbiased multiply-shift for n < 2**32)."""
    bound = _U(n)
    while True:
        x = next_u64(s) >> _U(32)
        m = x * bound
        low = m & _U(0xFFFFFFFF)
        if low >= bound:
            return np.int64(m >> _U(32))
        threshold = (_U(0x100000000) - bound) % bound
        if low >= threshold:
            return np.int64(m >> _U(32))


@njit(cache=True)
def shuffle(s, x):
    """Put ``x`` in a uniformly random order, in place (Fisher-Yates from the last place down)."""
    for k in range(x.shape[0] - 1, 0, -1):
        r = randint(s, k + 1)
        x[k], x[r] = x[r], x[k]


@njit(cache=True)
def normal(s):
    """A standard normal draw (Marsaglia's polar method, one value per call)."""
    while True:
        x = 2.0 * uniform(s) - 1.0
        y = 2.0 * uniform(s) - 1.0
        r = x * x + y * y
        if 0.0 < r < 1.0:
            return x * math.sqrt(-2.0 * math.log(r) / r)


@njit(cache=True)
def gamma(s, a):
    """A Gamma(a, 1) draw, a > 0 (Marsaglia & Tsang; a < 1 by the U**(1/a) boost)."""
    if a < 1.0:
        u = uniform(s)
        while u == 0.0:
            u = uniform(s)
        return gamma(s, a + 1.0) * u ** (1.0 / a)
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = normal(s)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform(s)
        if u < 1.0 - 0.0331 * x * x * x * x:
            return d * v
        if math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v


@njit(cache=True)
def beta(s, a, b):
    """A Beta(a, b) draw; Beta(1, 1) is a plain uniform."""
    if a == 1.0 and b == 1.0:
        return uniform(s)
    x = gamma(s, a)
    y = gamma(s, b)
    return x / (x + y)


@njit(cache=True)
def beta_draw(rng, a, b):
    """A Beta(a, b) draw, exact, and faster than :func:`beta` for small integer shapes.

    By inversion when a or b is 1, as a ratio of Gamma(integer) sums of exponentials when both are
    integers with a + b <= 32 (the pooling posteriors), else :func:`beta`.
    """
    if b == 1.0:
        return uniform(rng) ** (1.0 / a)
    if a == 1.0:
        return 1.0 - (1.0 - uniform(rng)) ** (1.0 / b)
    if a == int(a) and b == int(b) and a + b <= 32.0:
        x, y = 1.0, 1.0
        for _ in range(int(a)):
            x *= 1.0 - uniform(rng)
        for _ in range(int(b)):
            y *= 1.0 - uniform(rng)
        x, y = math.log(x), math.log(y)
        return x / (x + y)
    return beta(rng, a, b)
