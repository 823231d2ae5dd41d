"""Zoghi thesis section 7.1 (Figures 7.1, 7.2 and Table 7.1): how often random K-ranker subsets of the
MSLR rankers have a Condorcet winner, how many Copeland winners (C) they have and how many arms a
Copeland winner loses to (L_C), and how often the notions of winner overlap.

The thesis samples 10,000 K-ranker subsets of its 136 MSLR feature rankers for every K under the
*informational* click model's preference matrix. That matrix is not in ``../shared/data``; the study
runs on the navigational and perfect matrices of the MergeDTS paper instead (the same 136 rankers),
``samples`` subsets per K on a grid of K. For every subset it records whether a Condorcet winner exists,
C, L_C, and whether the Copeland winners, the support of the von Neumann winner, the Borda winners and
the random-walk winners (:class:`~irbandits.problems.PreferenceMatrix`) overlap pairwise, as Table 7.1
counts them (the von Neumann winner by its support, arms with weight > 10^-9). With a Condorcet winner
c every notion but Borda and the random walk is {c} (the von Neumann winner of such a game is the pure
strategy c), so the linear program runs only for subsets without one.

>>> t = run_study(ks=(4, 8), samples=20, matrices=("mslr-navigational",))
>>> sorted(t.K.unique().tolist()), int(t.C.min()) >= 1
([4, 8], True)
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.problems import PreferenceMatrix
from irbandits.studies.claims import Claim
from irbandits.studies.claims import claim_rows as rows

KS = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 112, 128, 136)
MATRICES = ("mslr-navigational", "mslr-perfect")
NOTIONS = ("Copeland", "von Neumann", "Borda", "Random Walk")
# Table 7.1 of the thesis (percent of matrices whose winners overlap), and the share whose Copeland
# winners all lie in the von Neumann winner's support
PUBLISHED = {("Copeland", "von Neumann"): 99.94, ("Copeland", "Borda"): 51.49, ("Copeland", "Random Walk"): 56.15,
             ("von Neumann", "Borda"): 77.66, ("von Neumann", "Random Walk"): 82.11, ("Borda", "Random Walk"): 94.81}
COPELAND_IN_VN = 94.2


def _top(x: np.ndarray) -> set[int]:
    return set(np.flatnonzero(np.isclose(x, x.max(), rtol=0, atol=1e-12)).tolist())


def winners(P: PreferenceMatrix) -> dict[str, set[int]]:
    """The four notions' winning arms of ``P``."""
    c = P.condorcet_winner
    vn = {c} if c is not None else set(np.flatnonzero(P.von_neumann_winner > 1e-9).tolist())
    return {"Copeland": set(P.copeland_winners.tolist()), "von Neumann": vn,
            "Borda": set(P.borda_winners.tolist()), "Random Walk": _top(P.random_walk_winner)}


def run_study(ks=KS, samples: int = 100, seed: int = 0, matrices=MATRICES,
              data: str | Path = "../shared/data/preference-matrices") -> pd.DataFrame:
    """One row per sampled subset: matrix, K, condorcet, C, L_C, and one 0/1 column per pair of notions
    (``Copeland & Borda``, ...) and ``Copeland in von Neumann``. ``matrices``: names of files in ``data``
    or paths of matrix files (e.g. from ``irbandits matrix``)."""
    out = []
    for name in matrices:
        path = Path(name) if Path(name).suffix else Path(data) / f"{name}.txt"  # a name in ``data``, or a file
        full = PreferenceMatrix.load(path, name=path.stem)
        name = path.stem
        rng = np.random.default_rng(seed)
        for K in ks:
            for _ in range(samples if K < full.K else 1):
                arms = np.sort(rng.choice(full.K, K, replace=False))
                P = PreferenceMatrix(full.p[np.ix_(arms, arms)], name=name)
                w = winners(P)
                row = dict(matrix=name, K=K, condorcet=P.condorcet_winner is not None,
                           C=len(w["Copeland"]), L_C=P.copeland_losses,
                           **{"Copeland in von Neumann": w["Copeland"] <= w["von Neumann"]})
                row.update({f"{a} & {b}": bool(w[a] & w[b]) for a, b in combinations(NOTIONS, 2)})
                out.append(row)
    return pd.DataFrame(out)


def overlap_table(table: pd.DataFrame) -> pd.DataFrame:
    """Table 7.1 per matrix: percent of sampled subsets whose winners overlap, beside the thesis."""
    rows_ = []
    for (a, b), published in PUBLISHED.items():
        row = {"overlap": f"{a} & {b}", "thesis (informational)": published}
        for name, t in table.groupby("matrix", sort=False):
            row[name] = round(100 * t[f"{a} & {b}"].mean(), 2)
        rows_.append(row)
    row = {"overlap": "Copeland in von Neumann", "thesis (informational)": COPELAND_IN_VN}
    for name, t in table.groupby("matrix", sort=False):
        row[name] = round(100 * t["Copeland in von Neumann"].mean(), 2)
    return pd.DataFrame([*rows_, row])


