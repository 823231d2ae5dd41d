"""Automatic assessors in front of people, simulated: the hybrid rule, a simulated judge of set accuracy,
position bias and unsure rate, and the top-k process replayed on the recorded crowd judgments with that
judge answering first (issue 25).

The hybrid rule (:class:`Hybrid`, as the service's hybrid campaigns apply it): for each request the
automatic assessor answers first; an "unsure" pair goes to a person; of its sure answers a random ``audit``
share also goes to a person, whose answer is the one that counts, and the pair is scored for the automatic
assessor's accuracy (does it agree with the person?); once the upper end of the Wilson interval of that
accuracy (:data:`Z`: 99 %, on at least :data:`MIN_AUDITS` audits) falls below ``threshold``, its answers stop
counting and every later pair goes to people.

The replay (:func:`hybrid_replay`) runs :func:`irbandits.judging.replay.replay`: people answer as there, from
the recorded judgments (a pair never judged: a coin). The judge's right answer is the pair's better item by
:class:`Truth`. An audit of a never-judged pair is not scored: the person's "answer" there is the replay's
coin, which would measure the replay, not the judge. The judge and the rule, and the truth's coins, draw
from random streams of their own, so with every pair unsure the replay is exactly the all-human one of the
same seed, and a perfect judge's replay is the replay answered by :class:`Truth` (``rng`` ``[seed, 2]``).

>>> import pandas as pd
>>> j = pd.DataFrame({"topic": ["1"] * 3, "left": ["a", "a", "b"], "right": ["b", "c", "c"],
...                   "winner": ["a", "a", "b"]})
>>> proc, rule = hybrid_replay({"1": ["a", "b", "c"]}, j, SimulatedJudge(1.0), seed=0, audit=0)
>>> proc.best(), rule.humans, rule.counted
({'1': ['a']}, 0, 3)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.judging.replay import recorded_answers, replay
from irbandits.judging.topk import TopKProcess, pair_key

Z = 2.576  # the 99 % interval, as the service's assessor checks
MIN_AUDITS = 5  # audits scored before the cut-off can fire, as the service's flag rule
AUDIT, THRESHOLD = 0.1, 0.7  # the hybrid rule's defaults


def wilson(k: int, n: int, z: float = Z) -> tuple[float, float]:
    """The Wilson score interval of a rate k / n (``(0, 1)`` when n = 0).

    >>> [round(x, 3) for x in wilson(8, 10)]
    [0.401, 0.96]
    """
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _share(value: float, name: str) -> float:
    if not 0 <= value <= 1:
        raise IrbanditsError(f"{name} must be in [0, 1], got {value}")
    return float(value)


@dataclass(frozen=True)
class SimulatedJudge:
    """An automatic assessor: declines (unsure) a share ``unsure`` of the pairs; of the rest, answers the
    left (first-shown) item with probability ``bias`` regardless, else the better item with probability
    ``accuracy``. Its chance of the better item on a sure answer is ``bias / 2 + (1 - bias) * accuracy``
    when the better item is shown first half the time."""

    accuracy: float
    bias: float = 0.0
    unsure: float = 0.0

    def __post_init__(self):
        for name in ("accuracy", "bias", "unsure"):
            _share(getattr(self, name), f"the judge's {name}")

    def answer(self, left: str, right: str, better: str, rng: np.random.Generator) -> str | None:
        """The judge's winner of ``left`` / ``right`` (``better`` the right answer), or None: unsure."""
        if rng.random() < self.unsure:
            return None
        if rng.random() < self.bias:
            return left
        worse = right if better == left else left
        return better if rng.random() < self.accuracy else worse


