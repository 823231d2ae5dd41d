"""irbandits: bandit algorithms that make search evaluation cheaper and faster.

Importing any part of irbandits runs this first, which registers the synthetic problems
(:mod:`irbandits.synthetic`) beside the bundled ones of :mod:`irbandits.problems`.
"""

import irbandits.synthetic  # noqa: F401  (registers the synthetic problems)
from irbandits.dueling import get_algorithm, list_algorithms
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem, list_problems
from irbandits.simulate import simulate

__all__ = [
    "IrbanditsError",
    "PreferenceMatrix",
    "get_algorithm",
    "get_problem",
    "list_algorithms",
    "list_problems",
    "simulate",
]
__version__ = "0.1.0"
