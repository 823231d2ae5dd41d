"""The released best sets of the TREC 2021 DL preference study (thesis 5.3) recomputed from the recorded crowd
judgments, their counts and agreement, and the top-k process replayed on those judgments.

The judgments file holds the whole study: 9,713 lines of pruning and first final phases, then two blocks of
984 (thesis 5.1: "an additional 984 judgments were required for our extra finalization phase"), each judging
every final pair once. Scoring each final pool on wins / judgments gives the released sets exactly: Set I from
the first final phase, Set II from the last block, Set III from the block before it, the Combined sets from
those phases together (:data:`SETS`; phases numbered in file order). The thesis reports no numbers for Set III
and Combined I+II+III.

>>> from irbandits.io import read_judgments
>>> j = read_judgments("../shared/data/human-preferences-dl21/judgments.txt")
>>> sets = best_sets(final_phases(j), (1,))
>>> len(sets), sum(map(len, sets.values()))
(50, 75)
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pandas as pd

from irbandits.errors import IrbanditsError
from irbandits.io import read_judgments, read_qrels
from irbandits.judging.pools import grade_pools
from irbandits.judging.replay import agreement, recorded_pools, replay_agreement
from irbandits.judging.topk import pair_key
from irbandits.studies.claims import Claim
from irbandits.studies.claims import claim_rows as rows

FINAL_PAIRS = 984  # pairs of all final pools together: the judgments of one extra final phase (thesis 5.1)
# label -> (released file, final phases in file order whose judgments it scores)
SETS = {"Set I": ("Set-I.qrels", (1,)), "Set II": ("Set-II.qrels", (3,)), "Set III": ("Set-III.qrels", (2,)),
        "Combined I+II": ("Combined-I+II.qrels", (1, 3)),
        "Combined I+II+III": ("Combined-I+II+III.qrels", (1, 2, 3))}
PAPER = "Yan thesis, section 5.3"
# thesis 5.3: best passages in all over the 50 questions
PUBLISHED_BEST = {"Set I": 75, "Set II": 75, "Combined I+II": 66}
# thesis 5.3: (set, set) -> (topics sharing at least one best passage, passages in both)
PUBLISHED_SHARED = {("Set I", "Set II"): (22, 25), ("Set I", "Combined I+II"): (40, 44),
                    ("Set II", "Combined I+II"): (39, 44)}
# thesis 5.1: the recorded pools (items per question)
PUBLISHED_POOLS = dict(questions=50, low=5, high=130, median=15, mean=31.4)


def final_phases(judgments: pd.DataFrame) -> pd.DataFrame:
    """The final phases' judgments (``topic left right winner pair phase``): phases 2 and 3 are the last two
    blocks of :data:`FINAL_PAIRS` lines, phase 1 each final pair's last judgment before them. An error
    unless both blocks judge the same pairs once each and phase 1 judges all of them."""
    j = judgments.assign(pair=[pair_key(a, b) for a, b in zip(judgments.left, judgments.right)])
    n, k = len(j), FINAL_PAIRS
    blocks = [j.iloc[:n - 2 * k], j.iloc[n - 2 * k:n - k], j.iloc[n - k:]]
    final = set(zip(blocks[2].topic, blocks[2].pair))
    first = blocks[0][[key in final for key in zip(blocks[0].topic, blocks[0].pair)]]
    first = first.drop_duplicates(["topic", "pair"], keep="last")
    if len(final) != k or set(zip(blocks[1].topic, blocks[1].pair)) != final or len(first) != k:
        raise IrbanditsError(f"the judgments do not end in two final phases of {k} pairs each")
    return pd.concat([b.assign(phase=p) for p, b in enumerate((first, blocks[1], blocks[2]), 1)], ignore_index=True)


def best_sets(final: pd.DataFrame, phases) -> dict[str, list[str]]:
    """Per topic, the items of top score (wins / judgments, above 0) over the judgments of ``phases``."""
    out = {}
    for topic, g in final[final.phase.isin(phases)].groupby("topic", sort=False):
        games = pd.concat([g.left, g.right]).value_counts()
        score = g.winner.value_counts().reindex(games.index, fill_value=0) / games
        out[str(topic)] = sorted(score.index[(score == score.max()) & (score > 0)])
    return out


def shared(a: pd.DataFrame, b: pd.DataFrame) -> tuple[int, int]:
    """Two best sets (qrels tables): topics where they share at least one item, and items in both."""
    found = {str(t): list(g.docno) for t, g in b.groupby("topic")}
    share = agreement(found, a)
    return round(share["share"] * share["topics"]), len(a.merge(b, on=["topic", "docno"]))


def set_counts(released: dict[str, pd.DataFrame], final: pd.DataFrame) -> pd.DataFrame:
    """Per released set: topics, best passages (in all and per topic), topics by number of tied best items
    (``ties``: "best items: topics"), the topics with 4 or more tied, and the topics where the set
    recomputed from its final phases (:func:`best_sets`) is the released one."""
    out = []
    for label, q in released.items():
        per = q.groupby("topic").size()
        same = agreement(best_sets(final, SETS[label][1]), q)
        out.append(dict(set=label, topics=len(per), best=len(q), per_topic=len(q) / len(per),
                        ties=" ".join(f"{k}:{v}" for k, v in per.value_counts().sort_index().items()),
                        four_tied=" ".join(sorted(per.index[per >= 4].astype(str))),
                        recomputed=round(same["same"] * same["topics"])))
    return pd.DataFrame(out)


def set_agreement(released: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Every pair of released sets: ``topics`` sharing at least one best item and ``passages`` in both."""
    out = []
    for a, b in combinations(released, 2):
        topics, passages = shared(released[a], released[b])
        out.append(dict(a=a, b=b, topics=topics, passages=passages))
    return pd.DataFrame(out)


