"""REPRODUCTION.md's claims tables are generated from the published runs' rows (issue 23): each study's
``docs/claims/<study>/claims.csv`` holds them, and the document's table between the study's markers is
exactly :func:`~irbandits.studies.claims.markdown` of those rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from irbandits.errors import IrbanditsError
from irbandits.studies import STUDIES
from irbandits.studies.claims import AGREES, NOT_RUN, Claim, collect, fill_doc, markers, read_claims

ROOT = Path(__file__).resolve().parents[1]
DOC, PUBLISHED = ROOT / "REPRODUCTION.md", ROOT / "docs" / "claims"


def test_every_study_has_its_published_rows_and_they_are_its_own():
    for name in STUDIES:
        rows = read_claims(PUBLISHED / name)
        assert rows and {r.study for r in rows} == {name}, name
        assert NOT_RUN not in {r.verdict for r in rows}, name
        assert all(r.scale for r in rows), name


def test_the_documents_claims_tables_are_the_published_rows():
    table, files = collect(PUBLISHED, list(STUDIES))
    rows = [Claim(*r) for r in table.itertuples(index=False)]
    text = DOC.read_text()
    assert fill_doc(text, rows) == text, "REPRODUCTION.md is out of date: run irbandits reproduce --summary " \
                                         "--out docs/claims --update-doc REPRODUCTION.md"
    for name in STUDIES:  # each table inside its own study's section
        begin, end = text.index(f"<!-- {name}:begin -->"), text.index(f"<!-- {name}:end -->")
        assert begin < text.index(markers(name)[0]) < text.index(markers(name)[1]) < end, name


def test_update_doc_rewrites_only_the_tables_and_refuses_a_missing_pair(tmp_path, cli):
    runs = tmp_path / "runs" / "s"
    runs.mkdir(parents=True)
    row = Claim("mergedts-cycles", "MergeDTS converges", "MergeDTS paper", "10 / 10", "10^6 x 10", AGREES)
    (runs / "claims.csv").write_text("study,claim,paper,measured,scale,verdict\n"
                                     "mergedts-cycles,MergeDTS converges,MergeDTS paper,10 / 10,10^6 x 10,agrees\n")
    doc = tmp_path / "doc.md"
    begin, end = markers("mergedts-cycles")
    doc.write_text(f"# text\n{begin}\n| stale |\n{end}\nmore prose\n")
    r = cli("reproduce", "--summary", "--out", tmp_path / "runs", "--update-doc", doc)
    assert r.exit_code == 0, r.output
    assert doc.read_text() == f"# text\n{begin}\n| paper's claim | this run | |\n|---|---|---|\n" \
                              f"| {row.claim} | {row.measured} | **agrees** |\n{end}\nmore prose\n"
    doc.write_text(f"# text\n{begin}\nno end marker\n")
    r = cli("reproduce", "--summary", "--out", tmp_path / "runs", "--update-doc", doc)
    assert r.exit_code != 0 and "no single" in str(r.exception) and "mergedts-cycles" in str(r.exception)
    assert doc.read_text() == f"# text\n{begin}\nno end marker\n"  # left as it was
    with pytest.raises(IrbanditsError, match="no single"):
        fill_doc(f"{end}\n{begin}\n", [row])