def condorcet_share(table: pd.DataFrame) -> pd.DataFrame:
    """Figure 7.1: P_K, the share of K-subsets with a Condorcet winner, per matrix (columns) and K."""
    return table.pivot_table(index="K", columns="matrix", values="condorcet", aggfunc="mean", sort=False)


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The thesis's statements in 7.1.1-7.1.3 on these matrices (not its informational one)."""
    share = condorcet_share(table)
    big = [k for k in share.index if k >= 64]
    falls = {m: share.loc[10, m] - share.loc[big, m].mean() for m in share.columns} if 10 in share.index else {}
    ov = overlap_table(table).set_index("overlap")
    mats = [c for c in ov.columns if c != "thesis (informational)"]
    close = {m: (ov.loc["Copeland & von Neumann", m] > max(ov.loc[["Copeland & Borda", "Copeland & Random Walk"],
                                                                  m])) for m in mats}
    pairs = "; ".join(f"{m}: Copeland & vN {ov.loc['Copeland & von Neumann', m]:.1f} %, Copeland & Borda "
                      f"{ov.loc['Copeland & Borda', m]:.1f} %, Borda & RW {ov.loc['Borda & Random Walk', m]:.1f} %"
                      for m in mats)
    ratio = {m: (table[table.matrix == m].C.max(), table[table.matrix == m].L_C.max()) for m in mats}
    samples = int(table[table.K == table.K.min()].groupby("matrix").size().max())
    triples = [
        ("as K grows, the chance that a K-subset has a Condorcet winner falls rapidly (Figure 7.1, informational)",
         "; ".join(f"{m}: P_10 {share.loc[10, m]:.2f}, P_K over K >= 64 {share.loc[big, m].mean():.2f}"
                   for m in share.columns) if falls else "K = 10 not sampled",
         bool(falls) and all(v > 0.2 for v in falls.values())),
        ("the Copeland and von Neumann winners very likely overlap, more than either with Borda or the random "
         "walk (Table 7.1)", pairs, all(close.values())),
        ("in 94.2 % of the matrices all Copeland winners lie in the von Neumann winner's support",
         "; ".join(f"{m}: {ov.loc['Copeland in von Neumann', m]:.1f} %" for m in mats),
         all(ov.loc["Copeland in von Neumann", m] >= 90 for m in mats)),
        ("C and L_C are generally much lower than K (Figure 7.2)",
         "; ".join(f"{m}: C at most {c}, L_C at most {lc} for K up to 136" for m, (c, lc) in ratio.items()),
         all(c <= 10 and lc <= 20 for c, lc in ratio.values())),
    ]
    return rows("winner-notions", "Zoghi thesis, section 7.1 (Figures 7.1, 7.2, Table 7.1)", triples,
                f"{samples} subsets per K on {table.K.nunique()} values of K, navigational and perfect matrices "
                "(paper: 10,000 per K = 1..136, informational matrix)")


def plot(table: pd.DataFrame, path: str | Path) -> Path:
    """Figure 7.1 (P_K against K) and Figure 7.2 (C and L_C per K, circle area the share of subsets)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    mats = list(table.matrix.unique())
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), squeeze=False)
    ax = axes[0][0]
    share = condorcet_share(table)
    for i, m in enumerate(mats):
        ax.plot(share.index, share[m], "o-", ms=3, color=f"C{i}", label=m)
    ax.set_xlabel("K (rankers in the subset)")
    ax.set_ylabel("P_K: share with a Condorcet winner")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title("Figure 7.1", fontsize="medium")
    ax.legend(fontsize="small")
    for ax, what in zip(axes[0][1:], ("C", "L_C")):
        for i, m in enumerate(mats):
            counts = table[table.matrix == m].groupby(["K", what]).size()
            shares = counts / counts.groupby(level=0).transform("sum")
            ks, ys = zip(*shares.index)
            ax.scatter(np.array(ks) + (i - 0.5) * 0.8, ys, s=120 * shares.values, color=f"C{i}", alpha=0.5,
                       label=m)
        ax.set_xlabel("K")
        ax.set_ylabel(what)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"Figure 7.2: {what} (circle area: share of subsets with that K)", fontsize="medium")
        ax.grid(alpha=0.3)
    axes[0][1].legend(fontsize="small", loc="upper left")
    fig.suptitle("Zoghi thesis 7.1 on the MSLR navigational and perfect matrices (the thesis: informational)",
                 fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
