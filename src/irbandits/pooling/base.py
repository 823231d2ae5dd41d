"""What every adjudication method shares: the pool state, its kernels, the registry, the live object.

A method is a subclass of :class:`PoolingMethod` that declares ``name``, ``description``, a
``params`` table, whether it is ``random``, how to build its own arrays (``_init_own``) and two
compiled kernels::

    _select(ps, own, rng) -> doc      # the pool index of the document to judge next, -1 when done
    _update(ps, own, rng, doc, rel)   # record that ``doc`` was judged (rel is 0 or 1)

``ps`` is the pool state every method shares: ``(ranked, length, doc_ptr, doc_run, doc_rank,
judged, pos, ints)`` (see :class:`~irbandits.pooling.pools.TopicPool` for the first five);
``pos[r]`` is the rank of run ``r``'s first unjudged document (``length[r]`` once the run is
exhausted) and ``ints`` holds the number of judgments, the run and document last offered, and the
number of runs not yet exhausted. :func:`judge` keeps it true after every judgment, so a document
already judged through another run is skipped at no cost, and an exhausted run leaves the game.

Rules shared by all methods: runs are numbered in name order and documents in docno order; every
tie goes to the smaller number unless a method says otherwise (MM: to the run just played). A
judgment of a document other than the one offered (a live assessor judging out of turn) updates the
evidence like any other but counts as a play of no run.

The live object and the compiled simulation (:mod:`irbandits.pooling.simulate`) call the same
kernels on the same arrays, so one seed gives one sequence of documents on both paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numba import njit

from irbandits.errors import IrbanditsError
from irbandits.params import Param, Registry, check_params, describe_params, split_name
from irbandits.pooling.pools import TopicPool
from irbandits.rng import new_rng, randint

N_JUDGED, CUR_RUN, CUR_DOC, N_ACTIVE = 0, 1, 2, 3
_REGISTRY: Registry[type["PoolingMethod"]] = Registry("pooling method")


# ----- kernels shared by every method ------------------------------------------------------------
@njit(cache=True)
def judge(ps, doc):
    """Mark ``doc`` judged, move every run that stood on it to its next unjudged document.

    Returns the run played (the run whose document was offered, when ``doc`` is that document), or -1.
    """
    ranked, length, doc_ptr, doc_run, doc_rank, judged, pos, ints = ps
    played = ints[CUR_RUN] if doc == ints[CUR_DOC] else -1
    judged[doc] = 1
    ints[N_JUDGED] += 1
    ints[CUR_RUN] = -1
    ints[CUR_DOC] = -1
    for j in range(doc_ptr[doc], doc_ptr[doc + 1]):
        r = doc_run[j]
        if pos[r] == doc_rank[j]:
            p = pos[r] + 1
            while p < length[r] and judged[ranked[r, p]]:
                p += 1
            pos[r] = p
            if p == length[r]:
                ints[N_ACTIVE] -= 1
    return played


@njit(cache=True)
def take(ps, r):
    """Offer run ``r``'s next unjudged document (play run ``r``); -1 when ``r`` is -1."""
    ranked, length, doc_ptr, doc_run, doc_rank, judged, pos, ints = ps
    if r < 0:
        return -1
    doc = ranked[r, pos[r]]
    ints[CUR_RUN] = r
    ints[CUR_DOC] = doc
    return doc


@njit(cache=True)
def offer(ps, doc):
    """Offer a document chosen by a document-ordering method (no run is played)."""
    ps[7][CUR_RUN] = -1
    ps[7][CUR_DOC] = doc
    return doc


@njit(cache=True)
def best_run(ps, values, prefer):
    """The run not yet exhausted with the largest value; ties go to ``prefer``, then the smaller index."""
    length, pos = ps[1], ps[6]
    best, arg = -np.inf, -1
    for r in range(length.shape[0]):
        if pos[r] < length[r] and values[r] > best:
            best, arg = values[r], r
    if 0 <= prefer and pos[prefer] < length[prefer] and values[prefer] == best:
        return prefer
    return arg


