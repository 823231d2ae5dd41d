"""Click models fitted to a click log: PBM, UBM, DBN, SDBN and DCM by expectation-maximisation.

**The click log** (:func:`read_click_log`): JSON lines, one search session a line::

    {"query": "q1", "docs": ["d3", "d1", "d7"], "clicks": [0, 2], "grades": [2, 0, 1]}

``clicks`` are 0-based positions of ``docs``; ``grades`` (relevance labels, optional) are needed
only to fit parameters per grade. Parameters are per item: by default an item is a (query,
document) pair; with ``by="grade"`` it is a relevance grade, and the fitted model can then drive
the simulator (``--click-model model.json``) on any data with grades.

**The models** (Chuklin, Markov & de Rijke, *Click Models for Web Search*, 2015; the names of
PyClick): every item has an attractiveness ``a``; rank r (0-based) and the user's state decide
whether it is examined (E); a click is ``E and A``.

- ``pbm``: E_r ~ Bernoulli(gamma_r), independent. gamma_0 is fixed at 1 (only a * gamma is
  identified).
- ``ubm``: E_r ~ Bernoulli(gamma_{r, j}), j = 1 + the rank of the last click before r (0: none);
  gamma_{0, 0} fixed at 1.
- ``dbn``: a cascade: rank 0 is examined; after a click the user is satisfied with probability
  ``s`` (per item) and stops; otherwise goes on to the next rank with probability ``gamma``.
- ``sdbn``: DBN with gamma = 1.
- ``dcm``: a cascade that goes on after a non-click and, after a click at rank r, with
  probability ``lambda_r``.

EM runs in compiled kernels, one pass over the sessions per round, from 200,000 sessions
split over the threads; SQUAREM (Varadhan & Roland 2008) extrapolates every third round, until no
parameter moves by ``tol`` (0.001) times its sampling scale ``1 / (2 sqrt(n))`` in a cycle of
three rounds, n being its observations in the E-step (at most ``iterations`` rounds): a parameter
seen a few times, whose estimate creeps towards 0 or 1, stops as soon as its movement is far
below its own uncertainty, and one seen a million times (DBN's continuation) goes on until it
moves less than 5e-7. Standard errors come from the observed information of each parameter
(Louis' formula, one parameter at a time: the complete-data information less the variance of the
missing data), so they are a little small where parameters are correlated; an estimate at 0 or 1
(an item never clicked, say), or within 10 times the stopping tolerance of it, has none (NaN).
Items never shown in training take the mean of their section.

**Evaluation** (:meth:`FittedClickModel.evaluate`): the log-likelihood (mean per session, natural
log) from the click probabilities conditional on the clicks above, and the perplexity per rank,
``2 ** (-mean log2 P(C_r = c_r))`` with the unconditional click probability (PyClick's
definitions; 1 is perfect, 2 is a coin). :func:`evaluate_click_model` does the same for the
simulator's :class:`~irbandits.clicks.click_models.ClickModel` presets on a log with grades.

>>> keys = np.tile(np.arange(5), (2000, 1))                # one query, five documents, 2,000 sessions
>>> truth = {"attractiveness": [0.9, 0.6, 0.5, 0.3, 0.2], "satisfaction": [0.7, 0.5, 0.4, 0.3, 0.2]}
>>> log = sample_click_log("sdbn", truth, keys, seed=1)
>>> fit = fit_click_model(log, "sdbn")
>>> bool(np.all(np.abs(fit.params["attractiveness"] - truth["attractiveness"]) < 4 * fit.se["attractiveness"]))
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np
from numba import njit, prange

from irbandits.clicks.click_models import ClickModel, read_fitted
from irbandits.errors import IrbanditsError
from irbandits.rng import new_rng, uniform

MODELS = ("pbm", "ubm", "dbn", "sdbn", "dcm")
_EPS = 1e-6
PARALLEL = 200_000  # sessions from which the E-step runs on all threads


# ----- the log ----------------------------------------------------------------------------------
@dataclass
class ClickLog:
    """Sessions as arrays: ``keys[n, r]`` the item shown at rank r of session n (-1 past its end),
    ``clicks[n, r]``; ``items[i]`` names item i: a (query, document) pair or a grade."""

    keys: np.ndarray
    clicks: np.ndarray
    items: list = field(default_factory=list)
    by: str = "document"

    def __post_init__(self):
        self.keys = np.ascontiguousarray(self.keys, np.int64)
        self.clicks = np.ascontiguousarray(self.clicks, np.bool_)
        if not self.items:
            self.items = list(range(int(self.keys.max()) + 1 if self.keys.size else 0))
        if self.keys.shape != self.clicks.shape:
            raise IrbanditsError(f"keys {self.keys.shape} and clicks {self.clicks.shape} differ in shape")
        if (self.clicks & (self.keys < 0)).any():
            raise IrbanditsError("a click past the end of a result list")

    @property
    def sessions(self) -> int:
        return len(self.keys)

    @property
    def length(self) -> int:
        return self.keys.shape[1]

    def split(self, test: float = 0.25, seed: int = 0) -> tuple["ClickLog", "ClickLog"]:
        """A random (train, held-out) split of the sessions; both keep every item."""
        held = np.random.default_rng(seed).random(self.sessions) < test
        part = lambda m: ClickLog(self.keys[m], self.clicks[m], self.items, self.by)  # noqa: E731
        return part(~held), part(held)


def read_click_log(path: str | Path, by: str = "document") -> ClickLog:
    """A click log from JSON lines (see the module); ``by``: ``document`` or ``grade``."""
    from irbandits.io import json_lines

    if by not in ("document", "grade"):
        raise IrbanditsError(f"by must be document or grade, got {by!r}")
    index: dict = {}
    rows, clicked = [], []
    for where, rec in json_lines(path):
        docs, clicks = rec.get("docs"), rec.get("clicks")
        if not isinstance(docs, list) or not docs or not isinstance(clicks, list):
            raise IrbanditsError(f"{where}: needs 'docs' (a non-empty list) and 'clicks' (a list of positions)")
        if not all(isinstance(p, int) and 0 <= p < len(docs) for p in clicks):
            raise IrbanditsError(f"{where}: 'clicks' must be positions 0..{len(docs) - 1} of 'docs', got {clicks}")
        if by == "grade":
            grades = rec.get("grades")
            if not isinstance(grades, list) or len(grades) != len(docs) or not all(
                    isinstance(g, int) and 0 <= g < 100 for g in grades):
                raise IrbanditsError(f"{where}: fitting by grade needs 'grades', one whole number 0..99 per document")
            rows.append(grades)
        else:
            q = str(rec.get("query", ""))
            rows.append([index.setdefault((q, str(d)), len(index)) for d in docs])
        clicked.append(clicks)
    if not rows:
        raise IrbanditsError(f"{path}: no sessions (expected JSON lines with docs and clicks)")
    L = max(map(len, rows))
    keys, clicks = np.full((len(rows), L), -1, np.int64), np.zeros((len(rows), L), np.bool_)
    for n, (r, c) in enumerate(zip(rows, clicked)):
        keys[n, :len(r)] = r
        clicks[n, c] = True
    items = list(range(int(keys.max()) + 1)) if by == "grade" else [list(k) for k in index]
    return ClickLog(keys, clicks, items, by)


# ----- compiled kernels -------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _add(acc, i, q):
    acc[i, 0] += 1.0
    acc[i, 1] += q
    acc[i, 2] += q * (1.0 - q)


@njit(cache=True)
def _estep_pbm(theta, keys, clicks, off, acc):
    A, G = off[0], off[1]
    for n in range(keys.shape[0]):
        for r in range(keys.shape[1]):
            u = keys[n, r]
            if u < 0:
                break
            a, g = theta[A + u], theta[G + r]
            if clicks[n, r]:
                qa = qg = 1.0
            else:
                den = 1.0 - a * g
                qa, qg = a * (1.0 - g) / den, g * (1.0 - a) / den
            _add(acc, A + u, qa)
            _add(acc, G + r, qg)


@njit(cache=True)
def _estep_ubm(theta, keys, clicks, off, acc):
    A, G, L = off[0], off[1], keys.shape[1]
    for n in range(keys.shape[0]):
        prev = 0
        for r in range(L):
            u = keys[n, r]
            if u < 0:
                break
            j = G + r * (L + 1) + prev
            a, g = theta[A + u], theta[j]
            if clicks[n, r]:
                qa = qg = 1.0
                prev = r + 1
            else:
                den = 1.0 - a * g
                qa, qg = a * (1.0 - g) / den, g * (1.0 - a) / den
            _add(acc, A + u, qa)
            _add(acc, j, qg)


@njit(cache=True)
def _estep_dbn(theta, keys, clicks, off, acc):
    """Forward-backward over the two examination states of each session."""
    A, S, G, L = off[0], off[1], off[2], keys.shape[1]
    f0, f1 = np.empty(L + 1), np.empty(L + 1)     # P(clicks above r, E_r = 0 / 1)
    b0, b1 = np.empty(L + 1), np.empty(L + 1)     # P(clicks from r on | E_r = 0 / 1)
    av, sv = np.empty(L), np.empty(L)             # the session's attractiveness and satisfaction per rank
    g = theta[G]
    gz, gq, gv = 0.0, 0.0, 0.0                    # continuation's accumulators, added once at the end
    for n in range(keys.shape[0]):
        m = 0
        while m < L and keys[n, m] >= 0:
            av[m], sv[m] = theta[A + keys[n, m]], theta[S + keys[n, m]]
            m += 1
        f0[0], f1[0] = 0.0, 1.0
        for r in range(m):
            a, s = av[r], sv[r]
            if clicks[n, r]:
                f0[r + 1] = f1[r] * a * (1.0 - (1.0 - s) * g)
                f1[r + 1] = f1[r] * a * (1.0 - s) * g
            else:
                f0[r + 1] = f0[r] + f1[r] * (1.0 - a) * (1.0 - g)
                f1[r + 1] = f1[r] * (1.0 - a) * g
        b0[m], b1[m] = 1.0, 1.0
        for r in range(m - 1, -1, -1):
            a, s = av[r], sv[r]
            if clicks[n, r]:
                b0[r] = 0.0
                b1[r] = a * ((1.0 - s) * g * b1[r + 1] + (1.0 - (1.0 - s) * g) * b0[r + 1])
            else:
                b0[r] = b0[r + 1]
                b1[r] = (1.0 - a) * (g * b1[r + 1] + (1.0 - g) * b0[r + 1])
        inv = 1.0 / (f1[0] * b1[0])               # 1 / P(the session's clicks)
        for r in range(m):
            u, a, s = keys[n, r], av[r], sv[r]
            if clicks[n, r]:
                _add(acc, A + u, 1.0)
                stay = (1.0 - s) * (g * b1[r + 1] + (1.0 - g) * b0[r + 1])
                _add(acc, S + u, s * b0[r + 1] / (s * b0[r + 1] + stay))
                w = f1[r] * a * (1.0 - s)
            else:
                _add(acc, A + u, a * (1.0 - f1[r] * b1[r] * inv))
                w = f1[r] * (1.0 - a)
            if r < m - 1:                 # E_{r+1} is only seen below rank r
                x = w * g * b1[r + 1] * inv                      # P(E_r, not satisfied, E_{r+1} | C)
                z = x + w * (1.0 - g) * b0[r + 1] * inv          # P(E_r, not satisfied | C)
                if z > 0.0:
                    gz += z
                    gq += x
                    gv += x * (1.0 - x / z)
    acc[G, 0] += gz
    acc[G, 1] += gq
    acc[G, 2] += gv


@njit(cache=True)
def _estep_dcm(theta, keys, clicks, off, acc):
    A, LAM, L = off[0], off[1], keys.shape[1]
    for n in range(keys.shape[0]):
        m, last = 0, -1
        while m < L and keys[n, m] >= 0:
            if clicks[n, m]:
                last = m
            m += 1
        stop = 0.0                               # P(the user stopped after the last click | clicks)
        if last >= 0:
            lam = theta[LAM + last]
            none = 1.0
            for r in range(last + 1, m):
                none *= 1.0 - theta[A + keys[n, r]]
            stop = (1.0 - lam) / ((1.0 - lam) + lam * none)
        for r in range(m):
            u = keys[n, r]
            if r <= last:
                _add(acc, A + u, 1.0 if clicks[n, r] else 0.0)
                if clicks[n, r]:
                    _add(acc, LAM + r, 1.0 if r < last else 1.0 - stop)
            else:
                _add(acc, A + u, stop * theta[A + u])


@njit(parallel=True)
def _estep_blocks(estep, theta, keys, clicks, off, acc):
    """``estep`` over blocks of sessions in parallel threads, each into its own accumulator."""
    blocks = acc.shape[0]
    size = (keys.shape[0] + blocks - 1) // blocks
    for b in prange(blocks):
        acc[b] = 0.0
        lo, hi = b * size, min(keys.shape[0], (b + 1) * size)
        if lo < hi:
            estep(theta, keys[lo:hi], clicks[lo:hi], off, acc[b])


_ESTEP = {"pbm": _estep_pbm, "ubm": _estep_ubm, "dbn": _estep_dbn, "sdbn": _estep_dbn, "dcm": _estep_dcm}


@njit(cache=True)
def _cascade_probs(attr, cont, skip, keys, clicks, cond, full):
    """Click probabilities of a cascade in per-slot form: at an examined rank a click with ``attr``,
    then on with ``cont`` after a click or ``skip`` after none. ``cond``: P(C_r = 1 | clicks above),
    ``full``: P(C_r = 1)."""
    for n in range(keys.shape[0]):
        e, p = 1.0, 1.0                  # P(E_r | clicks above), P(E_r)
        for r in range(keys.shape[1]):
            if keys[n, r] < 0:
                break
            x = attr[n, r]
            cond[n, r], full[n, r] = e * x, p * x
            p *= x * cont[n, r] + (1.0 - x) * skip[n, r]
            if clicks[n, r]:
                e = cont[n, r]
            else:                        # a skip the model calls impossible leaves nobody examining
                e = skip[n, r] * e * (1.0 - x) / (1.0 - e * x) if e * x < 1.0 else 0.0


@njit(cache=True)
def _ubm_probs(theta, keys, clicks, A, G, cond, full):
    L = keys.shape[1]
    dist = np.empty(L + 1)             # P(1 + rank of the last click above = j)
    for n in range(keys.shape[0]):
        dist[:] = 0.0
        dist[0] = 1.0
        prev = 0
        for r in range(L):
            u = keys[n, r]
            if u < 0:
                break
            a = theta[A + u]
            cond[n, r] = a * theta[G + r * (L + 1) + prev]
            p = 0.0
            for j in range(r + 1):
                x = dist[j] * a * theta[G + r * (L + 1) + j]
                p += x
                dist[j] -= x
            dist[r + 1] = p
            full[n, r] = p
            if clicks[n, r]:
                prev = r + 1


@njit(cache=True)
def _sample_cascade(attr, cont, skip, keys, rng, clicks):
    for n in range(keys.shape[0]):
        for r in range(keys.shape[1]):
            if keys[n, r] < 0:
                break
            clicks[n, r] = uniform(rng) < attr[n, r]
            if uniform(rng) >= (cont[n, r] if clicks[n, r] else skip[n, r]):
                break


@njit(cache=True)
def _sample_ubm(theta, keys, A, G, rng, clicks):
    L = keys.shape[1]
    for n in range(keys.shape[0]):
        prev = 0
        for r in range(L):
            if keys[n, r] < 0:
                break
            clicks[n, r] = uniform(rng) < theta[A + keys[n, r]] * theta[G + r * (L + 1) + prev]
            if clicks[n, r]:
                prev = r + 1


# ----- parameters -------------------------------------------------------------------------------
def _sections(model: str, items: int, L: int) -> dict[str, tuple[int, tuple]]:
    """Each parameter's offset in the flat vector and its shape."""
    shapes = {"pbm": [("attractiveness", (items,)), ("examination", (L,))],
              "ubm": [("attractiveness", (items,)), ("examination", (L, L + 1))],
              "dbn": [("attractiveness", (items,)), ("satisfaction", (items,)), ("continuation", ())],
              "sdbn": [("attractiveness", (items,)), ("satisfaction", (items,)), ("continuation", ())],
              "dcm": [("attractiveness", (items,)), ("continuation", (L,))]}[model]
    out, at = {}, 0
    for name, shape in shapes:
        out[name] = (at, shape)
        at += int(np.prod(shape))
    return out


