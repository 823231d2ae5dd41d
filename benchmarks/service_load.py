"""Load on ``irbandits serve``: many simulated assessors answering a preference campaign over loopback.

    python benchmarks/service_load.py --seconds 60 --assessors 50
    python benchmarks/service_load.py --db sqlite --db postgresql+psycopg://postgres@127.0.0.1:5432/test

For each database it starts ``irbandits serve`` as a subprocess (free port, fresh database: a temporary
SQLite file, or a PostgreSQL database ``irbandits_load`` created anew next to the one named), creates
the 53-topic DL-2021 campaign (``assessors_per_pair`` 3, so that there is work for all), and runs two
loads of ``--seconds`` each with ``--assessors`` concurrent assessors (asyncio on uvloop, the minimal
keep-alive client :class:`Connection`, one connection each; an assessor answers from the qrels grades):

- ``steady``: answers/s, p50 / p99 latency of ``GET /api/next`` and ``POST /api/tasks/T/answer``, errors,
  and the CPU time the server and the clients spent per answer (on a shared machine the rate depends on
  what else runs; the CPU per answer much less);
- ``SIGKILL``: the same, with the server killed by SIGKILL half-way and started again on the same
  database; clients retry what failed (an answer with the same ``client_id``). Afterwards every
  acknowledged answer must be in the judgments table exactly once, keyed by what identifies an answer
  (assessor, task, client id: a quality check asks a pair again on purpose), with the rows of each
  kind counted; and the process state that a fresh app rebuilds from the database must equal a
  replay of the exported answers.

Everything is bounded: each request times out after 10 s, each load stops after ``--seconds``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data" / "trec-dl-2021-passage"
ADMIN = "load-" + uuid.uuid4().hex
OPTIONS = dict(seed=7, assessors_per_pair=3)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fresh_database(url: str, tmp: Path) -> str:
    """A URL of an empty database of the kind ``url`` names."""
    if url == "sqlite":
        return f"sqlite:///{tmp / 'load.db'}"
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text("DROP DATABASE IF EXISTS irbandits_load WITH (FORCE)"))
        conn.execute(text("CREATE DATABASE irbandits_load"))
    engine.dispose()
    return make_url(url).set(database="irbandits_load").render_as_string(hide_password=False)


class Server:
    """``irbandits serve`` in a subprocess, its output in a log file."""

    def __init__(self, db: str, tmp: Path):
        self.db, self.tmp, self.port = db, tmp, free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> "Server":
        env = dict(os.environ, IRBANDITS_ADMIN_TOKEN=ADMIN, PYTHONPATH=str(ROOT / "src"))
        self.proc = subprocess.Popen([sys.executable, "-m", "irbandits.cli", "serve", "--db", self.db, "--port",
                                      str(self.port), "--lease", "60"], env=env, cwd=self.tmp,
                                     stdout=open(self.tmp / "server.log", "a"), stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/api/campaigns", headers=admin()).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.1)
        raise SystemExit(f"the server did not start; see {self.tmp / 'server.log'}")

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (Linux ``/proc``)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN}"}


def campaign_body() -> dict:
    qrels = (DATA / "qrels.txt").read_text()
    queries = dict(line.split("\t", 1) for line in (DATA / "queries.tsv").read_text().splitlines() if line.strip())
    texts = {line.split()[2]: f"passage {line.split()[2]} " + "text " * 60 for line in qrels.splitlines()}
    return dict(name="load", kind="preference", topics=queries, texts=texts, qrels=qrels, options=OPTIONS)


class Load:
    """Latencies, counts and acknowledged answers of one load."""

    def __init__(self):
        self.lat: dict[str, list[float]] = {"next": [], "answer": []}
        self.errors: Counter = Counter()
        self.acked: list[tuple[int, str, str, str]] = []   # (assessor, topic, left, right)
        self.answers = 0
        self.cpu_killed = 0.0                               # CPU seconds of a server killed mid-run


class Connection:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams: the clients must not need more CPU than
    the server they measure (httpx spends about twice the server's time per request). The head of an
    answer is read in one call and only its status and Content-Length are looked at."""

    def __init__(self, port: int, token: str):
        self.port, self.token, self.reader, self.writer = port, token, None, None
        self.headers = (f"Host: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n"
                        f"Content-Length: ").encode()

    async def request(self, method: str, path: str, body: dict | bytes | None = None) -> tuple[int, bytes]:
        """``body``: a dict sent as JSON, or JSON already encoded."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
        self.writer.write(b"%s %s HTTP/1.1\r\n%s%d\r\n\r\n%s" % (method.encode(), path.encode(), self.headers,
                                                                 len(data), data))
        try:
            await self.writer.drain()
            head = (await self.reader.readuntil(b"\r\n\r\n")).lower()
            at = head.find(b"\r\ncontent-length:")
            length = 0 if at < 0 else int(head[at + 17:head.index(b"\r\n", at + 17)])
            return int(head[9:12]), await self.reader.readexactly(length)
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            self.writer.close()
            self.writer = None
            raise ConnectionError("the server closed the connection") from None


def run_clients(load):
    """Run the coroutine ``load`` to its end on uvloop (installed with ``uvicorn[standard]``): its event
    loop costs the clients less CPU than asyncio's."""
    import uvloop

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(load)


