"""The campaign domain without HTTP: the rule that turns several assessors' answers into one judgment."""

from __future__ import annotations

import pytest

from irbandits.service.campaign_spec import check_options
from irbandits.service.judges import PreferenceJudge


def judge(per_pair: int) -> PreferenceJudge:
    return PreferenceJudge({"t": ["a", "b", "c"]}, check_options("preference", {"assessors_per_pair": per_pair}))


@pytest.mark.parametrize("per_pair, votes, fed", [
    (1, ["b"], "b"),
    (3, ["a", "b", "b"], "b"),          # the majority
    (3, ["b", "a", "b"], "b"),
    (3, ["a", "a", "b"], "a"),
    (2, ["b", "a"], "b"),               # a tie goes to the first answer
    (2, ["a", "b"], "a"),
])
def test_the_process_gets_the_majority_once_all_answers_are_in(per_pair, votes, fed):
    j = judge(per_pair)
    topic, left, right = next(t for t in j.requests() if {"a", "b"} == set(t[1:]))
    for n, vote in enumerate(votes):
        assert j.process.topics["t"].log == []          # nothing reaches the process before the last answer
        assert j.answered(j.key(topic, left, right)) == n
        j.apply(topic, left, right, vote)
    assert j.process.topics["t"].log == [[left, right, fed, 1]]
    assert (topic, left, right) not in set(j.requests()) and j.answered(j.key(topic, left, right)) == 0
