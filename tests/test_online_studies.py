"""The online reproduction studies at tiny scale: each finds what it should, and its report puts the
paper's claims beside the run's numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from helpers import DATA

from irbandits.clicks.online_metrics import per_impression
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix, get_problem
from irbandits.simulate import simulate
from irbandits.studies import (
    ab_vs_interleaving,
    ccb_copeland,
    mergedts_cycles,
    mergedts_large_scale,
    mergedts_non_condorcet,
    mergedts_sensitivity,
    multileaving,
    rcs_vs_rucb,
    rucb_vs_savage,
)

MSLR = DATA / "preference-matrices" / "mslr-navigational.txt"


def test_cycles_mergedts_finds_the_winner_and_report_has_the_claims():
    table = mergedts_cycles.run_study(horizon=30_000, runs=3, algorithms=["MergeDTS:tuned", "Self-Sparring"])
    last = table[table.step == 30_000]
    mdts = last[last.algorithm == "MergeDTS:tuned"]
    assert set(mdts.problem) == {"cycle", "cycle2"} and mdts.correct.all() and (mdts.recommended == 0).all()
    text = mergedts_cycles.report(table)
    assert "| Cycle: Self-Sparring's regret is an order of magnitude above MergeDTS's | ratio " in text
    assert "**Cycle2 (winner by 0.6, round table of 0.51)**" in text and "| MergeDTS:tuned | " in text


def test_sensitivity_reads_the_lost_winner_from_the_state(monkeypatch, tmp_path):
    # a thin winner (0.51) and no exploration bonus: MergeDTS at tiny alpha often eliminates it
    monkeypatch.setitem(mergedts_sensitivity.GRIDS, "alpha", [
        ("alpha=0.8^9", dict(alpha=0.01, M=2, C=0)), ("alpha=0.8^0", dict(alpha=1.01, M=2, C=4_000_000))])
    problem = get_problem("thesis-4arm")
    table = mergedts_sensitivity.run_grid("alpha", problem, horizon=20_000, runs=8, out=tmp_path)
    last = table[table.step == 20_000]
    risky, safe = (last[last.algorithm == a] for a in ("alpha=0.8^9", "alpha=0.8^0"))
    assert risky.lost.sum() >= 1 and not safe.lost.any()
    assert not risky[risky.lost].correct.any()  # a lost winner is never recommended again
    assert (tmp_path / "alpha-T20000-runs8-seed0.parquet").is_file()
    s = mergedts_sensitivity.summary(table)
    assert s.set_index("algorithm").failures.to_dict() == {"alpha=0.8^9": risky.lost.sum(), "alpha=0.8^0": 0}
    text = mergedts_sensitivity.report(table)
    assert f"| alpha=0.8^9: 10 failures in 100 runs | {risky.lost.sum()} in 8 (binomial p = " in text


def test_rcs_vs_rucb_subsets_and_report(monkeypatch):
    full = PreferenceMatrix.load(MSLR, name="mslr-navigational")
    arms, sub = rcs_vs_rucb.subset(full, 0)
    assert arms.tolist() == [2, 5, 10, 23, 35, 40, 65, 81, 108, 110]
    assert sub.condorcet_winner is not None and np.array_equal(sub.p, full.p[np.ix_(arms, arms)])
    monkeypatch.setattr(rcs_vs_rucb, "SCALING", 2)  # Figure 5.4's runs: 6,000 steps
    table = rcs_vs_rucb.run_study(horizon=3_000, runs=2, matrix=MSLR)
    assert set(table.problem) == {"mslr10-seed0", "mslr10-seed1", "mslr10-seed2", "stability", "mslr20", "mslr30",
                                  "mslr40"}
    assert set(table[table.problem == "stability"].algorithm) == set(rcs_vs_rucb.STABILITY)
    assert table[table.problem == "mslr40"].step.max() == 6_000
    text = rcs_vs_rucb.report(table)
    assert "| alpha = 0.501: RCS's regret is roughly a third below RUCB's (ratio about 0.67) | ratio RCS / RUCB" in text
    assert "| alpha = 0.1: RCS stays stable, its curve flattens | tail share" in text
    papers = [r.paper for r in rcs_vs_rucb.claim_rows(table)]
    assert papers.count(rcs_vs_rucb.PAPER_51) == 4 and papers.count(rcs_vs_rucb.PAPER_54) == 5


def test_rcs_accuracy_against_savage_figure_5_1(monkeypatch):
    """Figure 5.1 at 20,000 steps, 4 runs: RCS's accuracy climbs to 1 on all three problems while SAVAGE,
    rerun for each horizon and duelling pairs round robin, pays more regret at every longer horizon."""
    monkeypatch.setattr(rcs_vs_rucb, "SCALING", 1)
    table = rcs_vs_rucb.run_study(horizon=20_000, runs=4, matrix=MSLR, scaling_runs=1)
    horizons = rcs_vs_rucb.accuracy_horizons(20_000)
    assert len(horizons) == rcs_vs_rucb.HORIZONS and horizons[-1] == 20_000 and horizons[0] < 100
    savage = table[table.algorithm == rcs_vs_rucb.SAVAGE]
    assert sorted(savage.step.unique()) == horizons.tolist() and (savage.groupby(["problem", "step"]).size() == 4).all()
    acc = rcs_vs_rucb.accuracy(table)
    for key in ("mslr10-seed0", "mslr10-seed1", "mslr10-seed2"):
        rcs, sav = (acc.loc[key].xs(a, level=1) for a in (rcs_vs_rucb.RCS, rcs_vs_rucb.SAVAGE))
        assert rcs.accuracy.iloc[-1] == 1.0 and rcs.accuracy.iloc[0] < 1.0
        assert (sav.regret.iloc[5:] > rcs.regret.iloc[5:]).all()  # from ~2,000 steps on
        assert sav.regret.iloc[-1] > 1.4 * rcs.regret.iloc[-1]
    rows = [r for r in rcs_vs_rucb.claim_rows(table) if r.paper == rcs_vs_rucb.PAPER_51]
    assert rows[0].measured.startswith("horizons where RCS's is at least SAVAGE's: ")
    assert rows[0].scale == "20,000 steps at most x 4 runs (paper: 10 horizons x 90)"


def test_rcs_vs_rucb_figure_5_4_problems_and_crossing():
    """Figure 5.4's problems are seeded MSLR draws whose winner beats every rival by MIN_GAP, and T_0 with
    the RUCB / RCS ratios comes from the mean curves as section 5.2.4 defines them."""
    full = PreferenceMatrix.load(MSLR, name="mslr-navigational")
    big = rcs_vs_rucb.scaling_problems(MSLR)
    assert list(big) == ["mslr20", "mslr30", "mslr40"]
    for K, (arms, p) in zip(rcs_vs_rucb.SIZES, big.values()):
        assert p.K == K and np.array_equal(p.p, full.p[np.ix_(arms, arms)])
        assert rcs_vs_rucb.smallest_gap(p) >= rcs_vs_rucb.MIN_GAP
    assert [int(a[p.condorcet_winner]) for a, p in big.values()] == [124, 109, 105]  # MSLR rankers
    steps = np.array([1, 10, 100, 1000, 2000, 4000, 8000])
    rucb = np.array([0, 5, 50, 300, 500, 600, 700.0])  # per step: 0.2, 0.1, 0.05, 0.025 late on
    rcs = np.array([0, 5, 60, 320, 420, 460, 480.0])  # crosses below between 1,000 and 2,000
    table = pd.concat([pd.DataFrame(dict(problem="mslr20", algorithm=a, run=0, step=steps, regret=r))
                       for a, r in ((rcs_vs_rucb.RUCB, rucb), (rcs_vs_rucb.RCS, rcs))])
    s = rcs_vs_rucb.scaling(table).iloc[0]
    assert s.T0 == 2000 and s.K == 20
    assert s.cross == pytest.approx((600 - 300) / (460 - 320))  # checkpoints 1,000 and 4,000 either side
    assert s.double == pytest.approx((700 - 500) / (480 - 420))  # 4,000: 2,000 and 8,000 either side
    assert s.excess == pytest.approx(600 / 460 - 1)
    assert s.half == pytest.approx((500 - 50) / (420 - 60))  # 1,000: 100 and 2,000 either side
    assert np.isnan(rcs_vs_rucb.crossing(pd.DataFrame({rcs_vs_rucb.RUCB: rucb, rcs_vs_rucb.RCS: rucb + 1}, index=steps)))


def test_ccb_finds_the_condorcet_winner_and_subsets_follow_the_request():
    full = PreferenceMatrix.load(MSLR, name="mslr-navigational")
    assert ccb_copeland.subset(full, False)[1].condorcet_winner is None
    assert ccb_copeland.subset(full, True)[1].condorcet_winner is not None
    table = ccb_copeland.run_study(horizon=20_000, runs=3, matrix=MSLR, only=("mslr5-condorcet",))
    last = table[(table.step == 20_000) & (table.algorithm == "CCB")]
    assert len(last) == 3 and last.correct.all()
    assert "| Condorcet problem: CCB slightly below RUCB (Figure 7.8) | CCB " in ccb_copeland.report(table)


def test_ccb_duels_counts_each_stretch_of_one_continued_run():
    stretches = ccb_copeland.duels("RUCB", marks=(2_000, 5_000), matrix=MSLR)
    assert [end for end, _, _ in stretches] == [2_000, 5_000]
    first, second = stretches[0][2], stretches[1][2]
    assert first.sum() == 2_000  # seed 1: no self-duel in the first 2,000 steps
    assert second.sum() <= 3_000 and (np.tril(second) == 0).all()
    assert all(paid >= 0 for _, paid, _ in stretches)


def test_ccb_copeland_runs_the_six_algorithms_of_figure_7_6():
    """The 5-arm Copeland problem runs CCB, SCB, Copeland SAVAGE, PBR, RankEl and RUCB (thesis 7.5); the
    report's first claim compares all six."""
    table = ccb_copeland.run_study(horizon=3_000, runs=2, matrix=MSLR, only=("mslr5-copeland",))
    assert list(dict.fromkeys(table.algorithm)) == ["CCB", "SCB", "Copeland-SAVAGE", "PBR", "RankEl", "RUCB"]
    claim = next(line for line in ccb_copeland.report(table).splitlines() if "has the lowest regret" in line)
    assert all(f"{name} " in claim for name in ("Copeland-SAVAGE", "PBR", "RankEl", "RUCB"))
    assert "Copeland SAVAGE, PBR and RankEl are given the horizon" in ccb_copeland.report(table)


