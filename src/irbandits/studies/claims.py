"""The claims of every reproduction study as rows: what the paper says, what this run measured, at
which scale, and whether the two agree.

Every study writes its rows to ``claims.csv`` beside its report and figures (:func:`write_claims`);
``irbandits reproduce --summary`` reads them all back (:func:`collect`) and prints one table; a
study's report, and the claims table of its section of ``REPRODUCTION.md``, is :func:`markdown` of
the same rows: the published runs' files are kept in ``docs/claims/<study>/claims.csv`` and
``irbandits reproduce --summary --out docs/claims --update-doc REPRODUCTION.md`` writes their tables into
the document (:func:`fill_doc`).

>>> rows = claim_rows("mergedts-cycles", "MergeDTS paper, section 6.4",
...                   [("MergeDTS converges", "10 / 10 runs", True)], scale(10**6, 10, "10^7 x 100"))
>>> rows[0].verdict, rows[0].scale
('agrees', '10^6 steps x 10 runs (paper: 10^7 x 100)')
>>> print(markdown(rows, "paper (section 6.4)"))
| paper (section 6.4) | this run | |
|---|---|---|
| MergeDTS converges | 10 / 10 runs | **agrees** |
"""

from __future__ import annotations

import csv
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from irbandits.errors import IrbanditsError

AGREES, DISAGREES, NOT_CHECKED, NOT_RUN = "agrees", "disagrees", "not checked", "not run"
VERDICTS = (AGREES, DISAGREES, NOT_CHECKED, NOT_RUN)
FILE = "claims.csv"


@dataclass(frozen=True)
class Claim:
    """One claim of a study: ``study`` (its ``irbandits reproduce`` name), ``claim`` (what the paper
    says), ``paper`` (where: paper and section), ``measured`` (this run's numbers), ``scale`` (what
    this run ran at, beside the paper's) and ``verdict`` (one of :data:`VERDICTS`; "not checked": the
    claim has no test here, "not run": the study has not been run)."""

    study: str
    claim: str
    paper: str
    measured: str
    scale: str
    verdict: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise IrbanditsError(f"claim {self.claim!r} of {self.study}: verdict {self.verdict!r} is not one of "
                                 f"{', '.join(VERDICTS)}")


COLUMNS = tuple(f.name for f in fields(Claim))


def count(n: float) -> str:
    """``10^6`` for a power of ten from 1,000 on, else ``1,234,567``."""
    n = int(n)
    k = len(str(n)) - 1
    return f"10^{k}" if n >= 1000 and n == 10**k else f"{n:,}"


def scale(horizon: int, runs: int, paper: str, steps: str = "steps", what: str = "runs") -> str:
    """``"10^6 steps x 10 runs (paper: 10^8 x 50)"``: this run's scale beside the paper's."""
    return f"{count(horizon)} {steps} x {runs} {what} (paper: {paper})"


def claim_rows(study: str, paper: str, triples: Iterable[tuple[str, str, bool | None]], scale: str) -> list[Claim]:
    """The rows of (claim, measured, agrees) triples, as the study modules' ``claims`` give them
    (``agrees`` None: "not checked")."""
    return [Claim(study, c, paper, m, scale, NOT_CHECKED if a is None else AGREES if a else DISAGREES)
            for c, m, a in triples]


def write_claims(rows: Sequence[Claim], out: str | Path) -> Path:
    """Write ``rows`` to ``out/claims.csv`` (``out`` created); returns the path."""
    path = Path(out) / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(astuple(r) for r in rows)
    return path


def read_claims(path: str | Path) -> list[Claim]:
    """The rows of a ``claims.csv`` (a folder: its ``claims.csv``); other columns are an error."""
    path = Path(path)
    path = path / FILE if path.is_dir() else path
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise IrbanditsError(f"{path}: columns {', '.join(reader.fieldnames or [])}; expected "
                                 f"{', '.join(COLUMNS)}")
        return [Claim(**row) for row in reader]


