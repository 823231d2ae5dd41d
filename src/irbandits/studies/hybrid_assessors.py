"""Beyond the seeds (issue 25): automatic assessors in front of people, replayed on the TREC 2021 DL crowd
judgments. A simulated judge of accuracy a and position bias b answers first inside the top-k process
(:func:`irbandits.judging.hybrid.hybrid_replay`: people answer from the recorded judgments, the hybrid rule
routes unsure and audited pairs to them and cuts the judge off when its audited agreement with them falls
below the threshold); each run is compared with the all-human replay of the same seed
(:func:`irbandits.judging.replay.replay`) on the people's judgments needed and on the agreement of the best
items with the released Combined I+II set (one extra final phase, both final phases scored, as
:func:`~irbandits.judging.replay.replay_agreement`). The claims are the issue's expectations, checked.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from irbandits.io import read_judgments, read_qrels
from irbandits.judging.hybrid import AUDIT, THRESHOLD, SimulatedJudge, Truth, hybrid_replay
from irbandits.judging.replay import agreement, recorded_pools, replay
from irbandits.studies.claims import Claim
from irbandits.studies.claims import claim_rows as rows

ACCURACIES = (0.6, 0.7, 0.8, 0.9, 0.95)
BIASES = (0.0, 0.1, 0.3)
QUICK, FULL = 10, 100  # runs (seeds) per cell: ~1 and ~10 minutes on one core
PAPER = "beyond the seeds: issue 25's expectations"
COMBINED = "Combined-I+II.qrels"


def run_study(data: str | Path = "../shared/data/human-preferences-dl21", runs: int = QUICK, seed: int = 0,
              accuracies=ACCURACIES, biases=BIASES, unsure: float = 0.0, audit: float = AUDIT,
              threshold: float = THRESHOLD) -> pd.DataFrame:
    """One row per run and judge (``a`` and ``b`` NaN: the all-human replay): ``run``, ``humans`` (people's
    judgments), ``automatic`` (pairs the judge was asked), ``counted`` (its answers that counted), ``cutoff``
    (whether it was cut off), ``cutoff_at`` (the request that did it), ``share`` and ``same`` (agreement with
    Combined I+II: topics sharing a best item, identical best sets)."""
    data = Path(data)
    judgments = read_judgments(data / "judgments.txt")
    combined = read_qrels(data / COMBINED)
    pools, truth = recorded_pools(judgments), Truth(judgments)
    out = []
    for r, s in enumerate(np.random.SeedSequence(seed).generate_state(runs)):
        proc = replay(pools, judgments, seed=int(s), extra=1)
        out.append(dict(a=np.nan, b=np.nan, run=r, humans=sum(len(t.log) for t in proc.topics.values()),
                        automatic=0, counted=0, cutoff=False, cutoff_at=np.nan, **_agree(proc, combined)))
        for a in accuracies:
            for b in biases:
                proc, rule = hybrid_replay(pools, judgments, SimulatedJudge(a, b, unsure), seed=int(s), audit=audit,
                                           threshold=threshold, truth=truth, extra=1)
                out.append(dict(a=a, b=b, run=r, humans=rule.humans, automatic=rule.automatic, counted=rule.counted,
                                cutoff=rule.cutoff is not None, cutoff_at=rule.cutoff, **_agree(proc, combined)))
    df = pd.DataFrame(out)
    df.attrs.update(runs=runs, seed=seed, unsure=unsure, audit=audit, threshold=threshold)
    return df


def _agree(proc, combined: pd.DataFrame) -> dict:
    found = agreement(proc.best(), combined)
    return dict(share=found["share"], same=found["same"])


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per judge (and the all-human row first, ``a`` and ``b`` empty): runs, people's judgments (mean, SE),
    ``saved`` (1 - their mean / the all-human mean), automatic pairs, agreement with Combined I+II (``share``
    mean and SE, ``same``), ``share_diff`` (paired with the all-human run of the same seed; mean and SE) and
    the cut-off rate."""
    base = df[df.a.isna()].set_index("run")
    out = []
    for (a, b), g in [((np.nan, np.nan), df[df.a.isna()])] + list(df[df.a.notna()].groupby(["a", "b"])):
        diff = g.set_index("run").share - base.share
        n = len(g)
        out.append(dict(a=a, b=b, runs=n, humans=g.humans.mean(), humans_se=g.humans.std() / np.sqrt(n),
                        saved=1 - g.humans.mean() / base.humans.mean(), automatic=g.automatic.mean(),
                        share=g.share.mean(), share_se=g.share.std() / np.sqrt(n), same=g.same.mean(),
                        share_diff=diff.mean(), share_diff_se=diff.std() / np.sqrt(n), cutoff=g.cutoff.mean()))
    return pd.DataFrame(out).round(4)


