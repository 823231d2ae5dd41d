"""Assessor quality in judging campaigns: known-answer test pairs, the per-assessor signals, the flag
rule and campaign agreement.

Each preference assessor's stream mixes target requests with quality checks at ``test_rate`` (the
study's 3 in 13): a check is a known-answer test pair (uploaded by the organiser, or drawn from the
graded qrels: an item of a topic's top grade against one at least 2 grades lower), or, every third
check once the assessor has answered target pairs, one of their own earlier target pairs again with
the sides swapped. Checks are logged like answers (``kind`` "test" or "repeat") but never reach the
process or the exports.

Per assessor (:class:`Signals`, updated in O(1) per answer): accuracy on test pairs; consistency on
repeats (the same winner as their earlier answer to the pair); agreement with the majority of the
other assessors' answers to the same pair (counted where at least two others answered and they have a
strict majority); the share of "left" answers; the median seconds from the task's lease to its answer.

The flag rule (:func:`flag_reason`), ``threshold`` t (default 0.75, the study's): an assessor is
flagged when the data show a rate below its bar, i.e. the upper end of the 99 % Wilson interval is
below it, on at least 5 observations: test accuracy < t; consistency or agreement <
``min_agreement`` (default 0.5: agreeing with themselves, or with the others, less often than a coin;
target pairs are often near ties, on which careful people differ and waver, so a higher bar would
flag them), or when the lower
end of the interval of their more frequent side is above t (they answer one side more than t of the
time). A flagged assessor's answers are kept in the log but left out of the process and the exports
until the organiser clears the flag; a cleared assessor is trusted and not flagged again automatically.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irbandits.judging.hybrid import wilson

MIN_OBSERVATIONS = 5
@dataclass
class Signals:
    """One assessor's running counts."""

    answers: int = 0
    left: int = 0
    tests: int = 0
    correct: int = 0
    repeats: int = 0
    consistent: int = 0
    agreed: int = 0
    compared: int = 0
    seconds: list[float] = field(default_factory=list)

    def count(self, kind: str, paired: bool, left: bool, expected: bool, sign: int = 1) -> None:
        """Add (``sign`` 1) or take back (-1) one answer of ``kind``: on a pair, whether it chose the
        left item and whether it gave the expected answer (a test's known one, a repeat's earlier one)."""
        self.answers += sign
        if paired:
            self.left += sign * left
            if kind == "test":
                self.tests += sign
                self.correct += sign * expected
            elif kind == "repeat":
                self.repeats += sign
                self.consistent += sign * expected

    def as_json(self) -> dict[str, Any]:
        rate = (lambda k, n: round(k / n, 4) if n else None)
        return dict(accuracy=rate(self.correct, self.tests), tests=self.tests,
                    consistency=rate(self.consistent, self.repeats), repeats=self.repeats,
                    agreement=rate(self.agreed, self.compared), compared=self.compared,
                    left_share=rate(self.left, self.answers),
                    median_seconds=round(statistics.median(self.seconds), 1) if self.seconds else None)


def flag_reason(s: Signals, threshold: float, min_agreement: float) -> str | None:
    """Why the signals flag an assessor (see the module docstring), or None."""
    for what, k, n, bar in (("test accuracy", s.correct, s.tests, threshold),
                            ("consistency on repeated pairs", s.consistent, s.repeats, min_agreement),
                            ("agreement with the majority", s.agreed, s.compared, min_agreement)):
        if n >= MIN_OBSERVATIONS and wilson(k, n)[1] < bar:
            return f"{what} {k}/{n} is below {bar:.0%}"
    side = max(s.left, s.answers - s.left)
    if s.answers >= MIN_OBSERVATIONS and wilson(side, s.answers)[0] > threshold:
        which = "left" if s.left * 2 > s.answers else "right"
        return f"answers {which} {side}/{s.answers} times, above {threshold:.0%}"
    return None