def run_study(data: str | Path = "../shared/data/human-preferences-dl21", qrels: str | Path | None = None,
              runs: int = 100, seed: int = 0) -> dict:
    """``sets`` (:func:`set_counts`), ``agreement`` (:func:`set_agreement`), ``judgments`` (the lines of the
    file), ``pools`` (items per recorded pool), ``replay`` (:func:`irbandits.judging.replay.replay_agreement`
    with Set I and Combined I+II), ``replay_pools`` (their number) and ``runs`` (replays).

    Replay pools are the items the recorded judgments name, or built from ``qrels`` when given.
    """
    data = Path(data)
    judgments = read_judgments(data / "judgments.txt")
    recorded = recorded_pools(judgments)
    pools = grade_pools(read_qrels(qrels)) if qrels else recorded
    released = {label: read_qrels(data / file) for label, (file, _) in SETS.items()}
    replay = replay_agreement(pools, judgments, {k: released[k] for k in ("Set I", "Combined I+II")},
                              runs=runs, seed=seed)
    return dict(sets=set_counts(released, final_phases(judgments)), agreement=set_agreement(released),
                judgments=len(judgments), pools=pd.Series({t: len(p) for t, p in recorded.items()}),
                replay=replay, replay_pools=len(pools), runs=runs)


def _set_claims(sets: pd.DataFrame, agree: pd.DataFrame) -> list[tuple[str, str, bool | None]]:
    """(claim, measured, agrees) of 5.3's counts, ties and agreement; Set III and Combined I+II+III not checked."""
    s = sets.set_index("set")
    out = []
    for label, r in s.iterrows():
        pub = PUBLISHED_BEST.get(label)
        out.append((f"{label} has {pub} best passages over 50 questions ({pub / 50:.2f} per question)" if pub else
                    f"{label}: best passages over 50 questions (not stated)",
                    f"{r.best} over {r.topics} ({r.per_topic:.2f}); topics by tied best items {r.ties}",
                    None if pub is None else (r.best, r.topics) == (pub, 50)))
    four = {k: s.four_tied[k].split() for k in ("Set I", "Set II", "Combined I+II")}
    out.append(("Set I and Set II both have (different) questions with 4 passages tied for best, the Combined Set "
                "has none", "; ".join(f"{k}: {' '.join(v) or 'none'}" for k, v in four.items()),
                bool(four["Set I"]) and bool(four["Set II"]) and not set(four["Set I"]) & set(four["Set II"])
                and not four["Combined I+II"]))
    a = agree.set_index(["a", "b"])
    for (x, y), (topics, passages) in PUBLISHED_SHARED.items():
        r = a.loc[(x, y)]
        out.append((f"{x} and {y}: {topics} topics share a best passage, {passages} passages in both",
                    f"{r.topics} topics, {r.passages} passages", (r.topics, r.passages) == (topics, passages)))
    with_both = [a.loc[(x, "Combined I+II")].topics for x in ("Set I", "Set II")]
    out.append(("the Combined Set is more consistent with both Set I and Set II than they are with each other",
                f"topics sharing a best passage: Combined with Set I {with_both[0]}, with Set II {with_both[1]}; "
                f"Set I with Set II {a.loc[('Set I', 'Set II')].topics}",
                min(with_both) > a.loc[("Set I", "Set II")].topics))
    for (x, y), r in a.iterrows():
        if (x, y) not in PUBLISHED_SHARED:
            out.append((f"{x} and {y}: topics sharing a best passage, passages in both (not stated)",
                        f"{r.topics} topics, {r.passages} passages", None))
    return out


