"""Zoghi thesis (seed 002) chapter 5: RCS against Condorcet SAVAGE by accuracy (section 5.2.1, Figure
5.1), against RUCB on 10-armed ranker-evaluation problems at alpha = 0.501 (5.2.2, Figure 5.2), the
alpha = 0.1 stability test (5.2.3, Figure 5.3) and 20, 30 and 40 arms (5.2.4, Figure 5.4).

    irbandits reproduce rcs-vs-rucb            # 50,000 steps, 30 runs; Figure 5.4: 2 x 10^6 steps, 6 runs
    irbandits reproduce rcs-vs-rucb --full     # the thesis's 50,000 steps, 90 runs; Figure 5.4: 90 runs

The thesis took 10 feature rankers from each of three datasets (MSLR, Yahoo! and one more); only
MSLR is in ``../shared/data``, so the three problems here are 10-ranker subsets of
MSLR-Navigational drawn from seeds 0, 1 and 2 (:func:`subset`: the first draw of 10 of the 136
rankers that has a Condorcet winner). The stability test (30 runs in the thesis) runs both
algorithms at alpha = 0.1 and 0.501 on the first subset. Its report gives the runs that do not end
on the Condorcet winner and the *tail share* of the mean regret curve: the part of the final mean
regret gained over the last checkpoint interval (the last ~20 % of the steps). A curve growing
like log t gains about 2 % there, a straight line 20 %.

Figure 5.1 (accuracy: the share of runs recommending the Condorcet winner) uses the same three
problems and the same RCS runs, read at :data:`HORIZONS` horizons (:func:`accuracy_horizons`: the
checkpoints nearest to 10 log-spaced times from 100 to the horizon). Condorcet SAVAGE needs the
horizon T, so, as in the thesis ("we conducted independent runs for each of the 10 horizons"), each
of its points is the last step of separate runs given that T (labelled :data:`SAVAGE`).

Figure 5.4 draws 20, 30 and 40 of the MSLR rankers (:func:`scaling_problems`). The thesis does not
say how; its curves plateau, so its problems' winners were identifiable within its horizon. The
first draws with a Condorcet winner (seed 0) have one near the winner (gap 0.0004-0.0008) and
neither algorithm settled in 6 runs of 3 x 10^5 steps (RCS's mean regret above RUCB's throughout), so
the draws here are the first from ``default_rng(0)`` whose Condorcet winner beats every other ranker
by at least :data:`MIN_GAP`. The horizon is :data:`SCALING` times the study's (2 x 10^6 at 50,000:
on 40 arms the curves cross near 8 x 10^5; the thesis's horizon is not in its text), the runs
``scaling_runs`` (at most ``runs``). The thesis's shares of comparisons involving a suboptimal arm
are not in the results table; the claims compare the mean regret per step over the checkpoints
around a time instead (:func:`rate`), which is that share weighted by the arms' gaps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.plots import _pyplot, _save, style
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import checkpoints
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import (
    MSLR,
    draw_subset,
    final,
    markdown_table,
    plot_problems,
    run_problems,
    tail_share,
)

DEFAULT = dict(horizon=50_000, runs=30, scaling_runs=6)
FULL = dict(horizon=50_000, runs=90, scaling_runs=90)
NAME = "rcs-vs-rucb"
PAPER = "Zoghi thesis, sections 5.2.2-5.2.3 (Figures 5.2-5.3)"  # the claims' source
PAPER_51 = "Zoghi thesis, section 5.2.1 (Figure 5.1)"
PAPER_54 = "Zoghi thesis, section 5.2.4 (Figure 5.4)"
PAPER_SCALE = "50,000 x 90; stability test 30"  # the paper's horizon x runs
ALGORITHMS = ["RUCB:alpha=0.501", "RCS:alpha=0.501"]
RUCB, RCS = ALGORITHMS
STABILITY = ["RUCB:alpha=0.1", "RCS:alpha=0.1", "RUCB:alpha=0.501", "RCS:alpha=0.501"]
SAVAGE = "Condorcet-SAVAGE_T"  # the last steps of SAVAGE's runs, one set of runs per horizon
HORIZONS = 10  # Figure 5.1's horizons
SIZES = (20, 30, 40)  # Figure 5.4's numbers of arms
MIN_GAP = 0.01  # Figure 5.4's problems: the winner beats every other ranker by at least this
SCALING = 40  # Figure 5.4's horizon, in multiples of the study's
THESIS_54 = {20: 0.30, 30: 0.123, 40: 0.126}  # how much RUCB's mean regret exceeds RCS's at 2 T_0


def subset(matrix: PreferenceMatrix, seed: int, K: int = 10) -> tuple[np.ndarray, PreferenceMatrix]:
    """The first draw of ``K`` arms (sorted) from ``default_rng(seed)`` whose sub-matrix has a Condorcet winner."""
    return draw_subset(matrix, K, seed, lambda p: p.condorcet_winner is not None, f"{matrix.name}-{K}-seed{seed}")


def smallest_gap(p: PreferenceMatrix) -> float:
    """How much the Condorcet winner beats its closest rival by (-inf without a winner)."""
    cw = p.condorcet_winner
    return -np.inf if cw is None else float(np.delete(p.p[cw], cw).min() - 0.5)


def problems(matrix: str | Path = MSLR) -> dict[str, tuple[np.ndarray, PreferenceMatrix]]:
    full = PreferenceMatrix.load(matrix, name="mslr-navigational")
    return {f"mslr10-seed{s}": subset(full, s) for s in range(3)}


def scaling_problems(matrix: str | Path = MSLR, seed: int = 0) -> dict[str, tuple[np.ndarray, PreferenceMatrix]]:
    """``mslrK`` for K in :data:`SIZES`: the first draw of K rankers from ``default_rng(seed)`` whose
    Condorcet winner beats every other one by at least :data:`MIN_GAP` (Figure 5.4)."""
    full = PreferenceMatrix.load(matrix, name="mslr-navigational")
    return {f"mslr{K}": draw_subset(full, K, seed, lambda p: smallest_gap(p) >= MIN_GAP, f"{full.name}-{K}-gap")
            for K in SIZES}


def accuracy_horizons(horizon: int) -> np.ndarray:
    """Figure 5.1's horizons: the checkpoints of a ``horizon``-step run nearest to :data:`HORIZONS`
    log-spaced times from 100 (or a hundredth of the horizon, if less) to the horizon."""
    steps = checkpoints(horizon)
    targets = np.geomspace(min(100, max(horizon // 100, 1)), horizon, HORIZONS)
    return np.unique(steps[np.abs(np.log(steps)[:, None] - np.log(targets)).argmin(axis=0)])


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, matrix: str | Path = MSLR,
              scaling_runs: int = DEFAULT["scaling_runs"]) -> pd.DataFrame:
    """RUCB and RCS at alpha = 0.501 on the three 10-ranker subsets, the stability test (``problem`` =
    "stability"), SAVAGE's runs for each of Figure 5.1's horizons (their last rows, ``algorithm`` =
    :data:`SAVAGE`) and RUCB and RCS on Figure 5.4's problems for :data:`SCALING` x ``horizon`` steps,
    ``min(runs, scaling_runs)`` runs."""
    subs = {k: p for k, (_, p) in problems(matrix).items()}
    tables = [run_problems(subs, ALGORITHMS, horizon, runs, seed=seed, jobs=jobs, out=out, progress=progress),
              run_problems({"stability": subs["mslr10-seed0"]}, STABILITY, horizon, runs, seed=seed, jobs=jobs,
                           out=out, progress=progress)]
    for T in accuracy_horizons(int(horizon)):
        # starting worker processes costs ~10-20 s (they compile the loops): short runs stay here
        part = run_problems(subs, ["Condorcet-SAVAGE"], T, runs, seed=seed, jobs=jobs if T * runs >= 10**7 else 1,
                            out=None if out is None else Path(out) / f"savage-T{T}", progress=progress)
        tables.append(part[part.step == T].assign(algorithm=SAVAGE))
    big = {k: p for k, (_, p) in scaling_problems(matrix).items()}
    tables.append(run_problems(big, ALGORITHMS, SCALING * int(horizon), min(runs, scaling_runs), seed=seed, jobs=jobs,
                               out=out, progress=progress))
    return pd.concat(tables, ignore_index=True)


def figure_5_2_3(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of Figures 5.2 and 5.3: the 10-ranker problems and the stability test, without SAVAGE."""
    return table[(table.problem.str.startswith("mslr10-") | (table.problem == "stability"))
                 & (table.algorithm != SAVAGE)]


