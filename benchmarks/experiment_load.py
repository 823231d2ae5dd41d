"""Load on an online experiment of ``irbandits serve``: concurrent front ends doing the full
impression -> lists -> clicks cycle over loopback.

    python benchmarks/experiment_load.py --seconds 60 --clients 8
    python benchmarks/experiment_load.py --db sqlite --db postgresql+psycopg://postgres@127.0.0.1:5432/test
    python benchmarks/experiment_load.py --learner PDGD --documents 100 --features 64

For each database (the servers and fresh databases of ``service_load.py``) it creates a 10-ranker
``RUCB`` team-draft experiment with one client token and runs two loads of ``--seconds`` each with
``--clients`` concurrent clients (asyncio on uvloop in this one process, one keep-alive connection each,
the minimal HTTP client of ``service_load.py``; every ranker's list is 10 of a query's 30 documents,
the user clicks a random shown result):

- ``steady``: full cycles/s, p50 / p99 of each call, errors, the CPU time the server and the clients
  spent per cycle, and the load average before and after (the rate depends on what else runs);
- ``SIGKILL``: the same with the server killed by SIGKILL half-way and started again on the same
  database; a client retries a call that got no answer (a retried outcome that the server had
  committed gets 409: applied once). Afterwards every acknowledged outcome is in the outcomes table
  exactly once, and the state a fresh app rebuilds equals an uninterrupted replay of the logged
  selects and outcomes through a new algorithm object.

With ``--learner SPEC`` the experiment holds that online learner instead (``irbandits oltr -a``): the
cycle is impression (``--documents`` candidates of ``--features`` normal features, one of 200 queries,
sent as JSON made once) -> clicks (the user clicks the shown document that a hidden linear ranker scores
highest), and after the crash the rebuilt learner must equal a replay of the logged lists and clicks
through a new learner object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from service_load import (  # noqa: E402
    ADMIN,
    Connection,
    Server,
    add_db_option,
    admin,
    fresh_database,
    pct,
    run_and_print,
    run_clients,
)

RANKERS = [f"ranker{i}" for i in range(10)]
CALLS = ("impression", "lists", "clicks")
SCENARIOS = ("steady", "SIGKILL")
# each ranker's list for each of 1000 queries: 10 of the query's 30 documents (made once: the clients
# must not spend more CPU than the server they measure)
LISTS = {(q, x): [f"q{q}-d{d}" for d in np.random.default_rng([q, i]).permutation(30)[:10]]
         for q in range(1000) for i, x in enumerate(RANKERS)}


class Load:
    def __init__(self):
        self.lat: dict[str, list[float]] = {c: [] for c in CALLS}
        self.errors: Counter = Counter()
        self.acked: list[int] = []   # impressions whose outcome was acknowledged (200)
        self.cycles = 0
        self.cpu_killed = 0.0        # CPU seconds of a server killed mid-run


async def call(http: Connection, load: Load, name: str, path: str, body: dict, stop: float):
    """POST, retried while the server is down; returns ``(status, body)`` (None when the load ended)."""
    while time.time() < stop + 30:
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(10):   # no task per call, as wait_for makes on Python 3.11
                status, data = await http.request("POST", path, body)
        except (ConnectionError, asyncio.TimeoutError) as exc:
            load.errors[f"unavailable ({type(exc).__name__})"] += 1
            if http.writer is not None:
                http.writer.close()
                http.writer = None
            await asyncio.sleep(0.1)
            continue
        load.lat[name].append(time.perf_counter() - t0)
        return status, data
    return None


class Queries:
    """A learner's candidate sets: each query's impression body (JSON made once) and the hidden score
    of each of its documents."""

    def __init__(self, documents: int, features: int, n: int = 200):
        g = np.random.default_rng(0)
        w = g.normal(size=features)
        self.bodies, self.scores = [], []
        for q in range(n):
            X = g.normal(size=(documents, features))
            docs = [f"q{q}-d{j}" for j in range(documents)]
            self.bodies.append(json.dumps(dict(documents=docs, features=X.tolist())).encode())
            self.scores.append(dict(zip(docs, X @ w)))


async def learner_client(server: Server, eid: int, token: str, load: Load, stop: float, rng, queries: Queries):
    http = Connection(server.port, token)
    while time.time() < stop:
        q = int(rng.integers(len(queries.bodies)))
        r = await call(http, load, "impression", f"/api/experiments/{eid}/impressions", queries.bodies[q], stop)
        if r is None or r[0] != 201:
            load.errors[f"impression {r and r[0]}"] += 1
            continue
        got = json.loads(r[1])
        shown, score = got["list"], queries.scores[q]
        best = max(range(len(shown)), key=lambda p: score[shown[p]])
        r = await call(http, load, "clicks", f"/api/impressions/{got['impression']}/clicks", {"clicks": [best]}, stop)
        if r is not None and r[0] == 200:
            load.acked.append(got["impression"])
            load.cycles += 1
        elif r is not None and r[0] == 409:
            load.errors["clicks 409 on a retry (committed before the crash)"] += 1
        else:
            load.errors[f"clicks {r and r[0]}"] += 1
    if http.writer is not None:
        http.writer.close()


async def client(server: Server, eid: int, token: str, load: Load, stop: float, rng, queries=None) -> None:
    if queries is not None:
        return await learner_client(server, eid, token, load, stop, rng, queries)
    http = Connection(server.port, token)
    while time.time() < stop:
        r = await call(http, load, "impression", f"/api/experiments/{eid}/impressions", {}, stop)
        if r is None or r[0] != 201:
            load.errors[f"impression {r and r[0]}"] += 1
            continue
        got = json.loads(r[1])
        iid, (a, b) = got["impression"], got["rankers"]
        q = int(rng.integers(1000))
        r = await call(http, load, "lists", f"/api/impressions/{iid}/lists", {"lists": {x: LISTS[q, x] for x in (a, b)}},
                       stop)
        if r is None or r[0] != 200:
            load.errors[f"lists {r and r[0]}"] += 1   # a retry after a crash: 409
            continue
        shown = json.loads(r[1])["list"]
        r = await call(http, load, "clicks", f"/api/impressions/{iid}/clicks",
                       {"clicks": [int(rng.integers(len(shown)))]}, stop)
        if r is not None and r[0] == 200:
            load.acked.append(iid)
            load.cycles += 1
        elif r is not None and r[0] == 409:
            load.errors["clicks 409 on a retry (committed before the crash)"] += 1
        else:
            load.errors[f"clicks {r and r[0]}"] += 1
    if http.writer is not None:
        http.writer.close()


async def run_load(server: Server, eid: int, token: str, clients: int, seconds: float, kill_after,
                   queries: Queries | None) -> Load:
    load = Load()
    stop = time.time() + seconds
    tasks = [asyncio.create_task(client(server, eid, token, load, stop, np.random.default_rng(i), queries))
             for i in range(clients)]
    if kill_after is not None:
        await asyncio.sleep(kill_after)
        load.cpu_killed = server.cpu_seconds()
        server.kill()
        await asyncio.to_thread(server.start)
    await asyncio.gather(*tasks)
    return load


def logged(server: Server, eid: int):
    """After a load: the experiment's live state, then (server stopped) an app rebuilt from the database, the
    experiment's runtime there, its row, and its impressions and outcomes by ``seq``."""
    from sqlalchemy import select

    from irbandits.service.app import create_app
    from irbandits.service.credentials import secrets_path
    from irbandits.service.models import ExperimentRow, Impression, Outcome
    from irbandits.service.settings import Settings

    live = httpx.get(f"{server.url}/api/experiments/{eid}", headers=admin(), timeout=60).json()
    server.stop()
    app = create_app(Settings(db_url=server.db, admin_token=ADMIN, secrets_file=str(server.tmp / secrets_path(server.db))))
    rebuilt = app.state.experiments.get(eid)
    with app.state.sessions() as session:
        row = session.get(ExperimentRow, eid)
        imps = {i.seq: i for i in session.scalars(select(Impression).where(Impression.experiment_id == eid))}
        outs = {o.seq: o for o in session.scalars(select(Outcome).where(Outcome.experiment_id == eid))}
    return live, app, rebuilt, row, imps, outs


