"""What every dueling-bandit algorithm shares: parameters, the registry, the interactive object.

An algorithm is a subclass of :class:`DuelingAlgorithm` that declares its ``name``, a one-line
``description``, a ``params`` table, optional named settings (``settings = {"tuned": {...}}``),
how to build its state (``_init_state``), and three compiled kernels over that state::

    _select(st, rng) -> (c, d)          # st: the tuple of state arrays, rng: uint64[4]
    _update(st, rng, c, d, c_won)       # records one duel
    _recommend(st) -> arm               # the arm it would ship now

A *multi-dueling* algorithm (``multi_dueling = True``; Sui et al. UAI 2017) also compares m arms
at once, e.g. in one multileaved list, with two more kernels::

    _select_many(st, rng, arms)         # writes the m arms to show (repeats allowed)
    _update_many(st, rng, arms, credit) # credit[i]: what arms[i] earned; more credit beats less

An algorithm that can reach a state from which its choices never change may also declare::

    _absorbed(st) -> bool               # True only if from now on, whatever the outcomes, _select
                                        # returns the same (c, d) (_select_many the same arms) and
                                        # _recommend the same arm

(e.g. MergeDTS and mergeRUCB once one arm is left). :func:`irbandits.simulate.simulate` then
finishes such a run in closed form. The default (``None``) is never absorbed, and costs nothing.

The interactive methods and the compiled simulation (:mod:`irbandits.simulate`) call the same
kernels on the same arrays, so one seed gives one trajectory on both paths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np

from irbandits.errors import IrbanditsError
from irbandits.io import read_state, restore_state, write_state
from irbandits.params import Param, Registry, check_params, describe_params, split_name
from irbandits.rng import new_rng

REGISTRY: Registry[type["DuelingAlgorithm"]] = Registry("algorithm")


def c_of_delta(alpha: float, K: int, delta: float) -> float:
    """C(delta) = ((4 alpha - 1) K^2 / ((2 alpha - 1) delta))^(1 / (2 alpha - 1)) (thesis Alg. 4)."""
    if alpha <= 0.5:
        raise IrbanditsError(f"C(delta) needs alpha > 0.5, got alpha={alpha}; pass C explicitly")
    log_c = (math.log((4 * alpha - 1) * K * K / ((2 * alpha - 1) * delta))) / (2 * alpha - 1)
    return math.exp(min(log_c, 700.0))


def from_horizon(name: str, horizon: int | None, value, default, what: str = "delta"):
    """``value`` if given, else ``default(T)`` for the horizon T; an error naming both if neither is there."""
    if value is not None:
        return value
    if horizon is None or horizon < 1:
        raise IrbanditsError(f"{name} needs the horizon T (it sets {what}); pass horizon=T or {what}=...")
    return default(horizon)


class DuelingAlgorithm:
    """Base class of the online dueling-bandit algorithms; see the module docstring."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    settings: ClassVar[dict[str, dict[str, Any]]] = {}
    multi_dueling: ClassVar[bool] = False
    _absorbed: ClassVar[Callable | None] = None  # the absorbing test, a kernel (see the module docstring)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.name:
            REGISTRY.add(cls.name, cls)

    def __init__(self, K: int, seed: int | np.random.SeedSequence | None = 0, horizon: int | None = None, **params):
        """Start with no duels recorded.

        Parameters
        ----------
        K
            Number of arms (rankers), at least 2.
        seed
            Seed of the algorithm's own random generator.
        horizon
            Number of duels planned, for algorithms whose defaults depend on it (e.g. ``C(1 / T)``).
        **params
            The algorithm's parameters, by name; see its ``params`` table.
        """
        if int(K) < 2:
            raise IrbanditsError(f"{self.name}: needs at least 2 arms, got K={K}")
        self.K = int(K)
        self.seed = seed
        self.horizon = None if horizon is None else int(horizon)
        self.param_values = self._check_params(params)
        arrays = self._init_state(self.K, **self.param_values)
        self._names = tuple(arrays)
        self._st = tuple(arrays.values())
        self._rng = new_rng(0 if seed is None else seed)

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """The kernels' state arrays by name (live: the kernels update them in place)."""
        return dict(zip(self._names, self._st))

    @property
    def kernel_state(self) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
        """What the compiled kernels take: the state tuple and the generator's state (live)."""
        return self._st, self._rng

    # ----- declaration helpers ---------------------------------------------------------------
    @classmethod
    def _check_params(cls, given: dict[str, Any]) -> dict[str, Any]:
        return check_params(cls.name, cls.params, given)

    @classmethod
    def tuned(cls, K: int, seed=0, horizon=None, setting: str = "tuned", **overrides) -> "DuelingAlgorithm":
        """The algorithm with a paper's named settings (e.g. ``MergeDTS.tuned(K)``)."""
        if setting not in cls.settings:
            raise IrbanditsError(f"{cls.name}: no setting {setting!r}; settings: {', '.join(cls.settings) or 'none'}")
        return cls(K, seed=seed, horizon=horizon, **{**cls.settings[setting], **overrides})

    def _init_state(self, K: int, **params) -> dict[str, np.ndarray]:
        raise NotImplementedError

    # ----- the interactive loop --------------------------------------------------------------
    def select(self) -> tuple[int, int]:
        """The pair (c, d) to compare next; c == d is a legal self-duel."""
        c, d = self._select(self._st, self._rng)
        return int(c), int(d)

    def update(self, c: int, d: int, c_won: bool) -> "DuelingAlgorithm":
        """Record that ``c`` beat ``d`` (``c_won``) or lost to it; returns self."""
        for arm in (c, d):
            if not 0 <= int(arm) < self.K:
                raise IrbanditsError(f"{self.name}: arm {arm} out of range 0..{self.K - 1}")
        self._update(self._st, self._rng, int(c), int(d), bool(c_won))
        return self

    def select_many(self, m: int) -> np.ndarray:
        """The ``m`` arms to compare at once next (e.g. to multileave); repeats are allowed."""
        require_multi_dueling(type(self))
        if int(m) < 2:
            raise IrbanditsError(f"{self.name}: a multi-duel compares at least 2 arms, got m={m}")
        arms = np.empty(int(m), np.int64)
        self._select_many(self._st, self._rng, arms)
        return arms

    def update_many(self, arms, credit) -> "DuelingAlgorithm":
        """Record one multi-duel: ``credit[i]`` is what ``arms[i]`` earned (e.g. its multileaving
        credit); every pair with different credit counts as one duel. Returns self."""
        require_multi_dueling(type(self))
        arms, credit = np.asarray(arms, dtype=np.int64), np.asarray(credit, dtype=np.float64)
        if arms.ndim != 1 or arms.shape != credit.shape:
            raise IrbanditsError(f"{self.name}: arms and credit must be two equally long lists, "
                                 f"got shapes {arms.shape} and {credit.shape}")
        for arm in arms:
            if not 0 <= int(arm) < self.K:
                raise IrbanditsError(f"{self.name}: arm {arm} out of range 0..{self.K - 1}")
        self._update_many(self._st, self._rng, arms, credit)
        return self

    def recommend(self) -> int:
        """The arm this algorithm would ship now."""
        return int(self._recommend(self._st))

    @property
    def absorbed(self) -> bool:
        """Whether the choices and the recommendation can no longer change (never, without ``_absorbed``)."""
        return self._absorbed is not None and bool(self._absorbed(self._st))

    @property
    def wins(self) -> np.ndarray:
        """Copy of the win-count matrix W (w_ij = times i beat j)."""
        return self._st[0].copy()

    @property
    def t(self) -> int:
        """Number of duels recorded so far."""
        return int(self._st[self._names.index("t")][0])

    # ----- state ---------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """Everything needed to resume: algorithm, parameters, arrays and the generator."""
        return {
            "algorithm": self.name,
            "K": self.K,
            "horizon": self.horizon,
            "params": dict(self.param_values),
            "arrays": {n: a.copy() for n, a in zip(self._names, self._st)},
            "rng": self._rng.copy(),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "DuelingAlgorithm":
        """Rebuild an object that continues exactly where ``state`` left off."""
        algo_cls = REGISTRY.get(state["algorithm"]) if state["algorithm"] in REGISTRY else cls
        obj = algo_cls(state["K"], seed=0, horizon=state["horizon"], **state["params"])
        restore_state(obj.name, obj._names, obj._st, obj._rng, state)
        return obj

    def save(self, path: str | Path) -> Path:
        """Write the state as JSON, atomically (a crash never leaves half a file)."""
        return write_state(self.state, path)

    @classmethod
    def load(cls, path: str | Path) -> "DuelingAlgorithm":
        s = read_state(path, "algorithm")
        if s.get("algorithm") not in REGISTRY:
            raise IrbanditsError(f"{path}: unknown algorithm {s.get('algorithm')!r}")
        return cls.from_state(s)

    def clone(self, seed=None) -> "DuelingAlgorithm":
        """A fresh, untrained copy with the same parameters (and a new seed if given)."""
        return type(self)(self.K, seed=self.seed if seed is None else seed, horizon=self.horizon, **self.param_values)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.param_values.items())
        return f"{self.name}(K={self.K}{', ' + args if args else ''})"


