"""Replay the top-k process on real judgments: answers drawn from recorded crowd judgments.

Clarke et al.'s ``sim.py`` and the thesis (seed 000) spec: whenever the process asks for a pair
that has recorded judgments, answer with one of them drawn at random (with replacement); a pair
never judged gets a coin flip. Agreement with a released best set is counted per topic as
"shares at least one best item" (the thesis's comparison of Set I, Set II and Combined, section
5.3) and as "the same set".

>>> import pandas as pd
>>> j = pd.DataFrame({"topic": ["1"] * 3, "left": ["a", "a", "b"], "right": ["b", "c", "c"],
...                   "winner": ["a", "a", "b"]})
>>> replay({"1": ["a", "b", "c"]}, j, seed=0).best()
{'1': ['a']}
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from irbandits.judging.topk import TopKProcess, pair_key


def recorded_pools(judgments: pd.DataFrame) -> dict[str, list[str]]:
    """Per topic, every item named in the judgments (for the released data: the study's own pools)."""
    pools = {}
    for topic, g in judgments.groupby("topic", sort=False):
        pools[str(topic)] = sorted(set(g.left) | set(g.right))
    return pools


def recorded_answers(judgments: pd.DataFrame) -> dict[tuple[str, tuple[str, str]], list[str]]:
    """``(topic, pair_key(left, right))`` -> the recorded winners of that pair, in file order."""
    recorded: dict[tuple[str, tuple[str, str]], list[str]] = {}
    for row in judgments.itertuples(index=False):
        recorded.setdefault((str(row.topic), pair_key(row.left, row.right)), []).append(row.winner)
    return recorded


def replay(pools: dict[str, list[str]], judgments: pd.DataFrame, seed: int = 0, stop_settled: bool = False,
           answer=None, **params) -> TopKProcess:
    """Run the process on ``pools`` to the end, answering from ``judgments`` (``topic left right winner``).

    With ``stop_settled`` a topic gets no more answers once it is settled
    (:meth:`~irbandits.judging.topk.TopKProcess.settled`, checked after every answer); its best item is
    then :meth:`~irbandits.judging.topk.TopKProcess.leader` (see :func:`best_items`).
    ``answer(topic, left, right, human)``, when given, answers each request instead of a person; ``human()``
    is the recorded answer drawn as above (a draw of the replay's random stream each call), for it to use
    or not (:mod:`irbandits.judging.hybrid`).
    """
    recorded = recorded_answers(judgments)
    rng = np.random.default_rng(seed)
    proc = TopKProcess(pools, seed=seed, **params)
    stopped: set[str] = set()
    while requests := [r for r in proc.requests() if r[0] not in stopped]:
        for topic, left, right in requests:
            if topic in stopped:
                continue
            options = recorded.get((topic, pair_key(left, right))) or [left, right]

            def human(options=options) -> str:
                return options[rng.integers(len(options))]

            proc.add(topic, left, right, human() if answer is None else answer(topic, left, right, human))
            if stop_settled and proc.settled(topic) and proc.topics[topic].kind != "done":
                stopped.add(topic)
    return proc


def best_items(proc: TopKProcess, finals=None) -> dict[str, list[str]]:
    """Best sets of finished topics, and the decided best item of settled, unfinished ones."""
    best = proc.best(finals)
    for topic, t in proc.topics.items():
        if topic not in best and proc.settled(topic):
            best[topic] = [proc.leader(topic)]
    return best


def settled_saving(pools, judgments: pd.DataFrame, released: pd.DataFrame, runs: int = 100, seed: int = 0,
                   extra: int = 1) -> pd.DataFrame:
    """Replays with and without stopping settled topics (the same seeds): mean judgments and agreement
    of the best items with ``released`` (a Combined set: all final phases scored), per mode."""
    seeds = np.random.SeedSequence(seed).generate_state(runs)
    rows = []
    for r, s in enumerate(seeds):
        for stop in (False, True):
            proc = replay(pools, judgments, seed=int(s), stop_settled=stop, extra=extra)
            rows.append(dict(run=r, stop_settled=stop, judgments=sum(len(t.log) for t in proc.topics.values()),
                             **agreement(best_items(proc), released)))
    df = pd.DataFrame(rows)
    return df.groupby("stop_settled").agg(runs=("run", "size"), judgments=("judgments", "mean"),
                                          judgments_sd=("judgments", "std"), share=("share", "mean"),
                                          same=("same", "mean")).reset_index()


def agreement(found: dict[str, list[str]], released: pd.DataFrame) -> dict[str, float]:
    """Topics of ``released`` (qrels table; its items are the best set) that ``found`` shares at
    least one best item with, and that it matches exactly, as fractions of the released topics."""
    ref = {str(t): set(g.docno) for t, g in released.groupby("topic")}
    share = sum(bool(set(found.get(t, ())) & s) for t, s in ref.items())
    same = sum(set(found.get(t, ())) == s for t, s in ref.items())
    return dict(topics=len(ref), share=share / len(ref), same=same / len(ref))


def replay_agreement(pools, judgments: pd.DataFrame, released: dict[str, pd.DataFrame], runs: int = 100,
                     seed: int = 0) -> pd.DataFrame:
    """Mean agreement over ``runs`` replays (one extra finalization phase each) with each released set.

    ``released`` maps a label to a qrels table (``{"Set I": df, ...}``); a label starting with
    ``"Combined"`` is compared with the best sets scored on both final phases, any other label with
    the first final phase's.
    """
    seeds = np.random.SeedSequence(seed).generate_state(runs)
    rows = []
    for r, s in enumerate(seeds):
        proc = replay(pools, judgments, seed=int(s), extra=1)
        for label, qrels in released.items():
            found = proc.best(None if label.startswith("Combined") else [1])
            rows.append(dict(run=r, released=label, **agreement(found, qrels)))
    df = pd.DataFrame(rows)
    return df.groupby("released", sort=False).agg(topics=("topics", "first"), share=("share", "mean"),
                                                  share_sd=("share", "std"), same=("same", "mean")).reset_index()