class Hybrid:
    """The hybrid rule over one campaign's requests (module docstring). Counts: ``humans`` (people's
    judgments), ``automatic`` (pairs the automatic assessor was asked), ``counted`` (its answers that
    count), ``audited`` / ``agreed`` (scored audits, and those where it agreed with the person),
    ``cutoff`` (the request, 1-based, whose audit cut it off; None while it counts)."""

    def __init__(self, judge: SimulatedJudge, rng: np.random.Generator, audit: float = AUDIT,
                 threshold: float = THRESHOLD):
        self.judge, self.rng = judge, rng
        self.audit, self.threshold = _share(audit, "the audit share"), _share(threshold, "the threshold")
        self.requests = self.humans = self.automatic = self.counted = self.audited = self.agreed = 0
        self.cutoff: int | None = None

    def answer(self, left: str, right: str, better: str, human, scored: bool = True) -> str:
        """The winner that counts for this request; ``human()`` asks a person. ``scored``: an audit of
        this pair measures the automatic assessor."""
        self.requests += 1
        said = None
        if self.cutoff is None:
            self.automatic += 1
            said = self.judge.answer(left, right, better, self.rng)
            if said is not None and self.rng.random() >= self.audit:
                self.counted += 1
                return said
        self.humans += 1
        winner = human()
        if said is not None and scored:
            self.audited += 1
            self.agreed += said == winner
            if self.audited >= MIN_AUDITS and wilson(self.agreed, self.audited)[1] < self.threshold:
                self.cutoff = self.requests
        return winner


class Truth:
    """The better item of each pair by the recorded judgments: a judged pair's majority winner; a pair never
    judged, the item of the higher win rate (wins / judgments over all its recorded judgments in the topic);
    a tie either way, a coin, drawn once per pair and run (:meth:`better`'s ``coins``)."""

    def __init__(self, judgments: pd.DataFrame):
        self.majority: dict[tuple[str, tuple[str, str]], str | None] = {}
        for key, winners in recorded_answers(judgments).items():
            top = pd.Series(winners).value_counts()
            self.majority[key] = top.index[0] if len(top) == 1 or top.iat[0] > top.iat[1] else None
        topic = judgments.topic.astype(str)
        games = pd.concat([pd.DataFrame({"topic": topic, "item": judgments.left}),
                           pd.DataFrame({"topic": topic, "item": judgments.right})]).value_counts()
        wins = pd.DataFrame({"topic": topic, "item": judgments.winner}).value_counts()
        self.rate = (wins.reindex(games.index, fill_value=0) / games).to_dict()

    def better(self, topic: str, left: str, right: str, rng: np.random.Generator, coins: dict) -> str:
        """The better of ``left`` and ``right``; ``coins`` (pair -> winner) keeps a run's coins, drawn from ``rng``."""
        key = (topic, pair_key(left, right))
        if key in self.majority:
            winner = self.majority[key]
        else:
            a, b = (self.rate.get((topic, x), 0.0) for x in (left, right))
            winner = None if a == b else left if a > b else right
        if winner is None:
            if key not in coins:
                coins[key] = key[1][int(rng.integers(2))]
            winner = coins[key]
        return winner


def hybrid_replay(pools: dict[str, list[str]], judgments: pd.DataFrame, judge: SimulatedJudge, seed: int = 0,
                  audit: float = AUDIT, threshold: float = THRESHOLD, truth: Truth | None = None,
                  **params) -> tuple[TopKProcess, Hybrid]:
    """The replay of ``seed`` with ``judge`` in front of the people (module docstring): the finished process
    and the rule's counts. ``truth`` (:class:`Truth` of ``judgments``) may be passed to share it between runs;
    ``params`` go to :func:`~irbandits.judging.replay.replay`."""
    truth = truth or Truth(judgments)
    rule = Hybrid(judge, np.random.default_rng([seed, 1]), audit, threshold)
    coin, coins = np.random.default_rng([seed, 2]), {}

    def answer(topic, left, right, human):
        better = truth.better(topic, left, right, coin, coins)
        return rule.answer(left, right, better, human, scored=(topic, pair_key(left, right)) in truth.majority)

    return replay(pools, judgments, seed=seed, answer=answer, **params), rule
