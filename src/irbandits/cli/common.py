"""What every ``irbandits`` command shares: the console, one-line errors, number parsing, path checks,
standard input and output (``-``), table files, tables, problem loading, worker counts, and the
learning-to-rank options and environments of ``matrix`` and ``simulate``.

Command modules import from here and from nowhere else in :mod:`irbandits.cli`."""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from irbandits.errors import IrbanditsError

console = Console(width=None if sys.stdout.isatty() else 150)


def print_error(message: str) -> None:
    """Print a user mistake as one ``error:`` line on standard error."""
    Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(message)}", highlight=False)


def fail(message: str) -> None:
    """Print a user mistake and exit with code 2."""
    print_error(message)
    raise typer.Exit(2)


def parse_count(text: str, what: str) -> int:
    """Accept ``1e8``, ``100000000`` or ``100_000_000`` for step counts."""
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        fail(f"{what} must be a number like 1e6, got {text!r}")
    if value < 1 or value != int(value):
        fail(f"{what} must be a positive whole number, got {text!r}")
    return int(value)


JOBS = typer.Option(1, min=0, help="worker processes (0: all cores)")


BACKEND = typer.Option("local", help="local (this machine) or ray (a Ray cluster: --address, else a local Ray "
                       "runtime); results do not depend on it")
ADDRESS = typer.Option(None, help="with --backend ray: the cluster to join, e.g. 10.0.0.1:6379 or auto "
                       "(default: start a local Ray runtime for the run)")


def worker_count(jobs: int) -> int:
    """``--jobs``: 0 means every core."""
    return jobs or os.cpu_count() or 1


def check_file(path: Path, option: str) -> Path:
    """An existing, readable file for ``option``; a missing file, a directory or no permission is an error."""
    if str(path) == "-":
        raise IrbanditsError(f"{option}: - (standard input) is not accepted here; give a file")
    if path.is_dir():
        raise IrbanditsError(f"{option} {path}: is a directory, expected a file")
    if not path.exists():
        raise IrbanditsError(f"{option} {path}: no such file")
    if not os.access(path, os.R_OK):
        raise IrbanditsError(f"{option} {path}: permission denied (cannot read)")
    return path


def check_dir(path: Path, option: str) -> Path:
    """An existing, readable directory for ``option``."""
    if not path.is_dir():
        raise IrbanditsError(f"{option} {path}: " + ("is a file, expected a directory" if path.exists()
                                                      else "no such directory"))
    if not os.access(path, os.R_OK | os.X_OK):
        raise IrbanditsError(f"{option} {path}: permission denied (cannot read)")
    return path


def check_output(path: Path, option: str, directory: bool = False, dash: bool = False) -> Path:
    """A file (or with ``directory`` a folder) that ``option`` can write: if it exists, of that kind
    and writable; else its parent exists, is a directory and is writable. Nothing is created.
    With ``dash``, ``-`` (standard output) is accepted as it is."""
    if dash and str(path) == "-":
        return path
    if str(path) == "-":
        raise IrbanditsError(f"{option}: - (standard output) is not accepted here; give a "
                             + ("directory" if directory else "file"))
    if path.exists():
        if path.is_dir() != directory:
            raise IrbanditsError(f"{option} {path}: is a {'file' if directory else 'directory'}, expected a "
                                 f"{'directory' if directory else 'file'}")
        if not os.access(path, os.W_OK):
            raise IrbanditsError(f"{option} {path}: permission denied (cannot write)")
        return path
    parent = path.absolute().parent
    if not parent.is_dir():
        raise IrbanditsError(f"{option} {path}: the directory {path.parent} " + (
            "is a file" if parent.exists() else "does not exist"))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise IrbanditsError(f"{option} {path}: permission denied (cannot write in {path.parent})")
    return path


STDIN = "<stdin>"


@contextmanager
def reading(path: Path, option: str) -> Iterator[Path]:
    """A readable file for ``path``; ``-`` is standard input, kept in a temporary file while the
    block runs (plain or gzip) and named ``<stdin>`` in error messages."""
    if str(path) != "-":
        yield check_file(path, option)
        return
    data = typer.get_binary_stream("stdin").read()
    with tempfile.TemporaryDirectory(prefix="irbandits-") as folder:
        tmp = Path(folder) / ("stdin.gz" if data[:2] == b"\x1f\x8b" else "stdin")
        tmp.write_bytes(data)
        try:
            yield tmp
        except IrbanditsError as exc:
            raise IrbanditsError(str(exc).replace(str(tmp), STDIN)) from None


