"""The lecture slides (seed 004, "Absolute Metrics" and "Results: Pairwise Preferences", after
Radlinski et al. 2008 and Chapelle et al. 2012): absolute click metrics in an A/B test against
interleaving, by the impressions each needs to find the better of two rankers.

    irbandits reproduce ab-vs-interleaving            # experiments of up to 100,000 impressions, 40 repetitions
    irbandits reproduce ab-vs-interleaving --full     # up to 10^6 impressions, 100 repetitions

(``--horizon`` sets the impressions of one experiment, ``--runs`` the repetitions.) The slides
report Yahoo! and arXiv logs, which are not in ``../shared/data``; here the users are the click
simulator (navigational cascade, top-10 lists) on NP2004 (LETOR 3.0 fold 1 test, 64 feature
rankers, 15 queries with one relevant page each). The *true* order of two rankers is that of the
NDCG@10 of their own lists (the relevance labels, :func:`~irbandits.clicks.online_metrics.ranker_quality`).
Pairs: the best ranker against those at places :data:`PLACES` of that order (closest first).

Tests (:mod:`irbandits.clicks.sensitivity`): an A/B test of each absolute metric (abandonment,
clicks per impression, clicks@1, max and mean reciprocal rank of the clicks; z-test of the two
means) and an interleaving experiment of each method (team-draft, balanced, probabilistic; sign test
of the wins). An impression is one user shown one list: an A/B test of N impressions shows each
ranker to N/2 users. Two definitions of the impressions a test *needs* to find the better ranker
with 95 % confidence, both at level 0.05 (two-sided) and power 0.8:

- **power analysis** (the form of :mod:`irbandits.clicks.stats`): the effect and its variance
  (A/B), or the win share and tie rate (interleaving), pooled over all repetitions at the largest N,
  put into :func:`~irbandits.clicks.stats.ab_impressions_needed` or
  :func:`~irbandits.clicks.stats.impressions_needed`;
- **seeded repetitions**: the smallest N of the grid (1-2-5 steps from 10) from which on at least
  80 % of the repetitions' tests reject at 0.05 *in the direction of the better ranker*; beyond the
  largest N it is not measured.

A test whose pooled effect favours the worse ranker never finds the better one ("wrong way"); one
whose pooled effect is not significant at 0.05 is "unresolved" (its power-analysis number rests on
an effect within noise).
"""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pandas as pd
from scipy import stats as sps

from irbandits.clicks.ltr import read_ltr
from irbandits.clicks.online_metrics import ranker_quality
from irbandits.clicks.sensitivity import ABSOLUTE, ab_tests, interleaving_tests, simulate_ab, simulate_interleaving
from irbandits.clicks.stats import ab_impressions_needed, impressions_needed, sign_test
from irbandits.studies.claims import Claim, markdown, scale
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.estimate import Work
from irbandits.studies.online import NP2004

DATA = NP2004
DEFAULT = dict(horizon=100_000, runs=40)
FULL = dict(horizon=1_000_000, runs=100)
NAME = "ab-vs-interleaving"
PAPER = "lecture slides (seed 004), after Radlinski et al. 2008 and Chapelle et al. 2012"  # the claims' source
PAPER_SCALE = "Yahoo! and arXiv logs"  # the paper's horizon x runs
CLICKS = "navigational"
IMPRESSIONS = 100_000          # per ranker, for the true order (NDCG@10 of its own lists)
PLACES = (2, 3, 5, 9, 17, 33)  # the best ranker against the rankers at these places of the true order
METHODS = ("team-draft", "balanced", "probabilistic")
ALPHA, POWER = 0.05, 0.8


def grid(horizon: int) -> np.ndarray:
    """10, 20, 50, 100, ... up to ``horizon``, and ``horizon``."""
    steps = [m * 10**k for k in range(1, 12) for m in (1, 2, 5) if m * 10**k < horizon]
    return np.array(steps + [int(horizon)], dtype=np.int64)


