"""The figures as drawn: accuracy smoothed with bands, lines told apart, legends, titles with horizon and runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from irbandits.plots import plot_accuracy, plot_regret
from irbandits.pooling.simulate import plot_curves
from irbandits.simulate import checkpoints

POOLING_METHODS = ["DocID", "Rank", "MoffatA", "MoffatB", "MoffatC", "MTF", "Random", "eps-greedy", "UCB1-Tuned",
                   "BLA", "MM", "BLA-NS", "MM-NS"]


@pytest.fixture
def drawn(monkeypatch):
    """The figures saved while the test runs."""
    figures = []
    save = Figure.savefig

    def keep(self, *args, **kwargs):
        figures.append(self)
        return save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return figures


def results(algorithms: int, runs: int = 6, horizon: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """A simulate() table whose runs find the winner with probability rising in log time."""
    rng = np.random.default_rng(seed)
    steps = checkpoints(horizon)
    rows = []
    for a in range(algorithms):
        for r in range(runs):
            p = np.clip(np.log10(steps) / np.log10(horizon) + 0.1 * a, 0, 1)
            rows.append(pd.DataFrame(dict(algorithm=f"algo{a}", run=r, step=steps, regret=np.sqrt(steps) * (1 + a),
                                          correct=rng.random(len(steps)) < p)))
    return pd.concat(rows, ignore_index=True)


def lines(ax) -> dict[str, tuple]:
    """Labelled lines of an axes: label -> (colour, line style)."""
    return {l.get_label(): (to_hex(l.get_color()), l.get_linestyle()) for l in ax.get_lines()
            if not l.get_label().startswith("_")}


def test_accuracy_is_a_smoothed_line_with_a_band_and_a_title_with_horizon_and_runs(tmp_path, drawn):
    table = results(2)
    plot_accuracy(table, tmp_path / "a.png")
    (fig,) = drawn
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert fig._suptitle.get_text().startswith("accuracy (horizon 10,000, 6 runs)")
    assert set(lines(ax)) == {"algo0", "algo1"} and ax.get_legend() is not None
    assert sum(isinstance(c, PolyCollection) for c in ax.collections) == 2  # one band per algorithm
    raw = table[table.algorithm == "algo0"].groupby("step").correct.mean().to_numpy()
    smooth = next(l for l in ax.get_lines() if l.get_label() == "algo0").get_ydata()
    assert np.abs(np.diff(smooth)).sum() < 0.6 * np.abs(np.diff(raw)).sum()  # far less jagged than the raw mean


def test_accuracy_of_many_algorithms_draws_one_panel_each_with_the_others_grey(tmp_path, drawn):
    plot_accuracy(results(8, runs=3), tmp_path / "a.png", title="accuracy (arxiv, horizon 10,000, 3 runs)")
    (fig,) = drawn
    panels = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in panels] == [f"algo{i}" for i in range(8)]
    for i, ax in enumerate(panels):
        assert list(lines(ax)) == [f"algo{i}"] and len(ax.get_lines()) == 8  # 7 grey lines behind
    assert len({lines(ax)[f"algo{i}"] for i, ax in enumerate(panels)}) == 8
    assert "horizon 10,000, 3 runs" in fig._suptitle.get_text()


def test_regret_title_gives_horizon_and_runs_and_lines_differ(tmp_path, drawn):
    plot_regret(results(12, runs=2), tmp_path / "r.png")
    (fig,) = drawn
    assert "horizon 10,000, 2 runs" in fig._suptitle.get_text()
    assert len(set(lines(fig.axes[0]).values())) == 12


def pooling_curves(methods: list[str], reps: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frames = []
    for k, method in enumerate(methods):
        for topic, size in (("1", 40), ("2", 60)):
            r = reps if method in ("Random", "BLA", "BLA-NS", "eps-greedy") else 1
            found = np.cumsum(rng.random((r, size)) < 0.3 + 0.01 * k, axis=1)
            frames.append(pd.DataFrame(dict(method=method, topic=topic, repetition=np.repeat(np.arange(r), size),
                                            judgments=np.tile(np.arange(1, size + 1), r), relevant_found=found.ravel())))
    table = pd.concat(frames, ignore_index=True)
    table["method"] = pd.Categorical(table.method, categories=methods)
    return table


def test_pool_curves_of_13_methods_are_told_apart_in_family_panels_each_with_a_legend(tmp_path, drawn):
    plot_curves(pooling_curves(POOLING_METHODS), tmp_path / "c.png", title="2 topics, 5 runs, depth-10 pools")
    (fig,) = drawn
    overview, *families = fig.axes
    assert set(lines(overview)) == set(POOLING_METHODS)
    assert len(set(lines(overview).values())) == 13  # colour and line style differ for every method
    assert [ax.get_title() for ax in families] == ["baselines", "rank-biased contributions",
                                                   "MoveToFront and non-stationary bandits", "bandits"]
    shown = [m for ax in families for m in lines(ax)]
    assert sorted(shown) == sorted(POOLING_METHODS)  # each method highlighted in exactly one family panel
    for ax in fig.axes:
        assert ax.get_legend() is not None
        for method, look in lines(ax).items():
            assert look == lines(overview)[method]  # the same colour and style in every panel
    title = fig._suptitle.get_text()
    assert "2 topics, 5 runs" in title and "up to 60 judgments per topic" in title and "3 repetitions" in title


def test_pool_curves_of_a_few_methods_have_one_gain_panel_with_a_legend(tmp_path, drawn):
    plot_curves(pooling_curves(["MTF", "Random", "BLA"]), tmp_path / "c.png")
    (fig,) = drawn
    assert len(fig.axes) == 2 and all(ax.get_legend() is not None for ax in fig.axes)
    assert set(lines(fig.axes[1])) == {"MTF", "Random", "BLA"} and fig.axes[1].get_title() == "gain over Random"