def _row(t: pd.DataFrame, a: float, b: float) -> pd.Series:
    return t[(t.a == a) & (t.b == b)].iloc[0]


def claim_rows(t: pd.DataFrame, attrs: dict) -> list[Claim]:
    """The issue's expectations against :func:`table` (``attrs``: the run's settings): "no worse within noise"
    is a paired difference in agreement above minus two standard errors, "costs little" at most 0.05 of the
    topics."""
    base = t[t.a.isna()].iloc[0]
    triples = []

    def measured(r: pd.Series) -> str:
        return (f"saves {r.saved:.0%} of {base.humans:,.0f} people's judgments ({r.humans:,.0f} left); agreement "
                f"with Combined I+II {r.share:.1%} against all-human {base.share:.1%} (paired difference "
                f"{r.share_diff:+.1%} +- {2 * r.share_diff_se:.1%}); cut off in {r.cutoff:.0%} of runs")

    good = _row(t, 0.9, 0.0)
    triples.append(("a judge of accuracy 0.9 and no position bias saves most people's judgments, with agreement "
                    "no worse than all-human (within noise)", measured(good),
                    bool(good.saved > 0.5 and good.share_diff >= -2 * good.share_diff_se)))
    poor = _row(t, 0.6, 0.0)
    triples.append(("a judge of accuracy 0.6 is cut off and costs little agreement (at most 5 % of the topics)",
                    measured(poor), bool(poor.cutoff >= 0.9 and poor.share_diff >= -0.05)))
    unbiased = t[t.b == 0].sort_values("a")
    triples.append(("with no position bias, the more accurate the judge, the more people's judgments it saves",
                    ", ".join(f"a {r.a:g}: {r.saved:.0%}" for r in unbiased.itertuples()),
                    bool(unbiased.saved.is_monotonic_increasing)))
    biased = _row(t, 0.95, max(t.b.dropna()))
    triples.append((f"a position bias of {biased.b:g} costs a 0.95 judge agreement", measured(biased),
                    bool(biased.share < _row(t, 0.95, 0.0).share)))
    return rows("hybrid-assessors", PAPER, triples,
                f"{attrs['runs']} replays per judge and all-human (seed {attrs['seed']}); audit {attrs['audit']:g}, "
                f"cut-off below {attrs['threshold']:g}, unsure {attrs['unsure']:g}; 10,654-judgment campaigns "
                "(paper: none)")


def plot(t: pd.DataFrame, path: str | Path) -> Path:
    """People's judgments saved and agreement with Combined I+II against the judge's accuracy, one line per
    position bias; the all-human agreement as a band of two standard errors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    base = t[t.a.isna()].iloc[0]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, (b, g) in enumerate(t[t.a.notna()].groupby("b")):
        left.errorbar(g.a, g.saved, yerr=2 * g.humans_se / base.humans, marker="o", color=f"C{i}", label=f"bias {b:g}")
        right.errorbar(g.a, g.share, yerr=2 * g.share_se, marker="o", color=f"C{i}", label=f"bias {b:g}")
    right.axhspan(base.share - 2 * base.share_se, base.share + 2 * base.share_se, color="0.85",
                  label="all human (+- 2 SE)")
    right.axhline(base.share, color="0.4", lw=1)
    left.set(xlabel="judge accuracy a", ylabel="people's judgments saved", ylim=(-0.02, 1.02),
             title=f"saved against all-human ({base.humans:,.0f} judgments)")
    right.set(xlabel="judge accuracy a", ylabel="topics sharing a best item with Combined I+II",
              title="agreement of the best items")
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle(f"automatic assessors in front of people on the DL-2021 crowd judgments ({int(base.runs)} "
                 "replays per point; beyond the seeds)", fontsize="medium")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