async def assessor(server: Server, token: str, aid: int, grade: dict, load: Load, stop: float, rng) -> None:
    http = Connection(server.port, token)
    task, client_id = None, None
    while time.time() < stop:
        try:
            if task is None:
                t0 = time.perf_counter()
                async with asyncio.timeout(10):
                    status, body = await http.request("GET", "/api/next")
                load.lat["next"].append(time.perf_counter() - t0)
                if status == 204:
                    await asyncio.sleep(0.05)
                    continue
                if status != 200:
                    load.errors[f"next {status}"] += 1
                    continue
                task, client_id = json.loads(body), uuid.uuid4().hex
            left, right = (i["docno"] for i in task["items"])
            gl, gr = grade[task["topic"], left], grade[task["topic"], right]
            answer = "left" if gl > gr or (gl == gr and rng.random() < 0.5) else "right"
            t0 = time.perf_counter()
            async with asyncio.timeout(10):
                status, _ = await http.request("POST", f"/api/tasks/{task['task']}/answer",
                                               {"answer": answer, "client_id": client_id})
            load.lat["answer"].append(time.perf_counter() - t0)
            if status == 200:
                load.acked.append((aid, task["task"], client_id))
                load.answers += 1
            else:
                load.errors[f"answer {status}"] += 1
            task = None
        except (ConnectionError, asyncio.TimeoutError) as exc:   # the server is down (SIGKILL): retry the same request
            load.errors[f"unavailable ({type(exc).__name__})"] += 1
            if http.writer is not None:
                http.writer.close()
                http.writer = None
            await asyncio.sleep(0.1)
    if http.writer is not None:
        http.writer.close()


async def run_load(server: Server, tokens: list[tuple[int, str]], grade: dict, seconds: float,
                   kill_after: float | None) -> Load:
    load = Load()
    stop = time.time() + seconds
    rngs = [np.random.default_rng(i) for i in range(len(tokens))]
    tasks = [asyncio.create_task(assessor(server, tok, aid, grade, load, stop, rng))
             for (aid, tok), rng in zip(tokens, rngs)]
    if kill_after is not None:
        await asyncio.sleep(kill_after)
        load.cpu_killed = server.cpu_seconds()
        server.kill()
        await asyncio.to_thread(server.start)
    await asyncio.gather(*tasks)
    return load


def pct(values: list[float], q: float) -> str:
    return f"{1000 * np.percentile(values, q):.1f}" if values else "-"


