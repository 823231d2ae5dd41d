"""The measures' reference definitions written as plainly as possible (literal transcriptions, slow on
purpose), which ``test_measures.py`` checks on hand-made cases and ``test_measures_study.py`` on the
63 TREC 2021 DL runs."""

BIG = 1 << 40


def ref_rbo(run, ideal, p, depth):
    """RBO as Clarke et al.'s compatibility.py computes it: set overlaps depth by depth."""
    run_set, ideal_set, score, norm, weight = set(), set(), 0.0, 0.0, 1.0
    for i in range(depth):
        if i < len(run):
            run_set.add(run[i])
        if i < len(ideal):
            ideal_set.add(ideal[i])
        score += weight * len(run_set & ideal_set) / (i + 1)
        norm += weight
        weight *= p
    return score / norm


def ref_compatibility(run, qrels, p=0.95, depth=1000):
    """Ideal: positive items by value, ties by the run's order, unretrieved last; RBO normalised."""
    pos = {d: i for i, d in enumerate(run)}
    ideal = sorted((d for d, g in qrels.items() if g > 0), key=lambda d: (-qrels[d], pos.get(d, len(run))))
    return ref_rbo(run, ideal, p, depth) / ref_rbo(ideal, ideal, p, depth)


def ref_fas(edges, run):
    """Eades-Lin-Smyth greedy order of a multigraph, literally: sinks, sources, else max out - in."""
    nodes = sorted({d for e in edges for d in e})
    key = {d: run.index(d) if d in run else BIG + nodes.index(d) for d in nodes}
    alive, s1, s2 = set(nodes), [], []

    def deg(u):
        out = sum(1 for w, l in edges if w == u and l in alive)
        into = sum(1 for w, l in edges if l == u and w in alive)
        return out, into

    while alive:
        while sinks := [u for u in alive if deg(u)[0] == 0]:
            u = max(sinks, key=key.get)
            s2.insert(0, u)
            alive.remove(u)
        while sources := [u for u in alive if deg(u)[1] == 0]:
            u = min(sources, key=key.get)
            s1.append(u)
            alive.remove(u)
        if alive:
            u = max(alive, key=lambda v: (deg(v)[0] - deg(v)[1], -key[v]))
            s1.append(u)
            alive.remove(u)
    return s1 + s2


def ref_pgc(run, edges, p=0.95, depth=1000):
    ideal = ref_fas(edges, run)
    return ref_rbo(run, ideal, p, depth) / ref_rbo(ideal, ideal, p, depth)