@njit(cache=True)
def random_run(ps, rng):
    """A run drawn uniformly from those not yet exhausted; -1 when all are."""
    length, pos, ints = ps[1], ps[6], ps[7]
    if ints[N_ACTIVE] == 0:
        return -1
    k = randint(rng, ints[N_ACTIVE])
    for r in range(length.shape[0]):
        if pos[r] < length[r]:
            if k == 0:
                return r
            k -= 1
    return -1


@njit(cache=True)
def propagate(ps, doc, rel, rate, jrel, jret):
    """Evidence propagation: every run that retrieved ``doc`` gets jrel <- rate jrel + rel, jret <- rate jret + 1."""
    doc_ptr, doc_run = ps[2], ps[3]
    for j in range(doc_ptr[doc], doc_ptr[doc + 1]):
        r = doc_run[j]
        jrel[r] = rate * jrel[r] + rel
        jret[r] = rate * jret[r] + 1.0


# ----- the live object ---------------------------------------------------------------------------
class PoolingMethod:
    """Base class of the adjudication methods; see the module docstring."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reference: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    random: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.name:
            _REGISTRY.add(cls.name, cls)

    def __init__(self, pool: TopicPool, seed: int | np.random.SeedSequence = 0, **params):
        """Start on ``pool`` with nothing judged.

        Parameters
        ----------
        pool
            One topic's pool of documents (:func:`~irbandits.pooling.pools.depth_pools`).
        seed
            Seed of the method's own random generator (used by the random methods only).
        **params
            The method's parameters, by name; see its ``params`` table.
        """
        self.pool = pool
        self.seed = seed
        self.param_values = self._check_params(params)
        ints = np.array([0, -1, -1, int((pool.length > 0).sum())], np.int64)
        self._ps = (pool.ranked, pool.length, pool.doc_ptr, pool.doc_run, pool.doc_rank,
                    np.zeros(pool.size, np.int8), np.zeros(len(pool.runs), np.int64), ints)
        own = self._init_own(pool, **self.param_values)
        self._own_names = tuple(own)
        self._own = tuple(own.values())
        self._rng = new_rng(seed)

    @property
    def kernel_state(self) -> tuple[tuple, tuple[np.ndarray, ...], np.ndarray]:
        """What the compiled kernels take: the pool's arrays, the method's own arrays, the generator's state (live)."""
        return self._ps, self._own, self._rng

    @classmethod
    def _check_params(cls, given: dict[str, Any]) -> dict[str, Any]:
        return check_params(cls.name, cls.params, given)

    def _init_own(self, pool: TopicPool, **params) -> dict[str, np.ndarray]:
        raise NotImplementedError

    # ----- the interactive loop ------------------------------------------------------------------
    def next(self) -> str | None:
        """The docno to judge next (the same until it is judged), or None when the pool is done."""
        doc = self._ps[7][CUR_DOC]
        if doc < 0:
            doc = self._select(self._ps, self._own, self._rng)
        return None if doc < 0 else str(self.pool.docnos[doc])

    @property
    def offered_run(self) -> str | None:
        """The run whose document :meth:`next` offers (None for document-ordering methods)."""
        r = self._ps[7][CUR_RUN]
        return None if r < 0 else self.pool.runs[r]

    def judge(self, docno: str, relevant: bool) -> "PoolingMethod":
        """Record the judgment of any pooled, not yet judged document; returns self."""
        doc = self.pool.index(docno)
        if doc < 0:
            raise IrbanditsError(f"document {docno} is not in the depth-{self.pool.depth} pool of topic {self.pool.topic}")
        if self._ps[5][doc]:
            raise IrbanditsError(f"document {docno} of topic {self.pool.topic} is already judged")
        self._update(self._ps, self._own, self._rng, doc, int(bool(relevant)))
        return self

    @property
    def judgments(self) -> int:
        return int(self._ps[7][N_JUDGED])

    def is_judged(self, docno: str) -> bool:
        doc = self.pool.index(docno)
        return doc >= 0 and bool(self._ps[5][doc])

    # ----- state ---------------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """The mutable arrays and generator (JSON-ready); the pool itself is saved separately."""
        arrays = dict(judged=self._ps[5], pos=self._ps[6], ints=self._ps[7], **dict(zip(self._own_names, self._own)))
        return dict(method=self.name, params=dict(self.param_values),
                    arrays={k: {"dtype": str(a.dtype), "data": a.tolist()} for k, a in arrays.items()},
                    rng=[int(x) for x in self._rng])

    @classmethod
    def from_state(cls, pool: TopicPool, state: dict[str, Any]) -> "PoolingMethod":
        """Rebuild, on ``pool``, a method that continues exactly where ``state`` left off."""
        obj = get_method(state["method"])(pool, 0, **state["params"])
        targets = dict(judged=obj._ps[5], pos=obj._ps[6], ints=obj._ps[7], **dict(zip(obj._own_names, obj._own)))
        for name, arr in targets.items():
            saved = np.asarray(state["arrays"][name]["data"], dtype=arr.dtype)
            if saved.shape != arr.shape:
                raise IrbanditsError(f"{obj.name}: state array {name} has shape {saved.shape}, expected {arr.shape}")
            arr[...] = saved
        obj._rng[...] = np.asarray(state["rng"], dtype=np.uint64)
        return obj

    def clone(self, seed=None) -> "PoolingMethod":
        """A fresh copy on the same pool with the same parameters (and a new seed if given)."""
        return type(self)(self.pool, seed=self.seed if seed is None else seed, **self.param_values)

    def __repr__(self) -> str:
        args = "".join(f", {k}={v!r}" for k, v in self.param_values.items())
        return f"{self.name}(topic={self.pool.topic!r}{args})"


