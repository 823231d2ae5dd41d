"""The top-k preference judging process (Clarke et al.) as a request / answer state machine.

Thesis (seed 000) Figure 3.2 and section 5.1, checked against Clarke et al.'s ``prefj.py``:

- pruning phase, while a topic's pool has more than ``m`` items: random pairings in which every
  item takes part in at least ``n`` distinct pairs (Clarke's greedy construction: repeatedly pair
  the two lowest-count items, ties in random order, that are not yet paired; one item may end with
  ``n + 1``); each pair is judged once; an item is kept when its wins exceed ``n // 2`` (``keep=
  "wins"``, the original code) or its Borda estimate wins / pairs is at least 0.5 (``keep="borda"``,
  the thesis listing);
- final phase, once at most ``m`` items remain: every pair once; score = wins / judgments;
- ``extra`` extra finalization phases: every final pair again (a new assessor each time), scored
  on all final judgments;
- output: the top ``k`` = 5 items by score (extended for ties, score > 0) and the best set (all
  items tied at the top score). A pool of one item is its own best item.

The caller runs the loop: :meth:`TopKProcess.requests` lists the judgments the current phases
still need (left / right placement drawn once, when the phase starts, so a reloaded state gives
the same requests); :meth:`TopKProcess.add` takes any answers in any order. An answer the current
phase does not need (a second answer of a pair, a pair of no phase yet) is kept and used if a later
phase asks for that pair, so no pair is asked more often than its phases need.
:meth:`TopKProcess.save` writes the whole state atomically.

>>> import numpy as np
>>> proc = TopKProcess({"q1": [f"d{i}" for i in range(12)]}, seed=3)
>>> strength = {f"d{i}": 12 - i for i in range(12)}           # d0 is best
>>> while proc.requests():
...     for topic, left, right in proc.requests():
...         _ = proc.add(topic, left, right, max(left, right, key=strength.get))
>>> proc.best()["q1"]
['d0']
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Iterable

import numpy as np
from numba import njit

from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, uniform

FORMAT = "irbandits-topk-1"
KEEP_RULES = ("wins", "borda")


# ----- kernels -----------------------------------------------------------------------------------
@njit(cache=True)
def random_pairings(k, n, rng):
    """Pairs ``(left, right)`` of ``0..k-1`` in which every item is in at least ``min(n, k-1)`` pairs.

    Clarke et al.'s construction: order the items by pair count (random order within a count),
    add the first pair in that order not yet chosen, repeat until every count reaches ``n``. The
    left / right placement of each pair is random.
    """
    n = min(n, k - 1)
    paired = np.zeros((k, k), np.bool_)
    counts = np.zeros(k, np.int64)
    out = np.empty((k * (k - 1) // 2, 2), np.int64)
    key = np.empty(k)
    e = 0
    while counts.min() < n:
        for i in range(k):
            key[i] = counts[i] + uniform(rng)
        order = np.argsort(key)
        done = False
        for a in range(k - 1):
            for b in range(a + 1, k):
                i, j = order[a], order[b]
                if not paired[i, j]:
                    paired[i, j] = paired[j, i] = True
                    counts[i] += 1
                    counts[j] += 1
                    out[e, 0], out[e, 1] = (i, j) if uniform(rng) < 0.5 else (j, i)
                    e += 1
                    done = True
                    break
            if done:
                break
    return out[:e]


@njit(cache=True)
def complete_pairings(k, rng):
    """Every pair of ``0..k-1`` once, left / right placement random."""
    out = np.empty((k * (k - 1) // 2, 2), np.int64)
    e = 0
    for i in range(k):
        for j in range(i + 1, k):
            out[e, 0], out[e, 1] = (i, j) if uniform(rng) < 0.5 else (j, i)
            e += 1
    return out


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


# ----- one topic ---------------------------------------------------------------------------------
class _Topic:
    """One topic's pool, current phase, answers, banked answers and log (plain, JSON-able data)."""

    def __init__(self, items: list[str]):
        self.items = list(items)
        self.pool = list(items)
        self.phase = 0                  # phases started so far
        self.kind = ""                  # "prune", "final" or "done"
        self.finals = 0                 # final phases started
        self.pairs: list[list[str]] = []  # current phase: [left, right]
        self.answers: dict[tuple[str, str], str] = {}
        self.final_log: list[list] = []   # [final phase number, a, b, winner] of completed final phases
        self.bank: dict[tuple[str, str], list[str]] = {}
        self.log: list[list] = []         # every answer received: [left, right, winner, phase]
        self._index()

    def _index(self) -> None:
        """Lookup sets derived from the state (not saved)."""
        self._items = set(self.items)
        self._keys = {pair_key(*p) for p in self.pairs}

    def outstanding(self) -> list[list[str]]:
        return [p for p in self.pairs if pair_key(*p) not in self.answers]

    def complete(self) -> bool:
        return len(self.answers) == len(self.pairs)

    def to_json(self) -> dict:
        d = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        d["answers"] = [[a, b, w] for (a, b), w in self.answers.items()]
        d["bank"] = [[a, b, ws] for (a, b), ws in self.bank.items()]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "_Topic":
        t = cls(d["items"])
        for name, value in d.items():
            setattr(t, name, value)
        t.answers = {(a, b): w for a, b, w in d["answers"]}
        t.bank = {(a, b): ws for a, b, ws in d["bank"]}
        t._index()
        return t