def check_after_crash(server: Server, cid: int, load: Load) -> dict:
    """Every acknowledged answer exactly once in the judgments log, by what identifies an answer (its
    assessor, task and client id; the quality checks ask a pair again on purpose, so a pair is no key);
    the rows of each kind; rebuilt state == replay of the export."""
    from sqlalchemy import select

    from irbandits.service.app import create_app
    from irbandits.service.credentials import secrets_path
    from irbandits.service.judges import make_judge
    from irbandits.service.models import CampaignRow, Judgment
    from irbandits.service.settings import Settings

    lines = [line.split() for line in httpx.get(f"{server.url}/api/campaigns/{cid}/judgments", headers=admin(),
                                                timeout=60).text.splitlines()]
    server.stop()
    app = create_app(Settings(db_url=server.db, admin_token=ADMIN, secrets_file=str(server.tmp / secrets_path(server.db))))
    runtime = app.state.campaigns.get(cid)
    with app.state.sessions() as session:
        row = session.get(CampaignRow, cid)
        replay = make_judge(row.kind, row.pools, row.options)
        logged = session.execute(select(Judgment.assessor_id, Judgment.task_id, Judgment.client_id, Judgment.kind)
                                 .where(Judgment.campaign_id == cid)).all()
    for topic, left, right, winner, *_ in lines:
        replay.apply(topic, left, right, winner)
    same = runtime.judge.state() == replay.state()
    app.state.engine.dispose()
    stored = Counter((a, t, c) for a, t, c, kind in logged if kind != "retract")
    acked = Counter(load.acked)
    return dict(exported=len(lines), acknowledged=len(load.acked), rows=dict(Counter(kind for *_, kind in logged)),
                missing=sum(1 for k in acked if stored[k] == 0),
                duplicated=sum(1 for k in acked if stored[k] > 1) + sum(1 for v in acked.values() if v > 1),
                state_equal=same)


def bench(db: str, args) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        url = fresh_database(db, tmp)
        server = Server(url, tmp).start()
        body = campaign_body()
        grade = {(t, d): int(g) for t, _, d, g in (line.split() for line in body["qrels"].splitlines())}
        for scenario in ("steady", "SIGKILL"):
            cid = httpx.post(f"{server.url}/api/campaigns", json=body, headers=admin(), timeout=120).json()["id"]
            tokens = []
            for i in range(args.assessors):
                r = httpx.post(f"{server.url}/api/campaigns/{cid}/assessors", json={"name": f"a{i}"}, headers=admin())
                tokens.append((r.json()["id"], r.json()["token"]))
            start, cpu, client_cpu = time.time(), server.cpu_seconds(), time.process_time()
            load = run_clients(run_load(server, tokens, grade, args.seconds,
                                        args.seconds / 2 if scenario == "SIGKILL" else None))
            elapsed = time.time() - start
            cpu = load.cpu_killed - cpu + server.cpu_seconds()   # killed server's share + the restarted one's (from 0)
            client_cpu = time.process_time() - client_cpu
            row = dict(db=db.split(":")[0].split("+")[0], scenario=scenario, answers=load.answers,
                       answers_per_s=round(load.answers / elapsed, 1),
                       next_p50_ms=pct(load.lat["next"], 50), next_p99_ms=pct(load.lat["next"], 99),
                       answer_p50_ms=pct(load.lat["answer"], 50), answer_p99_ms=pct(load.lat["answer"], 99),
                       server_cpu_ms_per_answer=round(1000 * cpu / max(load.answers, 1), 2),
                       client_cpu_ms_per_answer=round(1000 * client_cpu / max(load.answers, 1), 2),
                       errors=dict(load.errors) or 0)
            if scenario == "SIGKILL":
                row.update(check_after_crash(server, cid, load))
            rows.append(row)
            print(row, flush=True)
        if server.proc.poll() is None:
            server.stop()
    return rows


def add_db_option(ap: argparse.ArgumentParser) -> None:
    """``--db``, shared with the experiments' load benchmark."""
    ap.add_argument("--db", action="append", help="sqlite, or a postgresql+psycopg:// URL (repeat); default "
                                                  "sqlite, then IRBANDITS_TEST_PG_URL when set")


def run_and_print(bench, args) -> None:
    """``bench(db, args)`` on every database of ``--db``; one table of all rows."""
    import pandas as pd

    dbs = args.db or ["sqlite"] + ([os.environ["IRBANDITS_TEST_PG_URL"]] if os.environ.get("IRBANDITS_TEST_PG_URL") else [])
    print(pd.DataFrame([row for db in dbs for row in bench(db, args)]).to_string(index=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60, help="length of each load")
    ap.add_argument("--assessors", type=int, default=50, help="concurrent simulated assessors")
    add_db_option(ap)
    run_and_print(bench, ap.parse_args())


if __name__ == "__main__":
    main()
