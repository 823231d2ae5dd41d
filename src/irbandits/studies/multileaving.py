"""MergeDTS paper (seed 001) section 6.6, Figure 5 (RQ6): MergeDTS with probabilistic interleaving
against multileaving, judged by the online CTR@10 and NDCG@10 of the lists the users saw.

    irbandits reproduce multileaving            # 10^6 steps, 3 runs
    irbandits reproduce multileaving --full     # the paper's 2 x 10^6 steps, 5 runs

The paper ran LEROT simulations on MSLR, Yahoo and ISTELLA with navigational clicks on top-10 lists.
Those datasets are not in ``../shared/data``; this study runs the same click model and list length
on NP2004 (LETOR 3.0 fold 1, ``test.txt.gz``: 15 queries with one relevant page each, its 64
features as rankers). Configurations (:data:`CONFIGS`):

- **MergeDTS + PI**: MergeDTS with the tuned ``M = 16, C = 4,000,000`` and, as in 6.6, ``alpha = 0.51``,
  on probabilistic interleaving;
- **UCB-Multileave + SOSM**: the paper's baseline, its steps 1-5 of 6.6
  (:class:`~irbandits.dueling.ucb_multileave.UCBMultileave`: multileave every ranker no other beats by
  the UCB, ``alpha = 0.51`` and MergeDTS's ``C``) with sample-only scored multileaving (Brost et al.
  2016, ``sosm`` in :mod:`irbandits.clicks.multileaving`), as the paper ran it; every candidate goes
  into the list (up to all 64);
- **UCB-Multileave + TDM / PM**: the same baseline with team-draft (TDM) and probabilistic (PM)
  multileaving in place of SOSM (the stand-ins of the study before irbandits had SOSM);
- **Self-Sparring + TDM / PM** (m = 4 rankers per list): the multi-dueling state of the art the paper
  names (section 5.5), not part of RQ6.

Metrics (:mod:`irbandits.clicks.online_metrics`): the clicks and NDCG@10 of every shown list,
reported per impression over windows of steps. Regret and ``correct`` are measured against a
reference matrix of 4,000 probabilistic-interleaving comparisons per pair (thesis 4.4.1), estimated
once per seed and kept in ``out/reference-seed<seed>.txt``. The report adds each ranker's own
quality (:func:`~irbandits.clicks.online_metrics.ranker_quality`) and how many rankers
UCB-Multileave still multileaves at each decade of one extra run per method, with the run's ``C``
and with the ``C(epsilon)`` of the paper's Table 1 at ``epsilon = 1 / T`` (``ln(t + C) = 700``, the
most conservative reading of the paper's setup).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.ltr import Rankers, read_ltr
from irbandits.clicks.multidueling import MultileaveEnvironment
from irbandits.clicks.online_metrics import MeteredEnvironment, per_impression, ranker_quality
from irbandits.dueling.base import c_of_delta
from irbandits.dueling.ucb_multileave import UCBMultileave
from irbandits.plots import plot_windows
from irbandits.problems import PreferenceMatrix
from irbandits.simulate import run_one, simulate
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work, dueling
from irbandits.studies.online import NP2004, reference

DATA = NP2004
DEFAULT = dict(horizon=10**6, runs=3)
FULL = dict(horizon=2 * 10**6, runs=5)
NAME = "multileaving"
PAPER = "MergeDTS paper, section 6.6 (Figure 5)"  # the claims' source
PAPER_SCALE = "2 x 10^6 x 5, on MSLR, Yahoo and ISTELLA"  # the paper's horizon x runs
CLICKS = "navigational"
ALPHA = 0.51            # the exploration of MergeDTS and UCB-Multileave in 6.6
C = 4_000_000           # in ln(t + C): MergeDTS's tuned value, and UCB-Multileave's default
COMPARISONS = 4000      # per pair, for the reference matrix (:func:`~irbandits.studies.online.reference`)
IMPRESSIONS = 100_000   # per ranker, for each ranker's own CTR and NDCG
ALL = 0                 # rankers per step: every candidate
CONFIGS = {  # label -> (algorithm, interleaving or multileaving method, rankers per step; None: pairwise)
    "MergeDTS + PI": (f"MergeDTS:tuned,alpha={ALPHA},C={C}", "probabilistic", None),
    "UCB-Multileave + SOSM": (f"UCB-Multileave:alpha={ALPHA},C={C}", "sosm", ALL),
    "UCB-Multileave + TDM": (f"UCB-Multileave:alpha={ALPHA},C={C}", "team-draft", ALL),
    "UCB-Multileave + PM": (f"UCB-Multileave:alpha={ALPHA},C={C}", "probabilistic", ALL),
    "Self-Sparring + TDM (m = 4)": ("Self-Sparring", "team-draft", 4),
    "Self-Sparring + PM (m = 4)": ("Self-Sparring", "probabilistic", 4),
}
BASELINES = ("UCB-Multileave + SOSM",)  # the paper's multileaving baseline (RQ6)
STAND_INS = ("UCB-Multileave + TDM", "UCB-Multileave + PM")  # the baseline's claims compare these without SOSM
WINDOWS = (10**3, 10**4, 10**5)  # the report's windows end here and at the horizon
METRICS = {"clicks": "CTR@10 (clicks per impression)", "ndcg": "NDCG@10 of the shown list"}


def environment(rankers: Rankers, method: str, per_step: int | None, horizon: int, seed: int = 0) -> MeteredEnvironment:
    """The metered click environment of one configuration."""
    if per_step is None:
        env = ClickEnvironment(rankers, CLICKS, method)
    else:
        env = MultileaveEnvironment(rankers, CLICKS, method, per_step=per_step or rankers.K)
    return MeteredEnvironment(env, horizon, seed)


def candidates(rankers: Rankers, problem: PreferenceMatrix, method: str, horizon: int, seed: int = 0,
               C: float = C) -> dict[int, int]:
    """How many rankers UCB-Multileave (``alpha`` = :data:`ALPHA`, this ``C``) multileaves after 10,
    100, ... steps and at ``horizon``, in one run."""
    env = MultileaveEnvironment(rankers, CLICKS, method, per_step=rankers.K)
    algo = UCBMultileave(rankers.K, seed=seed, alpha=ALPHA, C=C)
    done, out = 0, {}
    for stop in [10**k for k in range(1, 12) if 10**k < horizon] + [horizon]:
        run_one(algo, problem, stop - done, seed=np.random.SeedSequence([seed, done]), environment=env)
        done, out[stop] = stop, len(algo.candidates())
    return out


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower()


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, data: str | Path = DATA,
              features: list[int] | None = None, configs=tuple(CONFIGS)) -> pd.DataFrame:
    """Every configuration of ``configs`` on the rankers ``features`` (0-based; default all); the tidy
    table of :func:`~irbandits.simulate.simulate` with the metered ``clicks`` and ``ndcg`` columns,
    ``algorithm`` the configuration. ``table.attrs`` keeps what the report needs besides: the rankers'
    names, own CTR and NDCG, the Condorcet winner of the reference matrix and UCB-Multileave's
    candidates over time."""
    rankers = read_ltr(data).rankers(features)
    problem = reference(rankers, seed, out, COMPARISONS, CLICKS)
    tables = []
    for label in configs:
        algorithm, method, per_step = CONFIGS[label]
        table = simulate(problem, [algorithm], horizon=int(horizon), runs=runs, seed=seed, jobs=jobs,
                         out=None if out is None else Path(out) / _slug(label), progress=progress,
                         environment=environment(rankers, method, per_step, horizon, seed))
        tables.append(table.assign(algorithm=label))
    table = pd.concat(tables, ignore_index=True).assign(problem="np2004")
    quality = ranker_quality(rankers, CLICKS, IMPRESSIONS, seed)
    bounds = {f"C = {C:,.0f}": C, "C = C(1/T)": c_of_delta(ALPHA, rankers.K, 1 / horizon)}  # the run's, Table 1's
    table.attrs.update(names=list(rankers.names), winner=problem.condorcet_winner, ctr=quality.ctr.tolist(),
                       ndcg=quality.ndcg.tolist(), candidates={
                           label: {key: candidates(rankers, problem, CONFIGS[label][1], int(horizon), seed, c)
                                   for key, c in bounds.items()}
                           for label in configs if CONFIGS[label][0].startswith("UCB-Multileave")})
    return table


def windows(table: pd.DataFrame) -> pd.DataFrame:
    """Per configuration and window (ending at :data:`WINDOWS` and the horizon, and the whole run):
    CTR@10 and NDCG@10 per impression, mean and SE over runs."""
    T = int(table.step.max())
    ends = [w for w in WINDOWS if w < T] + [T]
    parts = [per_impression(table, c, ends).set_index(["algorithm", "run", "start", "step"]) for c in METRICS]
    whole = [per_impression(table, c, [T]).assign(start=1, step=-1).set_index(["algorithm", "run", "start", "step"])
             for c in METRICS]
    w = pd.concat([pd.concat(parts, axis=1), pd.concat(whole, axis=1)]).reset_index()
    g = w.groupby(["algorithm", "start", "step"], sort=False)[list(METRICS)]
    mean, se = g.mean(), g.std().fillna(0.0) / np.sqrt(g.size().to_numpy()[:, None])
    return mean.join(se.add_suffix("_se")).reset_index()


def _cell(r, column: str) -> str:
    return f"{r[column]:.3f} ± {r[column + '_se']:.3f}"


def _window_name(start: int, step: int) -> str:
    return "whole run" if step < 0 else f"{start:,}-{step:,}"


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """(the paper's claim, this run's numbers, whether they agree) for section 6.6."""
    w = windows(table)
    whole = w[w.step < 0].set_index("algorithm")
    last = w[w.step == w.step.max()].set_index("algorithm")
    first = w[w.step == w[w.step > 0].step.min()].set_index("algorithm")
    T, winner, out = int(table.step.max()), table.attrs.get("winner"), []
    names = table.attrs.get("names", [])
    mdts = "MergeDTS + PI"
    present = set(table.algorithm)
    if mdts in present:
        runs = table[table.algorithm == mdts].sort_values(["run", "step"])
        end = runs[runs.step == T]
        settled = runs.groupby("run").apply(_settled, include_groups=False).dropna()
        name = names[winner] if winner is not None and names else winner
        out.append(("MergeDTS with PI finds the best ranker in less than 2M steps", f"{int(end.correct.sum())} of "
                    f"{len(end)} runs recommend the Condorcet winner ({name}) at step {T:,}"
                    + (f", from step {int(settled.max()):,} on at the latest" if len(settled) else ""),
                    bool(end.correct.all())))
        if winner is not None and "ndcg" in table.attrs:
            best = table.attrs["ndcg"][winner]
            out.append(("the quality of the lists MergeDTS shows increases quickly (to the best ranker's)",
                        f"NDCG@10 {first.ndcg[mdts]:.3f} in the first window, {last.ndcg[mdts]:.3f} in the last "
                        f"(the best ranker's own lists: {best:.3f})",
                        last.ndcg[mdts] > first.ndcg[mdts] and last.ndcg[mdts] >= best - 0.01))
        for column, what in (("clicks", "CTR@10"), ("ndcg", "NDCG@10")):
            base = [b for b in BASELINES if b in present] or [b for b in STAND_INS if b in present]
            if base:
                out.append((f"MergeDTS outperforms the multileaving baseline on {what} (Figure 5)",
                            f"over the whole run: MergeDTS {whole[column][mdts]:.3f}, "
                            + ", ".join(f"{b} {whole[column][b]:.3f}" for b in base),
                            all(whole[column][mdts] > whole[column][b] for b in base)))
    for label, runs in table.attrs.get("candidates", {}).items():
        K = len(names) or int(table.recommended.max()) + 1
        counts = list(runs.values())[0]  # the C of the configuration run
        out.append((f"the baseline's curves are almost flat: it multileaves all rankers in every step ({label})",
                    f"NDCG@10 {first.ndcg[label]:.3f} in the first window, {last.ndcg[label]:.3f} in the last; rankers "
                    "multileaved after " + "; ".join(f"{c}: " + ", ".join(f"{int(s):,} steps {n}" for s, n in
                                                                           per.items()) for c, per in runs.items()),
                    all(n == K for n in counts.values())))
    return out


def _settled(run: pd.DataFrame) -> float:
    """The first checkpoint from which on a run recommends a winner to its end (NaN if it does not end on one)."""
    ok = run.correct.to_numpy()[::-1].cumprod()[::-1].astype(bool)
    return float(run.step.to_numpy()[ok].min()) if ok.any() else np.nan


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], data: str | Path = DATA,
         features: list[int] | None = None, configs=tuple(CONFIGS), out: str | Path | None = None,
         probe_comparisons: int = 300, seed: int = 0, **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`): each
    configuration in its click environment. The reference matrix is the one kept in ``out`` if there is one,
    else a quick estimate from ``probe_comparisons`` per pair; the reference matrix itself (4,000
    comparisons per pair), each ranker's own quality and UCB-Multileave's extra candidate runs are not
    counted. Nothing is written."""
    rankers = read_ltr(data).rankers(features)
    kept = None if out is None or not (Path(out) / f"reference-seed{seed}.txt").is_file() else out
    problem = reference(rankers, seed, kept, COMPARISONS if kept else probe_comparisons, CLICKS)
    works = []
    for label in configs:
        algorithm, method, per_step = CONFIGS[label]
        def env(n, method=method, per_step=per_step):  # metered for the probe's n steps
            return environment(rankers, method, per_step, n, seed)

        works.append(Work("np2004", label, int(horizon), runs, dueling(problem, algorithm, int(horizon), env)))
    return works


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    return rows(NAME, PAPER, claims(table),
                scale(table.step.max(), table.run.nunique(), PAPER_SCALE))


