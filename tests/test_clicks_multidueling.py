"""Multileaving online runs: Self-Sparring with m rankers per step on the full click pipeline."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from helpers import DATA, shell

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.multidueling import MultileaveEnvironment
from irbandits.clicks.multileaving import get_multileaving, multicompare, new_multiwork
from irbandits.dueling import RUCB, SelfSparring
from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, randint
from irbandits.simulate import run_one, simulate, summarize

NP2004 = DATA / "ltr" / "letor3-np2004-fold1" / "test.txt.gz"
# the best NP2004 feature (23) and 15 it beats by >= 0.05, as in test_clicks_matrix.py
FEATURES = [22, 31, 43, 26, 29, 36, 32, 20, 24, 21, 40, 41, 30, 46, 2, 39]
METHODS = ["team-draft", "probabilistic"]


@pytest.fixture(scope="module")
def rankers():
    return read_ltr(NP2004).rankers(FEATURES)


@pytest.fixture(scope="module")
def reference(rankers):
    """The pairwise (interleaving) matrix of each method; the Condorcet winner is feature 23."""
    out = {m: ClickEnvironment(rankers, "navigational", m).estimate(1000, seed=0).matrix for m in METHODS}
    assert all(P.condorcet_winner == 0 for P in out.values())
    return out


def _state(algo):
    return {**algo.state["arrays"], "rng": algo.state["rng"]}


@pytest.mark.parametrize("method", METHODS)
def test_two_per_step_is_pairwise_self_sparring_exactly(rankers, reference, method):
    P = reference[method]
    pairwise = ClickEnvironment(rankers, "navigational", method)
    two = MultileaveEnvironment(rankers, "navigational", method, per_step=2)
    a = simulate(P, ["Self-Sparring"], horizon=20_000, runs=3, seed=4, progress=False, environment=pairwise)
    b = simulate(P, ["Self-Sparring"], horizon=20_000, runs=3, seed=4, progress=False, environment=two)
    cols = ["algorithm", "run", "step", "regret", "copeland_regret", "recommended", "correct"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    # the whole state too (W, t, S, F and the generator), self-duels included
    x, y = SelfSparring(16, seed=3), SelfSparring(16, seed=3)
    run_one(x, P, 5000, seed=8, environment=pairwise)
    run_one(y, P, 5000, seed=8, environment=two)
    sx, sy = _state(x), _state(y)
    assert all(np.array_equal(sx[k], sy[k]) for k in sx) and x.t == 5000


def test_select_many_draws_what_select_draws():
    a, b = SelfSparring(10, seed=5), SelfSparring(10, seed=5)
    for _ in range(200):
        c, d = a.select()
        assert b.select_many(2).tolist() == [c, d]
        won = (c + d) % 3 == 0
        a.update(c, d, won)
        b.update_many([c, d], [1.0, 0.0] if won else [0.0, 1.0])
    assert all(np.array_equal(u, v) for u, v in zip(_state(a).values(), _state(b).values()))


def _update_many_reference(S, F, W, t, arms, credit):
    """The rule as written: each pair of distinct arms shown, once, if their credits differ."""
    seen = set()
    for i in range(len(arms)):
        for j in range(i + 1, len(arms)):
            pair = frozenset((arms[i], arms[j]))
            if credit[i] == credit[j] or (arms[i] != arms[j] and pair in seen):
                continue
            seen.add(pair)
            t += 1
            if arms[i] != arms[j]:
                win, lose = (arms[i], arms[j]) if credit[i] > credit[j] else (arms[j], arms[i])
                S[win] += 1
                F[lose] += 1
                W[win, lose] += 1
    return t


def test_update_many_matches_its_reference():
    gen = np.random.default_rng(0)
    algo = SelfSparring(6, seed=0)
    S, F, W, t = np.zeros(6, int), np.zeros(6, int), np.zeros((6, 6), int), 0
    for _ in range(500):
        m = int(gen.integers(2, 9))
        arms = gen.integers(0, 6, m)
        credit = gen.integers(0, 3, 6)[arms].astype(float)  # a ranker's credit is the same in every slot
        algo.update_many(arms, credit)
        t = _update_many_reference(S, F, W, t, arms.tolist(), credit.tolist())
    st = algo.state["arrays"]
    assert np.array_equal(st["S"], S) and np.array_equal(st["F"], F) and np.array_equal(st["W"], W)
    assert algo.t == t > 0


@pytest.mark.parametrize("method", METHODS)
def test_multiduel_credits_each_distinct_ranker_once(rankers, method):
    env = MultileaveEnvironment(rankers, "navigational", method, per_step=5)
    perm = np.random.default_rng(1).permutation(16)
    world, ml = env.world(perm), get_multileaving(method)
    arms = np.array([3, 7, 3, 11, 7])
    credit, cr = np.empty(5), np.empty(3)
    clicked = 0
    for seed in range(300):
        env.multiduel(world, new_rng(seed), arms, credit)
        rng = new_rng(seed)  # replay: the kernel draws the query, then multileaves the distinct rankers
        q = randint(rng, rankers.arrays()[2].shape[1] - 1)
        multicompare(ml.multileave, ml.credit, rankers.arrays(), env.model.arrays(), perm[[3, 7, 11]], 3, q, rng,
                     new_multiwork(3), cr)
        assert credit.tolist() == [cr[0], cr[1], cr[0], cr[2], cr[1]]
        clicked += cr.sum() > 0
    assert clicked > 100  # users clicked in many of the lists
    env.multiduel(world, new_rng(0), np.array([4, 4, 4, 4, 4]), credit)
    assert credit.tolist() == [0.0] * 5  # one ranker alone: nothing to compare


@pytest.mark.parametrize("method", METHODS)
def test_interactive_multileaving_equals_the_compiled_loop(rankers, reference, method):
    env = MultileaveEnvironment(rankers, "navigational", method, per_step=4)
    a, b = SelfSparring(16, seed=2), SelfSparring(16, seed=2)
    world, rng, credit = env.world(np.arange(16)), new_rng(6), np.empty(4)
    for _ in range(2000):
        arms = a.select_many(4)
        env.multiduel(world, rng, arms, credit)
        a.update_many(arms, credit)
    run_one(b, reference[method], 2000, seed=6, environment=env)
    assert all(np.array_equal(u, v) for u, v in zip(_state(a).values(), _state(b).values()))
    assert a.t == a.wins.sum() > 100  # every recorded duel is one win in W


def _steps_to_identify(table):
    """Per run: the first checkpoint from which on the recommendation is always the winner."""
    out = []
    for _, g in table.groupby("run"):
        wrong = np.nonzero(~g.correct.to_numpy())[0]
        out.append(g.step.iloc[0] if len(wrong) == 0 else (g.step.iloc[wrong[-1] + 1] if wrong[-1] + 1 < len(g) else np.inf))
    return np.array(out, dtype=float)


@pytest.mark.parametrize("method", METHODS)
def test_four_per_step_finds_the_winner_sooner_and_with_less_regret(rankers, reference, method):
    """NP2004, 16 features, 8 seeded runs of 30,000 steps: m = 4 finds the Condorcet winner in
    every run, its regret per step falls decade by decade, and it finds the winner in fewer steps
    and with less regret than m = 2 (pairwise Self-Sparring on interleaving)."""
    P, runs = reference[method], {}
    for m in (2, 4):
        env = MultileaveEnvironment(rankers, "navigational", method, per_step=m)
        runs[m] = simulate(P, ["Self-Sparring"], horizon=30_000, runs=8, seed=11, progress=False, environment=env)
    four = runs[4]
    assert four[four.step == 30_000].correct.all()
    mean = four.groupby("step").regret.mean()
    a, b, c = (mean.index[np.abs(mean.index - x).argmin()] for x in (30, 300, 3000))  # 31, 307, 3035
    per_step = [mean[a] / a, (mean[c] - mean[b]) / (c - b), (mean[30_000] - mean[c]) / (30_000 - c)]
    assert per_step[0] > 2 * per_step[1] > 4 * per_step[2]
    ident = {m: _steps_to_identify(t) for m, t in runs.items()}
    assert np.median(ident[4]) < np.median(ident[2]) / 2
    s = summarize(pd.concat([runs[2].assign(algorithm="m=2"), runs[4].assign(algorithm="m=4")])).set_index("algorithm")
    assert s.regret_mean["m=4"] < s.regret_mean["m=2"]


def test_bad_options_are_clear_errors(rankers, reference):
    for per_step, what in [(1, "got 1"), (17, "got 17"), ("4", "got '4'"), (2.5, "got 2.5")]:
        with pytest.raises(IrbanditsError, match=f"per_step .* must be 2..16 for 16 rankers, {what}"):
            MultileaveEnvironment(rankers, per_step=per_step)
    with pytest.raises(IrbanditsError, match="unknown multileaving method 'balanced'"):
        MultileaveEnvironment(rankers, multileaving="balanced")
    env = MultileaveEnvironment(rankers, per_step=4)
    with pytest.raises(IrbanditsError, match="RUCB compares two arms per step and cannot multileave; "
                                             "multi-dueling algorithms: MDB, Self-Sparring, UCB-Multileave"):
        simulate(reference["probabilistic"], ["Self-Sparring", "RUCB"], horizon=10, runs=1, progress=False,
                 environment=env)
    with pytest.raises(IrbanditsError, match="RUCB compares two arms"):
        RUCB(4).select_many(3)
    with pytest.raises(IrbanditsError, match="at least 2 arms"):
        SelfSparring(4).select_many(1)
    with pytest.raises(IrbanditsError, match="equally long"):
        SelfSparring(4).update_many([0, 1, 2], [1.0, 0.0])
    with pytest.raises(IrbanditsError, match="arm 4 out of range"):
        SelfSparring(4).update_many([0, 4], [1.0, 0.0])


@pytest.mark.parametrize("args, message", [
    (["--ltr", NP2004, "-a", "RUCB"], "RUCB compares two arms per step and cannot multileave"),
    (["-a", "Self-Sparring"], "--multileave needs --ltr"),
    (["--ltr", NP2004, "--interleaving", "balanced"], "--multileave needs --interleaving team-draft or probabilistic"),
    (["--ltr", NP2004, "--rankers", "1-3"], "--multileave 4 is more than the 3 rankers"),
])
def test_multileave_command_mistakes_are_one_line(tmp_path, args, message):
    r = shell("simulate", "--multileave", "4", "--horizon", "100", "--out", str(tmp_path / "o"), *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_multileave_command_writes_the_usual_table(tmp_path):
    log = tmp_path / "log.jsonl"
    r = shell("simulate", "--ltr", NP2004, "--rankers", "20-27", "--multileave", "4", "-a", "Self-Sparring",
              "--click-model", "navigational", "--interleaving", "team-draft", "--horizon", "3000", "--runs", "2",
              "--out", str(tmp_path / "ml"), "--log-comparisons", str(log))
    assert r.returncode == 0, r.stderr
    report = shell("interleaving-report", str(log), "--format", "csv", "--samples", "10")
    assert report.returncode == 0, report.stderr
    pairs = pd.read_csv(io.StringIO(report.stdout.split("# rankers\n")[0].removeprefix("# pairs\n")))
    lines = log.read_text().splitlines()          # a list of one ranker (Self-Sparring settled) is no comparison
    assert len(pairs) == 28 and 0 < len(lines) <= 6000 and pairs.comparisons.sum() >= len(lines)
    assert "4 rankers per step (team-draft multileaving)" in " ".join(r.stdout.split())
    table = pd.read_parquet(tmp_path / "ml" / "results.parquet")
    assert set(table.algorithm) == {"Self-Sparring"} and table.step.max() == 3000 and table.run.nunique() == 2
    assert (tmp_path / "ml" / "regret.png").exists()
