"""How fast irbandits reads TREC runs and learning-to-rank files, beside pandas and ir-measures.

    python benchmarks/io.py                  # 63 DL-2021 runs + an MSLR-WEB10K Fold 1-sized LETOR file
    python benchmarks/io.py --letor-lines 0  # runs only

Runs: every reader reads the 63 TREC DL-2021 passage runs (gzipped) from ``../shared/data``;
the best of ``--repeat`` rounds, in wall-clock and in CPU seconds (CPU time counts every thread of
the process, and is what stays put on a shared, loaded machine). Readers: ``irbandits.io.read_runs``
(pyarrow, files in parallel threads; the runs come out ranked and checked), its line-by-line
reader (what every file went through before), pandas' C parser (``read_csv(sep=r"\\s+")``, columns
only) and ``ir_measures.read_trec_run`` (a list of its tuples). Target (issue 10): irbandits at least
as fast as pandas' C parser.

LETOR: a synthetic file the size of MSLR-WEB10K Fold 1's training set (``--letor-lines`` lines
of 136 features, ~120 documents a query, values like ``0.123456``) is written to a temporary
directory and read once by ``irbandits.clicks.ltr.read_ltr`` (numba compile time excluded).
Target: under 30 s.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.clicks.ltr import read_ltr
from irbandits.io import read_run_lines, read_runs, run_files

RUNS = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl-2021-passage" / "runs"
COLUMNS = ["topic", "q0", "docno", "rank", "score", "runid"]


def readers() -> dict:
    import ir_measures

    return {
        "irbandits read_runs": read_runs,
        "irbandits line by line": lambda files: [read_run_lines(f, None) for f in files],
        "pandas C parser": lambda files: [pd.read_csv(f, sep=r"\s+", header=None, names=COLUMNS) for f in files],
        "ir_measures.read_trec_run": lambda files: [list(ir_measures.read_trec_run(str(f))) for f in files],
    }


def time_runs(repeat: int) -> pd.DataFrame:
    files = run_files(RUNS)
    lines = len(read_runs(files))
    best: dict[str, list[float]] = {}
    for _ in range(repeat):  # rounds interleave the readers, so load changes hit all alike
        for name, read in readers().items():
            wall, cpu = time.perf_counter(), time.process_time()
            read(files)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            old = best.setdefault(name, [np.inf, np.inf])
            best[name] = [min(old[0], wall), min(old[1], cpu)]
    table = pd.DataFrame(best, index=["wall s", "CPU s"]).T
    table["lines/s (wall)"] = (lines / table["wall s"]).round(-3).astype(int)
    table["lines/s (CPU)"] = (lines / table["CPU s"]).round(-3).astype(int)
    table.index.name = f"{len(files)} runs, {lines:,} lines"
    return table.round(3)


def write_letor(path: Path, lines: int, features: int = 136, per_query: int = 120, seed: int = 0) -> None:
    """``lines`` SVMlight lines ``L qid:QQQQQ 1:0.dddddd ... F:0.dddddd``, written in blocks from a
    fixed-width template whose digits are drawn at random."""
    rng = np.random.default_rng(seed)
    parts = ["0 qid:00000"] + [f" {k}:0.000000" for k in range(1, features + 1)] + ["\n"]
    template = np.frombuffer("".join(parts).encode(), np.uint8)
    starts = np.cumsum([0] + [len(p) for p in parts[:-1]])
    digits = np.concatenate([s + len(p) - 6 + np.arange(6) for s, p in zip(starts[1:], parts[1:-1])])
    qid = 6 + np.arange(5)
    with open(path, "wb") as fh:
        for first in range(0, lines, 50_000):
            n = min(50_000, lines - first)
            block = np.tile(template, (n, 1))
            block[:, digits] = rng.integers(48, 58, (n, len(digits)), dtype=np.uint8)
            block[:, 0] = 48 + rng.choice(5, n, p=[0.5, 0.3, 0.13, 0.05, 0.02])
            q = (first + np.arange(n)) // per_query
            block[:, qid] = 48 + (q[:, None] // 10 ** np.arange(4, -1, -1)) % 10
            fh.write(block.tobytes())


def time_letor(lines: int) -> pd.DataFrame:
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp) / "small.txt", Path(tmp) / "mslr.txt"
        write_letor(small, 10)
        read_ltr(small)  # compile
        write_letor(big, lines)
        size = big.stat().st_size
        wall, cpu = time.perf_counter(), time.process_time()
        data = read_ltr(big)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return pd.DataFrame({"lines": [len(data.labels)], "features": [data.n_features], "queries": [data.n_queries],
                         "MB": [round(size / 1e6)], "wall s": [round(wall, 2)], "CPU s": [round(cpu, 2)],
                         "lines/s (wall)": [round(lines / wall, -3)]}, index=["irbandits read_ltr"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="rounds over the runs; the best is kept")
    ap.add_argument("--letor-lines", type=int, default=720_000,
                    help="lines of the synthetic LETOR file (MSLR-WEB10K Fold 1 train: about 720,000); 0 skips it")
    args = ap.parse_args()
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(time_runs(args.repeat).to_string(), "\n")
        if args.letor_lines:
            print(time_letor(args.letor_lines).to_string())


if __name__ == "__main__":
    main()
