"""``irbandits experiment-replay``: drive a running service's online experiment with simulated users.

For each algorithm it creates an experiment of K rankers (features of an LTR file) on the service
and plays N impressions through the HTTP API, the user simulated by :mod:`irbandits.clicks` exactly
as in ``irbandits simulate --ltr`` (run 0 of ``--seed``: the same arm permutation, algorithm seed and
environment stream); it writes the same results table and plots.

- ``--feedback clicks`` (default): impressions -> lists (each ranker's top 10 for a random query) ->
  the service's interleaved list -> simulated clicks on it -> clicks. The service interleaves and
  draws the tie coin with its own generators, so the curve is a different draw of the same process.
- ``--feedback votes``: the client runs the simulation's whole comparison (query, lists,
  interleaving, clicks, coin) and votes for the winner: with one client the service's algorithm sees
  the simulation's outcomes, so the regret curve equals ``irbandits simulate --ltr``'s.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from irbandits.cli.common import (
    CLICK_MODEL,
    LTR,
    QUERY_FILE,
    RANKERS,
    console,
    ltr_environment,
    make_table,
    parse_count,
    reference_problem,
)
from irbandits.errors import IrbanditsError

FEEDBACK = ("clicks", "votes")


class _User:
    """The simulation's user on one environment stream: lists for a query, clicks on a shown list."""

    def __init__(self, env, perm: np.ndarray, env_seed):
        from irbandits.clicks.interleaving import CUTOFF
        from irbandits.clicks.matrix import new_work
        from irbandits.rng import new_rng

        self.env, self.perm = env, perm
        self.world = env.world(perm)
        self.rng = new_rng(env_seed)
        self.lists, self.model = env.rankers.arrays(), env.model.arrays()
        self.a, self.b = np.empty(CUTOFF, np.int64), np.empty(CUTOFF, np.int64)
        self.grades, self.clicked = np.empty(CUTOFF, np.int64), np.empty(CUTOFF, np.bool_)
        self.work = new_work()

    def duel(self, c: int, d: int) -> bool:
        """The simulation's whole comparison of arms c and d: did c win?"""
        return bool(self.env.duel(self.world, self.rng, c, d))

    def rankings(self, c: int, d: int) -> tuple[list[str], list[str]]:
        """Both rankers' top 10 on a random query (the simulation's draws, in its order)."""
        from irbandits.clicks.interleaving import CUTOFF
        from irbandits.clicks.ltr import top_k
        from irbandits.rng import randint

        order, gend, start, _ = self.lists
        q = randint(self.rng, start.shape[1] - 1)
        na = top_k(order, gend, start, self.perm[c], q, CUTOFF, self.rng, self.a)
        nb = top_k(order, gend, start, self.perm[d], q, CUTOFF, self.rng, self.b)
        return [str(x) for x in self.a[:na]], [str(x) for x in self.b[:nb]]

    def clicks(self, shown: list[str]) -> list[int]:
        """Clicked positions of ``shown`` under the click model."""
        from irbandits.clicks.click_models import simulate_clicks

        labels = self.lists[3]
        for i, docno in enumerate(shown):
            self.grades[i] = labels[int(docno)]
        click, stop, exam, stop_rank = self.model
        simulate_clicks(self.grades, len(shown), click, stop, exam, stop_rank, self.rng, self.clicked)
        return [i for i in range(len(shown)) if self.clicked[i]]


