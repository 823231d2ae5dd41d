"""Online learning to rank (issue 27): PDGD against DBGD and MGD (Oosterhuis & de Rijke, CIKM 2018),
MGD as its candidates grow (Schuth et al., WSDM 2016), and DBGD with candidate preselection (Hofmann,
Schuth, Whiteson & de Rijke, WSDM 2013), on the learning-to-rank data of ``../shared/data/ltr``.

    irbandits reproduce oltr            # 5,000 impressions x 5 runs (1.5 minutes on 2 cores)
    irbandits reproduce oltr --full     # the papers' 10,000 impressions x 25 runs (6 minutes on 2 cores)

Data: NP2004 (LETOR 3.0 fold 1; users' queries from ``vali``, offline NDCG@10 on ``test``; 15
queries each, about 1,000 documents and one relevant page per query) and the LightGBM LambdaRank
sample (``rank.train`` / ``rank.test``: 201 and 50 queries of 6-27 documents, 300 features, grades
0-4). Features are min-max normalised per query (:func:`~irbandits.oltr.data.normalize_queries`, the
papers' LETOR ``QueryLevelNorm``); the ``scale`` grid also runs NP2004 as stored (normalised over the
whole set), where PDGD's Plackett-Luce lists stay nearly uniform (see ``docs/guides/oltr.md``).

Grids (each cell's runs resume from ``out/<grid>-<dataset>-<clicks>/``; another scale there replaces them):

- ``headline``: DBGD, MGD (n = 9) and PDGD under perfect, navigational and informational clicks on both sets;
- ``top100``: the same on NP2004 cut to each query's 100 documents of highest BM25 (the papers' data have
  tens to a hundred documents a query where they are not LETOR's .gov sets);
- ``candidates``: DBGD and MGD with n = 1, 4, 9, 19 on NP2004, informational clicks;
- ``preselection``: DBGD and DBGD-CPS on NP2004, informational clicks;
- ``scale``: DBGD and PDGD on NP2004 as stored and normalised per query, perfect clicks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.clicks.ltr import read_ltr
from irbandits.oltr.data import normalize_queries, top_documents
from irbandits.oltr.runs import plot_learning, simulate_learners, summarize_learners
from irbandits.oltr.simulation import simulate_learner
from irbandits.studies.claims import Claim, markdown
from irbandits.studies.claims import claim_rows as rows
from irbandits.studies.claims import scale as scale_text
from irbandits.studies.estimate import Work

NAME = "oltr"
PAPER = "Oosterhuis & de Rijke CIKM 2018; Schuth et al. WSDM 2016; Hofmann et al. WSDM 2013"
PAPER_SCALE = "10,000 impressions x 25 runs"
DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "ltr"
DEFAULT = dict(horizon=5_000, runs=5)
FULL = dict(horizon=10_000, runs=25)
CLICKS = ("perfect", "navigational", "informational")
HEADLINE = ("DBGD", "MGD:n=9", "PDGD")
CANDIDATES = ("DBGD", "MGD:n=1", "MGD:n=4", "MGD:n=9", "MGD:n=19")
PRESELECTION = ("DBGD", "DBGD-CPS")
TOP, BM25 = 100, 24   # NP2004 cut to each query's 100 documents of highest BM25 (LETOR 3.0 feature 25)
SETS = {"NP2004": ("letor3-np2004-fold1/vali.txt.gz", "letor3-np2004-fold1/test.txt.gz"),
        "LightGBM": ("lightgbm-lambdarank-sample/rank.train", "lightgbm-lambdarank-sample/rank.test")}


def cells(horizon: int, runs: int) -> list[tuple]:
    """(grid, dataset, normalised, click model, learners, impressions, runs) of every cell."""
    out = [("headline", d, True, c, HEADLINE, horizon, runs) for d in SETS for c in CLICKS]
    out += [("top100", "NP2004 top 100", True, c, HEADLINE, horizon, runs) for c in CLICKS]
    out.append(("candidates", "NP2004", True, "informational", CANDIDATES, horizon, runs))
    out.append(("preselection", "NP2004", True, "informational", PRESELECTION, horizon, runs))
    out.append(("scale", "NP2004 as stored", False, "perfect", ("DBGD", "PDGD"), horizon, runs))
    return out


def _data(dataset: str, normalised: bool, data: Path):
    sets = [read_ltr(Path(data) / f) for f in SETS[dataset.split()[0]]]
    if dataset.endswith(f"top {TOP}"):
        sets = [top_documents(d, BM25, TOP) for d in sets]
    return tuple(normalize_queries(d) for d in sets) if normalised else tuple(sets)


def run_study(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], seed: int = 0, jobs: int = 1,
              out: str | Path | None = None, progress: bool = False, data: str | Path = DATA) -> pd.DataFrame:
    """Every cell of :func:`cells`: the tidy table of :func:`~irbandits.oltr.runs.simulate_learners`
    with ``grid``, ``dataset``, ``click_model`` in front (``every``: a tenth of the impressions)."""
    parts = []
    for grid, dataset, normalised, clicks, learners, T, R in cells(horizon, runs):
        train, test = _data(dataset, normalised, data)
        where = None if out is None else Path(out) / f"{grid}-{dataset.replace(' ', '-')}-{clicks}"
        t = simulate_learners(list(learners), train, test, clicks, T, R, max(1, T // 10), seed, jobs, out=where,
                              progress=progress, settings=dict(dataset=dataset, normalised=normalised), force=True)
        parts.append(t.assign(grid=grid, dataset=dataset, click_model=clicks))
    table = pd.concat(parts, ignore_index=True)
    return table[["grid", "dataset", "click_model"] + [c for c in table.columns if c not in ("grid", "dataset",
                                                                                             "click_model")]]


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell and learner: runs, impressions, final offline NDCG@10 and online performance (mean, SE)."""
    keys = ["grid", "dataset", "click_model"]
    return pd.concat([summarize_learners(g).assign(**dict(zip(keys, k)))
                      for k, g in table.groupby(keys, sort=False)], ignore_index=True)[
        keys + ["algorithm", "runs", "impressions", "offline_ndcg_mean", "offline_ndcg_se", "online_ndcg_mean",
                "online_ndcg_se"]]


