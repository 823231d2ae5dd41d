"""Click models fitted to click logs (issue 16, item 5): each model recovers the parameters it was
sampled from within their standard errors; saved fits load and drive the simulator."""

from __future__ import annotations

import json

import numpy as np
import pytest

from irbandits.clicks.click_models import ClickModel
from irbandits.clicks.environment import ClickEnvironment
from irbandits.clicks.fitting import (
    ClickLog,
    FittedClickModel,
    evaluate_click_model,
    fit_click_model,
    read_click_log,
    sample_click_log,
)
from irbandits.clicks.ltr import read_ltr
from irbandits.errors import IrbanditsError

L = 4


def shown(sessions=8000, queries=4, docs=5, seed=0):
    """Each session: a random query and L of its documents in random order."""
    rng = np.random.default_rng(seed)
    q = rng.integers(queries, size=sessions)
    return q[:, None] * docs + np.argsort(rng.random((sessions, docs)), axis=1)[:, :L], queries * docs


def truth(model, items, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.15, 0.85, items)
    if model == "pbm":
        return dict(attractiveness=a, examination=np.array([1.0, 0.75, 0.55, 0.4]))
    if model == "ubm":
        g = rng.uniform(0.3, 0.95, (L, L + 1))
        g[0, 0] = 1.0
        return dict(attractiveness=a, examination=g)
    if model == "dcm":
        return dict(attractiveness=a, continuation=np.array([0.8, 0.65, 0.5, 0.4]))
    return dict(attractiveness=a, satisfaction=rng.uniform(0.2, 0.8, items),
                continuation=0.75 if model == "dbn" else 1.0)


@pytest.mark.parametrize("model", ["pbm", "ubm", "dbn", "sdbn", "dcm"])
def test_fit_recovers_known_parameters_within_standard_errors(model):
    keys, items = shown()
    true = truth(model, items)
    fit = fit_click_model(sample_click_log(model, true, keys, seed=3), model)
    z = []
    for name, value in true.items():
        est, se = np.ravel(fit.params[name]), np.ravel(fit.se[name])
        estimated = se > 0                              # fixed parameters (PBM's rank 1 ...) have se 0
        assert np.isfinite(se[estimated]).all() and (se[estimated] < 0.1).all()
        z.extend((est - np.ravel(value))[estimated] / se[estimated])
    z = np.array(z)
    assert np.abs(z).max() < 4.0 and np.sqrt(np.mean(z ** 2)) < 1.5, (model, np.round(z, 2))
    # a wrong model fits the held-out sessions worse than the fitted one
    train, held = sample_click_log(model, true, keys, seed=4).split(0.3)
    right = fit_click_model(train, model).evaluate(held)
    wrong = fit_click_model(train, "pbm" if model != "pbm" else "sdbn").evaluate(held)
    assert right["loglik"] > wrong["loglik"] and 1.0 < right["perplexity"] < 2.0
    assert len(right["perplexity_at_rank"]) == L


def test_fitted_by_grade_drives_the_simulator(tmp_path, data):
    rng = np.random.default_rng(0)
    grades = rng.integers(0, 5, size=(6000, 10))
    nav = ClickModel.named("navigational")
    log = sample_click_log("sdbn", dict(attractiveness=nav.click, satisfaction=nav.stop, continuation=1.0), grades,
                           seed=1, by="grade")
    fit = fit_click_model(log, "sdbn")
    path = fit.save(tmp_path / "m.json")
    back = FittedClickModel.load(path)
    assert back.model == "sdbn" and np.allclose(back.params["attractiveness"], fit.params["attractiveness"])
    m = ClickModel.named(str(path))
    assert np.abs(m.click - nav.click).max() < 0.05 and np.abs(m.stop - nav.stop).max() < 0.1
    # the simulator's form and the fitted form give the same probabilities
    assert evaluate_click_model(m, log)["loglik"] == pytest.approx(fit.evaluate(log)["loglik"], rel=1e-9)
    # and it is accepted wherever a click model is
    env = ClickEnvironment(read_ltr(data / "ltr" / "lightgbm-lambdarank-sample" / "rank.test").rankers([0, 10]),
                           str(path), "team-draft")
    assert env.model.name == "sdbn-fitted"
    pbm = fit_click_model(log, "pbm").click_model()
    assert pbm.exam[0] == 1.0 and len(pbm.exam) == 10
    with pytest.raises(IrbanditsError, match="cannot drive"):
        fit_click_model(log, "ubm").click_model()
    per_doc = fit_click_model(ClickLog(log.keys, log.clicks), "dcm")
    with pytest.raises(IrbanditsError, match="fitted per document"):
        per_doc.click_model()
    (tmp_path / "bad.json").write_text('{"model": "dbn"}')
    with pytest.raises(IrbanditsError, match="not a saved click model fit"):
        ClickModel.named(str(tmp_path / "bad.json"))


def test_read_click_log_and_cli(tmp_path, cli):
    keys, items = shown(3000, queries=3, docs=4)
    log = sample_click_log("dcm", truth("dcm", items), keys, seed=5)
    path = tmp_path / "clicks.jsonl"
    path.write_text("".join(json.dumps(dict(query=f"q{k[0] // 4}", docs=[f"d{x}" for x in k],
                                            clicks=np.flatnonzero(c).tolist(), grades=(k % 3).tolist())) + "\n"
                            for k, c in zip(keys, log.clicks)))
    read = read_click_log(path)
    assert read.sessions == 3000 and len(read.items) == items and read.clicks.sum() == log.clicks.sum()
    assert read_click_log(path, by="grade").items == [0, 1, 2]
    r = cli("clicks", "fit", path, "--model", "dcm", "--out", tmp_path / "f.json")
    assert r.exit_code == 0, r.output
    assert "held-out sessions" in r.output and FittedClickModel.load(tmp_path / "f.json").model == "dcm"
    for line, message in [('{"docs": [], "clicks": []}', "needs 'docs'"),
                          ('{"docs": ["a"], "clicks": [1]}', "'clicks' must be positions 0..0"),
                          ('{"docs": ["a"], "clicks": [0]}', "fitting by grade needs 'grades'")]:
        path.write_text(line + "\n")
        with pytest.raises(IrbanditsError, match=f"clicks.jsonl, line 1: {message}"):
            read_click_log(path, by="grade" if "grades" in message else "document")
    with pytest.raises(IrbanditsError, match="unknown click model 'ccm' to fit"):
        fit_click_model(log, "ccm")