class Votes:
    """Answers per pair from different assessors, and each assessor's agreement with the others'
    majority kept up to date incrementally (one pair's voters are recounted per answer)."""

    def __init__(self):
        self.by_pair: dict[tuple, list[tuple[int, str]]] = {}
        self.part: dict[tuple, dict[int, tuple[int, int]]] = {}  # pair -> assessor -> (agreed, compared)

    def add(self, key: tuple, assessor: int, winner: str, signals: dict[int, Signals]) -> None:
        votes = self.by_pair.setdefault(key, [])
        votes.append((assessor, winner))
        if len(votes) >= 3:
            self._recount(key, signals)

    def remove(self, key: tuple, assessor: int, winner: str, signals: dict[int, Signals]) -> None:
        """Take a retracted answer back out."""
        votes = self.by_pair[key]
        del votes[max(i for i, v in enumerate(votes) if v == (assessor, winner))]
        self._recount(key, signals)

    def _recount(self, key: tuple, signals: dict[int, Signals]) -> None:
        votes = self.by_pair[key]
        old = self.part.get(key, {})
        new: dict[int, tuple[int, int]] = {}
        for who, won in votes:
            others = Counter(w for a, w in votes if a != who)
            if sum(others.values()) >= 2:
                (top, c), *rest = others.most_common(2) + [(None, 0)]
                if c > rest[0][1]:
                    agreed, compared = new.get(who, (0, 0))
                    new[who] = (agreed + (won == top), compared + 1)
        for who in set(old) | set(new):
            a0, c0 = old.get(who, (0, 0))
            a1, c1 = new.get(who, (0, 0))
            s = signals.setdefault(who, Signals())
            s.agreed += a1 - a0
            s.compared += c1 - c0
        self.part[key] = new


def agreement(votes: Votes) -> dict[str, Any]:
    """Campaign agreement over pairs answered by two or more assessors: Krippendorff's alpha (nominal)
    and the pairwise agreement rate (answer pairs from different assessors that agree) with its 95 %
    Wilson interval (answer pairs of one pair are not independent, so the interval is a little narrow)."""
    agree = pairs = 0
    units = []
    for key, vs in votes.by_pair.items():
        per = {}
        for who, won in vs:
            per.setdefault(who, won == key[1])  # an assessor's first answer: did the pair's first item win
        values = list(per.values())
        if len(values) < 2:
            continue
        counts = Counter(values)
        units.append(counts)
        m = len(values)
        same = sum(c * (c - 1) // 2 for c in counts.values())
        agree += same
        pairs += m * (m - 1) // 2
    if not pairs:
        return dict(pairs=0, units=0, rate=None, low=None, high=None, alpha=None)
    low, high = wilson(agree, pairs)
    return dict(pairs=pairs, units=len(units), rate=round(agree / pairs, 4), low=round(low, 4),
                high=round(high, 4), alpha=_alpha(units))


def _alpha(units: list[Counter]) -> float | None:
    """Krippendorff's alpha for nominal values, each unit's values given as counts of its categories
    (here two: the pair's first item won, or its second)."""
    n = sum(sum(u.values()) for u in units)
    total: Counter = Counter()
    observed = 0.0
    for u in units:
        m = sum(u.values())
        total.update(u)
        observed += (m * m - sum(c * c for c in u.values())) / (m - 1)
    expected = n * n - sum(c * c for c in total.values())
    if expected == 0:
        return None
    return round(1 - (n - 1) * observed / expected, 4)


def derived_tests(grades: dict[str, dict[str, float]], pools: dict[str, list[str]], texts: dict[str, str],
                  seed: int, per_topic: int = 10) -> list[list[str]]:
    """Known-answer test pairs ``[topic, better, worse]`` from graded qrels: an item of the topic's
    pool with the top grade against an item at least 2 grades lower (both with texts), up to
    ``per_topic`` per topic, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for topic, pool in pools.items():
        g = grades.get(topic, {})
        top = max((g[d] for d in pool), default=None)
        if top is None:
            continue
        best = [d for d in pool if g[d] == top and d in texts]
        worse = sorted(d for d, v in g.items() if v <= top - 2 and d in texts)
        cands = [[topic, b, w] for b in best for w in worse]
        for i in rng.permutation(len(cands))[:per_topic]:
            out.append(cands[i])
    return out
