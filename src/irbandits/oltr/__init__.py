"""Online learning to rank: rankers learned from clicks (DBGD, DBGD with candidate preselection, MGD,
PDGD on linear rankers; PDGD on a neural one), interactively or in a compiled simulation over
learning-to-rank data."""

from irbandits.oltr.base import LEARNERS, OnlineLearner, get_learner, list_learners, parse_learner
from irbandits.oltr.cps import CPS
from irbandits.oltr.dbgd import DBGD
from irbandits.oltr.mgd import MGD
from irbandits.oltr.neural import PDGDNeural
from irbandits.oltr.pdgd import PDGD
from irbandits.oltr.simulation import offline_ndcg, simulate_learner

__all__ = ["CPS", "DBGD", "LEARNERS", "MGD", "OnlineLearner", "PDGD", "PDGDNeural", "get_learner", "list_learners", "offline_ndcg",
           "parse_learner", "simulate_learner"]
