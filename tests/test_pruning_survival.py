"""Yan thesis Figure 3.1: the binomial survival of a Borda winner through a pruning phase, against the
top-k process itself."""

from __future__ import annotations

import math

import pytest

from irbandits.studies.pruning_survival import expected, run_study, simulated, survival


def test_the_formula_by_hand():
    assert survival(1, 0.7) == pytest.approx(0.7)
    # n = 3: at least 2 wins of 3 -> 3 b^2 (1 - b) + b^3
    assert survival(3, 0.6) == pytest.approx(3 * 0.36 * 0.4 + 0.216)
    # n = 7: at least 4 wins of 7 at b = 3/4 -> (35 * 27 + 21 * 81 + 7 * 243 + 729) / 4^7 = 15,228 / 16,384
    assert survival(7, 0.75) == pytest.approx(15228 / 16384)
    assert survival(7, 0.5) == pytest.approx(0.5)  # symmetric at 1/2 for odd n


def test_the_process_keeps_the_winner_as_the_formula_says_for_odd_n():
    pools = 600
    for n, b in ((7, 0.75), (5, 0.6), (3, 0.9)):
        share, extra = simulated(n, b, "wins", pools, seed=n)
        assert 0 <= extra < 1  # some winners meet n + 1 opponents, never more
        se = math.sqrt(survival(n, b) * (1 - survival(n, b)) / pools)
        assert abs(share - survival(n, b)) < 4 * se, (n, b, share)


def test_for_even_n_the_original_keep_rule_asks_for_more_than_half():
    """wins > n // 2 needs 3 of 4; the thesis's 'at least half' (keep borda) needs 2 of 4."""
    pools = 600
    wins, extra = simulated(4, 0.5, "wins", pools, seed=1)
    borda, _ = simulated(4, 0.5, "borda", pools, seed=1)
    assert survival(4, 0.5) == pytest.approx(11 / 16)
    se = math.sqrt(0.25 / pools)
    assert abs(borda - expected(4, 0.5, "borda", extra)) < 4 * se
    assert abs(wins - expected(4, 0.5, "wins", extra)) < 4 * se
    assert wins < survival(4, 0.5) - 0.25  # about 0.31 against 0.69


def test_study_table_and_claims():
    from irbandits.studies.pruning_survival import claim_rows

    table = run_study(pools=150, seed=3)
    assert len(table) == 9 * 10 and table.formula.between(0.5, 1).all()
    verdicts = {c.claim: c.verdict for c in claim_rows(table)}
    assert verdicts["a Borda winner proceeds more often as n grows (Figure 3.1)"] == "agrees"
    assert verdicts["the formula is the process's chance of keeping the Borda winner (odd n)"] == "agrees"