def markdown(rows: Sequence[Claim], header: str = "paper's claim") -> str:
    """The claims table of a report and of a ``REPRODUCTION.md`` section: claim, this run's numbers,
    verdict in bold."""
    lines = [f"| {header} | this run | |", "|---|---|---|"]
    return "\n".join(lines + [f"| {r.claim} | {r.measured} | **{r.verdict}** |" for r in rows])


def markers(study: str) -> tuple[str, str]:
    """The lines around ``study``'s claims table in ``REPRODUCTION.md``."""
    return f"<!-- {study}:claims:begin -->", f"<!-- {study}:claims:end -->"


def doc_table(rows: Sequence[Claim]) -> str:
    """One study's claims table as ``REPRODUCTION.md`` holds it: :func:`markdown` of ``rows`` between the
    study's :func:`markers`."""
    begin, end = markers(rows[0].study)
    return f"{begin}\n{markdown(rows)}\n{end}"


def fill_doc(text: str, rows: Sequence[Claim]) -> str:
    r"""``text`` (``REPRODUCTION.md``) with each study's claims table, :func:`markdown` of its ``rows``,
    between its :func:`markers`; a study of ``rows`` whose markers are not there once each is an error.

    >>> row = Claim("s", "it converges", "p", "10 / 10", "10^6", AGREES)
    >>> print(fill_doc("intro\n<!-- s:claims:begin -->\nold\n<!-- s:claims:end -->\n", [row]))
    intro
    <!-- s:claims:begin -->
    | paper's claim | this run | |
    |---|---|---|
    | it converges | 10 / 10 | **agrees** |
    <!-- s:claims:end -->
    <BLANKLINE>
    """
    for study in dict.fromkeys(r.study for r in rows):
        begin, end = markers(study)
        if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
            raise IrbanditsError(f"the document has no single '{begin}' ... '{end}' pair for the claims of {study}")
        head, rest = text.split(begin)
        text = f"{head}{doc_table([r for r in rows if r.study == study])}{rest.split(end, 1)[1]}"
    return text


def write_section(doc: Path, begin: str, end: str, text: str) -> Path:
    """Put ``text`` (a report section from its ``begin`` line to its ``end`` line) in place of the one
    ``doc`` holds between those lines, or at its end (a new file starts with a title). Returns ``doc``."""
    old = doc.read_text() if doc.exists() else "# Reproductions\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + text.strip() + old[old.index(end) + len(end):]
    else:
        new = old.rstrip() + "\n\n" + text
    doc.write_text(new)
    return doc


def find(root: str | Path, depth: int = 2) -> list[Path]:
    """The ``claims.csv`` files in ``root`` and its folders down to ``depth`` levels."""
    root = Path(root)
    return sorted(p for d in range(depth + 1) for p in root.glob("/".join(["*"] * d + [FILE])) if p.is_file())


def collect(root: str | Path, studies: Sequence[str]) -> tuple[pd.DataFrame, dict[str, Path]]:
    """Every study's rows from the ``claims.csv`` files under ``root`` (:func:`find`): a table of
    :data:`COLUMNS`, one "not run" row for each of ``studies`` without a file, and the file each study's
    rows came from (the newest where several files hold one study)."""
    newest: dict[str, tuple[float, Path, list[Claim]]] = {}
    for path in find(root):
        rows = read_claims(path)
        for name in dict.fromkeys(r.study for r in rows):
            mtime = path.stat().st_mtime
            if name not in newest or mtime > newest[name][0]:
                newest[name] = (mtime, path, [r for r in rows if r.study == name])
    out: list[Claim] = []
    for name in list(studies) + sorted(set(newest) - set(studies)):
        out += newest[name][2] if name in newest else [Claim(name, "(study not run)", "", "", "", NOT_RUN)]
    return pd.DataFrame([astuple(r) for r in out], columns=list(COLUMNS)), {k: v[1] for k, v in newest.items()}


def counts(table: pd.DataFrame) -> dict[str, int]:
    """Claims per verdict (studies not run count once each)."""
    return {v: int((table.verdict == v).sum()) for v in VERDICTS}
