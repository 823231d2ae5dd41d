"""Online learning to rank: impressions per second per core for each learner, and the scoring floor.

    python benchmarks/oltr.py                                   # NP2004 vali, perfect clicks
    python benchmarks/oltr.py --impressions 50000 --click-model navigational

One impression is what :func:`irbandits.oltr.simulate_learner` does per step: draw a query of the
training set (NP2004: about 1,000 documents and 64 features each), the learner ranks (scoring every
document once per ranker it compares), a simulated user clicks, the learner updates. Offline
evaluation is excluded. Timed on one numba thread in CPU seconds (so other jobs on a shared machine
do not count against it), compile time excluded. The floor is a compiled loop that only draws a
query and scores its documents with one weight vector (top-10 selection included): no learner can
do an impression faster. Targets (issue 27): DBGD 50,000 and PDGD 20,000 impressions/s per core; a
plain numpy DBGD runs about 2,500/s. PDGD-NN scores every document through a hidden layer of 64 units,
about 64 times the floor's arithmetic.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numba
import numpy as np
from numba import njit

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.ltr import read_ltr
from irbandits.oltr.base import parse_learner
from irbandits.oltr.linear import top_lists
from irbandits.oltr.simulation import _arrays, run_impressions
from irbandits.rng import new_rng, randint

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ltr" / "letor3-np2004-fold1" / "vali.txt.gz"
LEARNERS = ["DBGD", "DBGD:interleaving=probabilistic", "DBGD-CPS", "MGD:n=9", "MGD:n=9,multileaving=probabilistic",
            "PDGD", "PDGD-NN"]
TARGETS = {"DBGD": 50_000, "PDGD": 20_000}


@njit
def _floor(features, bounds, W, rng, lists, lens, steps):
    Q, total = len(bounds) - 1, 0
    for _ in range(steps):
        q = randint(rng, Q)
        top_lists(features[bounds[q]:bounds[q + 1]], W, rng, lists, lens)
        total += lists[0, 0]
    return total


def floor_rate(data, impressions: int) -> float:
    features, bounds = data[0], data[1]
    W, rng = np.random.default_rng(0).normal(size=(1, features.shape[1])), new_rng(0)
    lists, lens = np.empty((1, 10), np.int64), np.empty(1, np.int64)
    _floor(features, bounds, W, rng, lists, lens, 10)
    start = time.process_time()
    _floor(features, bounds, W, rng, lists, lens, impressions)
    return impressions / (time.process_time() - start)


def learner_rate(spec: str, data, model, impressions: int) -> float:
    cls, params = parse_learner(spec)
    learner = cls(data[0].shape[1], seed=0, **params)
    learner._prepare(int(np.diff(data[1]).max()))
    shown, acc, user = np.empty(learner._length, np.int64), np.array([0.0, 1.0, 0.9995]), new_rng(1)
    args = (learner._rank, learner._update, *learner._plugs, learner._st, learner._rng, user, data, model.arrays())
    run_impressions(*args, 20, shown, acc)   # compile, and leave w = 0
    start = time.process_time()
    run_impressions(*args, impressions, shown, acc)
    return impressions / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ltr", default=str(DATA))
    parser.add_argument("--impressions", type=int, default=20_000)
    parser.add_argument("--click-model", default="perfect")
    parser.add_argument("--learner", action="append", help="learner specs (default: all)")
    args = parser.parse_args()
    numba.set_num_threads(1)
    train = read_ltr(args.ltr)
    data = _arrays(train)
    model = ClickModel.named(args.click_model, grades=train.grades)
    sizes = np.diff(train.bounds)
    print(f"{args.ltr}: {train.n_queries} queries, {sizes.mean():.0f} documents each on average, "
          f"{train.n_features} features; {args.click_model} clicks; {args.impressions:,} impressions per learner")
    floor = floor_rate(data, args.impressions)
    print(f"{'learner':38s} {'impressions/s':>14s} {'x floor':>8s} {'target':>8s}")
    print(f"{'floor (score once, top 10)':38s} {floor:14,.0f} {1.0:8.2f}")
    for spec in args.learner or LEARNERS:
        slow = "CPS" in spec or "-NN" in spec   # a twentieth of the impressions: about as many seconds
        rate = learner_rate(spec, data, model, args.impressions // 20 if slow else args.impressions)
        target = TARGETS.get(spec)
        print(f"{spec:38s} {rate:14,.0f} {floor / rate:8.2f} {'' if target is None else f'{target:,}':>8s}")


if __name__ == "__main__":
    main()