def _check_model(model: str) -> str:
    if model.lower() not in MODELS:
        raise IrbanditsError(f"unknown click model {model!r} to fit; known: {', '.join(MODELS)}")
    return model.lower()


def _flat(model: str, params: dict, items: int, L: int) -> np.ndarray:
    sec = _sections(model, items, L)
    theta = np.empty(sum(int(np.prod(s)) for _, s in sec.values()))
    for name, (at, shape) in sec.items():
        if name not in params:
            raise IrbanditsError(f"{model} needs the parameter {name!r}")
        v = np.asarray(params[name], np.float64)
        if v.shape != shape:
            raise IrbanditsError(f"{model} parameter {name!r} must have shape {shape}, got {v.shape}")
        theta[at:at + v.size] = v.ravel()
    return theta


def _fixed(model: str, theta: np.ndarray, sec: dict) -> None:
    """Set the parameters the model does not estimate."""
    if model in ("pbm", "ubm"):
        theta[sec["examination"][0]] = 1.0
    if model == "sdbn":
        theta[sec["continuation"][0]] = 1.0


def _estep(model: str, theta, log: ClickLog, sec: dict, acc) -> np.ndarray:
    """The summed accumulators ``[n, sum q, sum q (1 - q)]`` of every parameter at ``theta``."""
    off = np.array([at for at, _ in sec.values()], np.int64)
    if len(acc) == 1:                # few sessions: the cached serial kernel, no parallel compile
        acc[0] = 0.0
        _ESTEP[model](theta, log.keys, log.clicks, off, acc[0])
        return acc[0]
    _estep_blocks(_ESTEP[model], theta, log.keys, log.clicks, off, acc)
    return acc.sum(axis=0)