def test_multileaving_meters_the_lists_and_mergedts_settles_on_the_best_ranker(tmp_path):
    # feature 23 (NP2004's best) and three features that never rank the named page in the top 10
    configs = ("MergeDTS + PI", "UCB-Multileave + PM")
    table = multileaving.run_study(horizon=4000, runs=2, features=[22, 15, 51, 58], out=tmp_path, configs=configs)
    assert tuple(table.algorithm.unique()) == configs and {"clicks", "ndcg"} <= set(table.columns)
    assert (tmp_path / "reference-seed0.txt").is_file() and table.attrs["winner"] == 0
    end = table[table.step == 4000]
    assert end[end.algorithm == "MergeDTS + PI"].correct.all()
    w = per_impression(table[table.algorithm == "MergeDTS + PI"], "ndcg", [100, 4000]).groupby("step").ndcg.mean()
    best = table.attrs["ndcg"][0]
    assert w.iloc[0] < best - 0.1 and abs(w[4000] - best) < 0.05  # the lists shown rise to the best ranker's
    assert table.attrs["candidates"]["UCB-Multileave + PM"]["C = 4,000,000"][4000] < 4
    text = multileaving.report(table)
    assert "| MergeDTS with PI finds the best ranker in less than 2M steps | 2 of 2 runs recommend" in text
    assert "**NDCG@10 of the shown list**" in text and "| UCB-Multileave + PM | " in text
    assert "| MergeDTS outperforms the multileaving baseline on NDCG@10 (Figure 5) | over the whole run" in text
    assert multileaving.figures(table, tmp_path)[0].stat().st_size > 0


