"""What every online learner to rank shares: parameters, the registry, the interactive object, state.

A learner is a subclass of :class:`OnlineLearner` that declares its ``name``, a one-line
``description``, a ``params`` table, how to build its state (``_init_state``), the two compiled
kernels of the comparison method it calls (``_plugs``: e.g. an interleaving method's ``interleave``
and ``credit``) and two compiled kernels over its state::

    _rank(st, rng, X, shown, plug1, plug2) -> n     # the list to show for documents X: shown[:n]
    _update(st, rng, X, shown, n, clicks, plug1, plug2)   # learn from the clicks on that list

A linear learner's ``st[0]`` is float64[m, F] whose row 0 is the current ranker's weights; a learner
with another ranker (:mod:`irbandits.oltr.neural`) sets ``linear = False`` and its own scorer
``_score(st, X, S)`` (``S[i, 0]``: the current ranker's score of document ``i``), which offline
evaluation calls. ``_rank`` changes only the
arrays named in ``_scratch`` (the candidates, lists and probabilities of this list, which ``_update``
reads) and draws from ``rng``; ``_update`` learns into the others. So several lists can wait for their
clicks at once (a service's open impressions): :meth:`OnlineLearner.show` keeps a copy of the scratch
with the list (:class:`Shown`) and :meth:`OnlineLearner.learn` puts it back before the update, which
then steps from the weights of now. :meth:`OnlineLearner.rank` and :meth:`OnlineLearner.update` are
that pair for one list at a time; they and the compiled simulation (:mod:`irbandits.oltr.simulation`)
call the same kernels on the same arrays, so one seed gives one trajectory on both paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar

import numpy as np

from irbandits.clicks.interleaving import CUTOFF, clicks_at
from irbandits.errors import IrbanditsError
from irbandits.io import read_state, restore_state, write_state
from irbandits.oltr.linear import linear_score
from irbandits.params import Param, Registry, check_params, describe_params, split_name
from irbandits.rng import new_rng

LEARNERS: Registry[type["OnlineLearner"]] = Registry("online learner")

LENGTH = Param("length", int, CUTOFF, "results shown per impression", lambda n: 1 <= n <= 1000, "1 to 1000")
DELTA = Param("delta", float, 1.0, "exploration step: candidates are w + delta u, u a random unit vector",
              lambda d: d > 0, "> 0")
GAMMA = Param("gamma", float, 0.01, "learning rate: a winning candidate moves w by gamma u", lambda g: g > 0, "> 0")


@dataclass
class Shown:
    """One list shown, waiting for its clicks: the query's documents, the list (indices of their rows)
    and the learner's scratch arrays as the list's ``rank`` left them."""

    X: np.ndarray
    list: list[int]
    scratch: tuple[np.ndarray, ...]


class OnlineLearner:
    """Base class of the online learners to rank; see the module docstring."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    linear: ClassVar[bool] = True   # the ranker is one weight a feature (:attr:`weights`)
    _scratch: ClassVar[tuple[str, ...]] = ()   # the arrays ``_rank`` writes for ``_update`` to read
    _rank: ClassVar[Callable]
    _update: ClassVar[Callable]
    _score: ClassVar[Callable] = staticmethod(linear_score)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.name:
            LEARNERS.add(cls.name, cls)

    def __init__(self, n_features: int, seed: int | np.random.SeedSequence | None = 0, **params):
        """Start from the zero ranker.

        Parameters
        ----------
        n_features
            Number of features of a document (the length of the weight vector).
        seed
            Seed of the learner's own random generator (exploration, list sampling, ties).
        **params
            The learner's parameters, by name; see its ``params`` table.
        """
        if int(n_features) < 1:
            raise IrbanditsError(f"{self.name}: needs at least 1 feature, got n_features={n_features}")
        self.n_features = int(n_features)
        self.seed = seed
        self.param_values = check_params(self.name, self.params, params)
        arrays = self._init_state(self.n_features, **self.param_values)
        self._names = tuple(arrays)
        self._st = tuple(arrays.values())
        self._rng = new_rng(0 if seed is None else seed)
        self._length = int(self.param_values.get("length", CUTOFF))
        self._last: Shown | None = None   # the list rank() showed, until update()
        self._documents = 1   # the most documents a query had: learners that keep queries size by it

    def _prepare(self, documents: int) -> None:
        """Make room for queries of ``documents`` documents (for learners whose state holds queries)."""
        if documents > self._documents:
            self._documents = int(documents)
            self._grow(self._documents)

    def _grow(self, documents: int) -> None:
        """Resize the state for queries of ``documents`` documents (most learners need nothing)."""

    def _init_state(self, F: int, **params) -> dict[str, np.ndarray]:
        raise NotImplementedError

    @property
    def _plugs(self) -> tuple:
        """The two kernels of the comparison method the learner's kernels call (e.g. an interleaving
        method's ``interleave`` and ``credit``), or ``(0, 0)`` for a learner without a choice of method,
        whose kernels are then cached between processes."""
        raise NotImplementedError

    # ----- the interactive loop ----------------------------------------------------------------
    def _query(self, query_features) -> np.ndarray:
        X = np.ascontiguousarray(query_features, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features or X.shape[0] < 1:
            raise IrbanditsError(f"{self.name}: query_features must be a (documents, {self.n_features}) array, "
                                 f"got shape {X.shape}")
        if not np.isfinite(X).all():
            raise IrbanditsError(f"{self.name}: query_features hold NaN or infinite values")
        return X

    def scores(self, query_features) -> np.ndarray:
        """The current ranker's score of each document (row of ``query_features``); its deterministic
        list is the documents by falling score."""
        X = self._query(query_features)
        S = np.empty((X.shape[0], 1))
        self._score(self._st, X, S)
        return S[:, 0]

    def show(self, query_features, rng: np.ndarray | None = None) -> Shown:
        """The list to show for one query (rows of ``query_features``, float[n_docs, n_features]), with
        what :meth:`learn` needs to learn from its clicks later; ``rng`` (a generator of
        :func:`irbandits.rng.new_rng`) replaces the learner's own for this list."""
        X = self._query(query_features)
        self._prepare(X.shape[0])
        shown = np.full(self._length, -1, np.int64)
        n = self._rank(self._st, self._rng if rng is None else rng, X, shown, *self._plugs)
        state = dict(zip(self._names, self._st))
        return Shown(X, shown[:n].tolist(), tuple(state[name].copy() for name in self._scratch))

    def learn(self, shown: Shown, clicks, rng: np.ndarray | None = None) -> "OnlineLearner":
        """Learn from the clicks on list ``shown`` (from :meth:`show`; lists shown since do not matter):
        0-based clicked positions, or booleans, one per shown result. Returns self."""
        n = len(shown.list)
        c = np.asarray(clicks) if not isinstance(clicks, np.ndarray) else clicks
        flags = np.zeros(self._length, np.bool_)
        if c.dtype == np.bool_:
            if c.shape != (n,):
                raise IrbanditsError(f"{self.name}: clicks: {c.size} flags for a shown list of {n}")
            flags[:n] = c
        else:
            clicks_at(c.ravel().tolist(), n, flags[:n])
        state = dict(zip(self._names, self._st))
        for name, saved in zip(self._scratch, shown.scratch):
            state[name][tuple(slice(0, s) for s in saved.shape)] = saved   # a state grown since keeps its shape
        self._update(self._st, self._rng if rng is None else rng, shown.X, np.asarray(shown.list, np.int64), n,
                     flags[:n], *self._plugs)
        return self

    def rank(self, query_features) -> list[int]:
        """The list to show for one query: indices of its documents (rows of ``query_features``,
        float[n_docs, n_features]), best first, at most ``length`` of them."""
        self._last = self.show(query_features)
        return list(self._last.list)

    def update(self, clicks) -> "OnlineLearner":
        """Learn from the clicks on the last list: 0-based clicked positions, or booleans, one per
        shown result. Returns self."""
        if self._last is None:
            raise IrbanditsError(f"{self.name}: update() needs a rank() first (one update per list shown)")
        self.learn(self._last, clicks)
        self._last = None
        return self

    @property
    def weights(self) -> np.ndarray:
        """A copy of the current ranker's weights (one a feature for a linear learner)."""
        return self._st[0][0].copy()

    # ----- state -------------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """Everything needed to resume between impressions: learner, parameters, arrays, generator."""
        return {"algorithm": self.name, "n_features": self.n_features, "documents": self._documents,
                "params": dict(self.param_values),
                "arrays": {n: a.copy() for n, a in zip(self._names, self._st)}, "rng": self._rng.copy()}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "OnlineLearner":
        """Rebuild a learner that continues exactly where ``state`` left off."""
        learner_cls = LEARNERS.get(state["algorithm"])
        obj = learner_cls(state["n_features"], seed=0, **state["params"])
        obj._prepare(int(state.get("documents", 1)))
        restore_state(obj.name, obj._names, obj._st, obj._rng, state)
        return obj

    def save(self, path: str | Path) -> Path:
        """Write the state as JSON, atomically (a crash never leaves half a file)."""
        return write_state(self.state, path)

    @classmethod
    def load(cls, path: str | Path) -> "OnlineLearner":
        """A learner saved by :meth:`save`."""
        s = read_state(path, "learner")
        if s.get("algorithm") not in LEARNERS:
            raise IrbanditsError(f"{path}: unknown online learner {s.get('algorithm')!r}")
        return cls.from_state(s)

    def clone(self, seed=None) -> "OnlineLearner":
        """A fresh, untrained copy with the same parameters (and a new seed if given)."""
        return type(self)(self.n_features, seed=self.seed if seed is None else seed, **self.param_values)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.param_values.items())
        return f"{self.name}(n_features={self.n_features}{', ' + args if args else ''})"


# ----- registry ---------------------------------------------------------------------------------
def get_learner(name: str) -> type[OnlineLearner]:
    """The learner class registered as ``name`` (case-insensitive)."""
    return LEARNERS.get(name)


def parse_learner(text: str) -> tuple[type[OnlineLearner], dict[str, Any]]:
    """``NAME`` or ``NAME:k=v,...`` (e.g. ``MGD:n=9``) as the class and its checked parameters."""
    spec = split_name(text)
    cls = get_learner(spec.name)
    given = {}
    for key, value in spec.items:
        if value is None:
            raise IrbanditsError(f"{cls.name}: {key!r} is not param=value")
        given[key] = value
    return cls, {k: v for k, v in check_params(cls.name, cls.params, given).items() if k in given}


def list_learners():
    """A table of the registered learners: name, description, parameters, reference."""
    import pandas as pd

    return pd.DataFrame([dict(name=c.name, description=c.description, parameters=describe_params(c.params),
                              reference=c.reference) for c in LEARNERS.values()])
