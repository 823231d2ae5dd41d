"""Preference-based measures against nDCG@10 and PGC on the 63 TREC 2021 DL passage runs.

The thesis (Yan 2022, section 2.3) describes ppref and wpref (Carterette et al., ECIR 2008), rpref
(Carterette & Bennett, SIGIR 2008) and Sakai & Zeng's (SIGIR 2020) preference measures, but reports no
numbers for them; the one correlation it reports on these runs is Kendall's tau = 0.8150 between
nDCG@10 and PGC (section 5.4, Figure 5.1). This study scores every run with each preference measure
(:mod:`irbandits.measures.preference`) on the recorded crowd judgments and on preferences derived from
the official graded qrels, and gives Kendall's tau of each against nDCG@10 and PGC with a
topic-bootstrap interval (:func:`irbandits.measures.correlation.compare`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd

from irbandits.io import read_judgments, read_qrels, read_runs
from irbandits.measures import evaluate, mean_over_topics
from irbandits.measures.correlation import compare
from irbandits.studies.claims import Claim, doc_table, write_section
from irbandits.studies.claims import claim_rows as rows

BEGIN, END = "<!-- preference-measures:begin -->", "<!-- preference-measures:end -->"
NDCG, PGC = "nDCG@10", "PGC"
PUBLISHED_NDCG_PGC = 0.8150

# (label in the report, measure name at cutoff {k}, what it reads, which paper)
MEASURES = [
    ("ppref@{k}", "ppref:k={k}", "judgments", "Carterette et al. 2008"),
    ("wpref@{k}", "wpref:k={k}", "judgments", "Carterette et al. 2008"),
    ("rpref@{k}", "rpref:k={k}", "judgments", "Carterette & Bennett 2008"),
    ("ppref@{k} explicit", "ppref:k={k},pairs=explicit", "judgments", "Sakai & Zeng 2020 (pair split)"),
    ("ppref@{k} implicit", "ppref:k={k},pairs=implicit", "judgments", "Sakai & Zeng 2020 (pair split)"),
    ("wpref@{k} explicit", "wpref:k={k},pairs=explicit", "judgments", "Sakai & Zeng 2020 (pair split)"),
    ("wpref@{k} implicit", "wpref:k={k},pairs=implicit", "judgments", "Sakai & Zeng 2020 (pair split)"),
    ("pref_nDCG@{k}", "pref_ndcg:k={k}", "judgments", "Sakai & Zeng 2020 (preference gains)"),
    ("ppref@{k} (qrels)", "ppref:k={k},source=qrels", "qrels", "Carterette et al. 2008"),
    ("wpref@{k} (qrels)", "wpref:k={k},source=qrels", "qrels", "Carterette et al. 2008"),
]


def run_study(data: str | Path = "../shared/data", samples: int = 1000, seed: int = 0, k: int = 10) -> dict:
    """Evaluate the 63 runs with nDCG@10, PGC and every preference measure at cutoff ``k``; compare.

    Returns a dict with the per-topic ``table``, the per-run ``means``, the ``comparisons`` (one row per
    preference measure and reference: ``measure, source, paper, reference, topics, tau``, the BCa
    interval ``tau_low, tau_high``, the percentile interval ``pct_low, pct_high``, ``tau_ap``), the reference pair ``ndcg_pgc``, the number of preference ``pairs`` and ``ties``, and the
    ``seconds`` each part took.
    """
    from irbandits.measures.preference import judged_preferences

    data, seconds = Path(data), {}
    start = time.perf_counter()
    runs = read_runs(data / "trec-dl-2021-passage" / "runs")
    qrels = read_qrels(data / "trec-dl-2021-passage" / "qrels.txt")
    judgments = read_judgments(data / "human-preferences-dl21" / "judgments.txt")
    seconds["read"] = time.perf_counter() - start
    start = time.perf_counter()
    prefs = judged_preferences(judgments)
    names = {name.format(k=k): label.format(k=k) for label, name, _, _ in MEASURES}
    table = evaluate(runs, ["ndcg_cut_10", "pgc", *names], qrels=qrels, judgments=judgments)
    table["measure"] = table["measure"].replace({"ndcg_cut_10": NDCG, "pgc": PGC, **names})
    seconds["evaluate"] = time.perf_counter() - start
    start = time.perf_counter()
    rows = []
    for label, _, source, paper in MEASURES:
        for ref in (NDCG, PGC):
            row = compare(table, ref, label.format(k=k), samples=samples, seed=seed)
            pct = compare(table, ref, label.format(k=k), samples=samples, seed=seed, method="percentile")
            rows.append({"measure": row["b"], "source": source, "paper": paper, "reference": ref,
                         "topics": row["topics"], "tau": row["tau"], "tau_low": row["tau_low"],
                         "tau_high": row["tau_high"], "pct_low": pct["tau_low"], "pct_high": pct["tau_high"],
                         "tau_ap": row["tau_ap"]})
    comparisons = pd.DataFrame(rows)
    ndcg_pgc = compare(table, NDCG, PGC, samples=samples, seed=seed)
    seconds["compare"] = time.perf_counter() - start
    means = mean_over_topics(table).pivot(index="run", columns="measure", values="value")
    all_pairs = judgments.assign(a=judgments[["left", "right"]].min(axis=1), b=judgments[["left", "right"]].max(axis=1))
    return {"table": table, "means": means, "comparisons": comparisons, "ndcg_pgc": ndcg_pgc,
            "judgments": len(judgments), "pairs": len(prefs),
            "ties": all_pairs.groupby(["topic", "a", "b"]).ngroups - len(prefs),
            "runs": runs["run"].nunique(), "seconds": seconds, "samples": samples, "seed": seed, "k": k}


def _tau_figure(comp: pd.DataFrame, path: Path, published: float = PUBLISHED_NDCG_PGC) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(dict.fromkeys(comp["measure"]))
    fig, ax = plt.subplots(figsize=(7, 0.42 * len(labels) + 1.2))
    for j, (ref, color) in enumerate(((NDCG, "C0"), (PGC, "C3"))):
        part = comp[comp["reference"] == ref].set_index("measure").loc[labels]
        y = [i + (j - 0.5) * 0.3 for i in range(len(labels))]
        ax.hlines(y, part["pct_low"], part["pct_high"], color=color, lw=1, alpha=0.5)
        ax.hlines(y, part["tau_low"], part["tau_high"], color=color, lw=3)
        ax.plot(part["tau"], y, "o", color=color, label=f"against {ref}")
    ax.axvline(published, color="k", ls="--", lw=1, label=f"published tau(nDCG@10, PGC) = {published}")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("Kendall's tau over the 63 runs (thick: 95 % BCa, thin: percentile topic-bootstrap interval)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _gap(comp: pd.DataFrame) -> float:
    """How far the observed tau lies outside its BCa interval, at most (0 when always inside)."""
    return float(max(0.0, (comp["tau_low"] - comp["tau"]).max(), (comp["tau"] - comp["tau_high"]).max()))


def claim_rows(study: dict) -> list[Claim]:
    """The thesis's one correlation on these runs beside this run (rows of ``claims.csv``): tau(nDCG@10, PGC)
    = 0.8150 agrees when 0.8150 lies in the BCa interval. The other measures' taus have no published value."""
    ref = study["ndcg_pgc"]
    triples = [("Kendall's tau between nDCG@10 and PGC is 0.8150 (thesis Figure 5.1; the only correlation it gives "
                "on these runs)", f"{ref['tau']:.4f} (BCa 95 % [{ref['tau_low']:.3f}, {ref['tau_high']:.3f}])",
                ref["tau_low"] <= 0.8150 <= ref["tau_high"])]
    return rows("preference-measures", "Yan thesis, sections 2.3 and 5.4", triples,
                      f"{study['runs']} runs, {study['samples']:,} bootstrap samples (paper: the same 63 runs)")


