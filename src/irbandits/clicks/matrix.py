"""Preference matrices from interleaved comparisons under a click model, built in parallel.

For every pair i < j, ``comparisons`` interleaved comparisons are run, each on a query drawn
uniformly; a comparison's outcome o in [-1, 1] (> 0: i won; 0: a tie) counts as (1 + o) / 2 of
a win, so p_ij is the mean of (1 + o) / 2 and p_ji = 1 - p_ij. This is how the thesis
(``../shared/seeds/002``, Section 4.4.1: 4,000 comparisons per pair of the 64 NP2004 features) and
the MergeDTS paper (``../shared/seeds/001``, Section 5.3: 400,000 per pair on MSLR) built their matrices.

Each pair has its own generator derived from ``SeedSequence(seed)``, and pairs run in parallel
numba threads, so the matrix is the same for every thread count.

>>> from irbandits.clicks.ltr import read_ltr
>>> data = read_ltr("../shared/data/ltr/lightgbm-lambdarank-sample/rank.test")
>>> est = estimate_matrix(data.rankers([0, 10, 99]), "perfect", "team-draft", 200, seed=1, progress=False)
>>> est.matrix.K, est.se.shape
(3, (3, 3))
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from irbandits.clicks.click_models import ClickModel, simulate_clicks
from irbandits.clicks.interleaving import CUTOFF, get_method
from irbandits.clicks.ltr import Rankers, top_k
from irbandits.errors import IrbanditsError
from irbandits.problems import PreferenceMatrix
from irbandits.rng import new_rng, randint


# ----- low level ------------------------------------------------------------------------------
@njit(cache=True)
def new_work(length=CUTOFF):
    """Scratch arrays for one comparison of lists of ``length`` results: lists A and B, shown list,
    assignment, slot probabilities, grades and clicks (the kernels take the length from them)."""
    return (np.empty(length, np.int64), np.empty(length, np.int64), np.empty(length, np.int64),
            np.empty(length, np.int64), np.empty(length), np.empty(length, np.int64),
            np.empty(length, np.bool_))


@njit
def compare(interleave, credit, lists, model, r1, r2, q, rng, work):
    """One interleaved comparison of rankers ``r1`` and ``r2`` on query ``q``: o in [-1, 1]."""
    order, gend, start, labels = lists
    click, stop, exam, stop_rank = model
    a, b, shown, assign, prob, grades, clicks = work
    na = top_k(order, gend, start, r1, q, len(a), rng, a)
    nb = top_k(order, gend, start, r2, q, len(b), rng, b)
    n = interleave(a, na, b, nb, rng, shown, assign, prob)
    for i in range(n):
        grades[i] = labels[shown[i]]
    simulate_clicks(grades, n, click, stop, exam, stop_rank, rng, clicks)
    return credit(a, na, b, nb, shown, n, assign, prob, clicks)


@njit(parallel=True)
def _estimate(interleave, credit, lists, model, first, second, comparisons, rngs, mean, var, length):
    Q = lists[2].shape[1] - 1
    for p in prange(len(first)):
        work = new_work(length)
        rng = rngs[p]
        s, s2 = 0.0, 0.0
        for _ in range(comparisons):
            x = 0.5 * (1.0 + compare(interleave, credit, lists, model, first[p], second[p], randint(rng, Q), rng, work))
            s += x
            s2 += x * x
        mean[p] = s / comparisons
        var[p] = max(s2 / comparisons - mean[p] ** 2, 0.0)


# ----- public ---------------------------------------------------------------------------------
@dataclass
class Estimate:
    """An estimated preference matrix, its per-cell standard errors and the ranker names."""

    matrix: PreferenceMatrix
    se: np.ndarray
    names: list[str]
    comparisons: int

    def save(self, path) -> tuple:
        """Write the matrix to ``path`` and the standard errors beside it (``NAME.se.txt``);
        the matrix file loads with ``PreferenceMatrix.load`` (``#`` lines name the rankers)."""
        from pathlib import Path

        path = Path(path)
        se_path = path.with_name(path.stem + ".se" + (path.suffix or ".txt"))
        header = f"rankers: {' '.join(self.names)}\ncomparisons per pair: {self.comparisons}"
        np.savetxt(path, self.matrix.p, fmt="%.17g", header=header)
        np.savetxt(se_path, self.se, fmt="%.6g", header="standard errors of " + path.name)
        return path, se_path


def _estimate_block(context: tuple, block: tuple) -> tuple[np.ndarray, np.ndarray]:
    """One block of pairs on one thread (a task of :func:`estimate_matrix` on Ray)."""
    interleaving, lists, model, comparisons, length = context
    first, second, rngs = block
    rngs = np.array(rngs)  # Ray hands over read-only arrays; the generators advance in place
    method = get_method(interleaving)
    mean, var = np.empty(len(first)), np.empty(len(first))
    numba.set_num_threads(1)
    _estimate(method.interleave, method.credit, lists, model, first, second, comparisons, rngs, mean, var, length)
    return mean, var


def _estimate_on(backend, workers, address, progress, context, first, second, rngs, mean, var, chunk) -> None:
    """Fill ``mean`` and ``var`` by blocks of ``chunk`` pairs run by :func:`irbandits.tasks.run_tasks`."""
    from irbandits.tasks import Failed, run_tasks

    starts = range(0, len(first), chunk)
    blocks = [(first[lo:lo + chunk], second[lo:lo + chunk], rngs[lo:lo + chunk]) for lo in starts]
    for outcome in run_tasks(_estimate_block, blocks, context, backend=backend, workers=workers, address=address,
                             progress=progress, label="pairs (in blocks)"):
        if isinstance(outcome, Failed):
            raise RuntimeError(f"a block of pairs failed: {outcome.error}")
        lo = starts[outcome.index]
        mean[lo:lo + chunk], var[lo:lo + chunk] = outcome.value


def resolve_model(click_model: str | ClickModel, grades: int, length: int = CUTOFF) -> ClickModel:
    """A click model by name (for these grades and list length) or as given (extended to the
    length, see :meth:`ClickModel.extended`), checked against the grades."""
    model = (ClickModel.named(click_model, grades, length) if isinstance(click_model, str)
             else click_model.extended(length))
    if model.grades < grades:
        raise IrbanditsError(f"click model {model.name} covers {model.grades} grades, the data has {grades}")
    return model


def check_rankers(rankers: Rankers, length: int) -> int:
    """The list length, checked against the depth the rankers' lists were built to."""
    from irbandits.clicks.interleaving import check_length

    length = check_length(length)
    if rankers.cutoff < length:
        raise IrbanditsError(f"lists of {length} results need rankers built with cutoff >= {length} "
                             f"(data.rankers(..., cutoff={length})), these have {rankers.cutoff}")
    return length


def estimate_matrix(
    rankers: Rankers,
    click_model: str | ClickModel = "navigational",
    interleaving: str = "probabilistic",
    comparisons: int = 4000,
    seed: int = 0,
    jobs: int | None = None,
    progress: bool = True,
    name: str = "ltr",
    length: int = CUTOFF,
    backend: str = "local",
    address: str | None = None,
) -> Estimate:
    """Estimate every p_ij from ``comparisons`` interleaved comparisons per pair (see module) of
    lists of ``length`` results.

    ``backend="ray"`` sends blocks of pairs to the Ray cluster at ``address`` (or a local Ray
    runtime of ``jobs`` CPUs), one thread each; every pair keeps its own generator, so the matrix
    is the same as on local threads."""
    if comparisons < 1:
        raise IrbanditsError(f"comparisons must be positive, got {comparisons}")
    method = get_method(interleaving)
    length = check_rankers(rankers, length)
    model = resolve_model(click_model, rankers.grades, length)
    K = rankers.K
    first, second = np.triu_indices(K, 1)
    rngs = np.stack([new_rng(s) for s in np.random.SeedSequence(seed).spawn(len(first))])
    mean, var = np.empty(len(first)), np.empty(len(first))
    threads = numba.get_num_threads()
    if jobs:
        numba.set_num_threads(min(int(jobs), numba.config.NUMBA_NUM_THREADS))
    chunk = max(numba.get_num_threads() * 4, int(2e6 // comparisons))
    try:
        if backend == "local":
            from irbandits.tasks import ProgressBar

            with ProgressBar(progress, (len(first) + chunk - 1) // chunk, "pairs (in blocks)") as advance:
                for lo in range(0, len(first), chunk):
                    sl = slice(lo, lo + chunk)
                    _estimate(method.interleave, method.credit, rankers.arrays(), model.arrays(),
                              first[sl], second[sl], int(comparisons), rngs[sl], mean[sl], var[sl], length)
                    advance()
        else:
            context = (interleaving, rankers.arrays(), model.arrays(), int(comparisons), length)
            _estimate_on(backend, jobs or 1, address, progress, context, first, second, rngs, mean, var,
                         max(1, int(2e6 // comparisons)))
    finally:
        numba.set_num_threads(threads)
    P = np.full((K, K), 0.5)
    P[first, second] = mean
    P[second, first] = 1.0 - mean
    se = np.zeros((K, K))
    se[first, second] = se[second, first] = np.sqrt(var / comparisons)
    return Estimate(PreferenceMatrix(P, name=name), se, list(rankers.names), int(comparisons))