def figure_5_1(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of Figure 5.1: RCS's and SAVAGE's on the 10-ranker problems, at SAVAGE's horizons."""
    part = table[table.problem.str.startswith("mslr10-") & table.algorithm.isin([RCS, SAVAGE])]
    return part[part.step.isin(part[part.algorithm == SAVAGE].step.unique())]


def figure_5_4(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of Figure 5.4: RUCB and RCS on 20, 30 and 40 rankers."""
    return table[table.problem.isin([f"mslr{K}" for K in SIZES])]


def accuracy(table: pd.DataFrame) -> pd.DataFrame:
    """Figure 5.1 per problem, horizon (``step``) and algorithm: the share of runs recommending the
    Condorcet winner (``accuracy``) and the mean cumulative regret (``regret``)."""
    g = figure_5_1(table).groupby(["problem", "step", "algorithm"], sort=False)
    return pd.DataFrame(dict(accuracy=g.correct.mean(), regret=g.regret.mean())).sort_index()


def first_at(acc: pd.Series, target: float) -> float:
    """The first step (the index of ``acc``) at which ``acc`` reaches ``target``; NaN if none does."""
    steps = acc.index[acc.to_numpy() >= target - 1e-12]
    return float(steps.min()) if len(steps) else np.nan


def mean_curves(table: pd.DataFrame) -> pd.DataFrame:
    """Mean regret per (problem, step) row, one column per algorithm."""
    return table.groupby(["problem", "step", "algorithm"], sort=False).regret.mean().unstack("algorithm")


def crossing(curve: pd.DataFrame) -> float:
    """T_0 of section 5.2.4: the first step from which RCS's mean regret stays below RUCB's at every later
    checkpoint, after a checkpoint where it was not below (NaN if RCS does not end below)."""
    below = (curve[RCS] < curve[RUCB]).to_numpy()
    if not below[-1] or below.all():
        return np.nan
    return float(curve.index[np.flatnonzero(~below)[-1] + 1])


def rate(curve: pd.DataFrame, t: float) -> pd.Series:
    """Per algorithm: the mean regret per step between the checkpoints either side of the one nearest
    to ``t`` (a gap-weighted share of comparisons involving a suboptimal arm)."""
    steps = curve.index.to_numpy()
    i = int(np.abs(np.log(steps) - np.log(t)).argmin())
    a, b = max(i - 1, 0), min(i + 1, len(steps) - 1)
    return (curve.iloc[b] - curve.iloc[a]) / (steps[b] - steps[a])


def at(curve: pd.DataFrame, t: float) -> pd.Series:
    """The mean regrets at the checkpoint nearest to ``t``."""
    steps = curve.index.to_numpy()
    return curve.iloc[int(np.abs(np.log(steps) - np.log(t)).argmin())]


def scaling(table: pd.DataFrame) -> pd.DataFrame:
    """Figure 5.4 per number of arms: T_0, the RUCB / RCS ratios of the regret per step at T_0 / 2, T_0
    and 2 T_0, and how much RUCB's mean regret exceeds RCS's at 2 T_0 (NaN where 2 T_0 is past the horizon)."""
    curves = mean_curves(figure_5_4(table))
    out = []
    for key in curves.index.get_level_values(0).unique():
        c = curves.loc[key]
        T0 = crossing(c)
        row = dict(problem=key, K=int(key[4:]), T0=T0, half=np.nan, cross=np.nan, double=np.nan, excess=np.nan)
        if not np.isnan(T0):
            for name, t in (("half", T0 / 2), ("cross", T0), ("double", 2 * T0)):
                if t <= c.index.max():
                    r = rate(c, t)
                    row[name] = r[RUCB] / r[RCS]
            if 2 * T0 <= c.index.max():
                r = at(c, 2 * T0)
                row["excess"] = r[RUCB] / r[RCS] - 1
        out.append(row)
    return pd.DataFrame(out)


def _claims_52_53(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    f = final(table).set_index(["problem", "algorithm"])["mean"]
    out = []
    ratios = [f[p, RCS] / f[p, RUCB] for p in f.index.levels[0] if p.startswith("mslr10")]
    if ratios:
        out.append(("alpha = 0.501: RCS's regret is roughly a third below RUCB's (ratio about 0.67)",
                    "ratio RCS / RUCB " + ", ".join(f"{r:.2f}" for r in ratios), all(0.5 <= r <= 0.8 for r in ratios)))
        diffs = [f[p, RUCB] - f[p, RCS] for p in f.index.levels[0] if p.startswith("mslr10")]
        out.append(("the plateaus differ by about 200", "RUCB - RCS " + ", ".join(f"{d:,.0f}" for d in diffs),
                    all(100 <= d <= 400 for d in diffs)))
    if "stability" in f.index.levels[0]:
        tail = tail_share(table)["stability"]
        ok = final(table).set_index(["problem", "algorithm"]).loc["stability"]
        for name, claim, agree in (
                ("RUCB:alpha=0.1", "alpha = 0.1: RUCB's mean regret grows linearly (2 of 30 runs never settle)",
                 lambda t, miss: t >= 0.1 and miss > 0),
                ("RCS:alpha=0.1", "alpha = 0.1: RCS stays stable, its curve flattens", lambda t, miss: t < 0.1)):
            miss = int(ok.loc[name, "runs"] - ok.loc[name, "correct"])
            out.append((claim, f"tail share {100 * tail[name]:.0f} % (log-like ~2 %, linear 20 %); {miss} of "
                               f"{int(ok.loc[name, 'runs'])} runs not ending on the winner", agree(tail[name], miss)))
        r = f["stability", "RCS:alpha=0.1"] / f["stability", RCS]
        out.append(("RCS at alpha = 0.1 has almost twice its regret at 0.501", f"ratio {r:.2f}", 1.3 <= r <= 2.5))
    return out


def _claims_51(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    acc = accuracy(table)
    if acc.empty:
        return []
    keys = list(acc.index.get_level_values(0).unique())
    out = []
    higher = {k: ((acc.loc[k].xs(RCS, level=1).accuracy >= acc.loc[k].xs(SAVAGE, level=1).accuracy).sum(),
                  acc.loc[k].xs(SAVAGE, level=1).shape[0]) for k in keys}
    out.append(("RCS's accuracy is consistently higher than Condorcet SAVAGE's (on every problem)",
                "horizons where RCS's is at least SAVAGE's: " + ", ".join(f"{h} of {n}" for h, n in higher.values()),
                all(h == n for h, n in higher.values())))
    times = {k: [first_at(acc.loc[k].xs(a, level=1).accuracy, 0.8) for a in (RCS, SAVAGE)] for k in keys}
    out.append(("RCS reaches an accuracy of 0.8 almost twice as fast as SAVAGE (e.g. 1,000 against 2,000 steps)",
                "0.8 first at (RCS, SAVAGE) " + "; ".join(", ".join("never" if np.isnan(v) else f"{v:,.0f}" for v in t)
                                                          for t in times.values()),
                all(not np.isnan(r) and (np.isnan(s) or s / r >= 1.5) for r, s in times.values())))
    ratios = []
    for k in keys:
        when = [first_at(acc.loc[k].xs(a, level=1).accuracy, 1.0) for a in (RCS, SAVAGE)]
        ratios.append(np.nan if np.isnan(when).any() else
                      acc.loc[(k, when[1], SAVAGE), "regret"] / acc.loc[(k, when[0], RCS), "regret"])
    out.append(("when SAVAGE first reaches 100 % accuracy it has at least 3 times the regret RCS has when it does",
                "regret ratio " + ", ".join("n/a (one never at 100 %)" if np.isnan(r) else f"{r:.1f}" for r in ratios),
                None if np.isnan(ratios).all() else all(r >= 3 for r in ratios if not np.isnan(r))))
    last = [acc.loc[(k, acc.loc[k].index.get_level_values(0).max())] for k in keys]
    big = [a.loc[SAVAGE, "regret"] / a.loc[RCS, "regret"] for a in last]
    out.append(("SAVAGE's regret is an order of magnitude above RCS's (ratio 5 or more at the last horizon)",
                "ratio " + ", ".join(f"{r:.1f}" for r in big), all(r >= 5 for r in big)))
    return out


def _claims_54(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    s = scaling(table)
    if s.empty:
        return []
    T = int(figure_5_4(table).step.max())

    def listed(column: str, fmt) -> str:
        return ", ".join(f"{r.K}: {'n/a' if np.isnan(r[column]) else fmt(r[column])}" for _, r in s.iterrows())

    def within(column: str, lo: float, hi: float) -> bool | None:
        v = s[column].dropna()
        return None if v.empty else bool(((v >= lo) & (v <= hi)).all())

    out = [("RCS's regret curve flattens sooner: the mean curves cross (T_0) and RCS stays below, 2 T_0 within the horizon",
            "T_0 (arms: step) " + listed("T0", lambda v: f"{v:,.0f}") + f" (horizon {T:,})",
            bool((s.T0 * 2 <= T).all()))]
    out.append(("at T_0 RUCB spends 6-9 times more comparisons on suboptimal arms than RCS",
                "RUCB / RCS regret per step around T_0 (a gap-weighted proxy; agrees within 4-13.5) "
                + listed("cross", lambda v: f"{v:.1f}"), within("cross", 4, 13.5)))
    out.append(("at T_0 / 2 the two differ much less (31 % vs 33 %, 31 % vs 36 %, 44 % vs 45 %)",
                "RUCB / RCS regret per step around T_0 / 2 (agrees within 0.67-1.5) "
                + listed("half", lambda v: f"{v:.2f}"), within("half", 1 / 1.5, 1.5)))
    out.append(("at 2 T_0 RUCB's mean regret is 30 %, 12.3 % and 12.6 % above RCS's (20, 30, 40 arms)",
                "RUCB above RCS by " + listed("excess", lambda v: f"{100 * v:.1f} %") + " (agrees within half to twice)",
                None if s.excess.isna().all() else all(
                    THESIS_54[r.K] / 2 <= r.excess <= THESIS_54[r.K] * 2 for _, r in s.iterrows()
                    if r.K in THESIS_54 and not np.isnan(r.excess))))
    out.append(("at 2 T_0 RUCB still spends roughly 8 times as much on suboptimal arms (2 % vs 0.3 % at 20 arms)",
                "RUCB / RCS regret per step around 2 T_0 (agrees within 5.3-12) " + listed("double", lambda v: f"{v:.1f}"),
                within("double", 8 / 1.5, 12)))
    return out


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    """(the thesis's claim, this run's numbers, whether they agree) for Figures 5.2-5.3, 5.1 and 5.4."""
    return _claims_52_53(figure_5_2_3(table)) + _claims_51(table) + _claims_54(table)


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], matrix: str | Path = MSLR,
         scaling_runs: int = DEFAULT["scaling_runs"], **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`);
    SAVAGE's steps are the sum of Figure 5.1's horizons."""
    T = int(horizon)
    subs = {k: p for k, (_, p) in problems(matrix).items()}
    works = [Work(k, a, T, runs, dueling(p, a, T)) for k, p in subs.items() for a in ALGORITHMS]
    works += [Work("stability", a, T, runs, dueling(subs["mslr10-seed0"], a, T)) for a in STABILITY]
    works += [Work(k, SAVAGE, int(accuracy_horizons(T).sum()), runs, dueling(p, "Condorcet-SAVAGE", T))
              for k, p in subs.items()]
    big = {k: p for k, (_, p) in scaling_problems(matrix).items()}
    return works + [Work(k, a, SCALING * T, min(runs, scaling_runs), dueling(p, a, SCALING * T))
                    for k, p in big.items() for a in ALGORITHMS]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, each figure's with its scale."""
    main, s54 = figure_5_2_3(table), figure_5_4(table)
    out = rows(NAME, PAPER, _claims_52_53(main), scale(main.step.max(), main.run.nunique(), PAPER_SCALE))
    part = figure_5_1(table)
    if not part.empty:
        out += rows(NAME, PAPER_51, _claims_51(table),
                    scale(part.step.max(), part.run.nunique(), f"{HORIZONS} horizons x 90", "steps at most"))
    if not s54.empty:
        out += rows(NAME, PAPER_54, _claims_54(table),
                    scale(s54.step.max(), s54.run.nunique(), "90 runs, horizon not stated"))
    return out


def _describe(arms: np.ndarray, p: PreferenceMatrix) -> str:
    cw = p.condorcet_winner
    return (f"MSLR rankers {arms.tolist()}, Condorcet winner {arms[cw]} (beats the others by "
            f"{np.delete(p.p[cw], cw).mean():.3f} on average; smallest gap {smallest_gap(p):.3f})")


def report(table: pd.DataFrame) -> str:
    main = figure_5_2_3(table)
    f = final(main)
    subs = problems()
    lines = [f"{int(main.step.max()):,} steps, {main.run.nunique()} runs per algorithm (thesis: 50,000 steps, 90 runs; "
             "30 for the stability test); arms permuted per run. The thesis's three datasets are replaced by three "
             "10-ranker subsets of MSLR-Navigational (only MSLR is in the shared data)."]
    for key, part in f.groupby("problem", sort=False):
        title = f"{key}: {_describe(*subs[key])}" if key in subs else \
            "stability test on mslr10-seed0 (alpha = 0.1 against 0.501)"
        lines += ["", f"**{title}**", "", markdown_table(part)]
    lines += ["", "Tail share of the mean regret (last ~20 % of the steps; log-like ~2 %, linear 20 %): " + "; ".join(
        f"{p} {a} {100 * v:.0f} %" for (p, a), v in tail_share(main).items())]
    acc = accuracy(table)
    if not acc.empty:
        steps = acc.index.get_level_values(1).unique()
        lines += ["", f"**Figure 5.1**: accuracy (share of runs recommending the Condorcet winner) and mean regret at "
                      f"{len(steps)} horizons; SAVAGE rerun for each, RCS read from its runs above.", "",
                  "| problem | algorithm | " + " | ".join(f"{t:,}" for t in steps) + " |",
                  "|---|---|" + "---|" * len(steps)]
        for key in acc.index.get_level_values(0).unique():
            for a in (RCS, SAVAGE):
                v = acc.loc[key].xs(a, level=1)
                lines += [f"| {key} | {a} accuracy | " + " | ".join(f"{x:.2f}" for x in v.accuracy) + " |",
                          f"| | {a} regret | " + " | ".join(f"{x:,.0f}" for x in v.regret) + " |"]
    s54 = figure_5_4(table)
    if not s54.empty:
        big = scaling_problems()
        lines += ["", f"**Figure 5.4**: RUCB and RCS at alpha = 0.501, {int(s54.step.max()):,} steps, "
                      f"{s54.run.nunique()} runs (thesis: 90 runs)."]
        for key, part in final(s54).groupby("problem", sort=False):
            lines += ["", f"*{key}*: {_describe(*big[key])}", "", markdown_table(part)]
        s = scaling(table)
        lines += ["", "| arms | T_0 | RUCB / RCS regret per step at T_0 / 2 | at T_0 | at 2 T_0 | RUCB above RCS at 2 T_0 |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {r.K} | {'none' if np.isnan(r.T0) else f'{r.T0:,.0f}'} | " + " | ".join(
            "n/a" if np.isnan(v) else f"{v:.2f}" for v in (r.half, r.cross, r.double))
            + f" | {'n/a' if np.isnan(r.excess) else f'{100 * r.excess:.1f} %'} |" for _, r in s.iterrows()]
    lines += ["", markdown(claim_rows(table), "thesis (5.2)")]
    return "\n".join(lines)


def plot_accuracy_regret(part: pd.DataFrame, path: str | Path, title: str) -> Path:
    """Figure 5.1's layout for one problem: accuracy over log time (left) and mean regret on log-log axes
    (right), one marker per horizon."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    g = part.groupby(["algorithm", "step"], sort=False)
    stats = pd.DataFrame(dict(acc=g.correct.mean(), reg=g.regret.mean(), se=g.regret.sem().fillna(0.0),
                              n=g.correct.size())).reset_index()
    for i, (name, c) in enumerate(stats.groupby("algorithm", sort=False)):
        s = style(i)
        axes[0].errorbar(c.step, c.acc, yerr=np.sqrt(c.acc * (1 - c.acc) / c.n), marker="o", label=name, capsize=2, **s)
        axes[1].errorbar(c.step, c.reg, yerr=c.se, marker="o", label=name, capsize=2, **s)
    axes[0].set_ylabel("accuracy (share of runs recommending the winner)")
    axes[0].set_ylim(-0.02, 1.02)
    axes[1].set_ylabel("mean cumulative regret")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("horizon (log scale)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    return _save(plt, fig, path)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    """Figures 5.2 and 5.3 (one regret figure per problem), 5.1 (accuracy and regret at the horizons, per
    problem) and 5.4 (one regret figure per number of arms)."""
    paths = plot_problems(figure_5_2_3(table), out, "rcs-vs-rucb", {"stability": "RUCB and RCS at alpha = 0.1 and 0.501"})
    for key, part in figure_5_1(table).groupby("problem", sort=False):
        paths.append(plot_accuracy_regret(part, Path(out) / f"rcs-vs-rucb-accuracy-{key}.png",
                                          f"Figure 5.1, {key}: RCS against Condorcet SAVAGE ({part.run.nunique()} runs "
                                          "per horizon; ± 1 SE)"))
    s54 = figure_5_4(table)
    if not s54.empty:
        paths += plot_problems(s54, out, "rcs-vs-rucb", {f"mslr{K}": f"Figure 5.4, {K} MSLR rankers" for K in SIZES})
    return paths
