"""What a request's data must be before the service acts on it (spec ``service.md``, "Limits before work").

- ids fit the database's integer columns (:data:`MAX_ID`): a larger one names nothing (404);
- seeds are whole numbers in ``[0, 2**63)`` (:data:`MAX_SEED`), never rounded floats;
- text has no NUL character and no unpaired surrogate (PostgreSQL and UTF-8 refuse them);
- an assessor's name, stripped, has 1 to :data:`MAX_NAME` characters and no control character
  (:func:`name_problem`); a names file (:func:`read_names`) has 1 to :data:`MAX_NAMES` of them.

Request bodies are :class:`Strict` models: unknown fields are refused, and every string in them, dict
keys included, is checked by :func:`check_text`. Campaign and experiment checks call it on what the
organiser's forms send too.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from typing import Annotated, Any

from fastapi.exceptions import RequestValidationError
from pydantic import AfterValidator, BaseModel, ConfigDict, StrictStr, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from irbandits.errors import IrbanditsError

MAX_ID = 2**31 - 1     # ids are INTEGER columns (32 bits on PostgreSQL)
MAX_SEED = 2**63 - 1   # seeds are BIGINT columns or JSON numbers read back exactly
MAX_NAME = 200         # characters of an assessor's name (a VARCHAR(200) column)
MAX_NAMES = 1000       # names in one bulk creation


def in_range(i: int) -> bool:
    """Whether ``i`` can be the id of a row (a larger or negative one names nothing)."""
    return 0 <= i <= MAX_ID


def text_problem(text: str) -> str | None:
    """What makes ``text`` unfit to store, or None.

    >>> text_problem("ok"), text_problem("a\\x00b"), text_problem("\\ud800")
    (None, 'contains a NUL character', 'is not valid Unicode (an unpaired surrogate)')
    """
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (an unpaired surrogate)"
    return None


def name_problem(name: str) -> str | None:
    """What makes ``name`` (already stripped) unfit to be an assessor's name, or None.

    >>> name_problem("Ann"), name_problem("a\\tb")
    (None, 'the name contains a control character (U+0009)')
    >>> name_problem("x" * 201)
    'the name has 201 characters (at most 200)'
    """
    if not name:
        return f"the name is empty (give 1 to {MAX_NAME} characters)"
    if len(name) > MAX_NAME:
        return f"the name has {len(name)} characters (at most {MAX_NAME})"
    problem = text_problem(name)
    if problem is not None:
        return f"the name {problem}"
    control = next((c for c in name if unicodedata.category(c) == "Cc"), None)
    return None if control is None else f"the name contains a control character (U+{ord(control):04X})"


def _name(value: str) -> str:
    name = value.strip()
    problem = name_problem(name)
    if problem is not None:
        raise PydanticCustomError("name", problem)
    return name


Name = Annotated[StrictStr, AfterValidator(_name)]
"""A request body's assessor name: stripped, then checked by :func:`name_problem` (422 naming the problem)."""


def read_names(text: str, where: str, csv_file: bool = False) -> list[str]:
    """The names of a names file, in order: a plain list (one name a line), or a CSV (``csv_file``, or a
    first line with a ``name`` cell): its ``name`` column when it has that header, else its first column.
    Blank lines (and CSV rows of blank cells) are skipped; names are stripped. A bad name, a repeated one,
    no name or more than :data:`MAX_NAMES` raise :class:`IrbanditsError` naming ``where`` and the line.

    >>> read_names("Ann\\n\\n Bob, Jr \\n", "names.txt")
    ['Ann', 'Bob, Jr']
    >>> read_names("id,name\\n1,Ann\\n2,Bob\\n", "names.csv")
    ['Ann', 'Bob']
    >>> read_names("Ann,a@x.org\\nBob,b@x.org\\n", "names.csv", csv_file=True)
    ['Ann', 'Bob']
    """
    lines = text.split("\n")
    first = next((line for line in lines if line.strip()), "")
    try:
        header = [cell.strip().lower() for cell in next(csv.reader([first]), [])]
        if "name" in header or csv_file:
            rows = csv.reader(io.StringIO(text, newline=""), strict=True)
            column = header.index("name") if "name" in header else 0
            found = [(rows.line_num, row[column] if column < len(row) else "")
                     for row in rows if any(cell.strip() for cell in row)][1 if "name" in header else 0:]
        else:
            found = [(i, line.removesuffix("\r")) for i, line in enumerate(lines, 1) if line.strip()]
    except csv.Error as exc:
        raise IrbanditsError(f"{where}: not a valid CSV file ({exc})") from None
    names, seen = [], {}
    for line, value in found:
        name = value.strip()
        problem = name_problem(name)
        if problem is not None:
            raise IrbanditsError(f"{where}, line {line}: {problem}")
        if name in seen:
            raise IrbanditsError(f"{where}, line {line}: {name!r} is already on line {seen[name]}")
        seen[name] = line
        names.append(name)
    if not names:
        raise IrbanditsError(f"{where}: no name found (one name a line, or a CSV with a name column)")
    if len(names) > MAX_NAMES:
        raise IrbanditsError(f"{where}: {len(names)} names; at most {MAX_NAMES} at a time")
    return names


def check_text(value: Any, where: str) -> None:
    """Every string in ``value`` (nested dicts and lists, keys included) fit to store; an
    :class:`IrbanditsError` naming where the first bad one is, else nothing. The place is spelled only
    for a bad string, so a clean body (the usual one) costs one scan of its strings."""
    found = _first_bad(value)
    if found is not None:
        path, why = found
        raise IrbanditsError(f"{where}{''.join(path)}: the text {why}")


def _first_bad(value: Any) -> tuple[list[str], str] | None:
    """``(path, problem)`` of the first string of ``value`` unfit to store, or None."""
    if isinstance(value, str):
        why = None if value.isascii() and "\x00" not in value else text_problem(value)
        return None if why is None else ([], why)
    if isinstance(value, dict):
        for key, item in value.items():
            found = _first_bad(key)
            if found is not None:
                return [" (a key)"], found[1]
            found = _first_bad(item)
            if found is not None:
                return [f"[{key!r}]", *found[0]], found[1]
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = _first_bad(item)
            if found is not None:
                return [f"[{i}]", *found[0]], found[1]
    return None


class Strict(BaseModel):
    """A request body: unknown fields refused, every string checked by :func:`check_text`."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _texts(self):
        for name, value in self:
            try:
                check_text(value, name)
            except IrbanditsError as exc:
                raise ValueError(str(exc)) from None
        return self


def raw_body(model: type[BaseModel]) -> dict:
    """``openapi_extra`` of a route that validates its body itself with ``model`` (:func:`parsed`)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


def parsed(model: type[BaseModel], body: bytes):
    """``body`` validated by ``model``; 422 (the app's one-line message) when it does not fit."""
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None


def csv_text(text: str | None) -> str | None:
    """``text`` as a CSV cell a spreadsheet shows rather than runs: a leading ``=``, ``+``, ``-``, ``@``,
    tab or carriage return gets an apostrophe before it (OWASP's advice on CSV injection), so a name or
    comment an assessor typed cannot become a formula on the organiser's machine.

    >>> csv_text("=HYPERLINK(1)"), csv_text("Ann")
    ("'=HYPERLINK(1)", 'Ann')
    """
    return "'" + text if text and text[0] in "=+-@\t\r" else text
