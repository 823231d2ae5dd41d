"""The top-k process replayed on the recorded crowd judgments of the TREC 2021 DL preference study
(thesis 5.3): how often the replayed best set agrees with the released Set I and Combined I+II."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from irbandits.io import read_judgments, read_qrels
from irbandits.judging.pools import grade_pools
from irbandits.judging.replay import recorded_pools, replay_agreement
from irbandits.studies.claims import Claim
from irbandits.studies.claims import claim_rows as rows


def run_study(data: str | Path = "../shared/data/human-preferences-dl21", qrels: str | Path | None = None,
              runs: int = 100, seed: int = 0) -> tuple[pd.DataFrame, int]:
    """The agreement table of :func:`irbandits.judging.replay.replay_agreement` and the number of pools.

    Pools are the items the recorded judgments name, or built from ``qrels`` when given.
    """
    data = Path(data)
    judgments = read_judgments(data / "judgments.txt")
    pools = grade_pools(read_qrels(qrels)) if qrels else recorded_pools(judgments)
    released = {"Set I": read_qrels(data / "Set-I.qrels"),
                "Combined I+II": read_qrels(data / "Combined-I+II.qrels")}
    return replay_agreement(pools, judgments, released, runs=runs, seed=seed), len(pools)


def claim_rows(table: pd.DataFrame, pools: int, runs: int) -> list[Claim]:
    """The released sets beside their replay (rows of ``claims.csv``). The thesis states no agreement to
    compare with (the released sets are the process's own output on these judgments, with its random
    tie-breaks), so each row is "not checked" and carries the measured agreement."""
    triples = [(f"the top-k process on the recorded judgments gives the released {r.released} best sets",
                f"{r.share:.0%} of {r.topics} topics share an item, {r.same:.0%} identical (mean of {runs} replays)", None)
               for r in table.itertuples()]
    return rows("judging-replay", "Yan thesis, section 5.3", triples,
                      f"{runs} replays on {pools} pools (paper: one run of the process)")
