"""Pooling: bandits and classic orderings that choose which pooled document is judged next.

Importing this package registers every method (seed 003, Losada, Parapar & Barreiro SAC 2016).
"""

from irbandits.pooling.base import MethodSpec, PoolingMethod, get_method, list_methods, method_specs, parse_method
from irbandits.pooling.pools import TopicPool, depth_pools
from irbandits.pooling.simulate import simulate_pools

# isort: off
# The order of these imports is the order the methods register in, the order they are listed and run
# by default: the classic orderings, then the bandits (seed 003's tables).
from irbandits.pooling.orders import DocID, MoffatA, MoffatB, MoffatC, Rank
from irbandits.pooling.mtf import MoveToFront
from irbandits.pooling.bandits import EpsilonGreedy, Random, UCB1Tuned
from irbandits.pooling.bayes import BLA, BLANS, MM, MMNS
# isort: on

__all__ = [
    "BLA", "BLANS", "DocID", "EpsilonGreedy", "MM", "MMNS", "MethodSpec", "MoffatA", "MoffatB", "MoffatC",
    "MoveToFront", "PoolingMethod", "Random", "Rank", "TopicPool", "UCB1Tuned", "depth_pools", "get_method",
    "list_methods", "method_specs", "parse_method", "simulate_pools",
]
