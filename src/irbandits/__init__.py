"""irbandits: bandit algorithms that make search evaluation cheaper and faster."""

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
