"""Online dueling-bandit algorithms; importing this package registers every algorithm."""

from irbandits.dueling.base import (
    AlgorithmSpec,
    DuelingAlgorithm,
    Param,
    get_algorithm,
    list_algorithms,
    parse_spec,
)
from irbandits.dueling.rucb import RUCB

__all__ = [
    "AlgorithmSpec",
    "DuelingAlgorithm",
    "Param",
    "RUCB",
    "get_algorithm",
    "list_algorithms",
    "parse_spec",
]