def test_ab_vs_interleaving_finds_interleaving_more_sensitive_on_an_easy_pair(tmp_path):
    # feature 23 against the 33rd by NDCG@10 (feature 43): the slides' direction holds here
    table = ab_vs_interleaving.run_study(horizon=1000, runs=8, places=(33,), methods=("team-draft",), out=tmp_path)
    assert set(table.pair) == {"feature23 vs feature43"} and (tmp_path / "ab-vs-interleaving.parquet").is_file()
    assert table.impressions.max() == 1000 and table.repetition.nunique() == 8
    n = ab_vs_interleaving.needed(table).set_index("metric")
    assert n.direction["team-draft"] == "right" and n.direction["abandonment"] == "right"
    assert n.power["team-draft"] * 10 < n.power["abandonment"] and n.power["team-draft"] * 2 < n.power["clicks@1"]
    assert n.seeded["team-draft"] <= 100                   # 80 % of the repetitions detect it by then
    text = ab_vs_interleaving.report(table)
    assert "| feature23 (0.536) vs feature43 (0.238) | " in text
    assert "| Interleaving (team-draft): the better ranker wins, significantly, in every pair | 1 of 1 pairs |" in text
    assert [p.name for p in ab_vs_interleaving.figures(table, tmp_path)] == [
        "ab-vs-interleaving-needed.png", "ab-vs-interleaving-power.png"]


