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
    :class:`IrbanditsError` naming where the first bad one is, else nothing."""
    if isinstance(value, str):
        why = text_problem(value)
        if why is not None:
            raise IrbanditsError(f"{where}: the text {why}")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, f"{where} (a key)")
            check_text(item, f"{where}[{key!r}]" if text_problem(str(key)) is None else where)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_text(item, f"{where}[{i}]")


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
