"""The top-k process replayed on the recorded crowd judgments of the TREC 2021 DL preference study
(thesis 5.3): how often the replayed best set agrees with the released Set I and Combined I+II."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from irbandits.io import read_judgments, read_qrels
from irbandits.judging.pools import grade_pools
from irbandits.judging.replay import recorded_pools, replay_agreement


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
