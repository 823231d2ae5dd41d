"""Pluggable assessors: a Python callable ``f(topic, query, left_text, right_text) -> "left" | "right"``
named ``module:function`` (a language-model judge, a classifier, a simulated assessor). The CLI loop
(``irbandits judge run --assessor``) and the service's automatic assessors call it the same way."""

from __future__ import annotations

import importlib
from typing import Callable

from irbandits.errors import IrbanditsError

Assessor = Callable[[str, str, str, str], str]


def load_assessor(spec: str) -> Assessor:
    """The callable that ``module:function`` names; an unknown module or function is an error naming it."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise IrbanditsError(f"--assessor: give module:function, got {spec!r}")
    try:
        found = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise IrbanditsError(f"--assessor {spec}: cannot import {module} ({exc})") from None
    except AttributeError:
        raise IrbanditsError(f"--assessor {spec}: {module} has no {name}") from None
    if not callable(found):
        raise IrbanditsError(f"--assessor {spec}: {name} is not callable")
    return found


def ask(judge: Assessor, spec: str, topic: str, query: str, left: str, right: str) -> str:
    """One answer of the assessor, checked: "left" or "right"."""
    side = judge(topic, query, left, right)
    if side not in ("left", "right"):
        raise IrbanditsError(f"assessor {spec} answered {side!r} on topic {topic}; it must return 'left' or 'right'")
    return side
