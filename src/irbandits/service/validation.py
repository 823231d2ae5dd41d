"""What a request's data must be before the service acts on it (spec ``service.md``, "Limits before work").

- ids fit the database's integer columns (:data:`MAX_ID`): a larger one names nothing (404);
- seeds are whole numbers in ``[0, 2**63)`` (:data:`MAX_SEED`), never rounded floats;
- text has no NUL character and no unpaired surrogate (PostgreSQL and UTF-8 refuse them).

Request bodies are :class:`Strict` models: unknown fields are refused, and every string in them, dict
keys included, is checked by :func:`check_text`. Campaign and experiment checks call it on what the
organiser's forms send too.
"""

from __future__ import annotations

from typing import Any

from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from irbandits.errors import IrbanditsError

MAX_ID = 2**31 - 1     # ids are INTEGER columns (32 bits on PostgreSQL)
MAX_SEED = 2**63 - 1   # seeds are BIGINT columns or JSON numbers read back exactly


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
