"""Offline preference judging: pools from qrels, the top-k preference process, other judging
algorithms under a budget, the Case A / B simulation study, replay of real judgments, duplicates."""

from irbandits.judging.pools import grade_pools, pool_sizes
from irbandits.judging.topk import TopKProcess

__all__ = ["TopKProcess", "grade_pools", "pool_sizes"]
