"""Compatibility and preference graph compatibility: rank-biased overlap with an ideal ranking.

Both measures score a run by its rank-biased overlap (RBO, persistence ``p``, evaluated to
``depth``) with an ideal ranking of the judged items, divided by the ideal ranking's RBO with
itself, so a run that starts with the ideal ranking scores 1.

- **Compatibility** (Clarke, Smucker & Vtyurina, CIKM 2020; normalised as in Clarke, Vtyurina &
  Smucker, TOIS 2021): the ideal ranking holds the items with a positive qrels value, by value,
  ties broken by the run's own order, items the run does not retrieve last.
- **PGC** (Luo, Clarke & Smucker, SIGIR 2021): the ideal ranking orders the nodes of the judgment
  multigraph (winner -> loser, one edge per judgment) by the greedy feedback-arc-set heuristic of
  Eades, Lin & Smyth (1993): move sinks to the end and sources to the front while there are any,
  else move the node with the largest out-degree minus in-degree to the front. Ties go to the node
  the run ranks best (to the front) or worst (to the end); unretrieved nodes by docno.

Depth 1000 follows the authors' ``compatibility.py``; ir-measures' ``Compat`` stops at the longer of
run and ideal ranking, and gives the same value when ``depth`` is set to that length.

RBO counts, at every depth ``d``, the items in both top-``d`` lists, so an item at ideal position
``i`` and run position ``j`` (0-based) adds ``sum_{d > max(i, j)} p^(d-1) / d``: one suffix sum
per item, which is how the whole run x topic table is scored at once.

>>> import pandas as pd
>>> run = pd.DataFrame({"run": "r", "topic": "1", "docno": ["a", "b", "c"], "rank": [1, 2, 3]})
>>> qrels = pd.DataFrame({"topic": "1", "docno": ["a", "b"], "grade": [2, 1]})
>>> float(compatibility(run, qrels).value.iat[0])
1.0
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

_UNRETRIEVED = 1 << 40  # run position of an item the run does not retrieve


# --- low level -------------------------------------------------------------------------------

@njit(cache=True)
def _greedy_fas(wins, priority):
    """Greedy feedback-arc-set order of a multigraph; ``wins[i, j]`` = edges i -> j.

    Ties: sinks with the largest ``priority`` go to the end first, sources and largest-delta nodes
    with the smallest ``priority`` go to the front first. Returns the node at each position.
    """
    n = wins.shape[0]
    out = wins.sum(axis=1)
    into = wins.sum(axis=0)
    alive = np.ones(n, np.bool_)
    order = np.empty(n, np.int64)
    head, tail, left = 0, n - 1, n
    while left > 0:
        moved = True
        while moved:  # sinks to the end
            moved = False
            u = -1
            for i in range(n):
                if alive[i] and out[i] == 0 and (u < 0 or priority[i] > priority[u]):
                    u = i
            if u >= 0:
                order[tail] = u
                tail -= 1
                moved = True
                left -= 1
                alive[u] = False
                for v in range(n):
                    out[v] -= wins[v, u]
                    into[v] -= wins[u, v]
        moved = True
        while moved:  # sources to the front
            moved = False
            u = -1
            for i in range(n):
                if alive[i] and into[i] == 0 and (u < 0 or priority[i] < priority[u]):
                    u = i
            if u >= 0:
                order[head] = u
                head += 1
                moved = True
                left -= 1
                alive[u] = False
                for v in range(n):
                    out[v] -= wins[v, u]
                    into[v] -= wins[u, v]
        if left > 0:  # the largest out-degree minus in-degree to the front
            u = -1
            for i in range(n):
                if alive[i]:
                    if u < 0:
                        u = i
                    else:
                        di, du = out[i] - into[i], out[u] - into[u]
                        if di > du or (di == du and priority[i] < priority[u]):
                            u = i
            order[head] = u
            head += 1
            left -= 1
            alive[u] = False
            for v in range(n):
                out[v] -= wins[v, u]
                into[v] -= wins[u, v]
    return order


@njit(cache=True)
def _fas_positions(wins, priorities):
    """Ideal position of every node for every run: ``priorities[r]`` is run r's ranking of the nodes."""
    R, n = priorities.shape
    positions = np.empty((R, n), np.int64)
    for r in range(R):
        order = _greedy_fas(wins, priorities[r])
        for k in range(n):
            positions[r, order[k]] = k
    return positions


def _suffix(p: float, depth: int) -> np.ndarray:
    """``S[k] = sum_{d=k+1}^{depth} p^(d-1) / d`` for k = 0..depth (``S[depth] = 0``)."""
    d = np.arange(1, depth + 1, dtype=float)
    w = p ** (d - 1) / d
    return np.append(np.cumsum(w[::-1])[::-1], 0.0)


def _score(table: pd.DataFrame, n_items: pd.Series, p: float, depth: int) -> pd.DataFrame:
    """Normalised RBO per (run, topic) from rows ``run, topic, ideal, ranked`` (0-based positions).

    ``n_items`` is the length of each topic's ideal ranking, indexed by topic.
    """
    S = _suffix(p, depth)
    k = np.minimum(np.maximum(table["ideal"].to_numpy(), table["ranked"].to_numpy()), depth)
    gains = table[["run", "topic"]].assign(value=S[k])
    value = gains.groupby(["run", "topic"], sort=True)["value"].sum()
    best = np.cumsum(S)[np.minimum(n_items.to_numpy(), depth) - 1]
    value = value / pd.Series(best, index=n_items.index).reindex(value.index.get_level_values("topic")).to_numpy()
    return value.rename("value").reset_index()


