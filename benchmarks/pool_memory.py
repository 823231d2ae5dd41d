"""Time and peak memory of pooling a TREC-sized collection: runs read whole, or only to the pool's depth.

    python benchmarks/pool_memory.py                      # 59 runs x 200 topics x 1,000 documents under /tmp
    python benchmarks/pool_memory.py --runs 20 --topics 50 --docs 200   # a smaller one

The collection is made from the 63 TREC DL-2021 passage runs in ``../shared/data`` (53 topics x 100 documents
each): the first ``--runs`` runs; ``--topics`` topics, the 53 again and again under new ids (``2082``,
``2082-1``, ...); ``--docs`` documents a topic, the run's 100 again and again with a suffix past the first
100 (``msmarco_...``, ``msmarco_...-1``, ...), scored by rank; plain text, one file a run (issue 26: 59 x 200
x 1,000 = 11.8 M lines). The qrels are DL-2021's, copied to every topic copy.

Each measurement is a fresh process under ``/usr/bin/time -v`` (wall-clock seconds, maximum resident set):

- ``whole``: ``read_runs(DIR)`` then ``depth_pools(runs, 10)``: every line kept in memory, as
  ``pool simulate`` read runs before issue 26;
- ``streamed``: ``read_runs(DIR, depth=10)`` then ``depth_pools``: each file ranked as it is read and only
  its top 10 of every topic kept;
- ``pool simulate``: ``irbandits pool simulate --depth 10 --method DocID`` end to end (it reads streamed),
  and with ``--rank-runs ndcg_cut_10`` (which reads to the measure's cutoff, 10).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from irbandits.io import read_qrels, read_runs

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl-2021-passage"


def build(out: Path, runs: int, topics: int, docs: int) -> tuple[Path, Path]:
    """Write the collection under ``out``: ``out/runs/NAME`` and ``out/qrels.txt``."""
    source = read_runs(DATA / "runs")
    names = sorted(source.run.unique())[:runs]
    base = sorted(source.topic.unique())
    ids = [t if k == 0 else f"{t}-{k}" for k, t in ((i // len(base), base[i % len(base)]) for i in range(topics))]
    (out / "runs").mkdir(parents=True, exist_ok=True)
    for name in names:
        run = source[source.run == name]
        lines = []
        for topic in ids:
            original = run.docno[run.topic == topic.split("-")[0]].to_numpy()
            n = len(original)
            for i in range(docs):
                copy = i // n
                docno = original[i % n] if copy == 0 else f"{original[i % n]}-{copy}"
                lines.append(f"{topic} Q0 {docno} {i + 1} {docs - i} {name}\n")
        (out / "runs" / name).write_text("".join(lines))
    qrels = read_qrels(DATA / "qrels.txt")
    with open(out / "qrels.txt", "w") as fh:
        for topic in ids:
            q = qrels[qrels.topic == topic.split("-")[0]]
            fh.writelines(f"{topic} 0 {d} {g}\n" for d, g in zip(q.docno, q.grade))
    return out / "runs", out / "qrels.txt"


def measured(command: list[str]) -> tuple[float, float]:
    """(wall seconds, peak resident MB) of ``command`` in a fresh process under ``/usr/bin/time -v``."""
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{r.stderr[-2000:]}")
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return wall, peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=59)
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/irbandits-pool-memory"))
    parser.add_argument("--keep", action="store_true", help="keep the collection afterwards")
    args = parser.parse_args()
    start = time.perf_counter()
    runs, qrels = build(args.dir, args.runs, args.topics, args.docs)
    lines = sum(1 for f in runs.iterdir() for _ in open(f))
    size = sum(f.stat().st_size for f in runs.iterdir()) / 2**20
    print(f"collection: {args.runs} runs x {args.topics} topics x {args.docs} documents = {lines:,} lines, "
          f"{size:.0f} MiB, under {args.dir} (built in {time.perf_counter() - start:.0f} s)")
    python = [sys.executable, "-c"]
    pools = f"from irbandits.pooling import depth_pools; p = depth_pools(runs, {args.depth}); print(len(p))"
    cases = {
        "whole (read every line, then pool)": python + [f"from irbandits.io import read_runs; runs = read_runs({str(runs)!r}); {pools}"],
        f"streamed (read to depth {args.depth}, then pool)": python + [
            f"from irbandits.io import read_runs; runs = read_runs({str(runs)!r}, depth={args.depth}); {pools}"],
        f"pool simulate --depth {args.depth} --method DocID": [
            sys.executable, "-m", "irbandits.cli", "pool", "simulate", "--runs", str(runs), "--qrels", str(qrels),
            "--depth", str(args.depth), "--method", "DocID", "--out", str(args.dir / "out")],
        "  ... --rank-runs ndcg_cut_10 --rank-budget 50": [
            sys.executable, "-m", "irbandits.cli", "pool", "simulate", "--runs", str(runs), "--qrels", str(qrels),
            "--depth", str(args.depth), "--method", "DocID", "--rank-runs", "ndcg_cut_10", "--rank-budget", "50",
            "--out", str(args.dir / "out-rank")],
    }
    print(f"{'what':<52} {'seconds':>8} {'peak MB':>8}")
    results = {}
    for label, command in cases.items():
        results[label] = measured(command)
        print(f"{label:<52} {results[label][0]:>8.1f} {results[label][1]:>8.0f}")
    whole, streamed = np.array(list(results.values())[:2])
    print(f"streamed / whole: {streamed[0] / whole[0]:.2f} x the time, {streamed[1] / whole[1]:.2f} x the memory")
    if not args.keep:
        shutil.rmtree(args.dir)


if __name__ == "__main__":
    main()