def source_name(path: Path) -> str:
    """How messages name an input: its path, or ``<stdin>`` for ``-``."""
    return STDIN if str(path) == "-" else str(path)


@contextmanager
def writing(path: Path, option: str) -> Iterator[IO[str]]:
    """A text stream for ``path``: standard output for ``-``, else the file (checked, then replaced)."""
    if str(check_output(path, option, dash=True)) == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8") as fh:
        yield fh


TABLE_FORMATS = (".csv", ".tsv", ".parquet", ".json")


def check_table_output(path: Path, option: str) -> Path:
    """A writable table file whose extension names its format (see :data:`TABLE_FORMATS`)."""
    if check_output(path, option).suffix.lower() not in TABLE_FORMATS:
        raise IrbanditsError(f"{option} {path}: cannot tell the format from the extension "
                             f"{path.suffix or '(none)'}; use {', '.join(TABLE_FORMATS)}")
    return path


def write_table(df, path: Path) -> Path:
    """Write ``df`` in the format of ``path``'s extension (checked by :func:`check_table_output`)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        df.to_parquet(path, index=False)
    elif suffix == ".json":
        df.to_json(path, orient="records", indent=1)
    else:
        df.to_csv(path, index=False, sep="\t" if suffix == ".tsv" else ",", float_format="%.6g")
    return path


def load_problem(problem: Optional[str], matrix: Optional[Path]):
    from irbandits.problems import PreferenceMatrix, get_problem

    if problem and matrix:
        fail("give either --problem or --matrix, not both")
    return PreferenceMatrix.load(check_file(matrix, "--matrix")) if matrix else get_problem(problem or "arxiv")


def problem_by_name_or_file(text: str, option: str):
    """A named problem, else a matrix file; neither is an error listing the names."""
    from irbandits.problems import PreferenceMatrix, get_problem

    path = Path(text)
    if path.exists():
        return PreferenceMatrix.load(check_file(path, option))
    try:
        return get_problem(text)
    except IrbanditsError as exc:
        raise IrbanditsError(f"{option} {text}: no such file, and {exc}") from None


def format_number(x: float, digits: int = 4) -> str:
    """``digits`` significant digits, never in scientific notation: 19,073, 123.5, 0.01235, 1."""
    import math

    if not math.isfinite(x) or x == 0:
        return f"{x:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if decimals else text


def make_table(df, title: str) -> Table:
    """A rich table of a DataFrame: numbers right-aligned with 4 significant digits, text left-aligned."""
    from pandas.api.types import is_numeric_dtype

    t = Table(title=title, title_justify="left")
    for col in df.columns:
        t.add_column(str(col), justify="right" if is_numeric_dtype(df[col]) else "left")
    for row in df.itertuples(index=False):
        t.add_row(*(format_number(v) if isinstance(v, float) else str(v) for v in row))
    return t


LTR = typer.Option(..., "--ltr", help="SVMlight / LETOR file (plain or .gz); every feature is a ranker")
QUERY_FILE = typer.Option(None, help="LightGBM-style .query file (documents per query) for files without qid:")
CLICK_MODEL = typer.Option("navigational", help="perfect, navigational, informational, random, pbm or dcm, or a "
                           "model fitted by grade (`irbandits clicks fit --by grade --out MODEL.json`)")
INTERLEAVING = typer.Option("probabilistic", help="team-draft, balanced, probabilistic, probabilistic-assignment, "
                            "optimized, roughly-optimized, pairwise-preference, sosm or document-constraints "
                            "(with --multileave: team-draft, probabilistic, optimized, roughly-optimized, "
                            "pairwise-preference or sosm)")
LENGTH = typer.Option("10", metavar="N", help="results per interleaved / multileaved list (and per ranker's list)")
RANKERS = typer.Option(None, help="features to use as rankers, 1-based, e.g. 1-10,15; default all")
MULTILEAVE = typer.Option(0, min=0, help="with --ltr: show M rankers per step in one multileaved list (the "
                          "--interleaving method's multileaving form) (multi-dueling algorithms only, e.g. Self-Sparring; 2 = interleaving)")


def parse_rankers(text: Optional[str]) -> list[int] | None:
    """``"1-3,7"`` -> ``[0, 1, 2, 6]`` (0-based feature columns)."""
    if not text:
        return None
    out: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, _, hi = part.partition("-")
        try:
            out.extend(range(int(lo) - 1, int(hi or lo)))
        except ValueError:
            raise IrbanditsError(f"--rankers: {part!r} is not a feature number or range like 1-10") from None
    return out


def ltr_environment(ltr: Path, query_file: Optional[Path], click_model: str, interleaving: str,
                    rankers: Optional[str] = None, length: int | str = 10):
    from irbandits.clicks.click_models import ClickModel
    from irbandits.clicks.environment import ClickEnvironment
    from irbandits.clicks.interleaving import check_length, get_method
    from irbandits.clicks.ltr import read_ltr

    try:  # a str option, so that 2.5 or abc get this one line too rather than click's usage box
        length = check_length(int(str(length)))
    except (ValueError, IrbanditsError):
        raise IrbanditsError(f"--length must be a whole number >= 1 (results per list), got {str(length)!r}") from None
    get_method(interleaving), ClickModel.named(click_model), parse_rankers(rankers)  # fail before reading
    data = read_ltr(check_file(ltr, "--ltr"), query_file and check_file(query_file, "--query-file"))
    return data, ClickEnvironment(data.rankers(parse_rankers(rankers), cutoff=max(length, 10)), click_model,
                                  interleaving, length)


def multi_dueling_specs(algorithm: Optional[list[str]], ltr: Optional[Path], interleaving: str, m: int):
    """The algorithms of ``simulate --multileave M``, checked before any data is read: default
    every multi-dueling algorithm; an algorithm that compares only two arms is an error."""
    from irbandits.clicks.interleaving import get_method
    from irbandits.clicks.multileaving import METHODS
    from irbandits.dueling import list_algorithms, parse_spec
    from irbandits.dueling.base import get_algorithm, require_multi_dueling

    if not ltr:
        raise IrbanditsError("--multileave needs --ltr: a multileaved comparison is of rankers on clicks")
    if m < 2:
        raise IrbanditsError(f"--multileave must be at least 2 (rankers per list), got {m}")
    if get_method(interleaving).name not in METHODS:
        raise IrbanditsError(f"--multileave needs --interleaving {' or '.join(METHODS)} (the methods that "
                             f"multileave), got {interleaving}")
    names = algorithm or [n for n in list_algorithms().name if get_algorithm(n).multi_dueling]
    specs = [parse_spec(a) for a in names]
    for s in specs:
        require_multi_dueling(s.cls)
    return specs


def multileave_environment(env, m: int):
    """The ``--ltr`` environment with ``m`` rankers per multileaved comparison."""
    from irbandits.clicks.multidueling import MultileaveEnvironment

    if m > env.K:
        raise IrbanditsError(f"--multileave {m} is more than the {env.K} rankers")
    return MultileaveEnvironment(env.rankers, env.model, env.interleaving, per_step=m, length=env.length)


def reference_problem(env, matrix: Optional[Path], seed: int, label: str):
    """The matrix regret is measured against in a full simulation: loaded, or estimated (4,000
    comparisons per pair); named so that full-simulation results never mix with proxy results."""
    from irbandits.problems import PreferenceMatrix

    if matrix:
        P = PreferenceMatrix.load(check_file(matrix, "--matrix"))
        if P.K != env.K:
            raise IrbanditsError(f"{matrix} has K={P.K} but the environment has {env.K} rankers")
    else:
        P = env.estimate(4000, seed=seed).matrix
    return PreferenceMatrix(P.p, name=f"{label}-{env.model.name}-{env.interleaving}-full", arms=env.rankers.names)


# the --llm option's help, shared by serve and judge run
LLM_SPEC = ("NAME=URL or NAME=URL,KEY=VALUE,... with the keys model, key-env (the environment variable of the key), "
            "price-in and price-out (USD per million tokens), template (a prompt file), concurrency, cache (a SQLite "
            "file), tries and timeout (seconds); URL is the OpenAI-compatible API's base, ending in /v1")