class TopKProcess:
    """The top-k preference judging process over many topics, driven by requests and answers.

    Parameters
    ----------
    pools
        ``{topic: [docno, ...]}`` (see :func:`irbandits.judging.pools.grade_pools`).
    n
        Pairs per item in a pruning phase (7 in the study).
    m
        Pools of at most ``m`` items go to the final phase (9 in the study).
    extra
        Extra finalization phases (the study's extra phase is ``extra=1``).
    k
        Depth of the preference qrels (top ``k``, extended for ties).
    keep
        Pruning rule: ``"wins"`` (wins > n // 2) or ``"borda"`` (wins / pairs >= 0.5).
    seed
        Seeds the pairings and the left / right placement.
    aliases
        ``{topic: {duplicate: representative}}`` for merged exact duplicates
        (:func:`irbandits.judging.duplicates.merge_duplicates`): judgments naming a duplicate count
        for its representative, and results list the duplicates beside it.
    """

    def __init__(self, pools: dict[str, list[str]], n: int = 7, m: int = 9, extra: int = 0, k: int = 5,
                 keep: str = "wins", seed: int = 0, aliases: dict[str, dict[str, str]] | None = None):
        if keep not in KEEP_RULES:
            raise IrbanditsError(f"keep must be one of {', '.join(KEEP_RULES)}, got {keep!r}")
        for name, value, low in (("n", n, 1), ("m", m, 1), ("extra", extra, 0), ("k", k, 1)):
            if int(value) != value or value < low:
                raise IrbanditsError(f"{name} must be a whole number >= {low}, got {value!r}")
        self.params = dict(n=int(n), m=int(m), extra=int(extra), k=int(k), keep=keep, seed=int(seed))
        self._rng = new_rng(seed)
        self.aliases = {str(t): dict(a) for t, a in (aliases or {}).items()}
        self.topics: dict[str, _Topic] = {}
        for topic, items in pools.items():
            if len(set(items)) != len(items):
                raise IrbanditsError(f"topic {topic}: the pool lists an item twice")
            if items:
                self.topics[str(topic)] = _Topic(items)
                self._advance(self.topics[str(topic)])

    # ----- phases ----------------------------------------------------------------------------
    def _start(self, t: _Topic) -> None:
        """Start the next phase of ``t`` (or finish it) and fill it from banked answers."""
        p = self.params
        t.answers = {}
        if len(t.pool) > p["m"]:
            t.kind = "prune"
            idx = random_pairings(len(t.pool), p["n"], self._rng)
        elif len(t.pool) > 1 and t.finals <= p["extra"]:
            t.kind = "final"
            t.finals += 1
            idx = complete_pairings(len(t.pool), self._rng)
        else:
            t.kind, t.pairs = "done", []
            t._index()
            return
        t.phase += 1
        t.pairs = [[t.pool[a], t.pool[b]] for a, b in idx]
        t._index()
        for a, b in t.pairs:
            banked = t.bank.get(pair_key(a, b))
            if banked:
                t.answers[pair_key(a, b)] = banked.pop(0)
                if not banked:
                    del t.bank[pair_key(a, b)]

    def _advance(self, t: _Topic) -> None:
        """Start phases until one needs answers or the topic is done."""
        if t.kind == "":
            self._start(t)
        while t.kind != "done" and t.complete():
            self._finish(t)
            self._start(t)

    def _finish(self, t: _Topic) -> None:
        """Close a complete phase: prune, or file the final judgments."""
        if t.kind == "prune":
            wins, pairs = Counter(t.answers.values()), Counter(x for pair in t.pairs for x in pair)
            n = self.params["n"]
            if self.params["keep"] == "wins":
                t.pool = [x for x in t.pool if wins[x] > n // 2]
            else:
                t.pool = [x for x in t.pool if wins[x] >= 0.5 * pairs[x]]
        else:
            t.final_log += [[t.finals, a, b, w] for (a, b), w in t.answers.items()]

    # ----- the loop --------------------------------------------------------------------------
    def requests(self) -> list[tuple[str, str, str]]:
        """``(topic, left, right)`` for every judgment the current phases still need."""
        return [(topic, a, b) for topic, t in self.topics.items() for a, b in t.outstanding()]

    def add(self, topic: str, left: str, right: str, winner: str, unrequested: bool = True) -> "TopKProcess":
        """Record one judgment; phases advance as soon as they are complete. Returns self.

        With ``unrequested=False`` an answer must be to a pair the open phase still needs: an answer to
        a pair no open or past phase asked for, or one more answer than a pair's phases asked for (the
        same answers added twice), is an error instead of being kept for later phases.
        """
        t = self.topics.get(str(topic))
        if t is None:
            raise IrbanditsError(f"unknown topic {topic}")
        if left == right:
            raise IrbanditsError(f"topic {topic}: an item cannot be compared with itself ({left})")
        if winner not in (left, right):
            raise IrbanditsError(f"topic {topic}: the winner {winner} is neither {left} nor {right}")
        alias = self.aliases.get(str(topic), {})
        left, right, winner = (alias.get(x, x) for x in (left, right, winner))
        for item in (left, right):
            if item not in t._items:
                raise IrbanditsError(f"topic {topic}: {item} is not in the topic's pool")
        key = pair_key(left, right)
        if not unrequested and (key not in t._keys or key in t.answers):
            answered = sum(pair_key(a, b) == key for a, b, _, _ in t.log) - len(t.bank.get(key, ()))
            if answered and left != right:
                raise IrbanditsError(f"topic {topic}: the pair {left} {right} already has the {answered} "
                                     f"answer(s) its phases asked for (answers added twice?)")
            raise IrbanditsError(f"topic {topic}: no open or past phase asked for the pair {left} {right}")
        t.log.append([left, right, winner, t.phase])
        if left == right:  # two merged duplicates: nothing to learn
            return self
        if key in t._keys and key not in t.answers:
            t.answers[key] = winner
            self._advance(t)
        else:
            t.bank.setdefault(key, []).append(winner)
        return self

    def retract(self, topic: str, left: str, right: str) -> None:
        """Take back the answer to the pair ``left right`` of ``topic`` that the open phase holds (the
        latest one to it), as if it had never come; an answer whose phase is closed cannot be retracted."""
        t = self.topics[str(topic)]
        alias = self.aliases.get(str(topic), {})
        key = pair_key(*(alias.get(x, x) for x in (left, right)))
        if t.kind == "done" or key not in t.answers:
            raise IrbanditsError(f"topic {topic}: the phase that asked for {left} {right} is closed")
        del t.answers[key]
        last = max(i for i, (a, b, _, _) in enumerate(t.log) if pair_key(a, b) == key)
        del t.log[last]

    def settled(self, topic: str) -> bool:
        """Whether the topic's best item is decided: the process is done, or the topic is in a final
        phase and some item x has more final wins than any other item y can still reach, i.e.
        ``wins(x) > wins(y) + open(y)`` for every y, where wins count the final judgments so far (all
        final phases, as the scores do) and ``open(y)`` is y's pairs still unanswered in the open phase
        plus ``len(pool) - 1`` for each final phase still to come. Every final-pool item plays the same
        number of final pairs, so scores order as wins do and x is the single best item whatever the
        open requests' answers are. (It is a sufficient rule: a topic that would end in a tie for the
        top, or where x's own open pairs decide, stays unsettled until done.)"""
        t = self.topics[str(topic)]
        if t.kind == "done":
            return True
        return t.kind == "final" and self.leader(topic) is not None

    def leader(self, topic: str) -> str | None:
        """The item x of the :meth:`settled` rule for a topic in a final phase, else None."""
        t = self.topics[str(topic)]
        if t.kind != "final":
            return None
        wins = Counter(w for _, _, _, w in t.final_log) + Counter(t.answers.values())
        later = (self.params["extra"] + 1 - t.finals) * (len(t.pool) - 1)
        reach = Counter({x: later for x in t.pool})
        for a, b in t.outstanding():
            reach[a] += 1
            reach[b] += 1
        ranked = sorted(t.pool, key=lambda x: -wins[x])
        x = ranked[0]
        if all(wins[x] > wins[y] + reach[y] for y in ranked[1:]):
            return x
        return None

    def add_many(self, judgments: Iterable[tuple[str, str, str, str]]) -> "TopKProcess":
        for j in judgments:
            self.add(*j)
        return self

    # ----- results ---------------------------------------------------------------------------
    def scores(self, topic: str, finals: Iterable[int] | None = None) -> dict[str, float]:
        """Borda scores (wins / judgments) of a topic's final pool from the given final phases
        (1 = the first; default all completed). A one-item pool scores 1."""
        t = self.topics[topic]
        if t.kind != "done":
            return {}
        if len(t.pool) == 1:
            return {t.pool[0]: 1.0}
        keep = None if finals is None else set(finals)
        wins, games = Counter(), Counter()
        for phase, a, b, w in t.final_log:
            if keep is None or phase in keep:
                wins[w] += 1
                games[a] += 1
                games[b] += 1
        return {x: wins[x] / games[x] for x in t.pool if games[x]}

    def top(self, finals: Iterable[int] | None = None, best: bool = False) -> dict[str, dict[str, float]]:
        """Per finished topic, the top ``k`` items (extended for ties, score > 0) with their scores,
        or with ``best`` only the items tied at the top."""
        out = {}
        for topic in self.topics:
            s = self.scores(topic, finals)
            if not s:
                continue
            ranked = sorted(s.items(), key=lambda kv: -kv[1])
            cut = ranked[0][1] if best else ranked[min(self.params["k"], len(ranked)) - 1][1]
            kept = {d: v for d, v in ranked if v >= cut and v > 0}
            for dup, rep in self.aliases.get(topic, {}).items():
                if rep in kept:
                    kept[dup] = kept[rep]
            out[topic] = kept
        return out

    def best(self, finals: Iterable[int] | None = None) -> dict[str, list[str]]:
        """Per finished topic, the best set (sorted docnos)."""
        return {topic: sorted(d) for topic, d in self.top(finals, best=True).items()}

    def status(self) -> list[dict]:
        """One row per topic: phase, kind, pool size, judgments needed / received."""
        return [dict(topic=topic, items=len(t.items), pool=len(t.pool), phase=t.phase,
                     kind=t.kind, outstanding=len(t.outstanding()), judgments=len(t.log),
                     unused=sum(map(len, t.bank.values())))
                for topic, t in self.topics.items()]

    def pair_counts(self, topic: str) -> Counter:
        """How many judgments each unordered pair of a topic received (the "assessors" needed)."""
        return Counter(pair_key(a, b) for a, b, _, _ in self.topics[topic].log)

    # ----- persistence -----------------------------------------------------------------------
    def to_json(self) -> dict:
        return dict(format=FORMAT, params=self.params, rng=[int(x) for x in self._rng], aliases=self.aliases,
                    topics={topic: t.to_json() for topic, t in self.topics.items()})

    @classmethod
    def from_json(cls, d: dict) -> "TopKProcess":
        obj = cls({}, **d["params"], aliases=d["aliases"])
        obj._rng[...] = np.array(d["rng"], dtype=np.uint64)
        obj.topics = {topic: _Topic.from_json(t) for topic, t in d["topics"].items()}
        return obj

    def save(self, path: str | Path) -> Path:
        """Write the state as JSON via a temporary file and ``os.replace``: never half a file."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(self.to_json(), fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    @classmethod
    def load(cls, path: str | Path) -> "TopKProcess":
        try:
            d = json.loads(Path(path).read_text())
            if d.get("format") != FORMAT:
                raise ValueError(f"format is {d.get('format')!r}, expected {FORMAT!r}")
            return cls.from_json(d)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IrbanditsError(f"{path}: not a judging state file ({exc})") from None
