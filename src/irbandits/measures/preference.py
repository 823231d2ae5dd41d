"""Preference-based measures: ppref, wpref, rpref and a preference-gain nDCG, from pairwise preferences.

Every measure scores a ranked run on a topic against that topic's *preference pairs*, ``better ≻ worse``:

- from pairwise judgments (``topic left right winner``, :func:`irbandits.io.read_judgments`) by
  :func:`judged_preferences`: the judgments of one unordered pair are votes, the pair's preference is
  the majority, and a pair with as many votes each way (a tie) states no preference and is left out;
- from graded qrels by :func:`graded_preferences`: every two judged documents of a topic with different
  grades, the higher grade preferred (grade 0 included: a relevant document is preferred to it); equal
  grades are ties and left out.

**Carterette & Bennett** ("Evaluation measures for preference judgments", SIGIR 2008, poster; the
measures first appear in Carterette, Bennett, Chickering & Dumais, "Here or there: preference
judgments for relevance", ECIR 2008, section 5). At cutoff ``k`` a pair is *ordered* by the run when
one or both of its documents are in the top ``k`` (a document not in the top ``k`` counts as ranked
below all of them; two such documents are unordered). An ordered pair is *correct* when the better
document is ranked above the worse one.

- ``ppref@k`` (precision of preferences) = correct pairs / ordered pairs (0 when none are ordered);
- ``rpref@k`` (recall of preferences) = correct pairs / all preference pairs of the topic;
- ``wpref@k`` (weighted ppref) = sum of ``w`` over the correct pairs / sum of ``w`` over the ordered
  pairs, ``w = 1 / (log2(r) + 1)`` with ``r`` the rank of the pair's higher-placed document, so a
  pair involving rank 1 weighs 1.

The thesis (Yan 2022, section 2.3) writes the weight as ``1 / (log2 j + 1)`` without saying which
document's rank ``j`` is; the weight function and the "one or both above k" rule here follow the
evaluation script released with the SIGIR 2008 workshop collection (Carterette, Bennett & Chapelle,
"A test collection of preference judgments", ``nwpref``), which normalises by the same weights
with every ordered pair counted as correct. The script also closes the preferences transitively;
here only the stated (majority) preferences count.

**Sakai & Zeng** ("Good evaluation measures based on document preferences", SIGIR 2020) split the
pairs a ranking orders into *explicit* ones (both documents retrieved, one above the other) and
*implicit* ones (one retrieved, the other not), and find the implicit ones carry most of the
agreement with users' SERP preferences. ``pairs=explicit`` or ``pairs=implicit`` restricts ppref,
wpref and rpref to those pairs (``all``: both, Carterette & Bennett's measures). Their second family
turns preferences into per-document gains for a graded measure; ``pref_ndcg@k`` does that with nDCG:
a document's gain is the share of its preference pairs it wins (0 for a document in no pair), and
the ideal ranking orders the topic's documents by gain. The exact weightings of Sakai & Zeng's
measures were not available here; these two are this module's definitions in the spirit of theirs.

The run x pair tables of one topic are scored at once with numpy (63 runs x 53 topics in about a second).

>>> import pandas as pd
>>> run = pd.DataFrame({"run": "r", "topic": "1", "docno": ["a", "b", "c"], "rank": [1, 2, 3]})
>>> prefs = pd.DataFrame({"topic": "1", "better": ["b", "a", "c"], "worse": ["a", "c", "d"]})
>>> float(ppref(run, prefs, k=2).value.iat[0]), float(rpref(run, prefs, k=2).value.iat[0])
(0.5, 0.3333333333333333)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from irbandits.errors import IrbanditsError

PAIRS = ("all", "explicit", "implicit")
SOURCES = ("judgments", "qrels")
_UNRANKED = np.iinfo(np.int64).max // 4  # rank of a document the run does not retrieve


# --- preference pairs ------------------------------------------------------------------------

def judged_preferences(judgments: pd.DataFrame) -> pd.DataFrame:
    """One preference per judged pair of documents: the majority of its judgments; ties left out.

    Parameters
    ----------
    judgments
        ``topic, left, right, winner`` (:func:`irbandits.io.read_judgments`).

    Returns
    -------
    DataFrame ``topic, better, worse, votes, against``: the votes for and against the majority.

    >>> import pandas as pd
    >>> j = pd.DataFrame({"topic": "1", "left": ["a", "b", "a", "a", "c"], "right": ["b", "a", "b", "c", "a"],
    ...                   "winner": ["a", "b", "a", "a", "c"]})
    >>> judged_preferences(j)[["better", "worse", "votes", "against"]].values.tolist()
    [['a', 'b', 2, 1]]
    """
    left, right = judgments["left"].astype(str).to_numpy(), judgments["right"].astype(str).to_numpy()
    first = np.where(left < right, left, right)
    frame = pd.DataFrame({"topic": judgments["topic"].astype(str).to_numpy(), "a": first,
                          "b": np.where(left < right, right, left),
                          "won": (judgments["winner"].astype(str).to_numpy() == first).astype(np.int64)})
    votes = frame.groupby(["topic", "a", "b"], sort=True)["won"].agg(["sum", "size"]).reset_index()
    margin = 2 * votes["sum"] - votes["size"]
    votes = votes[margin != 0]
    margin = margin[margin != 0].to_numpy()
    a_wins = margin > 0
    return pd.DataFrame({"topic": votes["topic"].to_numpy(),
                         "better": np.where(a_wins, votes["a"], votes["b"]),
                         "worse": np.where(a_wins, votes["b"], votes["a"]),
                         "votes": np.where(a_wins, votes["sum"], votes["size"] - votes["sum"]),
                         "against": np.where(a_wins, votes["size"] - votes["sum"], votes["sum"])})


def graded_preferences(qrels: pd.DataFrame) -> pd.DataFrame:
    """Preference pairs of graded qrels: every two documents of a topic with different grades.

    >>> import pandas as pd
    >>> q = pd.DataFrame({"topic": "1", "docno": ["a", "b", "c"], "grade": [2, 0, 2]})
    >>> graded_preferences(q).values.tolist()
    [['1', 'a', 'b'], ['1', 'c', 'b']]
    """
    topics, t = np.unique(qrels["topic"].to_numpy(str), return_inverse=True)
    docs, d = np.unique(qrels["docno"].to_numpy(str), return_inverse=True)
    q = pd.DataFrame({"t": t, "d": d, "g": qrels["grade"].to_numpy()})
    pairs = q.merge(q, on="t", suffixes=("b", "w"))
    pairs = pairs[pairs["gb"].to_numpy() > pairs["gw"].to_numpy()].sort_values(["t", "db", "dw"])
    return pd.DataFrame({"topic": topics[pairs["t"].to_numpy()], "better": docs[pairs["db"].to_numpy()],
                         "worse": docs[pairs["dw"].to_numpy()]})


def preferences(labels: pd.DataFrame, source: str) -> pd.DataFrame:
    """The preference pairs of judgments (``source="judgments"``) or graded qrels (``"qrels"``).

    A table that already has ``better, worse`` columns is returned as it is.
    """
    if {"better", "worse"} <= set(labels.columns):
        return labels
    if source == "judgments":
        return judged_preferences(labels)
    if source == "qrels":
        return graded_preferences(labels)
    raise IrbanditsError(f"preference source must be one of {', '.join(SOURCES)}, got {source!r}")


# --- scoring ---------------------------------------------------------------------------------

def _topics(runs: pd.DataFrame, prefs: pd.DataFrame):
    """Per topic with preference pairs: the run names, and ``(topic, ranks, better, worse)`` where
    ``ranks[r, d]`` is run r's rank of the topic's document d (``_UNRANKED`` if absent) and
    ``better``/``worse`` index the documents of each pair."""
    names = pd.Index(runs["run"].unique())
    prefs = prefs[prefs["topic"].isin(set(runs["topic"]))]
    by_topic = dict(tuple(runs.groupby("topic", sort=False)))
    for topic, group in prefs.groupby("topic", sort=True):
        docs, codes = np.unique(np.concatenate([group["better"].to_numpy(str), group["worse"].to_numpy(str)]),
                                return_inverse=True)
        ranks = np.full((len(names), len(docs)), _UNRANKED, np.int64)
        ranked = by_topic[topic]
        col = pd.Index(docs).get_indexer(ranked["docno"].to_numpy(str))
        hit = col >= 0
        ranks[names.get_indexer(ranked["run"].to_numpy())[hit], col[hit]] = ranked["rank"].to_numpy()[hit]
        yield names, topic, ranks, codes[:len(group)], codes[len(group):]


def _check(k: int, pairs: str = "all") -> None:
    if k < 1:
        raise IrbanditsError(f"cutoff k must be a positive whole number, got {k}")
    if pairs not in PAIRS:
        raise IrbanditsError(f"pairs must be one of {', '.join(PAIRS)}, got {pairs!r}")


def pair_counts(runs: pd.DataFrame, prefs: pd.DataFrame, k: int = 10, pairs: str = "all") -> pd.DataFrame:
    """Per run and topic: the pairs the run orders at ``k`` and how many it orders correctly.

    Parameters
    ----------
    runs
        Ranked runs (``run, topic, docno, rank``).
    prefs
        Preference pairs ``topic, better, worse`` (:func:`judged_preferences`, :func:`graded_preferences`).
    k
        Cutoff rank.
    pairs
        ``all`` (one or both documents in the top ``k``), ``explicit`` (both) or ``implicit`` (exactly one).

    Returns
    -------
    DataFrame ``run, topic, ordered, correct, w_ordered, w_correct, total``: counts, the same sums
    weighted by ``1 / (log2 r + 1)`` (``r`` the rank of the higher-placed document), and the topic's
    number of preference pairs.
    """
    _check(k, pairs)
    weight = np.append(0.0, 1.0 / (np.log2(np.arange(1, k + 1)) + 1.0))  # weight[r] for rank r = 1..k
    rows = []
    for names, topic, ranks, better, worse in _topics(runs, prefs):
        rb, rw = ranks[:, better], ranks[:, worse]
        top_b, top_w = rb <= k, rw <= k
        both = top_b & top_w
        sel = {"all": top_b | top_w, "explicit": both, "implicit": top_b ^ top_w}[pairs]
        good = sel & (rb < rw)
        high = np.minimum(np.minimum(rb, rw), k)  # clipped: only the selected pairs' weights are used
        w = np.where(sel, weight[high], 0.0)
        rows.append(pd.DataFrame({"run": names, "topic": topic, "ordered": sel.sum(axis=1),
                                  "correct": good.sum(axis=1), "w_ordered": w.sum(axis=1),
                                  "w_correct": (w * good).sum(axis=1), "total": len(better)}))
    if not rows:
        return pd.DataFrame(columns=["run", "topic", "ordered", "correct", "w_ordered", "w_correct", "total"])
    return pd.concat(rows, ignore_index=True)


def _ratio(counts: pd.DataFrame, num: str, den: str) -> pd.DataFrame:
    den_v = counts[den].to_numpy(float)
    value = np.divide(counts[num].to_numpy(float), den_v, out=np.zeros(len(counts)), where=den_v > 0)
    return pd.DataFrame({"run": counts["run"], "topic": counts["topic"], "value": value})


def ppref(runs: pd.DataFrame, labels: pd.DataFrame, k: int = 10, pairs: str = "all",
          source: str = "judgments") -> pd.DataFrame:
    """Precision of preferences at ``k``: correctly ordered pairs / ordered pairs.

    ``labels`` are judgments or graded qrels (as ``source`` says) or preference pairs; returns
    ``run, topic, value`` for every run on every topic with preference pairs.
    """
    return _ratio(pair_counts(runs, preferences(labels, source), k, pairs), "correct", "ordered")


def wpref(runs: pd.DataFrame, labels: pd.DataFrame, k: int = 10, pairs: str = "all",
          source: str = "judgments") -> pd.DataFrame:
    """Weighted precision of preferences at ``k``: each ordered pair weighs ``1 / (log2 r + 1)``."""
    return _ratio(pair_counts(runs, preferences(labels, source), k, pairs), "w_correct", "w_ordered")


def rpref(runs: pd.DataFrame, labels: pd.DataFrame, k: int = 10, pairs: str = "all",
          source: str = "judgments") -> pd.DataFrame:
    """Recall of preferences at ``k``: correctly ordered pairs / all preference pairs of the topic."""
    return _ratio(pair_counts(runs, preferences(labels, source), k, pairs), "correct", "total")


def preference_gains(prefs: pd.DataFrame) -> pd.DataFrame:
    """Each document's gain: the share of its preference pairs it wins. Returns ``topic, docno, gain``.

    >>> import pandas as pd
    >>> p = pd.DataFrame({"topic": "1", "better": ["a", "a", "b"], "worse": ["b", "c", "c"]})
    >>> preference_gains(p).gain.tolist()
    [1.0, 0.5, 0.0]
    """
    docs = pd.concat([pd.DataFrame({"topic": prefs["topic"], "docno": prefs["better"], "won": 1}),
                      pd.DataFrame({"topic": prefs["topic"], "docno": prefs["worse"], "won": 0})])
    return docs.groupby(["topic", "docno"], sort=True)["won"].mean().rename("gain").reset_index()


def pref_ndcg(runs: pd.DataFrame, labels: pd.DataFrame, k: int = 10, source: str = "judgments") -> pd.DataFrame:
    """nDCG@k with preference gains (:func:`preference_gains`) and the discount ``1 / log2(rank + 1)``."""
    _check(k)
    prefs = preferences(labels, source)
    gains = preference_gains(prefs)
    rows = []
    for names, topic, ranks, _, _ in _topics(runs, prefs):
        g = gains.loc[gains["topic"] == topic, "gain"].to_numpy()  # sorted by docno, as the columns of ranks
        inside = ranks <= k
        dcg = np.where(inside, g / np.log2(np.minimum(ranks, k) + 1.0), 0.0).sum(axis=1)
        best = np.sort(g)[::-1][:k]
        ideal = (best / np.log2(np.arange(2, len(best) + 2))).sum()
        rows.append(pd.DataFrame({"run": names, "topic": topic, "value": dcg / ideal if ideal > 0 else 0.0}))
    if not rows:
        return pd.DataFrame({"run": [], "topic": [], "value": []})
    return pd.concat(rows, ignore_index=True)