def _run_positions(runs: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Every run x every ``topic, docno`` of ``items`` with its 0-based run position (``ranked``)."""
    names = pd.DataFrame({"run": runs["run"].unique()})
    grid = names.merge(items, how="cross")
    pos = runs[["run", "topic", "docno"]].assign(ranked=runs["rank"].to_numpy() - 1)
    grid = grid.merge(pos, on=["run", "topic", "docno"], how="left")
    grid["ranked"] = grid["ranked"].fillna(_UNRETRIEVED).astype(np.int64)
    return grid


def _check(p: float, depth: int) -> None:
    from irbandits.errors import IrbanditsError

    if not 0.0 < p < 1.0:
        raise IrbanditsError(f"persistence p must be in (0, 1), got {p}")
    if depth < 1:
        raise IrbanditsError(f"depth must be a positive whole number, got {depth}")


# --- measures --------------------------------------------------------------------------------

def compatibility(runs: pd.DataFrame, qrels: pd.DataFrame, p: float = 0.95, depth: int = 1000) -> pd.DataFrame:
    """Compatibility of each run on each topic with a positive qrels value.

    Parameters
    ----------
    runs
        Ranked runs as :func:`irbandits.io.read_runs` returns them (``run, topic, docno, rank``).
    qrels
        ``topic, docno, grade``: graded, preference-valued or best-item labels (higher is better;
        values <= 0 are ignored).
    p, depth
        RBO persistence and evaluation depth.

    Returns
    -------
    DataFrame ``run, topic, value``; a run that does not answer a topic scores 0 on it.
    """
    _check(p, depth)
    labels = qrels.loc[qrels["grade"] > 0, ["topic", "docno", "grade"]]
    labels = labels[labels["topic"].isin(runs["topic"].unique())]
    grid = _run_positions(runs, labels)
    grid = grid.sort_values(["run", "topic", "grade", "ranked", "docno"], ascending=[True, True, False, True, True],
                            kind="mergesort")
    grid["ideal"] = grid.groupby(["run", "topic"], sort=False).cumcount()
    return _score(grid, labels.groupby("topic").size(), p, depth)


def fas_ranking(judgments: pd.DataFrame, ranking: list[str] | None = None) -> list[str]:
    """The greedy feedback-arc-set order of one topic's judgments, ties broken by ``ranking``.

    >>> import pandas as pd
    >>> cycle = pd.DataFrame({"left": ["a", "b", "c"], "right": ["b", "c", "a"], "winner": ["a", "b", "c"]})
    >>> fas_ranking(cycle, ["b", "a"]), fas_ranking(cycle, ["a", "b"])
    (['b', 'c', 'a'], ['a', 'b', 'c'])
    """
    nodes, wins = _graph(judgments)
    rank = {d: i for i, d in enumerate(ranking or [])}
    priority = np.array([rank.get(d, _UNRETRIEVED + i) for i, d in enumerate(nodes)], np.int64)
    return [str(nodes[i]) for i in _greedy_fas(wins, priority)]


def _graph(judgments: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Nodes (sorted docnos) and the ``wins[winner, loser]`` edge counts of one topic."""
    loser = np.where(judgments["winner"] == judgments["left"], judgments["right"], judgments["left"])
    nodes, codes = np.unique(np.concatenate([judgments["winner"].to_numpy(str), loser.astype(str)]),
                             return_inverse=True)
    m = len(judgments)
    wins = np.zeros((len(nodes), len(nodes)), np.int64)
    np.add.at(wins, (codes[:m], codes[m:]), 1)
    return nodes, wins


def pgc(runs: pd.DataFrame, judgments: pd.DataFrame, p: float = 0.95, depth: int = 1000) -> pd.DataFrame:
    """Preference graph compatibility of each run on each judged topic.

    Parameters
    ----------
    runs
        Ranked runs (``run, topic, docno, rank``).
    judgments
        Pairwise judgments ``topic, left, right, winner`` (:func:`irbandits.io.read_judgments`);
        every judgment is one edge winner -> loser.
    p, depth
        RBO persistence and evaluation depth.

    Returns
    -------
    DataFrame ``run, topic, value``; a run that does not answer a topic scores 0 on it.
    """
    _check(p, depth)
    judgments = judgments[judgments["topic"].isin(runs["topic"].unique())]
    graphs = {topic: _graph(group) for topic, group in judgments.groupby("topic", sort=True)}
    if not graphs:
        return pd.DataFrame({"run": [], "topic": [], "value": []})
    items = pd.concat([pd.DataFrame({"topic": t, "docno": nodes}) for t, (nodes, _) in graphs.items()])
    grid = _run_positions(runs, items).sort_values(["topic", "run"], kind="stable", ignore_index=True)
    ranked = grid["ranked"].to_numpy()
    ideal = np.empty(len(grid), np.int64)
    start = 0
    for nodes, wins in graphs.values():
        n = len(nodes)
        block = ranked[start:start + n * (len(ranked) // len(items))].reshape(-1, n)
        tie = np.where(block == _UNRETRIEVED, _UNRETRIEVED + np.arange(n), block)
        ideal[start:start + block.size] = _fas_positions(wins, tie).ravel()
        start += block.size
    grid["ideal"] = ideal
    return _score(grid, pd.Series({t: len(nodes) for t, (nodes, _) in graphs.items()}), p, depth)