def pairs(quality: pd.DataFrame, places=PLACES) -> list[tuple[int, int]]:
    """(better, worse): the ranker with the highest NDCG@10 against the rankers at ``places`` (1 = the
    best) of the order by NDCG@10 (ties by index)."""
    order = quality.sort_values("ndcg", ascending=False, kind="stable").ranker.to_numpy()
    return [(int(order[0]), int(order[p - 1])) for p in places if p <= len(order)]


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, data: str | Path = DATA, places=PLACES,
              methods=METHODS) -> pd.DataFrame:
    """Every test on every pair; one row per pair, test, repetition and number of impressions (columns
    pair, better, worse, kind, metric, repetition, impressions, effect, variance or wins/losses/ties,
    p_value, detected). ``table.attrs`` has the rankers' names and NDCG@10. Written to
    ``out/ab-vs-interleaving.parquet`` when ``out`` is given; ``progress`` is not used."""
    rankers = read_ltr(data).rankers()
    quality = ranker_quality(rankers, CLICKS, IMPRESSIONS, seed)
    steps, threads = grid(horizon), numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(jobs), numba.config.NUMBA_NUM_THREADS)))
    try:
        parts = []
        for i, (a, b) in enumerate(pairs(quality, places)):
            key = f"{rankers.names[a]} vs {rankers.names[b]}"
            ss = np.random.SeedSequence([seed, i])
            ab_seed, *il_seeds = ss.spawn(1 + len(methods))
            tests = [ab_tests(simulate_ab(rankers, CLICKS, a, b, steps, runs, ab_seed)).assign(kind="A/B")]
            tests += [interleaving_tests(simulate_interleaving(rankers, CLICKS, m, a, b, steps, runs, s)).assign(
                kind="interleaving") for m, s in zip(methods, il_seeds)]
            parts.append(pd.concat(tests, ignore_index=True).assign(pair=key, better=rankers.names[a],
                                                                    worse=rankers.names[b]))
    finally:
        numba.set_num_threads(threads)
    table = pd.concat(parts, ignore_index=True)
    table["detected"] = (table.p_value < ALPHA) & (table.effect > 0)
    first = ["pair", "better", "worse", "kind", "metric", "repetition", "impressions"]
    table = table[first + [c for c in table.columns if c not in first]]
    table.attrs.update(names=list(rankers.names), ndcg=quality.ndcg.tolist(), ndcg_se=quality.ndcg_se.tolist())
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        table.to_parquet(Path(out) / "ab-vs-interleaving.parquet", index=False)
    return table


def needed(table: pd.DataFrame) -> pd.DataFrame:
    """Per pair and test: the pooled effect, its p-value, ``power`` (impressions by power analysis;
    NaN the wrong way), ``seeded`` (by the repetitions; NaN beyond the largest N), ``direction``
    ("right", "wrong way" or "unresolved")."""
    N = int(table.impressions.max())
    rows = []
    for (pair, kind, metric), g in table.groupby(["pair", "kind", "metric"], sort=False):
        last = g[g.impressions == N]
        effect = float(last.effect.mean())
        if kind == "A/B":
            variance = float(last.variance.mean())
            known = np.isfinite(variance) and variance > 0
            p = float(2 * sps.norm.sf(abs(effect) / np.sqrt(variance / (N * len(last))))) if known else 1.0
            power = ab_impressions_needed(effect, variance, ALPHA, POWER) if effect > 0 and known else np.nan
        else:
            w, l, t = (int(last[c].sum()) for c in ("wins", "losses", "ties"))
            p, tie_rate = sign_test(w, l), t / (w + l + t)
            power = impressions_needed(effect, ALPHA, POWER, tie_rate) if 0 < effect < 0.5 * (1 - tie_rate) else np.nan
        share = g.groupby("impressions").detected.mean()
        ok = share >= POWER
        from_here = ok[::-1].cumprod()[::-1]        # detected by >= 80 % at this N and every larger one
        seeded = float(from_here[from_here == 1].index.min()) if from_here.any() else np.nan
        direction = "wrong way" if effect <= 0 else ("right" if p < ALPHA else "unresolved")
        rows.append(dict(pair=pair, kind=kind, metric=metric, effect=effect, p_value=p, power=power, seeded=seeded,
                         direction=direction))
    return pd.DataFrame(rows)


def _cell(r, N: int, first: int) -> str:
    if r.direction == "wrong way":
        return f"wrong way (p = {r.p_value:.2g})"
    seeded = f"{r.seeded:,.0f}" if np.isfinite(r.seeded) else f"> {N:,}"
    seeded = f"≤ {first}" if r.seeded == first else seeded
    text = f"{r.power:,.0f} ({seeded})"
    return text + " unresolved" if r.direction == "unresolved" else text


