"""Published results re-computed from the shared data, one module per study, behind
``irbandits reproduce NAME``.

Every study module has a ``run_study`` function; :data:`STUDIES` names them. Modules are imported
only when a study runs.

>>> list_studies().name.tolist()
['best-item-study', 'judging-study', 'judging-replay', 'hybrid-assessors', 'pruning-survival', 'winner-notions', 'pooling-losada', 'preference-measures', 'mergedts-large-scale', 'mergedts-cycles', 'mergedts-non-condorcet', 'mergedts-sensitivity', 'rucb-vs-savage', 'rcs-vs-rucb', 'mergerucb-scaling', 'ccb-copeland', 'multileaving', 'ab-vs-interleaving', 'oltr']
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

import pandas as pd

from irbandits.params import Registry


@dataclass(frozen=True)
class Study:
    """A reproduced study: its command name, a one-line description and its module in this package."""

    name: str
    description: str
    module: str
    online: bool = False  # an online study (:mod:`irbandits.studies.online`): default and --full scales

    def load(self) -> ModuleType:
        """The study's module (imported now)."""
        return importlib.import_module(f"{__name__}.{self.module}")

    def run(self, **kwargs):
        """Run the study: the module's ``run_study(**kwargs)``."""
        return self.load().run_study(**kwargs)


STUDIES = Registry("study", [
    Study("best-item-study", "Thesis ch. 5.4: tau of nDCG@10 and best-item MRR against PGC, and the "
          "random-label baseline", "best_item_study"),
    Study("judging-study", "Thesis Figure 4.1: every judging algorithm on Case A and Case B, beside the "
          "published values", "judging_study"),
    Study("judging-replay", "Thesis 5.3: the released Set I, II, III and Combined best items recomputed from the "
          "crowd judgments, their agreement, and replays of the top-k process", "judging_replay"),
    Study("hybrid-assessors", "Beyond the seeds (issue 25): simulated automatic assessors of accuracy a and position "
          "bias b in front of people, replayed on the DL-2021 crowd judgments against the all-human campaign",
          "hybrid_assessors"),
    Study("pruning-survival", "Thesis Figure 3.1: the chance a Borda winner survives a pruning phase, the formula "
          "against the top-k process", "pruning_survival"),
    Study("winner-notions", "Thesis 7.1: how often K-ranker subsets of MSLR have a Condorcet winner, C and L_C, "
          "and how often Copeland, von Neumann, Borda and random-walk winners overlap", "winner_notions"),
    Study("pooling-losada", "Losada et al. SAC 2016: the 13 pooling methods on the 63 DL-2021 runs at depth 100 "
          "and 10, the paper's claims method by method", "pooling_losada"),
    Study("preference-measures", "Thesis 2.3: ppref, wpref, rpref and Sakai-Zeng-style measures against nDCG@10 "
          "and PGC on the 63 DL-2021 runs", "preference_measures"),
    Study("mergedts-large-scale", "MergeDTS paper 6.1-6.3: MergeDTS, mergeRUCB, DTS, Self-Sparring, RMED1, REX3 on "
          "MSLR-Navigational and MSLR-Perfect", "mergedts_large_scale", online=True),
    Study("mergedts-cycles", "MergeDTS paper 6.4: Cycle and Cycle2 with MergeDTS, mergeRUCB, DTS, Self-Sparring, "
          "RMED1, REX3", "mergedts_cycles", online=True),
    Study("mergedts-non-condorcet", "MergeDTS paper 6.5: a 32-ranker MSLR subset with two Copeland winners and no "
          "Condorcet winner, Copeland regret", "mergedts_non_condorcet", online=True),
    Study("mergedts-sensitivity", "MergeDTS paper 6.7: alpha, M and C grids on MSLR-Navigational, counting runs "
          "that lose the Condorcet winner", "mergedts_sensitivity", online=True),
    Study("rucb-vs-savage", "Thesis ch. 4: RUCB against Condorcet SAVAGE and BTM on 16, 32 and 64 NP2004 rankers",
          "rucb_vs_savage", online=True),
    Study("rcs-vs-rucb", "Thesis ch. 5: RCS against RUCB on 10-armed MSLR problems (alpha = 0.501) and the "
          "alpha = 0.1 stability test", "rcs_vs_rucb", online=True),
    Study("mergerucb-scaling", "Thesis ch. 6: mergeRUCB against RUCB, RCS, SAVAGE and BTM on K = 10-130 MSLR "
          "rankers, two click models, the (p, alpha) grid, and NP2004 clicks against the proxy", "mergerucb_scaling",
          online=True),
    Study("ccb-copeland", "Thesis ch. 7: CCB, SCB, Copeland SAVAGE, PBR, RankEl and RUCB on a 5-arm "
          "non-Condorcet, a 500-arm and a Condorcet problem", "ccb_copeland", online=True),
    Study("multileaving", "MergeDTS paper 6.6: MergeDTS with probabilistic interleaving against multileaving "
          "(UCB-Multileave, Self-Sparring) on NP2004, by online CTR@10 and NDCG@10", "multileaving", online=True),
    Study("ab-vs-interleaving", "Lecture slides: impressions an A/B test of absolute click metrics and an interleaving "
          "experiment need to find the better of two NP2004 rankers", "ab_vs_interleaving", online=True),
    Study("oltr", "Issue 27: PDGD against DBGD and MGD under three click models, MGD as its candidates grow, DBGD "
          "with candidate preselection, on NP2004 and the LightGBM sample", "oltr", online=True),
], plural="studies")


def get_study(name: str) -> Study:
    """The study called ``name``; an unknown name is an error listing the known ones."""
    return STUDIES.get(name)


def list_studies() -> pd.DataFrame:
    """One row per study: ``name``, ``description``, ``module``."""
    return pd.DataFrame([(s.name, s.description, f"{__name__}.{s.module}") for s in STUDIES.values()],
                        columns=["name", "description", "module"])
