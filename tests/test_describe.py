"""What kind of problem a matrix is (``problems --describe``), and simulate's regret following it."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from helpers import DATA

from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem

SHARED = DATA / "preference-matrices"
RPS = [[0.5, 0.7, 0.2], [0.3, 0.5, 0.8], [0.8, 0.2, 0.5]]  # rock-paper-scissors: three Copeland winners


def order(d01: float, d12: float, d02: float) -> PreferenceMatrix:
    """Three arms in the order 0 > 1 > 2 with the given margins."""
    return PreferenceMatrix([[0.5, 0.5 + d01, 0.5 + d02], [0.5 - d01, 0.5, 0.5 + d12], [0.5 - d02, 0.5 - d12, 0.5]])


def test_winners_and_l_c():
    rps = PreferenceMatrix(RPS)
    assert rps.condorcet_winner is None and list(rps.copeland_winners) == [0, 1, 2] and rps.copeland_losses == 1
    assert rps.smallest_gap == pytest.approx(0.2) and rps.winner_gap is None
    assert np.all(rps.von_neumann_winner > 0.1)  # a cycle: the von Neumann winner mixes all three
    c500 = get_problem("copeland-500")  # thesis ch. 7: three cyclic Copeland winners, each loses once
    assert c500.condorcet_winner is None and list(c500.copeland_winners) == [0, 1, 2] and c500.copeland_losses == 1
    tied = get_problem("case-b")  # arms 0 and 1 tie (0.5) and beat the rest: no Condorcet winner, nothing lost
    assert list(tied.copeland_winners) == [0, 1] and tied.copeland_losses == 0 and tied.smallest_gap == 0.25
    four = get_problem("thesis-4arm")  # a thin Condorcet winner that is not the Borda winner
    assert four.condorcet_winner == 0 and list(four.borda_winners) == [1] and four.winner_gap == pytest.approx(0.01)


def test_transitivity_and_triangle_inequality_by_hand():
    assert order(0.2, 0.2, 0.1).transitivity_violation() == (0, 1, 2)  # 0.1 < max(0.2, 0.2)
    assert order(0.2, 0.2, 0.1).triangle_violation() is None
    assert order(0.05, 0.05, 0.3).triangle_violation() == (0, 1, 2)  # 0.3 > 0.05 + 0.05
    assert order(0.05, 0.05, 0.3).transitivity_violation() is None
    for name in ("arithmetic", "bt-10"):  # a linear and a Bradley-Terry model satisfy both
        P = get_problem(name)
        assert P.transitivity_violation() is None and P.triangle_violation() is None, name
    assert PreferenceMatrix(RPS).transitivity_violation() is not None  # a cycle is not transitive
    cycle = get_problem("cycle")  # MergeDTS paper: a Condorcet winner over a round table of the others
    assert cycle.condorcet_winner == 0 and cycle.winner_gap == pytest.approx(0.01)
    i, j, k = cycle.transitivity_violation()
    assert 0 not in (i, j, k) and cycle.p[i, j] > 0.5 and cycle.p[j, k] > 0.5 and cycle.p[i, k] < 0.5
    mslr = PreferenceMatrix.load(SHARED / "mslr-navigational.txt")  # real rankers: both fail somewhere
    assert mslr.condorcet_winner == 109
    assert mslr.transitivity_violation() is not None and mslr.triangle_violation() is not None


def brute_force(P: PreferenceMatrix, excess) -> float:
    D = P.p - 0.5
    return max(excess(D[i, j], D[j, k], D[i, k]) for i, j, k in itertools.product(range(P.K), repeat=3)
               if D[i, j] >= 0 and D[j, k] >= 0)


def test_the_worst_triple_matches_a_slow_search():
    rng = np.random.default_rng(3)
    sst = lambda dij, djk, dik: max(dij, djk) - dik  # noqa: E731
    sti = lambda dij, djk, dik: dik - (dij + djk)  # noqa: E731
    for _ in range(30):
        U = np.triu(rng.choice([0.5, 0.3, 0.6, 0.8, 0.95], size=(6, 6)), 1)
        P = PreferenceMatrix(U + np.tril(1 - U.T, -1) + np.diag(np.full(6, 0.5)))
        for method, excess in ((P.transitivity_violation, sst), (P.triangle_violation, sti)):
            worst, triple = brute_force(P, excess), method()
            if worst <= 1e-9:
                assert triple is None
            else:
                D = P.p - 0.5
                i, j, k = triple
                assert D[i, j] >= 0 and D[j, k] >= 0 and excess(D[i, j], D[j, k], D[i, k]) == pytest.approx(worst)


def test_describe_on_the_command_line(tmp_path, cli):
    r = cli("problems", "--describe", "copeland-500")
    assert r.exit_code == 0, r.output
    assert "Condorcet winner" in r.output and "none" in r.output and "row 0, row 1, row 2" in r.output
    assert "L_C" in r.output and "von Neumann" in r.output and "triangle inequality" in r.output
    m = tmp_path / "rps.txt"
    np.savetxt(m, RPS)
    r = cli("problems", "--describe", m)
    assert r.exit_code == 0 and "strong stochastic transitivity │ violated" in r.output, r.output
    r = cli("problems", "--describe", "no-such-problem")
    assert isinstance(r.exception, IrbanditsError)
    assert "no-such-problem: no such file, and unknown problem" in str(r.exception)
    bad = tmp_path / "bad.txt"
    bad.write_text("0.5 0.7\n0.4 0.5\n")
    r = cli("problems", "--describe", bad)
    assert isinstance(r.exception, IrbanditsError) and "bad.txt" in str(r.exception)
    assert "row 1, column 2" in str(r.exception)


def test_simulate_leads_with_copeland_regret_without_a_condorcet_winner(tmp_path, cli):
    m = tmp_path / "rps.txt"
    np.savetxt(m, RPS)
    common = ["simulate", "--matrix", m, "-a", "mergeRUCB:M=2", "--horizon", "2e4", "--runs", "2", "--no-progress"]
    auto = cli(*common, "--out", tmp_path / "a")
    assert auto.exit_code == 0, auto.output
    assert "Copeland regret (mean ± SE)" in auto.output and "Condorcet regret (mean)" in auto.output
    assert "no Condorcet winner" in auto.output
    chosen = cli(*common, "--regret", "condorcet", "--no-fast-forward", "--out", tmp_path / "c")
    assert chosen.exit_code == 0, chosen.output
    assert "Condorcet regret (mean ± SE)" in chosen.output and "Copeland regret (mean)" in chosen.output
    a, c = (pd.read_parquet(tmp_path / d / "results.parquet").drop(columns="run_seconds") for d in "ac")
    pd.testing.assert_frame_equal(a, c, check_exact=True)  # fast-forward changes no number
    assert isinstance(cli(*common, "--regret", "regal", "--out", tmp_path / "b").exception, IrbanditsError)