def _cascade_form(model: str, theta: np.ndarray, sec: dict, keys: np.ndarray):
    """Per-slot (attr, cont, skip) of a cascade-form model (all but UBM) on sessions ``keys``."""
    k = np.maximum(keys, 0)
    a = theta[sec["attractiveness"][0] + k]
    ranks = np.broadcast_to(np.arange(keys.shape[1]), keys.shape)
    ones = np.ones(keys.shape)
    if model == "pbm":
        return a * theta[sec["examination"][0] + ranks], ones, ones
    if model == "dcm":
        return a, theta[sec["continuation"][0] + ranks], ones
    g = theta[sec["continuation"][0]]
    return a, (1.0 - theta[sec["satisfaction"][0] + k]) * g, ones * g


def sample_click_log(model: str, params: dict, keys, seed: int = 0, items: list | None = None,
                     by: str = "document") -> ClickLog:
    """Sessions with these shown items (``keys``, -1 past a list's end) and clicks drawn from
    ``model`` with ``params`` (named as in :attr:`FittedClickModel.params`; SDBN's continuation is 1)."""
    model = _check_model(model)
    if model == "sdbn":
        params = {"continuation": 1.0, **params}
    keys = np.ascontiguousarray(keys, np.int64)
    n_items, L = int(keys.max()) + 1, keys.shape[1]
    theta = _flat(model, params, len(np.ravel(params["attractiveness"])), L)
    if len(np.ravel(params["attractiveness"])) < n_items:
        raise IrbanditsError(f"keys name {n_items} items but attractiveness has {len(np.ravel(params['attractiveness']))}")
    sec = _sections(model, len(np.ravel(params["attractiveness"])), L)
    clicks = np.zeros(keys.shape, np.bool_)
    rng = new_rng(seed)
    if model == "ubm":
        _sample_ubm(theta, keys, sec["attractiveness"][0], sec["examination"][0], rng, clicks)
    else:
        _sample_cascade(*_cascade_form(model, theta, sec, keys), keys, rng, clicks)
    return ClickLog(keys, clicks, items or [], by)


