"""Online ranker evaluation from clicks: learning-to-rank data, click models, interleaving,
multileaving, preference matrices and the full online simulation (``../shared/spec/online.md``,
"Interleaving and clicks")."""

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.interleaving import interleave
from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.matrix import estimate_matrix
from irbandits.clicks.multidueling import MultileaveEnvironment
from irbandits.clicks.multileaving import multileave, multileave_wins

__all__ = ["ClickEnvironment", "ClickModel", "MultileaveEnvironment", "estimate_matrix", "interleave", "multileave",
           "multileave_wins", "read_ltr"]