def test_non_condorcet_subset_is_found_again_from_its_seed_and_meets_the_papers_conditions():
    full = PreferenceMatrix.load(MSLR, name="mslr-navigational")
    arms, p = mergedts_non_condorcet.subset(full)
    assert np.array_equal(arms, mergedts_non_condorcet.subset(full)[0])
    assert arms.tolist() == [2, 3, 9, 14, 16, 37, 43, 46, 49, 59, 64, 68, 70, 73, 77, 79, 84, 90, 94, 96, 102, 106,
                             107, 108, 115, 116, 117, 118, 122, 123, 127, 128]  # as recorded in the module
    assert p.K == 32 and p.condorcet_winner is None and np.array_equal(p.p, full.p[np.ix_(arms, arms)])
    wins = (p.p > 0.5).sum(axis=1)
    w0, w1 = p.copeland_winners
    a, b = (w0, w1) if p.p[w0, w1] > 0.5 else (w1, w0)
    assert wins[a] == wins[b] == 30 and (np.delete(wins, [a, b]) < 30).all()
    beats_a = np.flatnonzero(p.p[:, a] > 0.5)  # one winner beats the other and loses to a third ranker
    assert p.p[a, b] > 0.5 and len(beats_a) == 1 and beats_a[0] not in (a, b)
    assert arms[[a, b]].tolist() == [115, 108] and arms[beats_a[0]] == 64


def test_non_condorcet_study_measures_copeland_regret_and_reports_the_claims():
    table = mergedts_non_condorcet.run_study(horizon=20_000, runs=2, matrix=MSLR,
                                             algorithms=["MergeDTS:tuned", "DTS:tuned"])
    assert set(table.problem) == {mergedts_non_condorcet.KEY} and set(table.algorithm) == {"MergeDTS:tuned", "DTS:tuned"}
    last = table[table.step == 20_000]
    assert (last.copeland_regret > 0).all() and not np.allclose(last.copeland_regret, last.regret)
    text = mergedts_non_condorcet.report(table, matrix=MSLR)
    assert "Copeland winners 115 and 108: 115 beats 108 (0.5023) and loses to 64 (0.5020)" in text
    assert "| MergeDTS eliminates both Copeland winners in 1 run of 100, and ends on one of them in the other 99 | " in text
    assert "| DTS converges to the Copeland winners within 10^7 steps | " in text


def test_rucb_vs_savage_problems_are_seeded_np2004_subsets_and_markers_are_checkpoints(tmp_path):
    assert rucb_vs_savage.markers(10**6).tolist() == [1000, 1995, 5012, 10000, 19953, 50119, 100000, 199526, 501187,
                                                      1000000]
    full = rucb_vs_savage.matrix(out=tmp_path, comparisons=400)  # the thesis's 4,000 take ~40 s
    assert full.K == 64 and full.arms[full.condorcet_winner] == "feature23"
    assert (tmp_path / "reference-seed0.txt").is_file()
    kept = rucb_vs_savage.matrix(out=tmp_path, comparisons=1)  # read back, not estimated again
    assert np.array_equal(kept.p, full.p) and kept.arms == full.arms
    probs = rucb_vs_savage.problems(full)
    assert [p.K for _, p in probs.values()] == [16, 32, 64]
    assert all(p.condorcet_winner is not None for _, p in probs.values())
    assert probs["np2004-64"][0].tolist() == list(range(64))
    assert np.array_equal(probs["np2004-16"][1].p, full.p[np.ix_(probs["np2004-16"][0], probs["np2004-16"][0])])
    cyclic = PreferenceMatrix([[0.5, 0.6, 0.4], [0.4, 0.5, 0.6], [0.6, 0.4, 0.5]], name="cyclic")
    with pytest.raises(IrbanditsError, match="cyclic: the 3 rankers have no Condorcet winner"):
        rucb_vs_savage.problems(cyclic)