def check_after_crash(server: Server, eid: int, load: Load) -> dict:
    """Acknowledged outcomes stored once each; the rebuilt state equals a fresh replay of the log."""
    from irbandits.service.experiment_runtime import make_algorithm

    live, app, rebuilt, row, imps, outs = logged(server, eid)
    algo = make_algorithm(dict(algorithm=row.algorithm, rankers=row.rankers, seed=row.seed, horizon=row.horizon))
    pair = {i.id: (i.c, i.d) for i in imps.values()}
    selects_agree = True
    for seq in range(1, len(imps) + len(outs) + 1):
        if seq in imps:
            selects_agree &= algo.select() == (imps[seq].c, imps[seq].d)
        else:
            algo.update(*pair[outs[seq].impression_id], outs[seq].c_won)
    a, b = algo.state, rebuilt.algo.state
    return _checked(app, load, live, outs, selects_agree, a, b)


def _checked(app, load: Load, live: dict, outs: dict, selects_agree: bool, a: dict, b: dict) -> dict:
    """The crash check's row: acknowledged outcomes stored once, and states ``a`` (replayed here) and ``b``
    (the app's rebuild) equal."""
    same = (selects_agree and (a["rng"] == b["rng"]).all()
            and all((a["arrays"][k] == b["arrays"][k]).all() for k in a["arrays"]))
    stored = Counter(o.impression_id for o in outs.values())
    app.state.engine.dispose()
    return dict(outcomes_stored=len(outs), acknowledged=len(load.acked),
                missing=sum(1 for i in load.acked if stored[i] == 0), duplicated=sum(1 for v in stored.values() if v > 1),
                live_outcomes=live["outcomes"], state_equal=bool(same))