# ----- registry ---------------------------------------------------------------------------------
def list_algorithms():
    """A table of the registered algorithms: name, description, parameters, named settings."""
    import pandas as pd

    return pd.DataFrame([dict(name=c.name, description=c.description, parameters=describe_params(c.params),
                              settings=", ".join(c.settings), reference=c.reference) for c in REGISTRY.values()])


def require_multi_dueling(cls: type[DuelingAlgorithm]) -> type[DuelingAlgorithm]:
    """``cls`` if it can compare more than two arms per step, else an error naming those that can."""
    if not cls.multi_dueling:
        able = ", ".join(sorted(n for n, c in REGISTRY.items() if c.multi_dueling))
        raise IrbanditsError(f"{cls.name} compares two arms per step and cannot multileave; "
                             f"multi-dueling algorithms: {able}")
    return cls


def get_algorithm(name: str) -> type[DuelingAlgorithm]:
    """The algorithm class registered as ``name`` (case-insensitive)."""
    return REGISTRY.get(name)


@dataclass(frozen=True)
class AlgorithmSpec:
    """A parsed ``NAME[:setting][:param=value,...]`` string, e.g. ``MergeDTS:tuned,M=8``."""

    cls: type[DuelingAlgorithm]
    params: dict[str, Any]
    label: str

    def make(self, K: int, seed=0, horizon: int | None = None) -> DuelingAlgorithm:
        return self.cls(K, seed=seed, horizon=horizon, **self.params)


def parse_spec(text: str) -> AlgorithmSpec:
    """Parse ``NAME``, ``NAME:tuned``, ``NAME:alpha=0.5,M=8`` or ``NAME:tuned,M=8``."""
    spec = split_name(text)
    cls = get_algorithm(spec.name)
    params: dict[str, Any] = {}
    for item, value in spec.items:
        if value is not None:
            params[item] = value
        elif item in cls.settings:
            params.update(cls.settings[item])
        else:
            raise IrbanditsError(
                f"{cls.name}: {item!r} is neither a setting ({', '.join(cls.settings) or 'none'}) nor param=value"
            )
    params = {k: v for k, v in cls._check_params(params).items() if k in params}
    return AlgorithmSpec(cls, params, text.strip())
