"""Zoghi thesis (seed 002) chapter 6, section 6.4: how mergeRUCB scales with the number of rankers K against
RUCB, RCS, Condorcet SAVAGE and BTM (Figures 6.2-6.6), and the Bernoulli proxy checked against a full
interleaving simulation (6.4.2).

    irbandits reproduce mergerucb-scaling           # 10^6 steps; K = 10, 40, 70, 100, 130, 2 subsets each
    irbandits reproduce mergerucb-scaling --full    # the thesis's 10^7 steps; K = 10, 20, ..., 130, 10 subsets

The thesis's setting (6.4): mergeRUCB with alpha = 1.01, p = 4 (the batch size, ``M`` here) and delta = 0.01
(C(delta) of Algorithm 4's line 3): the library's defaults, so the label ``mergeRUCB`` is that setting. RUCB,
RCS, SAVAGE and BTM run with the library's defaults (RUCB alpha = 0.51, RCS alpha = 0.501, as in chapters 4-5;
chapter 6 gives no values for them). SAVAGE and BTM need the horizon T: each run is given the study's horizon
and its curve is that run's trajectory (one set of runs, not one per point as in ``rucb-vs-savage``).

* Figure 6.3 (Q2): for each K of ``sizes``, ``subsets`` draws of K of the 136 MSLR rankers with a Condorcet
  winner (:func:`subset`: the first draw from ``default_rng(s)``, s = 0, 1, ...; the thesis: "the first 10 that
  have Condorcet winners"), the five algorithms on the MSLR-Navigational proxy, regret at the horizon. The
  thesis does not say how many runs per subset; ``runs`` (default 1) runs each.
* Figure 6.4 (K = 70) is read from the same runs; Figure 6.2 (right) runs the five on all 136 rankers for
  ``curve_runs`` runs.
* Figure 6.5 (Q3): the same subsets (the same rankers) on MSLR-Perfect. The informational click model's
  matrix is not in ``../shared/data``, so its panel is not reproduced (a "not checked" claim says so).
* Figure 6.6 (Q4): mergeRUCB over the grid (p, alpha) in {4, 6, 8, 10} x {0.71, ..., 1.21} on the
  navigational subsets: per K the lowest and highest mean regret over the grid and the default's.
* Figures 6.1 and 6.2 (left) ran Lerot on the raw MSLR, Yahoo! and other LTR features, which are not in the
  shared data. In their place the full interleaving simulation (:class:`~irbandits.clicks.environment.ClickEnvironment`:
  every duel a probabilistic interleaving of the rankers' top-10 lists on a random query, navigational clicks)
  runs mergeRUCB, RUCB and BTM on the 64 feature rankers of LETOR NP2004 (fold 1's test queries), beside the
  same three on the Bernoulli proxy of the same rankers (the matrix of ``rucb-vs-savage``: 4,000 comparisons
  per pair, kept in ``out``), ``curve_runs`` runs each.

All runs go to one pool of ``jobs`` workers; every finished run is kept in ``out`` and a rerun with the same
horizon and seed reads it back. Run r of every algorithm on a problem sees the same arm permutation and coin
flips (run r of :func:`irbandits.simulate.simulate` with the same seed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import kendalltau, spearmanr

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import read_ltr
from irbandits.dueling.base import parse_spec
from irbandits.io import write_parquet
from irbandits.plots import _pyplot, _save, plot_regret, style
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import piece_path, simulate_run
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import MSLR, NP2004, draw_subset, final, markdown_table, plot_problems
from irbandits.studies.rucb_vs_savage import COMPARISONS
from irbandits.studies.rucb_vs_savage import matrix as np2004_matrix
from irbandits.tasks import Failed, run_tasks

DEFAULT = dict(horizon=10**6, runs=1, sizes=(10, 40, 70, 100, 130), subsets=2, curve_runs=3)
FULL = dict(horizon=10**7, runs=1, sizes=tuple(range(10, 131, 10)), subsets=10, curve_runs=10)
NAME = "mergerucb-scaling"
PAPER_63 = "Zoghi thesis, section 6.4.3 (Figures 6.3-6.4)"  # the claims' sources
PAPER_65 = "Zoghi thesis, section 6.4.4 (Figure 6.5)"
PAPER_66 = "Zoghi thesis, section 6.4.5 (Figure 6.6)"
PAPER_62 = "Zoghi thesis, sections 6.4.1-6.4.2 (Figures 6.1-6.2)"
PERFECT = Path("../shared/data/preference-matrices/mslr-perfect.txt")
MRUCB = "mergeRUCB"  # alpha = 1.01, M = p = 4, delta = 0.01: the library's defaults are the thesis's
ALGORITHMS = [MRUCB, "RUCB", "RCS", "Condorcet-SAVAGE", "BTM"]
CLICK_ALGORITHMS = [MRUCB, "RUCB", "BTM"]  # Figure 6.1's three
GRID = [f"{MRUCB}:M={p},alpha={a}" for p in (4, 6, 8, 10) for a in (0.71, 0.81, 0.91, 1.01, 1.11, 1.21)]
GRID_DEFAULT = f"{MRUCB}:M=4,alpha=1.01"
MODELS = ("navigational", "perfect")
CURVE_K = 70  # Figure 6.4
CLOSE = 1.5  # "close to the best": the default's mean regret within this factor of the grid's lowest
TAU = 0.8  # "a good indication": Kendall's tau of the orders at the horizon and over time at least this


def subset(matrix: PreferenceMatrix, K: int, s: int) -> tuple[np.ndarray, PreferenceMatrix]:
    """Subset ``s`` of size ``K``: the first draw of K rankers (sorted) from ``default_rng(s)`` whose
    sub-matrix has a Condorcet winner."""
    return draw_subset(matrix, K, s, lambda p: p.condorcet_winner is not None, f"{matrix.name}-K{K}-s{s}")


def mslr(matrix: str | Path = MSLR, perfect: str | Path = PERFECT) -> dict[str, PreferenceMatrix]:
    """The two MSLR matrices, keyed by click model."""
    return {"navigational": PreferenceMatrix.load(matrix, name="mslr-navigational"),
            "perfect": PreferenceMatrix.load(perfect, name="mslr-perfect")}


def problems(sizes, subsets: int, matrix: str | Path = MSLR, perfect: str | Path = PERFECT) -> dict[str, dict]:
    """Every MSLR problem of the study by key (``navigational-K40-s1``, ``perfect-K40-s1``, ``grid-K40-s1``,
    ``navigational-K136``): ``problem`` (the sub-matrix), ``arms``, ``part`` (scaling, grid, all), ``model``,
    ``K``, ``subset`` and ``algorithms``. The perfect subsets hold the navigational ones' rankers."""
    full = mslr(matrix, perfect)
    out = {}
    for K in sizes:
        for s in range(subsets):
            arms, sub = subset(full["navigational"], K, s)
            for model in MODELS:
                p = sub if model == "navigational" else PreferenceMatrix(full[model].p[np.ix_(arms, arms)],
                                                                         name=f"{full[model].name}-K{K}-s{s}")
                out[f"{model}-K{K}-s{s}"] = dict(problem=p, arms=arms, part="scaling", model=model, K=K, subset=s,
                                                 algorithms=ALGORITHMS)
            out[f"grid-K{K}-s{s}"] = dict(problem=sub, arms=arms, part="grid", model="navigational", K=K, subset=s,
                                          algorithms=GRID)
    nav = full["navigational"]
    out[f"navigational-K{nav.K}"] = dict(problem=nav, arms=np.arange(nav.K), part="all", model="navigational",
                                         K=nav.K, subset=0, algorithms=ALGORITHMS)
    return out