def check_learner_after_crash(server: Server, eid: int, load: Load) -> dict:
    """As :func:`check_after_crash`, for a learner: the logged lists and clicks replayed through a new one."""
    from irbandits.service.experiment_runtime import impression_rng
    from irbandits.service.learner_runtime import make_learner, unpacked

    live, app, rebuilt, row, imps, outs = logged(server, eid)
    learner = make_learner(dict(algorithm=row.algorithm, features=row.features, seed=row.seed))
    shown, lists_agree = {}, True
    for seq in range(1, len(imps) + len(outs) + 1):
        if seq in imps:
            imp = imps[seq]
            shown[imp.id] = (learner.show(unpacked(imp.shown), rng=impression_rng(row.seed, 1, seq)), seq)
            lists_agree &= shown[imp.id][0].list == imp.shown["list"]
        else:
            listed, at = shown.pop(outs[seq].impression_id)
            learner.learn(listed, outs[seq].clicks, rng=impression_rng(row.seed, 2, at))
    return _checked(app, load, live, outs, lists_agree, learner.state, rebuilt.learner.state)


def bench(db: str, args) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server = Server(fresh_database(db, tmp), tmp).start()
        queries = Queries(args.documents, args.features) if args.learner else None
        calls = ("impression", "clicks") if args.learner else CALLS
        for scenario in args.scenario or SCENARIOS:
            body = (dict(name=scenario, learner=args.learner, features=args.features, seed=1) if args.learner else
                    dict(name=scenario, rankers=RANKERS, algorithm="RUCB", comparison="team-draft", seed=1))
            eid = httpx.post(f"{server.url}/api/experiments", headers=admin(), json=body).json()["id"]
            token = httpx.post(f"{server.url}/api/experiments/{eid}/clients", headers=admin(),
                               json={"name": "load"}).json()["token"]
            start, cpu, client_cpu, loadavg = time.time(), server.cpu_seconds(), time.process_time(), os.getloadavg()[0]
            load = run_clients(run_load(server, eid, token, args.clients, args.seconds,
                                        args.seconds / 2 if scenario == "SIGKILL" else None, queries))
            elapsed = time.time() - start
            cpu = load.cpu_killed - cpu + server.cpu_seconds()   # killed server's share + the restarted one's (from 0)
            client_cpu = time.process_time() - client_cpu
            row = dict(db=db.split(":")[0].split("+")[0], scenario=scenario, cycles=load.cycles,
                       cycles_per_s=round(load.cycles / elapsed, 1),
                       **{f"{c}_p50_ms": pct(load.lat[c], 50) for c in calls},
                       **{f"{c}_p99_ms": pct(load.lat[c], 99) for c in calls},
                       server_cpu_ms_per_cycle=round(1000 * cpu / max(load.cycles, 1), 2),
                       client_cpu_ms_per_cycle=round(1000 * client_cpu / max(load.cycles, 1), 2),
                       loadavg=f"{loadavg:.1f}-{os.getloadavg()[0]:.1f}", errors=dict(load.errors) or 0)
            if scenario == "SIGKILL":
                row.update((check_learner_after_crash if args.learner else check_after_crash)(server, eid, load))
            rows.append(row)
            print(row, flush=True)
        if server.proc.poll() is None:
            server.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60, help="length of each load")
    ap.add_argument("--clients", type=int, default=8, help="concurrent front ends")
    ap.add_argument("--scenario", action="append", choices=SCENARIOS,
                    help="run only this load (repeat); default: steady, then SIGKILL")
    ap.add_argument("--learner", help="an online learner (as irbandits oltr -a takes it) instead of 10 rankers")
    ap.add_argument("--documents", type=int, default=100, help="with --learner: candidate documents an impression")
    ap.add_argument("--features", type=int, default=64, help="with --learner: features of a document")
    add_db_option(ap)
    run_and_print(bench, ap.parse_args())


if __name__ == "__main__":
    main()