def _gap(table: pd.DataFrame, pair: str) -> str:
    names, ndcg = table.attrs.get("names"), table.attrs.get("ndcg")
    if not names:
        return pair
    row = table[table.pair == pair].iloc[0]
    a, b = names.index(row.better), names.index(row.worse)
    return f"{row.better} ({ndcg[a]:.3f}) vs {row.worse} ({ndcg[b]:.3f})"


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """(the slides' claim, this run's numbers, whether they agree)."""
    n = needed(table)
    out = []
    absolute = [m for m in ABSOLUTE if m in set(n.metric)]
    inter = [m for m in METHODS if m in set(n.metric)]
    if absolute and inter:
        ratios, ok = [], True
        for pair, g in n.groupby("pair", sort=False):
            g = g.set_index("metric")
            best_ab = g.loc[absolute].power.min()   # NaN only when every metric goes the wrong way
            best_il = g.loc[inter].power.min()
            ok &= bool(np.isfinite(best_il) and (not np.isfinite(best_ab) or best_il < best_ab))
            ratios.append(best_ab / best_il if np.isfinite(best_ab) and np.isfinite(best_il) else np.inf)
        out.append(("Interleaving is more sensitive (Chapelle et al. 2012): it needs fewer impressions than the "
                    "absolute metrics", "best absolute metric / best interleaving method, per pair: "
                    + ", ".join("∞" if not np.isfinite(r) else f"{r:.2g}x" for r in ratios), ok))
    if absolute:
        bad = {m: int((n[n.metric == m].direction != "right").sum()) for m in absolute}
        out.append(("Absolute metrics: none of them reliably reflects the expected order",
                    f"pairs (of {n.pair.nunique()}) where the metric goes the wrong way or stays unresolved: "
                    + ", ".join(f"{m} {k}" for m, k in bad.items()), all(k > 0 for k in bad.values())))
    for method in inter:
        g = n[n.metric == method]
        right = int((g.direction == "right").sum())
        out.append((f"Interleaving ({method}): the better ranker wins, significantly, in every pair",
                    f"{right} of {len(g)} pairs", right == len(g)))
    return out


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], data: str | Path = DATA, places=PLACES,
         methods=METHODS, seed: int = 0, **_) -> list[Work]:
    """The experiments of :func:`run_study` at this scale, for ``--dry-run`` (:mod:`irbandits.studies.estimate`):
    per pair, one A/B test and one interleaving experiment per method, each ``runs`` repetitions of
    ``horizon`` impressions (a step: one impression). The probes show rankers 0 and 1 (the cost of an
    impression hardly depends on the pair); the rankers' own quality (which picks the pairs) is not counted."""
    rankers = read_ltr(data).rankers()
    pairs = [f"best vs place {p}" for p in places if p <= rankers.K]

    def ab(n):
        return simulate_ab(rankers, CLICKS, 0, 1, [n], 1, seed)

    def inter(method):
        return lambda n: simulate_interleaving(rankers, CLICKS, method, 0, 1, [n], 1, seed)

    tests = [("A/B", ab)] + [(m, inter(m)) for m in methods]
    return [Work(pair, name, int(horizon), runs, probe, key=name) for pair in pairs for name, probe in tests]


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    return rows(NAME, PAPER, claims(table),
                scale(table.impressions.max(), table.repetition.nunique(), PAPER_SCALE, "impressions", "repetitions"))


def report(table: pd.DataFrame) -> str:
    """Markdown: impressions needed per pair and test, then the slides' claims beside this run's numbers."""
    N, R = int(table.impressions.max()), table.repetition.nunique()
    n = needed(table)
    tests = list(dict.fromkeys(n.metric))
    lines = [f"NP2004 (64 feature rankers, 15 queries), navigational clicks on top-10 lists; experiments of up to "
             f"{N:,} impressions, {R} seeded repetitions per pair and test (the slides: Yahoo! and arXiv logs). "
             "True order: NDCG@10 of each ranker's own lists. Each cell: impressions needed by power analysis "
             "(level 0.05 two-sided, power 0.8), in brackets the smallest N from which 80 % of the repetitions "
             "detect the better ranker at 0.05.", "",
             "| pair (NDCG@10) | " + " | ".join(tests) + " |", "|---|" + "---|" * len(tests)]
    first = int(table.impressions.min())
    for pair, g in n.groupby("pair", sort=False):
        cells = {r.metric: _cell(r, N, first) for r in g.itertuples()}
        lines.append(f"| {_gap(table, pair)} | " + " | ".join(cells[t] for t in tests) + " |")
    lines += ["", "Pooled effects (all repetitions at the largest N; > 0 favours the better ranker): the difference of "
              "the two rankers' means for an absolute metric, the win share with ties as half minus 1/2 for "
              "interleaving (in brackets the share of ties).", "",
              "| pair | " + " | ".join(tests) + " |", "|---|" + "---|" * len(tests)]
    ties = table[table.impressions == N].groupby(["pair", "metric"]).ties.sum() / (
        table[table.impressions == N].groupby(["pair", "metric"])[["wins", "losses", "ties"]].sum().sum(axis=1))
    for pair, g in n.groupby("pair", sort=False):
        cells = {r.metric: f"{r.effect:+.4f}" + (f" ({ties[pair, r.metric]:.0%})" if r.kind == "interleaving" else "")
                 for r in g.itertuples()}
        lines.append(f"| {pair} | " + " | ".join(cells[t] for t in tests) + " |")
    lines += ["", markdown(claim_rows(table), "slides")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    from irbandits.plots import plot_sensitivity

    n = needed(table)
    labels = {pair: _gap(table, pair).replace(" vs ", "\nvs ") for pair in n.pair.unique()}
    shares = table.groupby(["pair", "metric", "impressions"], sort=False).detected.mean().reset_index()
    return plot_sensitivity(n.assign(pair=n.pair.map(labels)), shares.assign(pair=shares.pair.map(labels)),
                            Path(out), "ab-vs-interleaving", POWER)