def np2004(data: str | Path = NP2004, out: str | Path | None = None,
           comparisons: int = COMPARISONS) -> tuple[PreferenceMatrix, ClickEnvironment]:
    """The 64 NP2004 rankers' proxy matrix (kept in ``out``) and their full click simulation."""
    rankers = read_ltr(data).rankers()
    return np2004_matrix(data, out, comparisons), ClickEnvironment(rankers, "navigational", "probabilistic")


def _run(context: tuple, task: tuple) -> pd.DataFrame:
    """One run of ``task = (key, label, run, run seed)`` on ``context = (problems, horizon)``."""
    problems, horizon = context
    key, label, run, run_seed = task
    problem, environment = problems[key]
    return simulate_run(parse_spec(label), problem, horizon, run, run_seed, environment).assign(problem=key)


def _piece(out: Path, key: str, label: str, run: int) -> Path:
    return piece_path(out / key, label, run)


def run_all(jobs_by_key: dict[str, tuple[PreferenceMatrix, object, list[str], int]], horizon: int, seed: int = 0,
            workers: int = 1, out: str | Path | None = None, progress: bool = False) -> pd.DataFrame:
    """Every ``(problem, environment or None, algorithms, runs)`` of ``jobs_by_key`` in one pool of ``workers``,
    RCS's largest problems first (its steps cost ~K^2); each finished run kept in
    ``out/runs-T<horizon>-seed<seed>`` and read back from there. One table with a ``problem`` column."""
    folder = None if out is None else Path(out) / f"runs-T{horizon}-seed{seed}"
    pieces, tasks = [], []
    for key, (problem, _, algorithms, runs) in jobs_by_key.items():
        seeds = np.random.SeedSequence(seed).spawn(runs)
        for label in algorithms:
            for r in range(runs):
                if folder is not None and _piece(folder, key, label, r).is_file():
                    pieces.append(pd.read_parquet(_piece(folder, key, label, r)))
                else:
                    tasks.append((key, label, r, seeds[r]))
    tasks.sort(key=lambda t: -jobs_by_key[t[0]][0].K ** 2 if t[1].startswith("RCS") else 0)
    context = ({k: (v[0], v[1]) for k, v in jobs_by_key.items()}, int(horizon))
    for outcome in run_tasks(_run, tasks, context, workers=workers, progress=progress, label=NAME):
        if isinstance(outcome, Failed):
            raise RuntimeError(f"{NAME} run {tasks[outcome.index][:3]} failed: {outcome.error}")
        pieces.append(outcome.value)
        if folder is not None:
            key, label, r, _ = tasks[outcome.index]
            _piece(folder, key, label, r).parent.mkdir(parents=True, exist_ok=True)
            write_parquet(outcome.value, _piece(folder, key, label, r))
    order = {k: i for i, k in enumerate(jobs_by_key)}
    labels = {a: i for i, a in enumerate(dict.fromkeys(a for v in jobs_by_key.values() for a in v[2]))}
    table = pd.concat(pieces, ignore_index=True)
    table = table.sort_values(["problem", "algorithm", "run", "step"], key=lambda c: c.map(
        order if c.name == "problem" else labels) if c.name in ("problem", "algorithm") else c)
    return table.reset_index(drop=True)


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, sizes=DEFAULT["sizes"],
              subsets: int = DEFAULT["subsets"], curve_runs: int = DEFAULT["curve_runs"], matrix: str | Path = MSLR,
              perfect: str | Path = PERFECT, data: str | Path = NP2004, comparisons: int = COMPARISONS) -> pd.DataFrame:
    """Every part of the study (see the module): the tidy table of :func:`~irbandits.simulate.simulate` with
    the columns problem, part (scaling, grid, all, np2004), model (navigational, perfect, clicks, proxy), K and
    subset. ``table.attrs`` keeps each MSLR problem's rankers and the NP2004 matrix's Condorcet winner."""
    probs = problems(sizes, subsets, matrix, perfect)
    P, env = np2004(data, out, comparisons)
    todo = {k: (v["problem"], None, v["algorithms"], curve_runs if v["part"] == "all" else runs)
            for k, v in probs.items()}
    todo.update({"np2004-clicks": (P, env, CLICK_ALGORITHMS, curve_runs),
                 "np2004-proxy": (P, None, CLICK_ALGORITHMS, curve_runs)})
    table = run_all(todo, int(horizon), seed, jobs, out, progress)
    meta = {k: (v["part"], v["model"], v["K"], v["subset"]) for k, v in probs.items()}
    meta.update({f"np2004-{m}": ("np2004", m, P.K, 0) for m in ("clicks", "proxy")})
    for i, col in enumerate(("part", "model", "K", "subset")):
        table[col] = table.problem.map({k: v[i] for k, v in meta.items()})
    table.attrs.update(arms={k: v["arms"].tolist() for k, v in probs.items() if v["part"] == "scaling"},
                       np2004_winner=P.condorcet_winner)
    return table