def claim_rows(result: dict) -> list[Claim]:
    """The study's rows of ``claims.csv`` from :func:`run_study`'s result: the pools (thesis 5.1), the released
    sets recomputed from the judgments, 5.3's counts, ties and agreement, and the replay. The thesis states no
    agreement of a replay (the released sets are the process's own output on these judgments, with its random
    tie-breaks), so those rows are "not checked" and carry the measured agreement."""
    p, pub, sets = result["pools"], PUBLISHED_POOLS, result["sets"]
    triples = [(f"pools of {pub['low']}-{pub['high']} passages over {pub['questions']} questions, median "
                f"{pub['median']}, mean {pub['mean']} (thesis 5.1)",
                f"{p.min()}-{p.max()} over {len(p)}, median {p.median():g}, mean {p.mean():.1f}",
                (len(p), p.min(), p.max(), p.median(), round(p.mean(), 1)) == tuple(pub.values())),
               ("9,713 judgments of the main experiment and 984 of the extra final phase (thesis 5.1)",
                f"{result['judgments']:,} lines: {result['judgments'] - 2 * FINAL_PAIRS:,} and two final phases of "
                f"{FINAL_PAIRS} pairs (Set III's, then Set II's)", result["judgments"] - 2 * FINAL_PAIRS == 9713),
               ("Set I from the first round, Set II from the second, the Combined Set from scores over both "
                "(all five released sets, scored on their final phases' judgments)",
                ", ".join(f"{r.set} {r.recomputed}" for r in sets.itertuples()) + f" of {sets.topics.iat[0]} topics "
                "identical to the released sets", bool((sets.recomputed == sets.topics).all()))]
    triples += _set_claims(sets, result["agreement"])
    runs = result["runs"]
    triples += [(f"the top-k process on the recorded judgments gives the released {r.released} best sets",
                 f"{r.share:.0%} of {r.topics} topics share an item, {r.same:.0%} identical (mean of {runs} replays)",
                 None) for r in result["replay"].itertuples()]
    return rows("judging-replay", PAPER, triples,
                f"the released judgments and sets; {runs} replays on {result['replay_pools']} pools "
                "(paper: one run of the process)")


def plot(result: dict, path: str | Path) -> Path:
    """Two panels: topics by number of tied best passages per set, and the topics two sets share a best
    passage on (each pair of the five sets; the thesis's numbers in brackets)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    sets, agree = result["sets"], result["agreement"]
    labels = list(sets.set)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw=dict(width_ratios=[1, 1.1]))
    ties = pd.DataFrame([dict(kv.split(":") for kv in t.split()) for t in sets.ties], index=labels)
    ties = ties.astype(float).fillna(0)[sorted(ties.columns, key=int)]
    bottom = np.zeros(len(labels))
    for k in ties.columns:
        left.bar(labels, ties[k], bottom=bottom, label=f"{k} best", color=f"C{int(k) - 1}")
        bottom += ties[k]
    for i, r in enumerate(sets.itertuples()):
        left.text(i, r.topics + 0.5, f"{r.best} best", ha="center", fontsize="small")
    left.set_ylabel("questions")
    left.set_ylim(0, 62)
    left.set_title("questions by number of best passages (tied at the top)", fontsize="medium")
    left.legend(fontsize="small", ncol=5, loc="upper center")
    left.tick_params(axis="x", labelsize="small", rotation=15)
    m = pd.DataFrame(np.diag(sets.topics.astype(float)), index=labels, columns=labels)
    text = m.astype(int).astype(str)
    for r in agree.itertuples():
        pub = PUBLISHED_SHARED.get((r.a, r.b))
        m.loc[r.a, r.b] = m.loc[r.b, r.a] = r.topics
        text.loc[r.a, r.b] = text.loc[r.b, r.a] = f"{r.topics}" + (f"\n({pub[0]})" if pub else "")
    right.imshow(m, cmap="Blues", vmin=0, vmax=60)
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            right.text(j, i, text.loc[a, b], ha="center", va="center", fontsize="small",
                       color="white" if m.loc[a, b] > 40 else "black")
    right.set_xticks(range(len(labels)), labels, fontsize="small", rotation=15)
    right.set_yticks(range(len(labels)), labels, fontsize="small")
    right.set_title("questions on which two sets share a best passage\n(thesis 5.3 in brackets)", fontsize="medium")
    fig.suptitle("Yan thesis 5.3: the released best sets of the TREC 2021 DL preference study (50 questions)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