# ----- registry ---------------------------------------------------------------------------------
def list_methods():
    """A table of the registered methods: name, description, parameters, random, reference."""
    import pandas as pd

    return pd.DataFrame([dict(name=c.name, description=c.description,
                              parameters=describe_params(c.params),
                              random=c.random, reference=c.reference) for c in _REGISTRY.values()])


def get_method(name: str) -> type[PoolingMethod]:
    """The method class registered as ``name`` (case-insensitive)."""
    return _REGISTRY.get(name)


@dataclass(frozen=True)
class MethodSpec:
    """A parsed ``NAME`` or ``NAME:param=value,...`` string, e.g. ``MM-NS:rate=0.5``."""

    cls: type[PoolingMethod]
    params: dict[str, Any]
    label: str

    def make(self, pool: TopicPool, seed=0) -> PoolingMethod:
        return self.cls(pool, seed=seed, **self.params)


def parse_method(text: str) -> MethodSpec:
    """Parse ``NAME`` or ``NAME:param=value,...``; ``all`` is not a method (see :func:`method_specs`)."""
    spec = split_name(text)
    cls = get_method(spec.name)
    params: dict[str, Any] = {}
    for key, value in spec.items:
        if value is None:
            raise IrbanditsError(f"{cls.name}: expected param=value, got {key!r}")
        params[key] = value
    checked = cls._check_params(params)
    return MethodSpec(cls, {k: checked[k] for k in params}, cls.name + (":" + spec.options if spec.options else ""))


def method_specs(names: list[str | MethodSpec] | None) -> list[MethodSpec]:
    """Specs for the given names (or specs); ``None``, ``[]`` or ``["all"]`` give every method."""
    if not names or [str(n).lower() for n in names] == ["all"]:
        names = _REGISTRY.names()
    specs = [n if isinstance(n, MethodSpec) else parse_method(n) for n in names]
    if len({s.label for s in specs}) != len(specs):
        raise IrbanditsError("the same pooling method is given twice")
    return specs