def at_horizon(table: pd.DataFrame) -> pd.DataFrame:
    """Per part, model, K and algorithm: the mean regret at the last step over the subsets (each the mean of
    its runs), its standard error over the subsets, and the subsets."""
    last = table[table.step == table.step.max()]
    per = last.groupby(["part", "model", "K", "algorithm", "subset"], sort=False).regret.mean()
    g = per.groupby(level=["part", "model", "K", "algorithm"], sort=False)
    out = pd.DataFrame(dict(mean=g.mean(), se=g.std().fillna(0.0) / np.sqrt(g.size()), subsets=g.size()))
    return out.reset_index()


def scaling(table: pd.DataFrame, model: str = "navigational") -> pd.DataFrame:
    """Figures 6.3 and 6.5: mean regret at the horizon, one row per K and one column per algorithm."""
    h = at_horizon(table)
    h = h[(h.part == "scaling") & (h.model == model)]
    return h.pivot(index="K", columns="algorithm", values="mean")[[a for a in ALGORITHMS if a in set(h.algorithm)]]


def grid(table: pd.DataFrame) -> pd.DataFrame:
    """Figure 6.6 per K: the default setting's mean regret, the grid's lowest and highest and their settings."""
    h = at_horizon(table)
    h = h[h.part == "grid"].pivot(index="K", columns="algorithm", values="mean")
    return pd.DataFrame(dict(default=h[GRID_DEFAULT], low=h.min(axis=1), best=h.idxmin(axis=1).str.split(":").str[1],
                             high=h.max(axis=1), worst=h.idxmax(axis=1).str.split(":").str[1]))