def report(table: pd.DataFrame) -> str:
    """Markdown: CTR@10 and NDCG@10 per window and configuration, the rankers' own quality, then the
    paper's claims beside this run's numbers."""
    T, runs = int(table.step.max()), table.run.nunique()
    w = windows(table)
    names, winner = table.attrs.get("names", []), table.attrs.get("winner")
    lines = [f"NP2004 (LETOR 3.0 fold 1 test: {len(names)} feature rankers, 15 queries with one relevant page each), "
             f"navigational clicks on top-10 lists; {T:,} steps, {runs} runs per configuration (paper: MSLR, Yahoo and "
             "ISTELLA, 2M steps, 5 runs). Means per impression over each window of steps, ± SE over the runs."]
    if winner is not None and "ndcg" in table.attrs:
        ctr, ndcg = np.array(table.attrs["ctr"]), np.array(table.attrs["ndcg"])
        top = int(np.argmax(ndcg))
        lines += ["", f"Each ranker's own lists ({IMPRESSIONS:,} impressions each): the Condorcet winner of the reference "
                      f"matrix, {names[winner]}, has CTR@10 {ctr[winner]:.3f} and NDCG@10 {ndcg[winner]:.3f}"
                      + ("" if top == winner else f"; the best by NDCG@10 is {names[top]} ({ndcg[top]:.3f})")
                      + f"; over all {len(names)} rankers CTR@10 {ctr.mean():.3f} and NDCG@10 {ndcg.mean():.3f} on "
                      f"average (CTR@10 from {ctr.min():.3f} to {ctr.max():.3f})."]
    for column, what in METRICS.items():
        spans = list(dict.fromkeys(zip(w.start, w.step)))
        lines += ["", f"**{what}**", "", "| configuration | " + " | ".join(_window_name(*s) for s in spans) + " |",
                  "|---|" + "---|" * len(spans)]
        for name, part in w.groupby("algorithm", sort=False):
            cells = {(r.start, r.step): _cell(r, column) for _, r in part.iterrows()}
            lines.append(f"| {name} | " + " | ".join(cells.get(s, "") for s in spans) + " |")
    end = table[table.step == T].groupby("algorithm", sort=False).correct
    lines += ["", "Runs recommending the Condorcet winner at the end: " + "; ".join(
        f"{a} {int(c.sum())} / {len(c)}" for a, c in end)]
    lines += ["", markdown(claim_rows(table), "paper (section 6.6)")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    T = int(table.step.max())
    ends = np.unique(np.geomspace(10, T, 4 * int(np.ceil(np.log10(T)))).round().astype(np.int64))
    curves = [per_impression(table, c, ends).set_index(["algorithm", "run", "start", "step"]) for c in METRICS]
    frame = pd.concat(curves, axis=1).reset_index()
    levels = {}
    winner = table.attrs.get("winner")
    if winner is not None and "ndcg" in table.attrs:
        label = f"{table.attrs['names'][winner]} alone"
        levels = {"clicks": {label: table.attrs["ctr"][winner]}, "ndcg": {label: table.attrs["ndcg"][winner]}}
    title = f"NP2004, navigational clicks ({T:,} steps, {table.run.nunique()} runs; mean ± 1 SE per window of steps)"
    return [plot_windows(frame, Path(out) / "multileaving-np2004.png", METRICS, title, levels)]
