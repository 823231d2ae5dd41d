"""The released best sets of thesis 5.3 (Set I, II, III, Combined I+II, I+II+III) recomputed from the recorded
crowd judgments, their counts, ties and agreement, and the judging-replay study's claims."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import DATA

from irbandits.errors import IrbanditsError
from irbandits.io import read_judgments, read_qrels
from irbandits.judging.replay import agreement
from irbandits.studies import judging_replay as study

DL21 = DATA / "human-preferences-dl21"
pytestmark = pytest.mark.skipif(not (DL21 / "judgments.txt").exists(), reason="needs ../shared/data")


@pytest.fixture(scope="module")
def result():
    return study.run_study(DL21, runs=2, seed=1)


def test_the_judgments_end_in_two_final_phases_of_984_pairs():
    j = read_judgments(DL21 / "judgments.txt")
    final = study.final_phases(j)
    assert final.groupby("phase").size().to_dict() == {1: 984, 2: 984, 3: 984}
    assert final.groupby("phase").line.max().to_dict() == {1: 9713, 2: 10697, 3: 11681}
    assert final[final.phase == 1].line.min() > 1  # phase 1 is spread over the main experiment
    with pytest.raises(IrbanditsError, match="two final phases of 984 pairs"):
        study.final_phases(j.iloc[:-1])


def test_every_released_set_is_its_final_phases_scored(result):
    sets = result["sets"].set_index("set")
    assert sets.recomputed.to_dict() == {label: 50 for label in study.SETS}
    # Set II is the last block of the file, not the block after the main experiment (that one is Set III)
    final = study.final_phases(read_judgments(DL21 / "judgments.txt"))
    set_ii = read_qrels(DL21 / "Set-II.qrels")
    assert agreement(study.best_sets(final, (3,)), set_ii)["same"] == 1
    assert agreement(study.best_sets(final, (2,)), set_ii)["same"] == 8 / 50


def test_best_passages_and_ties_of_each_set(result):
    sets = result["sets"].set_index("set")
    assert sets.best.to_dict() == {"Set I": 75, "Set II": 75, "Set III": 80, "Combined I+II": 66,
                                   "Combined I+II+III": 55}
    assert sets.ties.to_dict() == {"Set I": "1:29 2:18 3:2 4:1", "Set II": "1:32 2:12 3:5 4:1",
                                   "Set III": "1:32 2:11 3:3 4:3 5:1", "Combined I+II": "1:37 2:10 3:3",
                                   "Combined I+II+III": "1:46 2:3 3:1"}
    assert sets.four_tied.to_dict() == {"Set I": "1107821", "Set II": "935353",
                                        "Set III": "112700 688007 845121 952284", "Combined I+II": "",
                                        "Combined I+II+III": ""}


def test_agreement_between_the_released_sets(result):
    a = result["agreement"].set_index(["a", "b"])
    assert len(a) == 10
    assert tuple(a.loc[("Set I", "Set II")]) == (22, 25)
    assert tuple(a.loc[("Set I", "Combined I+II")]) == (40, 44)
    assert tuple(a.loc[("Set II", "Combined I+II")]) == (39, 44)
    assert tuple(a.loc[("Set II", "Set III")]) == (30, 31)
    assert tuple(a.loc[("Combined I+II", "Combined I+II+III")]) == (43, 44)


def test_claims_agree_with_the_thesis_and_follow_the_numbers(result):
    rows = study.claim_rows(result)
    verdicts = [r.verdict for r in rows]
    assert verdicts.count("disagrees") == 0 and verdicts.count("agrees") == 11
    assert verdicts.count("not checked") == 7 + 2 + 2  # unpublished pairs, Set III and I+II+III counts, replays
    assert {r.study for r in rows} == {"judging-replay"}
    shared = next(r for r in rows if r.claim.startswith("Set I and Set II: 22 topics"))
    assert shared.measured == "22 topics, 25 passages"
    # a different count disagrees: verdicts are computed, not written down
    agree = result["agreement"].copy()
    agree.loc[(agree.a == "Set I") & (agree.b == "Set II"), "topics"] = 23
    changed = study.claim_rows({**result, "agreement": agree})
    diff = [(r.claim, r.verdict) for r, s in zip(changed, rows) if r != s]
    assert [v for _, v in diff] == ["disagrees", "agrees"] and diff[0][0] == shared.claim
    assert dataclasses.astuple(rows[0])[-1] == "agrees"  # the pools of thesis 5.1: 5-130, median 15, mean 31.4


def test_plot_writes_the_figure(result, tmp_path):
    path = study.plot(result, tmp_path / "sets.png")
    assert path.stat().st_size > 10_000
