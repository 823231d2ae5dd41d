"""Preference matrices: validation, winners, regret, and the registry of named problems.

A K-armed dueling bandit problem is a matrix P with p_ij the probability that arm i beats arm j,
p_ij + p_ji = 1 and p_ii = 0.5 (``../shared/spec/online.md``, "Winners and regret").

>>> P = get_problem("arithmetic")
>>> P.K, P.condorcet_winner
(8, 0)
>>> round(P.condorcet_regret(0, 7), 3)
0.175
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from irbandits.errors import IrbanditsError
from irbandits.params import Registry

TOLERANCE = 1e-6


def _cell(i: int, j: int) -> str:
    return f"row {i + 1}, column {j + 1}"


def check_matrix(values, source: str = "matrix", atol: float = TOLERANCE) -> np.ndarray:
    """Return ``values`` as a valid float64 preference matrix, or raise naming the bad cell."""
    try:
        P = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise IrbanditsError(f"{source}: not a numeric matrix ({exc})") from None
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise IrbanditsError(f"{source}: a preference matrix must be square, got shape {P.shape}")
    if P.shape[0] < 2:
        raise IrbanditsError(f"{source}: a preference matrix needs at least 2 arms")
    bad = np.argwhere(np.isnan(P))
    if len(bad):
        raise IrbanditsError(f"{source}: NaN at {_cell(*bad[0])}")
    bad = np.argwhere((P < 0) | (P > 1))
    if len(bad):
        i, j = bad[0]
        raise IrbanditsError(f"{source}: value {P[i, j]:g} at {_cell(i, j)} is outside [0, 1]")
    bad = np.argwhere(np.abs(np.diag(P) - 0.5) > atol)
    if len(bad):
        i = bad[0][0]
        raise IrbanditsError(f"{source}: diagonal must be 0.5, got {P[i, i]:g} at {_cell(i, i)}")
    bad = np.argwhere(np.abs(P + P.T - 1.0) > atol)
    if len(bad):
        i, j = bad[0]
        raise IrbanditsError(
            f"{source}: p_ij + p_ji must be 1, but {_cell(i, j)} is {P[i, j]:g} and "
            f"{_cell(j, i)} is {P[j, i]:g} (sum {P[i, j] + P[j, i]:g})"
        )
    return P


class PreferenceMatrix:
    """A validated K x K preference matrix with its winners and regret definitions.

    Parameters
    ----------
    values
        Square array with ``p_ij`` the probability that arm ``i`` beats arm ``j``.
    name
        Label used in tables and plots.
    source
        Where the values came from; named in error messages.
    arms
        The arms' names, e.g. the rankers of a matrix file's ``# rankers:`` line; default
        ``row 0``, ``row 1``, ...
    """

    def __init__(self, values, name: str = "matrix", source: str | None = None, arms: Sequence[str] | None = None):
        self.name = name
        self.p = check_matrix(values, source or name)
        self.p.setflags(write=False)
        self.arms = [f"row {i}" for i in range(self.K)] if arms is None else [str(a) for a in arms]
        if len(self.arms) != self.K:
            raise IrbanditsError(f"{source or name}: {len(self.arms)} arm names for {self.K} arms")

    def __repr__(self) -> str:
        return f"PreferenceMatrix(name={self.name!r}, K={self.K}, winner={self.winner_type})"

    @property
    def K(self) -> int:
        return self.p.shape[0]

    # ----- files -----------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, name: str | None = None) -> "PreferenceMatrix":
        """Read whitespace-separated text (a ``# rankers: NAME ...`` line names the arms) or ``.npy``;
        errors name the file, line and cell."""
        path = Path(path)
        if not path.exists():
            raise IrbanditsError(f"{path}: no such file")
        if path.suffix == ".npy":
            values, arms = np.load(path, allow_pickle=False), None
        else:
            values, arms = _read_text_matrix(path)
        return cls(values, name=name or path.stem, source=str(path), arms=arms)

    def save(self, path: str | Path) -> Path:
        """Write ``.npy`` when the name ends so, otherwise whitespace text that loads back exactly."""
        path = Path(path)
        if path.suffix == ".npy":
            np.save(path, self.p)
        else:
            np.savetxt(path, self.p, fmt="%.17g")
        return path

    def permuted(self, perm) -> "PreferenceMatrix":
        """The same problem with arm ``perm[i]`` renamed to ``i``."""
        perm = np.asarray(perm)
        return PreferenceMatrix(self.p[np.ix_(perm, perm)], name=self.name, arms=[self.arms[i] for i in perm])

    # ----- winners ---------------------------------------------------------------------------
    @cached_property
    def condorcet_winner(self) -> int | None:
        """The arm that beats every other arm with probability > 0.5, or None."""
        beats = (self.p > 0.5).sum(axis=1)
        found = np.flatnonzero(beats == self.K - 1)
        return int(found[0]) if len(found) else None

    @cached_property
    def copeland_scores(self) -> np.ndarray:
        """cpld(i) = #{j != i: p_ij > 0.5} / (K - 1)."""
        return (self.p > 0.5).sum(axis=1) / (self.K - 1)

    @cached_property
    def copeland_winners(self) -> np.ndarray:
        s = self.copeland_scores
        return np.flatnonzero(s == s.max())

    @cached_property
    def borda_scores(self) -> np.ndarray:
        """Mean over j != i of p_ij."""
        return (self.p.sum(axis=1) - 0.5) / (self.K - 1)

    @cached_property
    def borda_winners(self) -> np.ndarray:
        s = self.borda_scores
        return np.flatnonzero(np.isclose(s, s.max(), rtol=0, atol=1e-12))

    @cached_property
    def von_neumann_winner(self) -> np.ndarray:
        """The optimal mixed strategy of the symmetric zero-sum game with payoff P - 0.5.

        Solved as the linear program: find a distribution w with (P - 0.5)^T w >= 0.
        """
        from scipy.optimize import linprog

        K = self.K
        A = self.p - 0.5
        # maximise v subject to A^T w >= v, sum w = 1, w >= 0 (the value of the game is 0).
        c = np.zeros(K + 1)
        c[-1] = -1.0
        res = linprog(
            c,
            A_ub=np.hstack([-A.T, np.ones((K, 1))]),
            b_ub=np.zeros(K),
            A_eq=np.hstack([np.ones((1, K)), np.zeros((1, 1))]),
            b_eq=[1.0],
            bounds=[(0, None)] * K + [(None, None)],
            method="highs",
        )
        w = np.clip(res.x[:K], 0, None)
        return w / w.sum()

    @cached_property
    def random_walk_winner(self) -> np.ndarray:
        """Stationary distribution of the walk that, at arm i, picks an opponent j uniformly
        among the other arms and moves to j with probability p_ji (else stays)."""
        K = self.K
        T = self.p.T / (K - 1)
        np.fill_diagonal(T, 0.0)
        np.fill_diagonal(T, 1.0 - T.sum(axis=1))
        vals, vecs = np.linalg.eig(T.T)
        v = np.real(vecs[:, np.argmin(np.abs(vals - 1.0))])
        return v / v.sum()

    @property
    def winner_type(self) -> str:
        return "Condorcet" if self.condorcet_winner is not None else "Copeland"

    @cached_property
    def winners(self) -> np.ndarray:
        """The arms counted as correct: the Condorcet winner, else the Copeland winners."""
        if self.condorcet_winner is not None:
            return np.array([self.condorcet_winner])
        return self.copeland_winners

    @cached_property
    def copeland_losses(self) -> int:
        """L_C: the most arms any Copeland winner loses to (p_ij < 0.5; thesis ch. 7, Definition 7.2)."""
        return int(max((self.p[i] < 0.5).sum() for i in self.copeland_winners))

    # ----- gaps and the assumptions of IF and BTM -------------------------------------------------
    @cached_property
    def smallest_gap(self) -> float:
        """Delta_min = min |p_ij - 0.5| over the pairs that do not tie (MergeDTS paper Eq. 4; thesis
        ch. 7 takes all pairs, ties included); NaN when every pair ties."""
        D = np.abs(self.p - 0.5)[~np.eye(self.K, dtype=bool)]
        D = D[D > TOLERANCE]
        return float(D.min()) if len(D) else float("nan")

    @cached_property
    def winner_gap(self) -> float | None:
        """The Condorcet winner's smallest margin min_j p_1j - 0.5 (the Delta_min of IF and BTM,
        thesis 2.2), or None without a Condorcet winner."""
        if self.condorcet_winner is None:
            return None
        return float(np.delete(self.p[self.condorcet_winner], self.condorcet_winner).min() - 0.5)

    def transitivity_violation(self) -> tuple[int, int, int] | None:
        """The triple (i, j, k) that most violates strong stochastic transitivity, or None if it
        holds: whenever Delta_ij >= 0 and Delta_jk >= 0, Delta_ik >= max(Delta_ij, Delta_jk), with
        Delta_ij = p_ij - 0.5 (seed 000, section 2; the thesis states it for a total order)."""
        return self._worst_triple(lambda dij, djk, dik: np.maximum.outer(dij, djk) - dik)

    def triangle_violation(self) -> tuple[int, int, int] | None:
        """The triple (i, j, k) that most violates the stochastic triangle inequality, or None if it
        holds: whenever Delta_ij >= 0 and Delta_jk >= 0, Delta_ik <= Delta_ij + Delta_jk."""
        return self._worst_triple(lambda dij, djk, dik: dik - np.add.outer(dij, djk))

    def _worst_triple(self, excess) -> tuple[int, int, int] | None:
        """The triple with the largest ``excess(Delta_ij, Delta_jk, Delta_ik)`` (> 1e-9) over the
        triples with Delta_ij >= 0 and Delta_jk >= 0; one middle arm j at a time (K^2 memory)."""
        D = self.p - 0.5
        worst, triple = 1e-9, None
        for j in range(self.K):
            I, Kk = np.flatnonzero(D[:, j] >= 0), np.flatnonzero(D[j] >= 0)
            e = excess(D[I, j], D[j, Kk], D[np.ix_(I, Kk)])
            a, b = np.unravel_index(np.argmax(e), e.shape)
            if e[a, b] > worst:
                worst, triple = e[a, b], (int(I[a]), j, int(Kk[b]))
        return triple

    def describe(self) -> list[tuple[str, str]]:
        """What ``irbandits problems --describe`` shows: winners of every kind, L_C, the smallest
        gaps and whether strong stochastic transitivity and the triangle inequality hold."""

        def arms(idx, most: int = 10) -> str:
            names = [self.arms[i] for i in idx]
            return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")

        def delta(i: int, j: int) -> str:
            return f"Delta({self.arms[i]}, {self.arms[j]}) = {self.p[i, j] - 0.5:.4g}"

        cw = self.condorcet_winner
        wins = int(round(self.copeland_scores.max() * (self.K - 1)))
        rows = [("arms", str(self.K)),
                ("Condorcet winner", "none" if cw is None else self.arms[cw]),
                ("Copeland winners", f"{arms(self.copeland_winners)} (each beats {wins} of {self.K - 1})"),
                ("L_C", f"{self.copeland_losses} (the most arms a Copeland winner loses to)"),
                ("smallest gap", f"{self.smallest_gap:.4g} (min |p_ij - 0.5| over pairs that do not tie)")]
        if cw is not None:
            rows.append(("winner's smallest gap", f"{self.winner_gap:.4g} (min_j p_wj - 0.5)"))
        sst, sti = self.transitivity_violation(), self.triangle_violation()
        rows.append(("strong stochastic transitivity", "holds" if sst is None else
                     f"violated: {delta(*sst[:2])}, {delta(*sst[1:])} but {delta(sst[0], sst[2])}"))
        rows.append(("triangle inequality", "holds" if sti is None else
                     f"violated: {delta(sti[0], sti[2])} > {delta(*sti[:2])} + {delta(*sti[1:])}"))
        rows.append(("Borda winner(s)", f"{arms(self.borda_winners)} (score {self.borda_scores.max():.4g})"))
        w = self.von_neumann_winner
        support = [i for i in np.argsort(-w, kind="stable") if w[i] > 1e-6]
        rows.append(("von Neumann winner", ", ".join(f"{self.arms[i]}: {w[i]:.3g}" for i in support[:10])
                     + (f" and {len(support) - 10} more" if len(support) > 10 else "")))
        return rows

    # ----- regret ----------------------------------------------------------------------------
    @cached_property
    def gaps(self) -> np.ndarray:
        """Delta_1k = p_1k - 0.5 from the winner's row (a Copeland winner when no Condorcet one)."""
        return self.p[self.winners[0]] - 0.5

    @cached_property
    def copeland_gaps(self) -> np.ndarray:
        """cpld(1) - cpld(k), normalised by K - 1."""
        s = self.copeland_scores
        return s.max() - s

    @cached_property
    def borda_gaps(self) -> np.ndarray:
        """b(1) - b(k): the Borda winner's score (:attr:`borda_scores`, normalised by K - 1) minus arm k's."""
        s = self.borda_scores
        return s.max() - s

    @cached_property
    def von_neumann_gaps(self) -> np.ndarray:
        """sum_j w_j p_jk - 0.5: how much the von Neumann winner w beats arm k. Non-negative since w is
        optimal, and 0 on w's support where the game is fully mixed; what the linear program leaves
        below 1e-9 (its rounding) is 0."""
        g = self.von_neumann_winner @ self.p - 0.5
        g[g < 1e-9] = 0.0
        return g

    def condorcet_regret(self, c: int, d: int) -> float:
        """Average regret (Delta_1c + Delta_1d) / 2 of one duel."""
        return float(self.gaps[c] + self.gaps[d]) / 2

    def copeland_regret(self, c: int, d: int, normalise: str = "K-1") -> float:
        """cpld(1) - (cpld(c) + cpld(d)) / 2 with scores normalised by K - 1; ``normalise="K"``
        gives the thesis's Eq. 2.4, (2 Cpld(1) - Cpld(c) - Cpld(d)) / K with Cpld a count."""
        total = float(self.copeland_gaps[c] + self.copeland_gaps[d])
        if normalise == "K":
            return total * (self.K - 1) / self.K
        if normalise != "K-1":
            raise IrbanditsError(f"normalise must be 'K-1' or 'K', got {normalise!r}")
        return total / 2

    def strong_regret(self, c: int, d: int) -> float:
        return float(max(self.gaps[c], self.gaps[d]))

    def weak_regret(self, c: int, d: int) -> float:
        return float(min(self.gaps[c], self.gaps[d]))


def _read_text_matrix(path: Path) -> tuple[np.ndarray, list[str] | None]:
    rows, arms = [], None
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        comment = line.lstrip().startswith("#")
        if comment and line.lstrip("# \t").startswith("rankers:"):
            arms = line.split("rankers:", 1)[1].split()
        if not line.strip() or comment:
            continue
        try:
            rows.append([float(x) for x in line.split()])
        except ValueError:
            raise IrbanditsError(f"{path}:{lineno}: not a list of numbers: {line.strip()[:60]!r}") from None
        if len(rows[-1]) != len(rows[0]):
            raise IrbanditsError(
                f"{path}:{lineno}: has {len(rows[-1])} values, the first row has {len(rows[0])}"
            )
    if not rows:
        raise IrbanditsError(f"{path}: empty matrix file")
    return np.array(rows), arms


# ----- named problems --------------------------------------------------------------------------
@dataclass(frozen=True)
class NamedProblem:
    name: str
    description: str
    make: Callable[[], PreferenceMatrix] = field(repr=False)


PROBLEMS: Registry[NamedProblem] = Registry("problem")


def register_problem(name: str, description: str):
    """Decorator: register a zero-argument factory of a PreferenceMatrix under ``name``."""

    def wrap(make):
        PROBLEMS.add(name, NamedProblem(name, description, make))
        return make

    return wrap


def _bundled(filename: str) -> Callable[[], PreferenceMatrix]:
    def make() -> PreferenceMatrix:
        ref = resources.files("irbandits") / "data" / filename
        with resources.as_file(ref) as path:
            return PreferenceMatrix.load(path, name=Path(filename).stem)

    return make


for _name, _desc in [
    ("arxiv", "6 rankers from interleaving experiments on arXiv.org (Yue & Joachims); MIT"),
    ("arithmetic", "8 arms in a total order, p_ij = 0.5 + 0.05 (j - i); MIT"),
    ("cyclic", "4 arms: arm 0 wins by 0.1, arms 1-3 form a 0.9 cycle; MIT"),
]:
    PROBLEMS.add(_name, NamedProblem(_name, _desc, _bundled(f"{_name}.txt")))


def get_problem(name: str) -> PreferenceMatrix:
    """A named problem (see :func:`list_problems`), or a clear error listing the names."""
    return PROBLEMS.get(name).make()


def list_problems():
    """A table of the named problems: name, K, winner type, description."""
    import pandas as pd

    rows = []
    for p in PROBLEMS.values():
        m = p.make()
        rows.append(dict(name=p.name, K=m.K, winner=m.winner_type, description=p.description))
    return pd.DataFrame(rows)
