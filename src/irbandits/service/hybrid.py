"""Hybrid campaigns: automatic assessors answer first, people get what they leave (issue 25).

The rule of :class:`irbandits.judging.hybrid.Hybrid`, applied to a preference campaign's automatic
assessors (registered programs such as an :class:`~irbandits.judging.llm.LLMJudge`):

- **first**: while an automatic assessor is at work (its thread runs; it is neither revoked, flagged
  nor cut off), a person gets only the requests it has passed on: the pairs it was unsure about (its
  skip), and its audits;
- **audits**: of its sure answers to target requests, a random share ``audit`` (the campaign option,
  default 0.1) is logged as kind "audit": kept in the log, never fed to the process, and the request
  goes to people; the first person's answer to it scores the automatic assessor (agreed or not);
- **accuracy**: its known-answer checks (the campaign's test pairs, mixed in at ``test_rate`` as for
  everyone) and its scored audits, pooled, with the 99 % Wilson interval of
  :func:`irbandits.judging.hybrid.wilson`; once at least :data:`~irbandits.judging.hybrid.MIN_AUDITS`
  are scored and the interval's upper end falls below ``auto_threshold`` (default 0.7) it is **cut
  off**: stored on its assessor row (``cutoff``: the last judgments id that counts, the time, the
  reason, and the score then), logged, and shown on the dashboard. Its earlier answers keep counting; later ones do not,
  and it gets no more work, so every new pair goes to people. The person flag rule does not apply to
  it (the cut-off is its rule); the organiser may still flag it (every answer leaves the process) or
  clear it (trusted: its answers count again and it is not cut off again).

Each automatic call's cost (calls, cached replies, tokens, dollars: the assessor's ``usage(mine=True)``
difference over the call) is stored on the judgments row it produced (``usage``), summed per assessor
for the dashboard, and written in the log exports.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from typing import Any

from irbandits.judging.assessors import USAGE
from irbandits.judging.hybrid import MIN_AUDITS, wilson

UNSURE = "automatic assessor unsure"   # the comment of an automatic assessor's skip


class HybridState:
    """One campaign's automatic assessors: who they are, their audits, scores, cut-offs and usage."""

    def __init__(self, options: dict[str, Any], seed: int):
        self.audit = options.get("audit", 0.0)
        self.threshold = options.get("auto_threshold", 0.7)
        self.rng = random.Random(f"audit-{seed}")
        self.automatic: set[int] = set()     # the campaign's automatic assessors
        self.working: set[int] = set()       # those whose thread runs
        self.waiting: dict[tuple, list[tuple[int, str]]] = {}  # pair -> audits waiting for a person's answer
        self.audited: Counter = Counter()    # automatic assessor -> scored audits
        self.agreed: Counter = Counter()     # ... where the person gave its answer
        self.counted: Counter = Counter()    # ... its answers that count
        self.unsure: Counter = Counter()     # ... its skips
        self.cut: dict[int, dict[str, Any]] = {}   # cut off: after (judgments id), at, reason, right, scored
        self.usage: dict[int, Counter] = defaultdict(Counter)

    def kind(self, assessor: int, kind: str) -> str:
        """The logged kind of ``assessor``'s answer to a lease of ``kind``: "audit" for an audited one."""
        audited = kind == "answer" and assessor in self.automatic and self.rng.random() < self.audit
        return "audit" if audited else kind

    def active(self, out: set[int]) -> set[int]:
        """The automatic assessors at work (``out``: flagged or revoked ones)."""
        return self.working - self.cut.keys() - out

    @staticmethod
    def passed(key: tuple, active: set[int], seen: dict[int, set]) -> bool:
        """Whether a person may get request ``key``: every automatic assessor at work has passed on it."""
        return all(key in seen[a] for a in active)

    def applied(self, j, key: tuple) -> list[int]:
        """Book one applied judgments row; returns the automatic assessors an audit of it scored."""
        who = j.assessor_id
        if j.usage:
            self.usage[who].update({k: j.usage.get(k, 0) for k in USAGE})
        if who in self.automatic:
            if j.kind == "audit":
                self.waiting.setdefault(key, []).append((who, j.winner))
            elif j.kind == "skip":
                self.unsure[who] += 1
            elif j.kind == "answer" and self.counts(j):
                self.counted[who] += 1
            return []
        if j.kind != "answer" or key not in self.waiting:
            return []
        scored = []
        for auto, winner in self.waiting.pop(key):
            self.audited[auto] += 1
            self.agreed[auto] += winner == j.winner
            scored.append(auto)
        return scored

    def counts(self, j) -> bool:
        """Whether row ``j`` may count: not an answer its assessor gave after its cut-off."""
        cut = self.cut.get(j.assessor_id)
        return cut is None or j.id <= cut["after"]

    def score(self, assessor: int, signals) -> tuple[int, int]:
        """Right answers and scored ones: its known-answer checks and its audits, pooled."""
        return signals.correct + self.agreed[assessor], signals.tests + self.audited[assessor]

    def verdict(self, assessor: int, signals) -> str | None:
        """Why ``assessor`` is to be cut off now (the rule of the module docstring), or None."""
        k, n = self.score(assessor, signals)
        high = wilson(k, n)[1]
        if n >= MIN_AUDITS and high < self.threshold:
            return (f"accuracy {k}/{n} on checks and audits: its 99 % interval reaches {high:.1%}, "
                    f"below the threshold {self.threshold:.0%}")
        return None

    def summary(self, assessor: int, signals, status: str) -> dict[str, Any]:
        """The dashboard's and the assessor listing's view of one automatic assessor."""
        k, n = self.score(assessor, signals)
        low, high = wilson(k, n)
        used = self.usage.get(assessor, Counter())
        return dict(status=status, counted=self.counted[assessor], unsure=self.unsure[assessor],
                    audits=sum(a == assessor for v in self.waiting.values() for a, _ in v) + self.audited[assessor],
                    audited=self.audited[assessor], agreed=self.agreed[assessor], checks=signals.tests,
                    correct=signals.correct, right=k, scored=n, accuracy=round(k / n, 4) if n else None,
                    low=round(low, 4), high=round(high, 4), threshold=self.threshold,
                    cutoff=self.cut.get(assessor), usage={k: round(used.get(k, 0), 6) for k in USAGE})