def mean_curves(table: pd.DataFrame, part: str, K: int | None = None, model: str = "navigational") -> pd.DataFrame:
    """Mean regret per step over every run of ``part`` (and ``K``, ``model``), one column per algorithm."""
    sel = table[(table.part == part) & (table.model == model) & ((table.K == K) if K is not None else True)]
    return sel.groupby(["step", "algorithm"], sort=False).regret.mean().unstack("algorithm")


def order_over_time(curves: pd.DataFrame) -> tuple[float, list[str], list[str]]:
    """Kendall's tau between the algorithms' order by mean regret at the last step and by the mean of their
    curves over the checkpoints of the last two decades; and the two orders (best first)."""
    T = curves.index.max()
    end, over = curves.loc[T], curves[curves.index >= T / 100].mean()
    return float(kendalltau(end, over).statistic), list(end.sort_values().index), list(over.sort_values().index)


def _names(algorithms) -> str:
    return " < ".join(a.split(":")[0] for a in algorithms)


def _claims_63(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    s = scaling(table)
    big = s[s.index >= 70]
    others = big.drop(columns=MRUCB)
    out = [("for K >= 70 mergeRUCB outperforms all other dueling bandit algorithms (regret at the horizon)",
            "; ".join(f"K = {K}: mergeRUCB {big.loc[K, MRUCB]:,.0f}, best other {others.loc[K].idxmin()} "
                      f"{others.loc[K].min():,.0f}" for K in big.index) or "no K >= 70 run",
            bool((big[MRUCB] < others.min(axis=1)).all()) if len(big) else None)]
    ratio = s.drop(columns=MRUCB).min(axis=1) / s[MRUCB]
    rho = spearmanr(ratio.index, ratio.to_numpy()).statistic if len(ratio) > 2 else np.nan
    out.append(("as K grows, so does the difference between mergeRUCB and the other algorithms (Figure 6.1's "
                "claim, checked on the proxy's K)",
                "best other / mergeRUCB: " + ", ".join(f"{K}: {r:.2f}" for K, r in ratio.items())
                + f" (Spearman rho {rho:.2f} with K; agrees at 0.5 or more)",
                None if np.isnan(rho) else bool(rho >= 0.5)))
    for part, K in (("all", None), ("scaling", CURVE_K)):
        curves = mean_curves(table, part, K)
        if curves.empty:
            continue
        size = int(table[table.part == part].K.max()) if K is None else K
        tau, end, over = order_over_time(curves)
        out.append((f"K = {size}: the regret at the horizon is a good indication of the overall performance over "
                    "time (the algorithms' order)",
                    f"at the horizon {_names(end)}; over the last two decades {_names(over)}: Kendall's tau {tau:.2f} "
                    f"(agrees at {TAU} or more)", bool(round(tau, 9) >= TAU)))
    return out


def _claims_65(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    nav, perf = scaling(table, "navigational"), scaling(table, "perfect")
    out = []
    if not perf.empty:
        effect = np.exp(np.abs(np.log(nav / perf)).mean())  # geometric mean over K of the larger / smaller
        names = [a for a in (MRUCB, "RUCB", "RCS") if a in effect.index]
        out.append(("RCS is affected more severely by the click model than mergeRUCB or RUCB",
                    "navigational vs perfect regret, geometric mean over K of the larger / the smaller: "
                    + ", ".join(f"{a} {effect[a]:.2f}" for a in names),
                    bool(effect["RCS"] > max(effect[MRUCB], effect["RUCB"]))))
    out.append(("the informational click model (Figure 6.5, bottom): noisier still, RCS degrading most",
                "not reproduced: ../shared/data has MSLR's navigational and perfect matrices only", None))
    return out


def _claims_66(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    g = grid(table)
    if g.empty:
        return []
    ratio = g.default / g.low
    return [("the default (p, alpha) = (4, 1.01) is consistently close, if not equal, to the best choice",
             "default / lowest over the grid: " + ", ".join(f"K = {K}: {r:.2f}" for K, r in ratio.items())
             + f"; the default is the lowest at {int((ratio <= 1).sum())} of {len(ratio)} K (agrees within "
               f"{CLOSE} at every K)", bool((ratio <= CLOSE).all()))]


def _claims_62(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    h = at_horizon(table)
    h = h[h.part == "np2004"].set_index(["model", "algorithm"])["mean"]
    if h.empty:
        return []
    clicks, proxy = h["clicks"], h["proxy"]
    out = [("large-scale experiments with interleaved comparisons (Lerot): mergeRUCB beats RUCB and BTM "
            "(Figure 6.1, 136-700 rankers; here 64 NP2004 rankers)",
            ", ".join(f"{a} {clicks[a]:,.0f}" for a in CLICK_ALGORITHMS),
            bool(clicks[MRUCB] < clicks.drop(MRUCB).min())),
           ("no qualitative difference between the algorithms' relative performance under Lerot and the proxy",
            f"order under the click simulation {_names(clicks.sort_values().index)}, under the proxy "
            f"{_names(proxy.sort_values().index)}; regret clicks / proxy "
            + ", ".join(f"{a} {clicks[a] / proxy[a]:.2f}" for a in CLICK_ALGORITHMS),
            list(clicks.sort_values().index) == list(proxy.sort_values().index)),
           ("Figures 6.1 and 6.2 (left): Lerot on MSLR (136), Yahoo! (700) and the other datasets' features",
            "not reproduced: the raw LTR features of these datasets are not in ../shared/data (NP2004 above instead)",
            None)]
    return out


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of Figures 6.3-6.4, 6.5, 6.6 and 6.1-6.2 as rows of ``claims.csv``, each with its scale."""
    T = table.step.max()
    sc = table[table.part == "scaling"]
    per = f"subsets per K, {sc.run.nunique()} run{'s' * (sc.run.nunique() > 1)} each"
    subsets = int(sc.subset.nunique())
    curve = int(table[table.part == "np2004"].run.nunique())
    return (rows(NAME, PAPER_63, _claims_63(table), scale(T, subsets, "10^7 x 10 subsets per K, K = 10..130",
                                                          what=per))
            + rows(NAME, PAPER_65, _claims_65(table), scale(T, subsets, "10^7 x 10 subsets per K", what=per))
            + rows(NAME, PAPER_66, _claims_66(table), scale(T, subsets, "10^7 x 10 subsets per K, 24 settings",
                                                            what=per))
            + rows(NAME, PAPER_62, _claims_62(table), scale(T, curve, "10^7 (MSLR) to 2.5 x 10^7, runs not stated")))


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], sizes=DEFAULT["sizes"],
         subsets: int = DEFAULT["subsets"], curve_runs: int = DEFAULT["curve_runs"], matrix: str | Path = MSLR,
         perfect: str | Path = PERFECT, data: str | Path = NP2004, out: str | Path | None = None,
         probe_comparisons: int = 300, **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`). One
    probe per K and algorithm (every subset, both click models and all grid settings of that K share it: the
    rate depends on K, hardly on the matrix or mergeRUCB's parameters). The NP2004 matrix is the one kept in
    ``out`` if there is one, else a quick estimate from ``probe_comparisons`` per pair; nothing is written."""
    T = int(horizon)
    works = []
    for key, v in problems(sizes, subsets, matrix, perfect).items():
        n = curve_runs if v["part"] == "all" else runs
        works += [Work(key, a, T, n, dueling(v["problem"], a, T), key=(v["K"], a if v["part"] != "grid" else MRUCB))
                  for a in v["algorithms"]]
    kept = out if out is not None and (Path(out) / "reference-seed0.txt").is_file() else None
    P, env = np2004(data, kept, COMPARISONS if kept else probe_comparisons)
    for key, e in (("np2004-clicks", env), ("np2004-proxy", None)):
        works += [Work(key, a, T, curve_runs, dueling(P, a, T, e)) for a in CLICK_ALGORITHMS]
    return works


def _by_K(table: pd.DataFrame, model: str) -> pd.DataFrame:
    h = at_horizon(table)
    return h[(h.part == "scaling") & (h.model == model)]


def plot_by_K(panels: dict[str, pd.DataFrame], path: str | Path, title: str) -> Path:
    """Mean regret at the horizon against K, one line per algorithm (+-1 SE over the subsets), one panel per
    entry of ``panels`` (rows of :func:`at_horizon`); log regret axis."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels), 4.8), squeeze=False)
    for ax, (name, h) in zip(axes[0], panels.items()):
        for i, (a, c) in enumerate(h.groupby("algorithm", sort=False)):
            ax.errorbar(c.K, c["mean"], yerr=c.se, marker="o", capsize=2, label=a, **style(i))
        ax.set_yscale("log")
        ax.set_xlabel("K (number of rankers)")
        ax.set_ylabel("cumulative regret at the horizon (log scale)")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    return _save(plt, fig, path)


def plot_grid(g: pd.DataFrame, path: str | Path, title: str) -> Path:
    """Figure 6.6: the grid's lowest and highest mean regret and the default's, against K (log regret axis)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.6))
    for i, (col, label) in enumerate((("low", "lowest over the grid"), ("high", "highest over the grid"),
                                      ("default", "default (p, alpha) = (4, 1.01)"))):
        ax.plot(g.index, g[col], marker="o", label=label, **style(i))
    ax.set_yscale("log")
    ax.set_xlabel("K (number of rankers)")
    ax.set_ylabel("cumulative regret at the horizon (log scale)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(title)
    fig.tight_layout()
    return _save(plt, fig, path)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    """Figures 6.3, 6.5 and 6.6 (against K), 6.4 and 6.2 (right) (regret curves at K = 70 and 136), and the
    NP2004 click simulation beside its proxy (one figure each)."""
    out = Path(out)
    T, n = int(table.step.max()), int(table[table.part == "scaling"].subset.nunique())
    about = f"{T:,} steps, {n} subsets per K; ± 1 SE over the subsets"
    paths = [plot_by_K({"MSLR-Navigational": _by_K(table, "navigational")}, out / f"{NAME}-fig6.3.png",
                       f"Figure 6.3 ({about})")]
    perfect = _by_K(table, "perfect")
    if not perfect.empty:
        paths.append(plot_by_K({"perfect clicks": perfect, "navigational clicks": _by_K(table, "navigational")},
                               out / f"{NAME}-fig6.5.png", f"Figure 6.5: the click models ({about})"))
    g = grid(table)
    if not g.empty:
        paths.append(plot_grid(g, out / f"{NAME}-fig6.6.png", f"Figure 6.6: mergeRUCB over (p, alpha)\n({T:,} steps, "
                                                              f"mean over {n} subsets per K)"))
    k70 = table[(table.part == "scaling") & (table.model == "navigational") & (table.K == CURVE_K)]
    if not k70.empty:
        paths.append(plot_regret(k70, out / f"{NAME}-fig6.4.png",
                                 title=f"Figure 6.4: {CURVE_K} MSLR-Navigational rankers ({k70.subset.nunique()} "
                                       "subsets; mean ± 1 SE over subsets and runs)"))
    full = table[table.part == "all"]
    if not full.empty:
        paths.append(plot_regret(full, out / f"{NAME}-fig6.2.png",
                                 title=f"Figure 6.2 (right): all {full.K.iloc[0]} MSLR-Navigational rankers, proxy "
                                       f"({full.run.nunique()} runs; mean ± 1 SE)"))
    return paths + plot_problems(table[table.part == "np2004"], out, NAME, {
        "np2004-clicks": "64 NP2004 rankers, full interleaving simulation (navigational clicks)",
        "np2004-proxy": "64 NP2004 rankers, Bernoulli proxy of the same"})


def report(table: pd.DataFrame) -> str:
    """Markdown: regret at the horizon against K under both click models, the grid, the 136-ranker and NP2004
    tables, then the thesis's claims beside this run's numbers."""
    T = int(table.step.max())
    sc = table[table.part == "scaling"]
    lines = [f"{T:,} steps (thesis: 10^7); K = {', '.join(map(str, sorted(sc.K.unique())))}; "
             f"{sc.subset.nunique()} subsets of the 136 MSLR rankers per K with a Condorcet winner (the first draws "
             f"from `default_rng(s)`, s = 0, 1, ...; thesis: 10), {sc.run.nunique()} run(s) each; arms permuted per "
             "run. mergeRUCB: alpha = 1.01, p = 4, delta = 0.01."]
    for model in MODELS:
        s = scaling(table, model)
        if s.empty:
            continue
        lines += ["", f"**MSLR-{model.capitalize()}**: mean regret at {T:,} over the subsets", "",
                  "| K | " + " | ".join(s.columns) + " |", "|---|" + "---|" * len(s.columns)]
        lines += [f"| {K} | " + " | ".join(f"{v:,.0f}" for v in r) + " |" for K, r in s.iterrows()]
    g = grid(table)
    if not g.empty:
        lines += ["", "**Figure 6.6**: mergeRUCB over (p, alpha) in {4, 6, 8, 10} x {0.71, ..., 1.21} on the "
                      "navigational subsets (mean regret over the subsets)", "",
                  "| K | default (4, 1.01) | lowest (setting) | highest (setting) |", "|---|---|---|---|"]
        lines += [f"| {K} | {r.default:,.0f} | {r.low:,.0f} ({r.best}) | {r.high:,.0f} ({r.worst}) |"
                  for K, r in g.iterrows()]
    titles = {"navigational-K136": "all 136 MSLR-Navigational rankers (Figure 6.2, right)",
              "np2004-clicks": "the 64 NP2004 rankers, full interleaving simulation",
              "np2004-proxy": "the 64 NP2004 rankers, Bernoulli proxy"}
    for key, f in final(table[table.part.isin(["all", "np2004"])]).groupby("problem", sort=False):
        lines += ["", f"**{titles.get(key, key)}**", "", markdown_table(f)]
    lines += ["", markdown(claim_rows(table), "thesis (6.4)")]
    return "\n".join(lines)