def write_report(study: dict, figures: str | Path, doc: str | Path,
                 command: str = "irbandits reproduce preference-measures") -> Path:
    """Write the figures into the folder ``figures`` and this study's section of ``doc`` (replacing an
    earlier one, else appended). Returns ``doc``."""
    from irbandits.measures.figures import scatter

    figures, doc = Path(figures), Path(doc)
    figures.mkdir(parents=True, exist_ok=True)
    comp, k, s = study["comparisons"], study["k"], study["seconds"]
    rel = Path(os.path.relpath(figures.resolve(), doc.resolve().parent))
    _tau_figure(comp, figures / "preference-measures-tau.png")
    shown = [f"ppref@{k}", f"wpref@{k}", f"rpref@{k}", f"pref_nDCG@{k}"]
    by = comp.set_index(["measure", "reference"])
    scatter(study["means"], [(NDCG, m) for m in shown], figures / "preference-measures-scatter.png",
            [f"{m}: tau = {by.loc[(m, NDCG), 'tau']:.4f}" for m in shown], ncols=4)
    wide = comp.pivot(index="measure", columns="reference")
    order = list(dict.fromkeys(comp["measure"]))
    rows = []
    for m in order:
        r = comp[comp["measure"] == m].iloc[0]
        cells = [f"**{wide.loc[m, ('tau', ref)]:.4f}** | [{wide.loc[m, ('tau_low', ref)]:.3f}, "
                 f"{wide.loc[m, ('tau_high', ref)]:.3f}] | [{wide.loc[m, ('pct_low', ref)]:.3f}, "
                 f"{wide.loc[m, ('pct_high', ref)]:.3f}]" for ref in (NDCG, PGC)]
        rows.append(f"| {m} | {r.source} | {r.paper} | {cells[0]} | {cells[1]} | not reported |")
    ref = study["ndcg_pgc"]
    rows.append(f"| PGC | judgments | Luo et al. 2021 | **{ref['tau']:.4f}** | [{ref['tau_low']:.3f}, "
                f"{ref['tau_high']:.3f}] | | | | | {PUBLISHED_NDCG_PGC:.4f} (vs nDCG@10) |")
    crowd = comp[comp["source"] == "judgments"]
    n_judged = int(crowd.loc[crowd["reference"] == PGC, "topics"].max())
    n_graded = int(comp.loc[(comp["source"] == "qrels") & (comp["reference"] == NDCG), "topics"].max())
    closer = int((crowd[crowd["reference"] == PGC].set_index("measure")["tau"]
                  > crowd[crowd["reference"] == NDCG].set_index("measure")["tau"]).sum())
    between = int(((comp["pct_low"] <= comp["tau"]) & (comp["tau"] <= comp["tau_high"])).sum())
    outside = int(((comp["tau"] < comp["tau_low"]) | (comp["tau"] > comp["tau_high"])).sum())
    t = {(m, rf): v for (m, rf), v in by["tau"].items()}
    text = f"""{BEGIN}
## Preference-based measures on TREC 2021 DL (thesis sections 2.2-2.3)

`{command}` (seed {study['seed']}, {study['samples']} bootstrap samples, cutoff k = {k}).
{study['runs']} runs. The preference measures read the {study['judgments']:,} recorded crowd judgments, reduced to one
preference per judged pair by majority ({study['pairs']:,} pairs; {study['ties']} pairs with a tied vote state no
preference and are left out), over the {n_judged} judged topics the runs answer; the "(qrels)" rows derive the
preferences from the official graded qrels instead (higher grade preferred, {n_graded} topics). nDCG@10 is on the
official qrels, PGC on all the judgments. Kendall's tau-b over the runs with 95 % intervals from
{study['samples']} topic-bootstrap samples, BCa and percentile. Reading took {s['read']:.1f} s, evaluating all {len(order) + 2} measures
on all runs {s['evaluate']:.1f} s, the comparisons {s['compare']:.1f} s.

| measure | preferences | after | tau vs nDCG@10 | BCa 95 % | percentile 95 % | tau vs PGC | BCa 95 % | percentile 95 % | thesis |
|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

![tau of each preference measure against nDCG@10 and PGC]({rel / 'preference-measures-tau.png'})
![preference measures against nDCG@10, one point per run]({rel / 'preference-measures-scatter.png'})

The thesis's claim, as in `claims.csv`:

{doc_table(claim_rows(study))}

What the thesis reports and whether it agrees:

- The thesis names ppref, wpref, rpref and Sakai & Zeng's measures (section 2.3) but computes none of
  them; its only correlation on these runs is tau(nDCG@10, PGC) = 0.8150, reproduced here as
  {ref['tau']:.4f} (the best-item study above explains the gap: topics, PGC's open choices).
- Every preference measure on the crowd judgments ranks the runs like nDCG@10 and PGC: tau between
  {crowd['tau'].min():.3f} and {crowd['tau'].max():.3f}, the lowest interval end {crowd['pct_low'].min():.3f}.
  {closer} of the {crowd['measure'].nunique()} agree more with PGC, which reads the same judgments, than with nDCG@10,
  which reads the graded qrels: ppref@{k} {t[(f'ppref@{k}', PGC)]:.3f} vs {t[(f'ppref@{k}', NDCG)]:.3f},
  rpref@{k} {t[(f'rpref@{k}', PGC)]:.3f} vs {t[(f'rpref@{k}', NDCG)]:.3f}.
- The same measures on preferences derived from the graded qrels agree with nDCG@10 almost completely
  (ppref@{k} {t[(f'ppref@{k} (qrels)', NDCG)]:.3f}, wpref@{k} {t[(f'wpref@{k} (qrels)', NDCG)]:.3f}): the measures
  themselves rank runs as nDCG does, so the lower taus on the crowd judgments come from the labels.
- Of Carterette & Bennett's three, rpref agrees most ({t[(f'rpref@{k}', NDCG)]:.3f} with nDCG@10) and ppref least
  ({t[(f'ppref@{k}', NDCG)]:.3f}); rpref divides by all the pairs of a topic, so a run also gains by ordering many
  of them. pref_nDCG@{k} gives {t[(f'pref_nDCG@{k}', NDCG)]:.3f}.
- Sakai & Zeng's pair split: ppref@{k} on the implicit pairs only (one passage in the top {k}, the other not)
  gives {t[(f'ppref@{k} implicit', NDCG)]:.3f} against nDCG@10, on the explicit pairs only (both in the top {k})
  {t[(f'ppref@{k} explicit', NDCG)]:.3f}, on all pairs {t[(f'ppref@{k}', NDCG)]:.3f}: as they found with users' SERP
  preferences, the implicit preferences carry most of the signal.
- *Bootstrap.* Resampled topic sets repeat topics, which adds noise to the run means, so most bootstrap
  taus fall below the observed one: the observed tau sits near the top of the percentile interval, and BCa,
  correcting that shift, puts it near the bottom of its interval ({outside} of the {len(comp)} BCa intervals
  leave the observed tau out, by at most {_gap(comp):.3f}). The observed tau lies between the percentile
  interval's lower end and the BCa interval's upper end in {between} of the {len(comp)} rows.
- Choices the papers leave open (see `irbandits.measures.preference`): a pair counts when one or both
  passages are in the top k, unranked passages below all ranked ones, wpref's weight 1/(log2 r + 1) at the
  higher rank r (the SIGIR 2008 workshop script); no transitive closure; pref_nDCG's gains are this
  project's reading of Sakai & Zeng's preference-to-gain measures, whose exact definitions were not at hand.
{END}
"""
    return write_section(doc, BEGIN, END, text)