def _early(table: pd.DataFrame, grid: str) -> pd.Series:
    """Mean offline NDCG@10 per learner at the cell's first checkpoint after 0 (a tenth of the impressions)."""
    t = table[table.grid == grid]
    first = sorted(t.impression.unique())[1]
    return t[t.impression == first].groupby("algorithm", sort=False).offline_ndcg.mean()


def claims(table: pd.DataFrame) -> list[tuple[str, str, bool]]:
    s = summary(table).set_index(["grid", "dataset", "click_model", "algorithm"]).sort_index()
    out = []
    for grid, col, what in (("headline", "offline_ndcg_mean", "offline NDCG@10"),
                            ("headline", "online_ndcg_mean", "online performance"),
                            ("top100", "offline_ndcg_mean", "offline NDCG@10 on NP2004 cut to 100 documents a query"),
                            ("top100", "online_ndcg_mean", "online performance on NP2004 cut to 100 documents a query")):
        wins, notes = 0, []
        head = s.loc[grid]
        for (d, c), g in head.groupby(level=["dataset", "click_model"], sort=False):
            v = g.droplevel([0, 1])[col]
            ok = v["PDGD"] > max(v["DBGD"], v["MGD:n=9"])
            wins += ok
            fmt = "{:.3f}" if col.startswith("off") else "{:.0f}"
            notes.append(f"{d} {c}: {fmt.format(v['PDGD'])} vs {fmt.format(v['DBGD'])} / {fmt.format(v['MGD:n=9'])}"
                         + ("" if ok else " (not above)"))
        cellsn = head.index.droplevel(2).unique().size
        out.append((f"PDGD above DBGD and MGD in {what} under perfect, navigational and informational clicks",
                    f"{wins} of {cellsn} cells (PDGD vs DBGD / MGD): " + "; ".join(notes), wins == cellsn))
    c = s.loc[("candidates", "NP2004", "informational")]
    on = [c.loc[a, "online_ndcg_mean"] for a in CANDIDATES[1:]]
    early = _early(table, "candidates")
    out.append(("MGD learns faster as its candidates grow (n = 1, 4, 9, 19): online performance rises with n",
                "NP2004 informational, online: " + ", ".join(f"n={a.split('=')[1]} {v:.0f}" for a, v in
                                                              zip(CANDIDATES[1:], on))
                + f" (DBGD {c.loc['DBGD', 'online_ndcg_mean']:.0f}); offline NDCG@10 at a tenth of the impressions: "
                + ", ".join(f"n={a.split('=')[1]} {early[a]:.3f}" for a in CANDIDATES[1:]),
                bool(np.all(np.diff(on) > 0))))
    p = s.loc[("preselection", "NP2004", "informational")]
    early = _early(table, "preselection")
    ok = early["DBGD-CPS"] > early["DBGD"] and p.loc["DBGD-CPS", "online_ndcg_mean"] > p.loc["DBGD", "online_ndcg_mean"]
    out.append(("Candidate preselection speeds DBGD up (higher offline NDCG@10 early, higher online performance)",
                f"NP2004 informational, {int(p.impressions.iloc[0]):,} impressions x {int(p.runs.iloc[0])} runs: "
                f"offline at a tenth {early['DBGD-CPS']:.3f} vs {early['DBGD']:.3f}, final "
                f"{p.loc['DBGD-CPS', 'offline_ndcg_mean']:.3f} vs {p.loc['DBGD', 'offline_ndcg_mean']:.3f}; online "
                f"{p.loc['DBGD-CPS', 'online_ndcg_mean']:.0f} vs {p.loc['DBGD', 'online_ndcg_mean']:.0f}", bool(ok)))
    return out