# ----- fitting and evaluation -------------------------------------------------------------------
def _summary(keys: np.ndarray, cond: np.ndarray, full: np.ndarray, clicks: np.ndarray) -> dict:
    shown = keys >= 0
    c, f = np.clip(cond, _EPS, 1 - _EPS), np.clip(full, _EPS, 1 - _EPS)
    ll = np.where(shown, np.where(clicks, np.log(c), np.log1p(-c)), 0.0).sum() / len(keys)
    lf = np.where(clicks, np.log2(f), np.log2(1 - f))
    per_rank = 2.0 ** (-np.where(shown, lf, 0.0).sum(axis=0) / np.maximum(shown.sum(axis=0), 1))
    return dict(sessions=int(len(keys)), loglik=float(ll), perplexity=float(per_rank[shown.any(axis=0)].mean()),
                perplexity_at_rank=[round(float(p), 6) for p in per_rank])


@dataclass
class FittedClickModel:
    """A fitted click model: ``params`` and their standard errors ``se`` by name (see the module),
    the ``items`` they are indexed by, and how the fit went (``iterations``, ``train``: the
    log-likelihood and perplexity on the training sessions)."""

    model: str
    by: str
    items: list
    length: int
    params: dict
    se: dict
    iterations: int = 0
    train: dict = field(default_factory=dict)

    def _theta(self) -> tuple[np.ndarray, dict]:
        return _flat(self.model, self.params, len(self.items), self.length), _sections(self.model, len(self.items),
                                                                                        self.length)

    def evaluate(self, log: ClickLog) -> dict:
        """``{sessions, loglik, perplexity, perplexity_at_rank}`` on sessions of the same items
        (e.g. the held-out part of :meth:`ClickLog.split`)."""
        if log.items != self.items or log.length > self.length:
            raise IrbanditsError("the sessions to evaluate must come from the log the model was fitted on "
                                 f"(same items, lists of at most {self.length})")
        theta, sec = self._theta()
        keys = np.pad(log.keys, ((0, 0), (0, self.length - log.length)), constant_values=-1)
        clicks = np.pad(log.clicks, ((0, 0), (0, self.length - log.length)))
        cond, full = np.zeros(keys.shape), np.zeros(keys.shape)
        if self.model == "ubm":
            _ubm_probs(theta, keys, clicks, sec["attractiveness"][0], sec["examination"][0], cond, full)
        else:
            _cascade_probs(*_cascade_form(self.model, theta, sec, keys), keys, clicks, cond, full)
        return _summary(keys, cond, full, clicks)

    def click_model(self) -> ClickModel:
        """The simulator's :class:`~irbandits.clicks.click_models.ClickModel` of a model fitted by
        grade (:meth:`~irbandits.clicks.click_models.ClickModel.from_fit`)."""
        return ClickModel.from_fit(self.model, self.by, self.params)

    def save(self, path: str | Path) -> Path:
        """Write the fit as JSON (:meth:`load` reads it back)."""
        body = dict(format="irbandits-click-model", model=self.model, by=self.by, length=self.length,
                    iterations=self.iterations, train=self.train, items=self.items,
                    params={k: np.asarray(v).tolist() for k, v in self.params.items()},
                    se={k: np.asarray(v).tolist() for k, v in self.se.items()})
        Path(path).write_text(json.dumps(body))
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> "FittedClickModel":
        """A fit saved by :meth:`save`."""
        body = read_fitted(path)
        try:
            fit = cls(body["model"], body["by"], body["items"], int(body["length"]),
                      {k: np.asarray(v, float) for k, v in body["params"].items()},
                      {k: np.asarray(v, float) for k, v in body["se"].items()}, body.get("iterations", 0),
                      body.get("train", {}))
            fit._theta()
            return fit
        except (ValueError, KeyError, TypeError, AttributeError, IrbanditsError) as exc:
            raise IrbanditsError(f"{path}: not a saved click model fit ({exc})") from None