def replay(client, env, problem, algorithm: str, impressions: int, seed: int = 0, feedback: str = "clicks",
           name: str = "replay"):
    """Play ``impressions`` impressions of a new experiment on the service behind ``client``; the
    tidy table of ``irbandits simulate`` (one run) against ``problem``'s regret."""
    import pandas as pd

    from irbandits.dueling import parse_spec
    from irbandits.simulate import COLUMNS, checkpoints, run_streams

    if feedback not in FEEDBACK:
        raise IrbanditsError(f"--feedback must be clicks or votes, got {feedback!r}")
    spec = parse_spec(algorithm)
    perm, env_seed, _ = run_streams(np.random.SeedSequence(seed).spawn(1)[0], problem.K)
    names = [env.rankers.names[i] for i in perm]
    eid = client.create_experiment(name, names, algorithm, env.interleaving, seed=seed, horizon=impressions)
    user = _User(env, perm, env_seed)
    index = {n: i for i, n in enumerate(names)}
    steps = checkpoints(impressions)
    rows, regret, creg, k = [], 0.0, 0.0, 0
    start = time.perf_counter()
    for step in range(1, impressions + 1):
        imp = client.impression(eid)
        (a, b), iid = imp["rankers"], imp["impression"]
        c, d = index[a], index[b]
        if feedback == "votes":
            client.vote(iid, a if user.duel(c, d) else b)
        else:
            la, lb = user.rankings(c, d)
            shown = client.lists(iid, {a: la, b: lb})
            client.clicks(iid, user.clicks(shown))
        regret += 0.5 * (problem.gaps[perm[c]] + problem.gaps[perm[d]])
        creg += 0.5 * (problem.copeland_gaps[perm[c]] + problem.copeland_gaps[perm[d]])
        if step == steps[k]:
            best = int(perm[index[client.experiment(eid)["recommended"]]])
            rows.append(dict(algorithm=spec.label, run=0, step=step, regret=regret, copeland_regret=creg,
                             recommended=best, correct=best in problem.winners, run_seconds=0.0))
            k += 1
    table = pd.DataFrame(rows)
    table["run_seconds"] = time.perf_counter() - start
    return table[COLUMNS]


def experiment_replay(
    url: str = typer.Option("http://127.0.0.1:8000", help="base URL of a running `irbandits serve`"),
    token: str = typer.Option(..., envvar="IRBANDITS_ADMIN_TOKEN", help="the organiser token"),
    ltr: Path = LTR,
    query_file: Optional[Path] = QUERY_FILE,
    click_model: str = CLICK_MODEL,
    interleaving: str = typer.Option("team-draft", help="the service experiment's interleaving method: team-draft, "
                                     "balanced, probabilistic, probabilistic-assignment, sosm, ..."),
    rankers: Optional[str] = RANKERS,
    algorithm: Optional[list[str]] = typer.Option(None, "--algorithm", "-a",
                                                  help="NAME, NAME:tuned or NAME:param=value,...; repeat for several; default RUCB"),
    impressions: str = typer.Option("1000", help="impressions per algorithm"),
    feedback: str = typer.Option("clicks", help="clicks (lists -> clicks through the service) or votes "
                                 "(the client compares; equals `irbandits simulate --ltr` run 0)"),
    matrix: Optional[Path] = typer.Option(None, help="reference matrix for regret; default estimated as simulate does"),
    seed: int = typer.Option(0, help="seed: the experiment's, and the simulated users' as in simulate run 0"),
    out: Path = typer.Option(Path("results"), help="output directory"),
) -> None:
    """Drive a running service's online experiment with the click simulator for N impressions and
    write the table and regret plot of `irbandits simulate --ltr`."""
    import httpx
    import pandas as pd

    from irbandits.client import Client, ServiceError
    from irbandits.dueling import parse_spec
    from irbandits.plots import plot_accuracy, plot_regret
    from irbandits.simulate import summarize

    n = parse_count(impressions, "--impressions")
    if feedback not in FEEDBACK:
        raise IrbanditsError(f"--feedback must be clicks or votes, got {feedback!r}")
    specs = [parse_spec(a).label for a in (algorithm or ["RUCB"])]
    _, env = ltr_environment(ltr, query_file, click_model, interleaving, rankers)
    P = reference_problem(env, matrix, seed, ltr.name)
    out.mkdir(parents=True, exist_ok=True)
    with Client(url, token) as client:
        try:
            table = pd.concat([replay(client, env, P, a, n, seed, feedback, f"replay {a}") for a in specs],
                              ignore_index=True)
        except ServiceError as exc:
            raise IrbanditsError(f"{url}: the service refused a request ({exc})") from None
        except httpx.TransportError as exc:
            raise IrbanditsError(f"--url {url}: cannot reach the service ({exc})") from None
    table.to_parquet(out / "results.parquet", index=False)
    plot_regret(table, out / "regret.png", title=f"{P.name} via {url}: cumulative Condorcet regret")
    plot_accuracy(table, out / "accuracy.png", title=f"{P.name} via {url}: accuracy")
    summary = summarize(table).rename(columns={"regret_mean": "regret"}).drop(columns=["regret_se"])
    console.print(make_table(summary, f"after {n:,} impressions per algorithm ({feedback})"))
    console.print(f"wrote {out / 'results.parquet'}, {out / 'regret.png'}, {out / 'accuracy.png'}")