def claim_rows(table: pd.DataFrame) -> list[Claim]:
    """The claims of :func:`claims` as rows of ``claims.csv``, with this run's scale."""
    h = table[table.grid == "headline"]
    return rows(NAME, PAPER, claims(table), scale_text(int(h.impression.max()), h.run.nunique(), PAPER_SCALE,
                                                       "impressions"))


def report(table: pd.DataFrame) -> str:
    """Markdown: every cell's final offline NDCG@10 and online performance (mean +- SE), then the claims."""
    s = summary(table)
    lines = ["Final offline NDCG@10 on the test set and online performance (discounted cumulative NDCG@10 of the "
             "lists shown, discount 0.9995), mean ± SE over runs; features normalised per query unless 'as stored'.",
             "", "| grid | data | clicks | learner | runs x impressions | offline NDCG@10 | online |",
             "|---|---|---|---|---|---|---|"]
    for r in s.itertuples():
        lines.append(f"| {r.grid} | {r.dataset} | {r.click_model} | {r.algorithm} | {r.runs} x {r.impressions:,} | "
                     f"{r.offline_ndcg_mean:.3f} ± {r.offline_ndcg_se:.3f} | {r.online_ndcg_mean:.1f} ± "
                     f"{r.online_ndcg_se:.1f} |")
    lines += ["", markdown(claim_rows(table), "papers")]
    return "\n".join(lines)


def figures(table: pd.DataFrame, out: str | Path) -> list[Path]:
    """Offline NDCG@10 curves of every cell, and online performance of the candidates grid."""
    out = Path(out)
    paths = []
    for (grid, d, c), g in table.groupby(["grid", "dataset", "click_model"], sort=False):
        stem = f"{grid}-{d.replace(' ', '-')}-{c}"
        paths.append(plot_learning(g, "offline_ndcg", out / f"{stem}-offline.png",
                                   f"{grid}: {d}, {c} clicks ({g.run.nunique()} runs; ± 1 SE)"))
        if grid == "candidates":
            paths.append(plot_learning(g, "online_ndcg", out / f"{stem}-online.png",
                                       f"{grid}: {d}, {c} clicks ({g.run.nunique()} runs; ± 1 SE)"))
    return paths


def plan(horizon: int = DEFAULT["horizon"], runs: int = DEFAULT["runs"], data: str | Path = DATA, seed: int = 0,
         **_) -> list[Work]:
    """The runs of :func:`run_study` at this scale, for ``--dry-run`` (a step: one impression)."""
    works = []
    for grid, dataset, normalised, clicks, learners, T, R in cells(horizon, runs):
        train, test = _data(dataset, normalised, data)
        for spec in learners:
            def probe(n, spec=spec, train=train, clicks=clicks):
                return simulate_learner(spec, train, None, clicks, impressions=n, every=n, seed=seed)
            works.append(Work(f"{grid} {dataset} {clicks}", spec, int(T), R, probe, key=(spec, dataset)))
    return works
