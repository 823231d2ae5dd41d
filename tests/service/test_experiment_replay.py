"""``irbandits experiment-replay`` against a live service: with votes and one client its table equals
``irbandits simulate --ltr``'s run 0; with clicks every impression goes through lists and clicks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from helpers import DATA, run_cli

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import read_ltr
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import simulate

from .conftest import ADMIN

LTR = DATA / "ltr" / "lightgbm-lambdarank-sample" / "rank.test"


def run(live: str, tmp_path: Path, matrix: Path, feedback: str, n: int, algorithm: str) -> pd.DataFrame:
    out = tmp_path / feedback
    r = run_cli("experiment-replay", "--url", live, "--token", ADMIN, "--ltr", LTR, "--rankers", "1,11,100,121",
                "--click-model", "navigational", "--interleaving", "team-draft", "--matrix", matrix, "--impressions", n,
                "--seed", "7", "--feedback", feedback, "-a", algorithm, "--out", out)
    assert r.exit_code == 0, r.output
    assert (out / "regret.png").stat().st_size > 0
    return pd.read_parquet(out / "results.parquet")


def test_replay_with_votes_equals_the_simulation_and_clicks_run_the_full_cycle(service, live, tmp_path):
    data = read_ltr(LTR)
    env = ClickEnvironment(data.rankers([0, 10, 99, 120]), "navigational", "team-draft")
    matrix, _ = env.estimate(300, seed=0).save(tmp_path / "m.txt")
    P = PreferenceMatrix.load(matrix)
    replayed = run(live, tmp_path, matrix, "votes", 400, "MergeDTS:tuned")
    simulated = simulate(P, ["MergeDTS:tuned"], horizon=400, runs=1, seed=7, progress=False, environment=env)
    cols = ["algorithm", "run", "step", "regret", "copeland_regret", "recommended", "correct"]
    assert replayed[cols].equals(simulated[cols]) and replayed.regret.iloc[-1] > 0
    clicked = run(live, tmp_path, matrix, "clicks", 150, "RUCB")
    assert clicked.step.tolist() == simulate(P, ["RUCB"], 150, runs=1, progress=False).step.tolist()
    states = [service.app.state.experiments.experiments[e] for e in (1, 2)]
    assert [(s.impressions, s.outcomes, s.expired) for s in states] == [(400, 400, 0), (150, 150, 0)]


def test_replay_names_an_unreachable_service(tmp_path, cli):
    r = cli("experiment-replay", "--url", "http://127.0.0.1:9", "--token", "x", "--ltr", LTR, "--rankers", "1-3",
            "--impressions", "5", "--out", tmp_path)
    assert isinstance(r.exception, IrbanditsError) and "cannot reach the service" in str(r.exception)