def test_rucb_vs_savage_runs_savage_and_btm_anew_for_every_marker_horizon(monkeypatch):
    # four arms in a clear order, so that SAVAGE decides pairs early and its horizon matters before the end
    easy = PreferenceMatrix([[0.5, 0.95, 0.95, 0.95], [0.05, 0.5, 0.95, 0.95], [0.05, 0.05, 0.5, 0.95],
                             [0.05, 0.05, 0.05, 0.5]], name="easy")
    monkeypatch.setattr(rucb_vs_savage, "matrix", lambda data, out, comparisons: easy)
    monkeypatch.setattr(rucb_vs_savage, "problems", lambda full: {"np2004-16": (np.arange(4), full)})
    table = rucb_vs_savage.run_study(horizon=3_000, runs=2)
    assert set(table.algorithm) == {"RUCB", "Condorcet-SAVAGE_T", "BTM_T"}
    savage = table[table.algorithm == "Condorcet-SAVAGE_T"]
    assert savage.step.tolist() == [956, 956, 1899, 1899, 3000, 3000]  # one row per run and marker
    # the marker at 956 ends a run told that its horizon is 956, unlike step 956 of a 3,000-step run
    alone, longer = (simulate(easy, ["Condorcet-SAVAGE"], horizon=T, runs=2, progress=False) for T in (956, 3_000))
    assert np.allclose(savage[savage.step == 956].regret, alone[alone.step == 956].regret)
    assert not np.allclose(savage[savage.step == 956].regret, longer[longer.step == 956].regret)
    assert table[table.step == 3_000].correct.all()
    text = rucb_vs_savage.report(table)
    assert "**16 NP2004 rankers**: all; Condorcet winner row 0 (gaps 0.4500 to 0.4500, mean 0.450)" in text
    for claim in ("RUCB's mean regret is less than half of Condorcet SAVAGE's", "BTM's regret grows linearly with T",
                  "RUCB reaches 80% accuracy almost twice as fast as SAVAGE"):
        assert f"| np2004-16: {claim} | " in text


def test_rucb_vs_savage_times_the_accuracy_at_the_markers():
    rows = [("RUCB", [0, 1, 1]), ("Condorcet-SAVAGE_T", [0, 0, 1]), ("BTM_T", [0, 0, 0])]
    table = pd.DataFrame([dict(problem="p", algorithm=a, run=r, step=t, regret=1.0, correct=bool(c[i]) or r == 0)
                          for a, c in rows for r in range(4) for i, t in enumerate((10, 20, 50))])
    reach = rucb_vs_savage.time_to(table, 0.8)
    assert reach["p", "RUCB"] == 20 and reach["p", "Condorcet-SAVAGE_T"] == 50 and np.isnan(reach["p", "BTM_T"])


def test_large_scale_claims_follow_the_numbers():
    def runs(algorithm, regrets, correct=True, first=0):
        return [dict(problem="navigational", algorithm=algorithm, run=first + r, step=t, regret=x * t / 1000,
                     correct=correct) for r, x in enumerate(regrets) for t in (1, 100, 1000)]

    # mergeRUCB's third run lost the winner: the ratio of means is far off, over the other runs it is 2
    table = pd.DataFrame(runs("MergeDTS:tuned", [100, 100, 100]) + runs("mergeRUCB:tuned", [180, 220])
                         + runs("mergeRUCB:tuned", [5000], correct=False, first=2) + runs("Self-Sparring", [150]))
    found = {c: (n, a) for c, n, a in mergedts_large_scale.claims(table)}
    assert found["MSLR-Navigational: mergeRUCB's regret is about twice MergeDTS's"] == (
        "ratio of means 18.00; 2.00 over the runs ending on the winner (3, 2)", False)
    assert found["MSLR-Navigational: MergeDTS beats Self-Sparring"] == ("MergeDTS:tuned 100, Self-Sparring 150", True)
    assert found["MSLR-Navigational: MergeDTS has the lowest regret of the algorithms"] == ("lowest: MergeDTS:tuned", True)
    assert not any("REX3" in c for c in found)


def test_large_scale_runs_both_matrices():
    table = mergedts_large_scale.run_study(horizon=2_000, runs=2, algorithms=["mergeRUCB:tuned", "REX3"],
                                           data=MSLR.parent)
    assert set(table.problem) == {"navigational", "perfect"}
    text = mergedts_large_scale.report(table, data=MSLR.parent)
    assert "**MSLR-Perfect (136 rankers)** (Condorcet winner: ranker 109)" in text and "| REX3 | " in text
    assert "| MSLR-Navigational: REX3's regret grows like sqrt(T) | grows like t^" in text


def test_reproduce_command_writes_the_report_and_figures(tmp_path, cli):
    out = tmp_path / "rcs"
    r = cli("reproduce", "rcs-vs-rucb", "--horizon", "1e3", "--runs", "2", "--jobs", "1", "--out", out)
    assert r.exit_code == 0, r.output
    text = (out / "rcs-vs-rucb.md").read_text()
    assert "1,000 steps, 2 runs per algorithm" in text and "![rcs-vs-rucb-stability](rcs-vs-rucb-stability.png)" in text
    assert (out / "rcs-vs-rucb-mslr10-seed1.png").stat().st_size > 0
    assert len(pd.read_parquet(out / "stability" / "results.parquet")) > 0
