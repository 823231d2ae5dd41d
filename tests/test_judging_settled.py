"""Settled topics of the top-k process (the exact rule), taking an open answer back, and replays that
stop settled topics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irbandits.errors import IrbanditsError
from irbandits.judging.replay import best_items, replay
from irbandits.judging.topk import TopKProcess


def final_phase(extra: int = 0) -> TopKProcess:
    return TopKProcess({"q": ["a", "b", "c"]}, extra=extra, seed=1)


def answer(proc: TopKProcess, a: str, b: str, winner: str) -> None:
    pair = next(p for p in proc.requests() if {p[1], p[2]} == {a, b})
    proc.add(*pair, winner)


def test_settled_when_no_open_answer_can_change_the_best_item():
    proc = final_phase()
    assert not proc.settled("q") and proc.leader("q") is None
    answer(proc, "a", "b", "a")          # a 1 win; c can still reach 2
    assert not proc.settled("q")
    answer(proc, "a", "c", "a")          # a 2 wins; b and c can reach 1
    assert proc.settled("q") and proc.leader("q") == "a" and proc.topics["q"].kind == "final"
    answer(proc, "b", "c", "b")
    assert proc.settled("q") and proc.best() == {"q": ["a"]}


def test_later_final_phases_and_ties_keep_a_topic_open():
    proc = final_phase(extra=1)          # one more final phase: 2 more pairs for every item
    answer(proc, "a", "b", "a")
    answer(proc, "a", "c", "a")
    assert not proc.settled("q")         # b can reach 0 + 1 + 2 = 3 > 2
    tie = final_phase()
    answer(tie, "a", "b", "a")
    answer(tie, "b", "c", "b")           # a 1, b 1: the last pair decides nothing for sure
    assert not tie.settled("q")
    pruning = TopKProcess({"q": [f"d{i}" for i in range(12)]}, seed=0)
    assert not pruning.settled("q") and pruning.leader("q") is None


def test_retract_an_answer_of_the_open_phase_only():
    proc = final_phase()
    answer(proc, "a", "b", "a")
    before = proc.to_json()
    answer(proc, "a", "c", "c")
    proc.retract("q", "a", "c")
    assert proc.to_json() == before
    answer(proc, "a", "c", "a")
    answer(proc, "b", "c", "b")          # the phase is complete: the topic is done
    with pytest.raises(IrbanditsError, match="the phase that asked for a c is closed"):
        proc.retract("q", "a", "c")


def test_replay_that_stops_settled_topics_uses_fewer_judgments_and_finds_the_same_best():
    rng = np.random.default_rng(0)
    pools = {str(t): [f"t{t}d{i}" for i in range(int(rng.integers(5, 20)))] for t in range(20)}
    rows = [(t, a, b, a if int(a.split("d")[1]) < int(b.split("d")[1]) else b)   # d0 beats everything
            for t, items in pools.items() for i, a in enumerate(items) for b in items[i + 1:]]
    judgments = pd.DataFrame(rows, columns=["topic", "left", "right", "winner"])
    full = replay(pools, judgments, seed=3, extra=1)
    short = replay(pools, judgments, seed=3, extra=1, stop_settled=True)
    used = (lambda p: sum(len(t.log) for t in p.topics.values()))
    assert used(short) < used(full) * 0.8
    assert best_items(short) == best_items(full) == {t: [f"t{t}d0"] for t in pools}
    assert any(t.kind != "done" for t in short.topics.values())