def fit_click_model(log: ClickLog, model: str, iterations: int = 500, tol: float = 1e-3) -> FittedClickModel:
    """Fit ``model`` (pbm, ubm, dbn, sdbn or dcm) to the sessions of ``log`` by EM (see the module)."""
    model = _check_model(model)
    if not log.sessions:
        raise IrbanditsError("no sessions to fit")
    items, L = len(log.items), log.length
    sec = _sections(model, items, L)
    size = sum(int(np.prod(s)) for _, s in sec.values())
    theta = np.full(size, 0.5)
    _fixed(model, theta, sec)
    acc = np.zeros((numba.get_num_threads() if log.sessions >= PARALLEL else 1, size, 3))
    scale = np.empty(size)        # 1 / (2 sqrt(n)): the largest binomial standard error of n observations

    def em(t):
        total = _estep(model, t, log, sec, acc)
        seen = total[:, 0] > 0
        new = t.copy()
        new[seen] = np.clip(total[seen, 1] / total[seen, 0], _EPS, 1 - _EPS)
        _fixed(model, new, sec)
        scale[:] = 0.5 / np.sqrt(np.maximum(total[:, 0], 1.0))
        return new

    it = 0
    while it < iterations:       # SQUAREM (Varadhan & Roland 2008): two EM steps, one extrapolation, one EM step
        t1 = em(theta)
        t2 = em(t1)
        r, v = t1 - theta, t2 - 2 * t1 + theta
        step = -np.sqrt((r @ r) / max(v @ v, 1e-300))
        step = min(-1.0, step)
        t3 = np.clip(theta - 2 * step * r + step * step * v, _EPS, 1 - _EPS)
        new = em(t3)
        it += 3
        done = (np.abs(new - theta) < tol * scale).all()
        theta = new
        if done:
            break
    total = _estep(model, theta, log, sec, acc)     # the posterior at the estimate, for the errors
    p = np.clip(theta, _EPS, 1 - _EPS)
    v = p * (1 - p)
    info = total[:, 0] / v - total[:, 2] / v ** 2
    # at a bound the information says nothing; an estimate creeping towards one (EM is slow there) is
    # taken as at it within 10 times the stopping tolerance
    interior = np.minimum(theta, 1 - theta) - _EPS > np.maximum(_EPS, 10 * tol * scale)
    se = np.where((info > 0) & interior, 1.0 / np.sqrt(np.maximum(info, 1e-300)), np.nan)
    unseen = total[:, 0] == 0
    params, errors = {}, {}
    for name, (at, shape) in sec.items():
        block, err = theta[at:at + int(np.prod(shape))].copy(), se[at:at + int(np.prod(shape))].copy()
        gap = unseen[at:at + block.size]
        if name in ("attractiveness", "satisfaction") and gap.any() and not gap.all():
            block[gap] = block[~gap].mean()
        params[name], errors[name] = block.reshape(shape), err.reshape(shape)
    _fixed_se = {"pbm": ("examination", (0,)), "ubm": ("examination", (0, 0)), "sdbn": ("continuation", ())}
    if model in _fixed_se:
        name, where = _fixed_se[model]
        errors[name][where] = 0.0
    fit = FittedClickModel(model, log.by, list(log.items), L, params, errors, it)
    fit.train = fit.evaluate(log)
    return fit


def evaluate_click_model(click_model, log: ClickLog) -> dict:
    """:meth:`FittedClickModel.evaluate` for a simulator's ``ClickModel`` (a preset, by name, or
    a fitted one) on a log fitted by grade (its items are grades)."""
    m = ClickModel.named(click_model) if isinstance(click_model, str) else click_model
    if log.by != "grade":
        raise IrbanditsError("a simulator's click model is per grade: read the log with by='grade'")
    if log.keys.max() >= m.grades:
        raise IrbanditsError(f"the log has grades up to {log.keys.max()}, the {m.name} model covers {m.grades}")
    if log.length > len(m.exam):
        raise IrbanditsError(f"the log shows {log.length} results, the {m.name} model covers {len(m.exam)}")
    g = np.maximum(log.keys, 0)
    ranks = np.broadcast_to(np.arange(log.length), g.shape)
    attr = m.exam[ranks] * m.click[g]
    cont = (1.0 - m.stop[g]) * (1.0 - m.stop_rank[ranks])
    cond, full = np.zeros(g.shape), np.zeros(g.shape)
    _cascade_probs(attr, cont, np.ones(g.shape), log.keys, log.clicks, cond, full)
    return _summary(log.keys, cond, full, log.clicks)
