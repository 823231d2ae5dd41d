"""Per-topic stopping rules: stop judging a topic once the relevant documents still unjudged are estimated
to be fewer than a threshold ``t`` (Losada, Parapar & Barreiro, "When to stop making relevance judgments?
A study of stopping methods for building information retrieval test collections", JASIST 70(1), 2019).

A rule is an estimator of the relevant documents left in a topic's pool, computed from the topic's own
judgments in the order they were made: ``found[k]`` is the number of relevant documents among the first
``k + 1`` judgments and ``unjudged`` the pooled documents not yet judged. It is a compiled kernel
``_estimate(found, n, unjudged, params) -> float`` (``params``: the rule's parameters, ``t`` last); the
topic stops after judgment ``n`` as soon as the estimate is below ``t``. The simulation
(:mod:`irbandits.pooling.simulate`, :mod:`irbandits.pooling.budget`) and the live campaign
(:class:`irbandits.pooling.state.Campaign`) call the same kernel on the same sequence.

- ``window:w=20,t=0.5`` (:class:`WindowStop`): the adjudication methods judge in roughly decreasing order
  of the chance of relevance, so a topic's relevant rate falls as it is judged. With ``r1`` and ``r2``
  relevant documents in the last two windows of ``w`` judgments (older, newer), the rate is taken to keep
  falling by ``q = r2 / r1`` per window, and the relevant documents left are the geometric tail
  ``r2 q / (1 - q)``, at most ``unjudged * r2 / w`` (the newest rate held to the end of the pool, which is
  also the estimate when the rate is not falling); 0 when the newest window found nothing. No topic stops
  before ``2 w`` judgments. This is the gain-curve reading of the knee method (Cormack & Grossman,
  "Engineering quality and reliability in technology-assisted review", SIGIR 2016) that Losada et al.
  adapt to pooling, with the slope ratio turned into an estimate of what is left.

>>> rule = parse_stop("window:w=2,t=0.5")
>>> found = np.cumsum([1, 1, 1, 0, 0, 0])          # relevant, relevant, relevant, then nothing
>>> rule.stop_point(found, size=10), rule.estimate(found[:4], unjudged=6)
(5, 1.0)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numba import njit

from irbandits.errors import IrbanditsError
from irbandits.params import Param, Registry, check_params, describe_params, split_name

_RULES: Registry[type["StopRule"]] = Registry("stopping rule")


@njit(cache=True)
def never(found, n, unjudged, params):
    """The estimate of no rule: infinitely many left, so the topic never stops."""
    return np.inf


@njit(cache=True)
def _window(found, n, unjudged, params):
    w = int(params[0])
    if unjudged <= 0:
        return 0.0
    if n < 2 * w:
        return np.inf
    older = found[n - 2 * w - 1] if n > 2 * w else 0
    r1 = found[n - w - 1] - older
    r2 = found[n - 1] - found[n - w - 1]
    if r2 == 0:
        return 0.0
    ceiling = unjudged * r2 / w
    if r2 >= r1:
        return ceiling
    q = r2 / r1
    return min(r2 * q / (1.0 - q), ceiling)


@njit(cache=True)
def first_stop(estimate, found, size, params, t, upto):
    """The number of judgments (1..``upto``) after which ``estimate`` first falls below ``t``, else ``upto``."""
    for n in range(1, upto + 1):
        if estimate(found, n, size - n, params) < t:
            return n
    return upto


class StopRule:
    """Base class of the stopping rules: ``name``, ``description``, ``params`` (``t`` last) and ``_estimate``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    _estimate: ClassVar[Any] = never

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.name:
            _RULES.add(cls.name, cls)

    def __init__(self, **params):
        self.param_values = check_params(self.name, self.params, params)
        self.values = np.array([float(v) for v in self.param_values.values()], np.float64)
        self.t = float(self.param_values["t"])

    @property
    def label(self) -> str:
        return self.name + ":" + ",".join(f"{k}={v:g}" for k, v in self.param_values.items())

    @property
    def kernel(self):
        """The compiled estimator: ``(found, n, unjudged, params) -> float``."""
        return type(self)._estimate

    def estimate(self, found: np.ndarray, unjudged: int) -> float:
        """Relevant documents estimated to be left after the judgments whose running count is ``found``."""
        found = np.ascontiguousarray(found, dtype=np.int64)
        return float(self.kernel(found, len(found), int(unjudged), self.values))

    def stops(self, found: np.ndarray, unjudged: int) -> bool:
        """Whether the topic stops after these judgments."""
        return self.estimate(found, unjudged) < self.t

    def stop_point(self, found: np.ndarray, size: int, upto: int | None = None) -> int:
        """Judgments made before the rule stops a topic of ``size`` documents judged in this order (at most ``upto``)."""
        found = np.ascontiguousarray(found, dtype=np.int64)
        upto = min(len(found), size if upto is None else upto)
        return int(first_stop(self.kernel, found, int(size), self.values, self.t, upto)) if upto > 0 else 0

    def __repr__(self) -> str:
        return self.label


class WindowStop(StopRule):
    """The geometric tail of the relevant rate of the last two windows of ``w`` judgments (module docstring)."""

    name = "window"
    description = "rate of the last two windows of w judgments, extrapolated geometrically"
    params = (
        Param("w", int, 20, "judgments per window", lambda v: v >= 1, ">= 1"),
        Param("t", float, 0.5, "stop when fewer relevant documents than this are estimated left",
              lambda v: v > 0, "> 0"),
    )
    _estimate = _window


def parse_stop(text: str | StopRule | None) -> StopRule | None:
    """``NAME`` or ``NAME:param=value,...`` (``window:w=20,t=0.5``); ``None``, ``""`` or ``none``: no rule."""
    if text is None or isinstance(text, StopRule):
        return text
    if not text.strip() or text.strip().lower() == "none":
        return None
    spec = split_name(text)
    cls = _RULES.get(spec.name)
    params: dict[str, Any] = {}
    for key, value in spec.items:
        if value is None:
            raise IrbanditsError(f"{cls.name}: expected param=value, got {key!r}")
        params[key] = value
    return cls(**params)


def list_rules() -> list[tuple[str, str, str]]:
    """``(name, description, parameters)`` of every stopping rule."""
    return [(c.name, c.description, describe_params(c.params)) for c in _RULES.values()]
