"""Winners, regret and validation on hand-made matrices; synthetic problems against the papers."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DATA

from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem, list_problems
from irbandits.synthetic import bradley_terry, linear

SHARED = DATA / "preference-matrices"

RPS = [[0.5, 0.7, 0.2], [0.3, 0.5, 0.8], [0.8, 0.2, 0.5]]  # rock-paper-scissors, no Condorcet winner


def test_condorcet_winner_and_regrets_by_hand():
    P = PreferenceMatrix([[0.5, 0.6, 0.8], [0.4, 0.5, 0.7], [0.2, 0.3, 0.5]])
    assert P.condorcet_winner == 0
    assert list(P.winners) == [0]
    assert P.condorcet_regret(0, 0) == 0
    assert P.condorcet_regret(1, 2) == pytest.approx((0.1 + 0.3) / 2)
    assert P.strong_regret(1, 2) == pytest.approx(0.3)
    assert P.weak_regret(1, 2) == pytest.approx(0.1)
    assert P.copeland_scores.tolist() == [1.0, 0.5, 0.0]
    assert P.copeland_regret(1, 2) == pytest.approx(1 - 0.25)
    assert P.copeland_regret(1, 2, normalise="K") == pytest.approx((2 * 2 - 1 - 0) / 3)  # thesis Eq. 2.4
    assert list(P.borda_winners) == [0]


def test_cycle_without_condorcet_winner():
    P = PreferenceMatrix(RPS)
    assert P.condorcet_winner is None
    assert P.winner_type == "Copeland"
    assert list(P.copeland_winners) == [0, 1, 2]
    w = P.von_neumann_winner
    assert w.sum() == pytest.approx(1)
    # the optimal mix makes every pure reply a fair game: (P - 0.5)^T w >= 0
    assert ((P.p - 0.5).T @ w >= -1e-9).all()
    assert P.random_walk_winner.sum() == pytest.approx(1)


def test_von_neumann_is_pure_on_a_condorcet_winner():
    w = get_problem("arxiv").von_neumann_winner
    assert w[0] == pytest.approx(1.0, abs=1e-9)


def test_thesis_example_borda_is_not_condorcet():
    P = get_problem("thesis-4arm")
    assert P.condorcet_winner == 0
    assert list(P.borda_winners) == [1]


@pytest.mark.parametrize(
    "values, message",
    [
        ([[0.5, 0.6, 0.1]], "square"),
        ([[0.5, 0.6], [0.5, 0.5]], "row 1, column 2"),
        ([[0.5, 1.2], [-0.2, 0.5]], "outside [0, 1]"),
        ([[0.5, np.nan], [0.5, 0.5]], "NaN at row 1, column 2"),
        ([[0.4, 0.5], [0.5, 0.6]], "diagonal"),
    ],
)
def test_bad_matrices_name_the_cell(values, message):
    with pytest.raises(IrbanditsError, match=message.replace("[", r"\[").replace("]", r"\]")):
        PreferenceMatrix(values, name="m.txt")


def test_bad_file_names_file_and_line(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_text("0.5 0.6\n0.4 x\n")
    with pytest.raises(IrbanditsError, match=r"bad.txt:2"):
        PreferenceMatrix.load(f)
    f.write_text("0.5 0.6\n0.4\n")
    with pytest.raises(IrbanditsError, match=r"bad.txt:2: has 1 values"):
        PreferenceMatrix.load(f)
    with pytest.raises(IrbanditsError, match="no such file"):
        PreferenceMatrix.load(tmp_path / "missing.txt")


@pytest.mark.parametrize("suffix", [".txt", ".npy"])
def test_save_and_load_round_trip(tmp_path, suffix):
    P = bradley_terry([1.0, 2.0, 3.5])
    back = PreferenceMatrix.load(P.save(tmp_path / f"m{suffix}"))
    assert np.array_equal(back.p, P.p)


def test_real_mslr_matrix_has_the_documented_winner():
    P = PreferenceMatrix.load(SHARED / "mslr-navigational.txt")
    assert P.K == 136 and P.condorcet_winner == 109


def test_bundled_matrices_equal_the_shared_data():
    for name in ("arxiv", "arithmetic", "cyclic"):
        assert np.array_equal(get_problem(name).p, np.loadtxt(SHARED / f"{name}.txt"))


def test_cycle_problems_match_the_mergedts_paper():
    # Section 5.2: Borda sums (including p_ii) 10.19 vs 9.99 (Cycle) and 11.90 vs 9.9 (Cycle2)
    for name, winner, other in [("cycle", 10.19, 9.99), ("cycle2", 11.90, 9.9)]:
        P = get_problem(name)
        sums = P.p.sum(axis=1)
        assert P.condorcet_winner == 0
        assert sums[0] == pytest.approx(winner, abs=0.005)
        assert np.allclose(sums[1:], other, atol=0.005)


def test_copeland_500_has_three_cyclic_winners_of_score_498():
    P = get_problem("copeland-500")
    counts = (P.p > 0.5).sum(axis=1)
    assert P.condorcet_winner is None
    assert sorted(P.copeland_winners.tolist()) == [0, 1, 2]
    assert counts[:3].tolist() == [498] * 3
    assert sorted(counts[3:].tolist()) == list(range(497))


def test_judging_cases_match_the_shared_matrices():
    data = DATA / "human-preferences-dl21"
    assert np.array_equal(get_problem("case-a").p, np.loadtxt(data / "caseA.txt"))
    assert np.array_equal(get_problem("case-b").p, np.loadtxt(data / "caseB.txt"))


def test_utility_models():
    assert linear([1.0, 0.0]).p[0, 1] == pytest.approx(1.0)
    with pytest.raises(ValueError):
        bradley_terry([1.0, -1.0])


def test_unknown_problem_lists_the_names():
    with pytest.raises(IrbanditsError, match="known problems: .*arxiv"):
        get_problem("arxive")
    table = list_problems()
    assert {"arxiv", "cycle", "copeland-500", "case-a"} <= set(table.name)


def test_arms_are_named_by_the_matrix_file_or_by_row(tmp_path):
    m = tmp_path / "m.txt"
    m.write_text("# rankers: bm25 dense splade\n# comparisons per pair: 10\n0.5 0.3 0.4\n0.7 0.5 0.6\n0.6 0.4 0.5\n")
    P = PreferenceMatrix.load(m)
    assert P.arms == ["bm25", "dense", "splade"] and P.arms[P.condorcet_winner] == "dense"
    assert P.permuted([2, 0, 1]).arms == ["splade", "bm25", "dense"]
    assert get_problem("arxiv").arms[:2] == ["row 0", "row 1"]
    m.write_text("# rankers: bm25 dense\n0.5 0.3 0.4\n0.7 0.5 0.6\n0.6 0.4 0.5\n")
    with pytest.raises(IrbanditsError, match="m.txt: 2 arm names for 3 arms"):
        PreferenceMatrix.load(m)
