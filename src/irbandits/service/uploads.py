"""The campaign creation form's uploads turned into a ``POST /api/campaigns`` body.

Files are read with the library's own readers (topics and passages as TSV, CSV or JSONL with
:func:`irbandits.judging.texts.parse_topics` and :func:`~irbandits.judging.texts.parse_passages`, the
format from the file's extension or content; qrels and runs later, by
:func:`irbandits.service.campaign_spec.check_campaign`), so a mistake is reported as it is for the CLI,
one line naming the uploaded file and line. Options come from the fields ``KIND.NAME`` of the form,
one per entry of :data:`irbandits.service.campaign_spec.OPTIONS`; an empty field keeps the default.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.datastructures import UploadFile

from irbandits.errors import IrbanditsError
from irbandits.judging.texts import parse_passages, parse_topics
from irbandits.service.campaign_spec import OPTIONS

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


def file_name(upload: UploadFile, field: str) -> str:
    """The upload's base name, reduced to letters, digits and ``. _ + -`` (the field's name if none is left).

    >>> file_name(UploadFile(None, filename="C:\\\\runs/my run<1>.txt"), "runs")
    'my_run_1_.txt'
    """
    name = _UNSAFE.sub("_", re.split(r"[\\/]", upload.filename or "")[-1])[:100]
    return name if name.strip("._") else field


async def _text(upload: UploadFile, field: str) -> str:
    data = await upload.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise IrbanditsError(f"{field} file {file_name(upload, field)}, line {line}: not UTF-8 text") from None


def _uploads(form, field: str, what: str) -> list[UploadFile]:
    found = [f for f in form.getlist(field) if isinstance(f, UploadFile) and (f.filename or f.size)]
    if not found:
        raise IrbanditsError(f"{field}: choose a {what} file")
    return found


async def _topics(form) -> dict[str, dict[str, str]]:
    """The topics file as the API's ``{topic: {"query", "description", "narrative"}}``."""
    upload = _uploads(form, "topics", "topics (TSV, CSV or JSONL)")[0]
    queries, notes = parse_topics(await _text(upload, "topics"), file_name(upload, "topics"))
    return {topic: {"query": query, **notes.get(topic, {})} for topic, query in queries.items()}


async def _texts(form) -> dict[str, str]:
    upload = _uploads(form, "texts", "passages (TSV, CSV or JSONL)")[0]
    return parse_passages(await _text(upload, "texts"), file_name(upload, "texts"))


def _option(kind: str, name: str, text: str) -> Any:
    if name != "grades":
        return text
    try:
        return [int(g) for g in re.split(r"[,\s]+", text.strip())]
    except ValueError:
        raise IrbanditsError(f"options: grades must be whole numbers separated by commas, got {text!r}") from None


async def campaign_body(form) -> dict[str, Any]:
    """The JSON API's campaign body from the creation form (multipart, files already received)."""
    kind = form.get("kind")
    if kind not in OPTIONS:
        raise IrbanditsError(f"kind: choose one of {', '.join(OPTIONS)}")
    name = str(form.get("name", "")).strip()
    if not 1 <= len(name) <= 200:
        raise IrbanditsError("name: give the campaign a name of 1 to 200 characters")
    body: dict[str, Any] = dict(name=name, kind=kind, topics=await _topics(form), texts=await _texts(form))
    if kind == "preference":
        body["qrels"] = await _text(_uploads(form, "qrels", "TREC qrels")[0], "qrels")
    else:
        runs = {}
        for upload in _uploads(form, "runs", "TREC run"):
            run = file_name(upload, "runs")
            if run in runs:
                raise IrbanditsError(f"runs: two run files are named {run}")
            runs[run] = await _text(upload, "runs")
        body["runs"] = runs
    body["options"] = {p.name: _option(kind, p.name, value) for p in OPTIONS[kind]
                       if (value := str(form.get(f"{kind}.{p.name}", "")).strip())}
    return body
