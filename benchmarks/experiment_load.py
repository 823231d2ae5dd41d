"""Load on an online experiment of ``irbandits serve``: concurrent front ends doing the full
impression -> lists -> clicks cycle over loopback.

    python benchmarks/experiment_load.py --seconds 60 --clients 8
    python benchmarks/experiment_load.py --db sqlite --db postgresql+psycopg://postgres@127.0.0.1:5432/test

For each database (the servers and fresh databases of ``service_load.py``) it creates a 10-ranker
``RUCB`` team-draft experiment with one client token and runs two loads of ``--seconds`` each with
``--clients`` concurrent clients (asyncio + httpx, one connection each; every ranker's list is 10 of
a query's 30 documents, the user clicks a random shown result):

- ``steady``: full cycles/s, p50 / p99 of each call, errors;
- ``SIGKILL``: the same with the server killed by SIGKILL half-way and started again on the same
  database; a client retries a call that got no answer (a retried outcome that the server had
  committed gets 409: applied once). Afterwards every acknowledged outcome is in the outcomes table
  exactly once, and the state a fresh app rebuilds equals an uninterrupted replay of the logged
  selects and outcomes through a new algorithm object.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from service_load import ADMIN, Server, admin, fresh_database, pct  # noqa: E402

RANKERS = [f"ranker{i}" for i in range(10)]
CALLS = ("impression", "lists", "clicks")


class Load:
    def __init__(self):
        self.lat: dict[str, list[float]] = {c: [] for c in CALLS}
        self.errors: Counter = Counter()
        self.acked: list[int] = []   # impressions whose outcome was acknowledged (200)
        self.cycles = 0


async def call(http, load: Load, name: str, path: str, body: dict, stop: float):
    """POST, retried while the server is down; returns the response (None when the load ended)."""
    while time.time() < stop + 30:
        t0 = time.perf_counter()
        try:
            r = await http.post(path, json=body)
        except httpx.TransportError as exc:
            load.errors[f"unavailable ({type(exc).__name__})"] += 1
            await asyncio.sleep(0.1)
            continue
        load.lat[name].append(time.perf_counter() - t0)
        return r
    return None


async def client(url: str, eid: int, token: str, load: Load, stop: float, rng) -> None:
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10) as http:
        while time.time() < stop:
            r = await call(http, load, "impression", f"/api/experiments/{eid}/impressions", {}, stop)
            if r is None or r.status_code != 201:
                load.errors[f"impression {getattr(r, 'status_code', '-')}"] += 1
                continue
            iid, (a, b) = r.json()["impression"], r.json()["rankers"]
            q = int(rng.integers(1000))
            lists = {x: [f"q{q}-d{d}" for d in np.random.default_rng([q, RANKERS.index(x)]).permutation(30)[:10]]
                     for x in (a, b)}
            r = await call(http, load, "lists", f"/api/impressions/{iid}/lists", {"lists": lists}, stop)
            if r is None or r.status_code != 200:
                load.errors[f"lists {getattr(r, 'status_code', '-')}"] += 1   # a retry after a crash: 409
                continue
            shown = r.json()["list"]
            r = await call(http, load, "clicks", f"/api/impressions/{iid}/clicks",
                           {"clicks": [int(rng.integers(len(shown)))]}, stop)
            if r is not None and r.status_code == 200:
                load.acked.append(iid)
                load.cycles += 1
            elif r is not None and r.status_code == 409:
                load.errors["clicks 409 on a retry (committed before the crash)"] += 1
            else:
                load.errors[f"clicks {getattr(r, 'status_code', '-')}"] += 1


async def run_load(server: Server, eid: int, token: str, clients: int, seconds: float, kill_after) -> Load:
    load = Load()
    stop = time.time() + seconds
    tasks = [asyncio.create_task(client(server.url, eid, token, load, stop, np.random.default_rng(i)))
             for i in range(clients)]
    if kill_after is not None:
        await asyncio.sleep(kill_after)
        server.kill()
        await asyncio.to_thread(server.start)
    await asyncio.gather(*tasks)
    return load


def check_after_crash(server: Server, eid: int, load: Load) -> dict:
    """Acknowledged outcomes stored once each; the rebuilt state equals a fresh replay of the log."""
    from sqlalchemy import select

    from irbandits.service.app import create_app
    from irbandits.service.experiments import make_algorithm
    from irbandits.service.models import ExperimentRow, Impression, Outcome
    from irbandits.service.settings import Settings

    live = httpx.get(f"{server.url}/api/experiments/{eid}", headers=admin(), timeout=60).json()
    server.stop()
    app = create_app(Settings(db_url=server.db, admin_token=ADMIN))
    rebuilt = app.state.experiments.get(eid)
    with app.state.sessions() as session:
        row = session.get(ExperimentRow, eid)
        imps = {i.seq: i for i in session.scalars(select(Impression).where(Impression.experiment_id == eid))}
        outs = {o.seq: o for o in session.scalars(select(Outcome).where(Outcome.experiment_id == eid))}
        algo = make_algorithm(dict(algorithm=row.algorithm, rankers=row.rankers, seed=row.seed, horizon=row.horizon))
    pair = {i.id: (i.c, i.d) for i in imps.values()}
    selects_agree = True
    for seq in range(1, len(imps) + len(outs) + 1):
        if seq in imps:
            selects_agree &= algo.select() == (imps[seq].c, imps[seq].d)
        else:
            algo.update(*pair[outs[seq].impression_id], outs[seq].c_won)
    a, b = algo.state, rebuilt.algo.state
    same = (selects_agree and (a["rng"] == b["rng"]).all()
            and all((a["arrays"][k] == b["arrays"][k]).all() for k in a["arrays"]))
    stored = Counter(o.impression_id for o in outs.values())
    app.state.engine.dispose()
    return dict(outcomes_stored=len(outs), acknowledged=len(load.acked),
                missing=sum(1 for i in load.acked if stored[i] == 0), duplicated=sum(1 for v in stored.values() if v > 1),
                live_outcomes=live["outcomes"], state_equal=bool(same))


def bench(db: str, args) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        server = Server(fresh_database(db, tmp), tmp).start()
        for scenario in ("steady", "SIGKILL"):
            eid = httpx.post(f"{server.url}/api/experiments", headers=admin(), json=dict(
                name=scenario, rankers=RANKERS, algorithm="RUCB", comparison="team-draft", seed=1)).json()["id"]
            token = httpx.post(f"{server.url}/api/experiments/{eid}/clients", headers=admin(),
                               json={"name": "load"}).json()["token"]
            start = time.time()
            load = asyncio.run(run_load(server, eid, token, args.clients, args.seconds,
                                        args.seconds / 2 if scenario == "SIGKILL" else None))
            elapsed = time.time() - start
            row = dict(db=db.split(":")[0].split("+")[0], scenario=scenario, cycles=load.cycles,
                       cycles_per_s=round(load.cycles / elapsed, 1),
                       **{f"{c}_p50_ms": pct(load.lat[c], 50) for c in CALLS},
                       **{f"{c}_p99_ms": pct(load.lat[c], 99) for c in CALLS}, errors=dict(load.errors) or 0)
            if scenario == "SIGKILL":
                row.update(check_after_crash(server, eid, load))
            rows.append(row)
            print(row, flush=True)
        if server.proc.poll() is None:
            server.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60, help="length of each load")
    ap.add_argument("--clients", type=int, default=8, help="concurrent front ends")
    ap.add_argument("--db", action="append", help="sqlite, or a postgresql+psycopg:// URL (repeat); default "
                                                  "sqlite, then IRBANDITS_TEST_PG_URL when set")
    args = ap.parse_args()
    dbs = args.db or ["sqlite"] + ([os.environ["IRBANDITS_TEST_PG_URL"]] if os.environ.get("IRBANDITS_TEST_PG_URL") else [])
    rows = [row for db in dbs for row in bench(db, args)]
    import pandas as pd

    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
