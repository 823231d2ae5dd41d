"""Simulated users: cascade, position-based and dependent click models in one compiled kernel.

Every model is one rule: at rank ``i`` (0-based) the user examines the result with probability
``exam[i]``, clicks an examined result of grade ``g`` with ``click[g]``, and after a click stops
with probability ``1 - (1 - stop[g]) (1 - stop_rank[i])``. The cascade model is ``exam = 1``,
``stop_rank = 0`` (parameters of ``../shared/spec/online.md``, "Interleaving and clicks"); the
position-based model (PBM) has ``exam[i] = 1 / (i + 1) ** eta`` and never stops; the dependent
click model (DCM, Guo et al. 2009) examines top-down and continues after a click at rank ``i``
with probability ``lambda_i``.

List length. The per-rank arrays (``exam``, ``stop_rank``) cover the ranks of the lists shown; the
presets are defined by formulas and are built for any ``length`` (default 10): cascade models
examine every rank and have no per-rank stop, PBM examines rank i with ``1 / i ** eta``, DCM
continues with ``0.9 ** i``. A model with explicit per-rank values shorter than the list
(:meth:`ClickModel.extended`) keeps its last rank's value for the ranks below it.

>>> m = ClickModel.named("navigational", grades=5)
>>> m.click.tolist(), m.stop.tolist()
([0.05, 0.3, 0.5, 0.7, 0.95], [0.2, 0.3, 0.5, 0.7, 0.9])
>>> from irbandits.rng import new_rng
>>> clicks = np.zeros(3, np.bool_)
>>> ClickModel.named("perfect", grades=2).simulate([1, 0, 1], clicks, new_rng(1))
2
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from numba import njit

from irbandits.errors import IrbanditsError
from irbandits.params import Registry
from irbandits.rng import uniform

CUTOFF = 10  # the default list length

# name -> grades -> (P(click | grade), P(stop | click, grade))
CASCADE = {
    "perfect": {5: ([0.0, 0.2, 0.4, 0.8, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0]), 2: ([0.0, 1.0], [0.0, 0.0])},
    "navigational": {5: ([0.05, 0.3, 0.5, 0.7, 0.95], [0.2, 0.3, 0.5, 0.7, 0.9]), 2: ([0.05, 0.95], [0.2, 0.9])},
    "informational": {5: ([0.4, 0.6, 0.7, 0.8, 0.9], [0.1, 0.2, 0.3, 0.4, 0.5]), 2: ([0.4, 0.9], [0.1, 0.5])},
    "random": {5: ([0.5] * 5, [0.0] * 5), 2: ([0.5, 0.5], [0.0, 0.0])},
}


@njit(cache=True)
def simulate_clicks(grades, n, click, stop, exam, stop_rank, rng, out):
    """Clicks on the first ``n`` results with relevance ``grades``; returns the number of clicks."""
    total = 0
    for i in range(n):
        out[i] = False
    for i in range(n):
        g = grades[i]
        if exam[i] < 1.0 and uniform(rng) >= exam[i]:
            continue
        if uniform(rng) < click[g]:
            out[i] = True
            total += 1
            go_on = (1.0 - stop[g]) * (1.0 - stop_rank[i])
            if go_on < 1.0 and uniform(rng) >= go_on:
                break
    return total


def _probabilities(name: str, values, size: int) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64).ravel()
    if len(a) != size:
        raise IrbanditsError(f"{name} needs {size} probabilities, got {len(a)}")
    if np.isnan(a).any() or (a < 0).any() or (a > 1).any():
        raise IrbanditsError(f"{name} must be probabilities in [0, 1], got {a.tolist()}")
    return a


def read_fitted(path: str | Path) -> dict:
    """The JSON body of a click model fit saved by :meth:`irbandits.clicks.fitting.FittedClickModel.save`."""
    try:
        body = json.loads(Path(path).read_text())
        if not isinstance(body, dict) or body.get("format") != "irbandits-click-model":
            raise ValueError("not written by irbandits")
        for key in ("model", "by", "items", "length", "params", "se"):
            if key not in body:
                raise ValueError(f"no {key}")
        return body
    except (OSError, ValueError) as exc:
        raise IrbanditsError(f"{path}: not a saved click model fit ({exc})") from None


@dataclass(frozen=True)
class ClickModel:
    """A click model over graded results: arrays the compiled kernel reads (see module docstring)."""

    name: str
    click: np.ndarray
    stop: np.ndarray
    exam: np.ndarray
    stop_rank: np.ndarray

    @classmethod
    def cascade(cls, click, stop, name: str = "cascade", length: int = CUTOFF) -> "ClickModel":
        """Cascade model with P(click | grade) and P(stop | click, grade), one value per grade."""
        c = _probabilities("click", click, len(np.ravel(click)))
        s = _probabilities("stop", stop, len(c))
        return cls(name, c, s, np.ones(length), np.zeros(length))

    @classmethod
    def position_based(cls, attractiveness, eta: float = 1.0, exam=None, length: int = CUTOFF) -> "ClickModel":
        """PBM: examination ``1 / (rank ** eta)`` (or ``exam``, one value per rank), click by grade, no stop."""
        a = _probabilities("attractiveness", attractiveness, len(np.ravel(attractiveness)))
        e = (1.0 / np.arange(1, length + 1) ** float(eta) if exam is None
             else _probabilities("exam", exam, len(np.ravel(exam))))
        return cls("pbm", a, np.zeros(len(a)), e, np.zeros(len(e)))

    @classmethod
    def dependent(cls, attractiveness, continuation) -> "ClickModel":
        """DCM: top-down, click by grade, continue after a click at rank i with ``continuation[i]``
        (one value per rank)."""
        a = _probabilities("attractiveness", attractiveness, len(np.ravel(attractiveness)))
        lam = _probabilities("continuation", continuation, len(np.ravel(continuation)))
        return cls("dcm", a, np.zeros(len(a)), np.ones(len(lam)), 1.0 - lam)

    @classmethod
    def named(cls, name: str, grades: int = 5, length: int = CUTOFF) -> "ClickModel":
        """``perfect``, ``navigational``, ``informational`` or ``random`` (clicks at 0.5, no stop)
        cascade for 5 grades (0-4) or 2 (binary); also ``pbm`` and ``dcm`` with attractiveness
        from the navigational table (PBM: eta = 1; DCM: continuation 0.9 ** (rank)); per-rank
        values for lists of ``length`` results. A path ending in ``.json`` is a model fitted by
        grade and saved (:mod:`irbandits.clicks.fitting`)."""
        if name.lower().endswith(".json"):
            body = read_fitted(name)
            params = {k: np.asarray(v, float) for k, v in body["params"].items()}
            return cls.from_fit(body["model"], body["by"], params).extended(length)
        if grades not in (2, 5):
            raise IrbanditsError(f"click models are defined for 2 or 5 grades, got {grades}")
        return _PRESETS.get(name)(grades, length)

    @classmethod
    def from_fit(cls, model: str, by: str, params: dict[str, np.ndarray]) -> "ClickModel":
        """The simulator's form of a model fitted by grade (:mod:`irbandits.clicks.fitting`): PBM, DCM
        and SDBN (a DBN whose continuation is 1) map exactly; UBM and a DBN that abandons after a
        skipped result have no such form."""
        if by != "grade":
            raise IrbanditsError(f"this {model} was fitted per document; fit it by grade (`--by grade`) to "
                                 "use it as a simulator's click model")
        a = np.clip(params["attractiveness"], 0, 1)
        pad = lambda v: np.resize(np.r_[v, np.full(max(0, CUTOFF - len(v)), v[-1])], CUTOFF)  # noqa: E731
        if model == "pbm":
            return cls("pbm-fitted", a, np.zeros(len(a)), pad(params["examination"]), np.zeros(CUTOFF))
        if model == "dcm":
            return cls("dcm-fitted", a, np.zeros(len(a)), np.ones(CUTOFF), 1.0 - pad(params["continuation"]))
        if model in ("sdbn", "dbn") and abs(float(params["continuation"]) - 1.0) < 1e-9:
            return cls(f"{model}-fitted", a, np.asarray(params["satisfaction"], float), np.ones(CUTOFF),
                       np.zeros(CUTOFF))
        raise IrbanditsError(f"a fitted {model} cannot drive the simulator's click kernel (it has no "
                             + ("dependence on the last click" if model == "ubm" else
                                "abandonment after a skipped result") + "); fit pbm, dcm or sdbn instead")

    @property
    def length(self) -> int:
        """The number of ranks the per-rank values cover."""
        return len(self.exam)

    def extended(self, length: int) -> "ClickModel":
        """This model for lists of ``length`` results: ranks below its last keep that rank's values."""
        if length <= self.length:
            return self
        pad = length - self.length
        return ClickModel(self.name, self.click, self.stop, np.pad(self.exam, (0, pad), mode="edge"),
                          np.pad(self.stop_rank, (0, pad), mode="edge"))

    @property
    def grades(self) -> int:
        return len(self.click)

    def arrays(self) -> tuple:
        return self.click, self.stop, self.exam, self.stop_rank

    def simulate(self, grades, out: np.ndarray, rng: np.ndarray) -> int:
        """Clicks of one user on a list with these relevance grades (writes ``out``, returns count)."""
        g = np.asarray(grades, dtype=np.int64)
        if len(g) > self.length or len(out) < len(g):
            raise IrbanditsError(f"the {self.name} model covers lists of at most {self.length} results "
                                 f"(see extended()) and out must hold them all, got {len(g)}")
        if len(g) and (g.min() < 0 or g.max() >= self.grades):
            raise IrbanditsError(f"grades must be 0..{self.grades - 1} for the {self.name} model, got {g.tolist()}")
        return int(simulate_clicks(g, len(g), *self.arrays(), rng, out))


def _cascade(key: str, grades: int, length: int) -> ClickModel:
    return ClickModel.cascade(*CASCADE[key][grades], name=key, length=length)


def _pbm(grades: int, length: int) -> ClickModel:
    return ClickModel.position_based(CASCADE["navigational"][grades][0], length=length)


def _dcm(grades: int, length: int) -> ClickModel:
    return ClickModel.dependent(CASCADE["navigational"][grades][0], 0.9 ** np.arange(1, length + 1))


# the models :meth:`ClickModel.named` knows: name -> (grades, length) -> model
_PRESETS: Registry[Callable[[int, int], ClickModel]] = Registry("click model")
for _key in CASCADE:
    _PRESETS.add(_key, partial(_cascade, _key))
_PRESETS.add("pbm", _pbm)
_PRESETS.add("dcm", _dcm)
