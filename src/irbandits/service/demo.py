"""``irbandits serve --demo``: two small campaigns (preference and graded) on passages written for it,
and an online experiment already under way.

Three everyday questions with four short passages each: one answers well, one partly, one is on
the subject without answering, one is off the mark. The preference campaign compares them in pairs
(pools of four go straight to the top-k process's final phase: six pairs a topic); the graded one
grades them in the order a pooling method picks from two small runs.

The experiment (:func:`load_demo_experiment`) compares the six rankers of the bundled ``arxiv``
problem with RUCB and team-draft interleaving; :data:`PLAYED` impressions are played through the
service's own impression -> lists -> clicks path by a simulated user who clicks, in the shown list,
the first result of the ranker that wins by the problem's preference matrix.
"""

from __future__ import annotations

import asyncio

import numpy as np

from irbandits.service.campaign_spec import check_campaign
from irbandits.service.experiment_runtime import check_experiment

TOPICS = {
    "1": "why does bread go stale",
    "2": "how do bees find flowers",
    "3": "what causes the seasons on earth",
}
TEXTS = {
    "bread-a": "Bread goes stale mainly because of starch retrogradation. When bread is baked, starch granules "
               "absorb water and lose their ordered structure. As the loaf cools and sits, the starch molecules "
               "slowly line up again into crystals and push water out, so the crumb turns firm and crumbly even "
               "if the bread has not lost much moisture. Warming stale bread briefly undoes part of this, which "
               "is why toast or a few minutes in the oven makes yesterday's loaf soft again.",
    "bread-b": "Stale bread is dry bread. Moisture moves from the soft inside of the loaf to the crust and then "
               "into the air, so keeping bread in a closed bag slows the change. The crust, in turn, goes leathery "
               "as it takes up water from the crumb.",
    "bread-c": "Sourdough is one of the oldest ways of making bread rise. A starter of flour and water collects "
               "wild yeasts and lactic acid bacteria, which produce gas and the sour taste. Bakers keep a starter "
               "going for years by feeding it fresh flour every day or two.",
    "bread-d": "Store bread at room temperature for a day or two, or freeze it in slices for longer. The "
               "refrigerator is the worst place for it: loaves kept cold firm up several times faster than "
               "loaves kept on the counter.",
    "bees-a": "Bees find flowers with a mix of sight, smell and shared directions. Their eyes see ultraviolet "
              "light, and many petals carry ultraviolet patterns that point to the nectar. Close up, scent guides "
              "them to the right blossom. A forager that finds a rich patch returns to the hive and performs a "
              "waggle dance: the angle of the run tells the others the direction relative to the sun, and its "
              "length tells them the distance.",
    "bees-b": "Many flowers have nectar guides: lines or spots, often visible only in ultraviolet, that lead an "
              "insect towards the centre of the flower. Bees can see these marks because their colour vision is "
              "shifted towards shorter wavelengths than ours.",
    "bees-c": "A strong colony can gather more nectar than it needs, and the surplus becomes honey. Worker bees "
              "add enzymes to the nectar and fan it with their wings until most of the water has evaporated, then "
              "cap the cells with wax.",
    "bees-d": "Bumblebees can sense the weak electric fields around flowers. A flower that was just visited "
              "carries a changed charge for a short while, and experiments suggest bees use this to skip flowers "
              "that another bee has already emptied.",
    "seasons-a": "The seasons come from the tilt of the earth's axis, about 23.4 degrees from upright relative to "
                 "its orbit. For part of the year the northern hemisphere leans towards the sun: sunlight arrives "
                 "at a steeper angle and days are longer, so it is summer there and winter in the south. Six "
                 "months later the situation is reversed.",
    "seasons-b": "In summer the sun climbs higher in the sky and stays up longer, so each square metre of ground "
                 "receives more energy over the day. In winter the same sunlight is spread over a larger area and "
                 "a shorter day.",
    "seasons-c": "The earth's orbit is an ellipse, but only slightly: the distance to the sun changes by about "
                 "three percent over a year. The earth is in fact closest to the sun in early January, in the "
                 "middle of the northern winter.",
    "seasons-d": "Meteorologists divide the year into seasons of whole months: in the northern hemisphere, "
                 "December, January and February are winter, and June, July and August are summer. Astronomical "
                 "seasons start at the solstices and equinoxes instead.",
}
GRADES = {"a": 3, "b": 2, "c": 1, "d": 1}
DOCS = {"1": "bread", "2": "bees", "3": "seasons"}


def _qrels() -> str:
    return "".join(f"{t} 0 {d}-{x} {g}\n" for t, d in DOCS.items() for x, g in GRADES.items())


def _run(name: str, order: str) -> str:
    return "".join(f"{t} Q0 {d}-{x} {r} {10 - r} {name}\n" for t, d in DOCS.items() for r, x in enumerate(order, 1))


CAMPAIGNS = {
    "Demo: which passage answers better?": dict(kind="preference", qrels=_qrels(), options={"seed": 1}),
    "Demo: how relevant is this passage?": dict(kind="graded", runs={"bm25": _run("bm25", "bcad"),
                                                                     "dense": _run("dense", "abdc")},
                                               options={"depth": 4}),
}


def load_demo(app) -> dict[str, str]:
    """Create the demo campaigns in ``app`` (once) and a new assessor on each; returns name -> page path."""
    registry = app.state.campaigns
    existing = {runtime.name: runtime for runtime in registry.campaigns.values()}
    links = {}
    for name, fields in CAMPAIGNS.items():
        runtime = existing.get(name)
        if runtime is None:
            runtime = registry.create(check_campaign(dict(name=name, topics=TOPICS, texts=TEXTS, **fields)))
        links[name] = f"/a/{registry.add_assessor(runtime, 'demo assessor')[1]}"
    return links


EXPERIMENT = "Demo: which arXiv ranker wins the clicks?"
PLAYED = 400


def load_demo_experiment(app, played: int = PLAYED) -> dict:
    """Create the demo experiment in ``app`` (once, with ``played`` impressions played) and a new client
    token for it; returns ``{"id", "token", "url"}`` (``url``: its organiser page)."""
    from irbandits.problems import get_problem

    registry = app.state.experiments
    runtime = next((e for e in registry.experiments.values() if e.name == EXPERIMENT), None)
    if runtime is None:
        prefs = get_problem("arxiv").p
        names = [f"arxiv-{i + 1}" for i in range(len(prefs))]
        runtime = registry.create(check_experiment(dict(name=EXPERIMENT, rankers=names, algorithm="RUCB",
                                                        comparison="team-draft", seed=1)))
        rng = np.random.default_rng(1)

        async def play() -> None:
            for _ in range(played):
                imp, (a, b) = await runtime.impression()
                lists = {x: [f"{x}-doc{k}" for k in range(10)] for x in (a, b)}
                shown = await runtime.interleave(imp.id, lists)
                winner = a if rng.random() < prefs[imp.c, imp.d] else b
                await runtime.clicks(imp.id, [next(i for i, doc in enumerate(shown) if doc.startswith(winner + "-"))])

        asyncio.run(play())
    token = registry.add_client(runtime.id, "demo front end")[1]
    return {"id": runtime.id, "token": token, "url": f"/admin/experiments/{runtime.id}"}
