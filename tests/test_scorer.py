"""The cross-encoder assessor (:mod:`irbandits.judging.scorer`) with a fake ``sentence_transformers``
module (no download): the higher score wins, a difference within the margin is unsure, spec errors,
the missing extra, and ``serve --scorer``."""

from __future__ import annotations

import re
import sys
import types

import pytest
from helpers import run_cli

from irbandits.errors import IrbanditsError
from irbandits.judging.scorer import CrossEncoderJudge, parse_scorer_spec


class FakeCrossEncoder:
    """Scores a (query, passage) pair by the passage's "strength N" / 10; remembers what it scored."""

    loaded: list[str] = []

    def __init__(self, name: str):
        if name == "missing/model":
            raise OSError("no such model on the hub")
        self.loaded.append(name)
        self.seen: list[tuple[str, str]] = []

    def predict(self, pairs):
        self.seen.extend(pairs)
        return [int(re.search(r"strength (\d+)", p).group(1)) / 10 for _, p in pairs]


@pytest.fixture
def fake(monkeypatch):
    module = types.ModuleType("sentence_transformers")
    module.CrossEncoder = FakeCrossEncoder
    monkeypatch.setitem(sys.modules, "sentence_transformers", module)
    FakeCrossEncoder.loaded = []
    return module


def test_the_higher_score_wins_and_a_small_difference_is_unsure(fake):
    judge = CrossEncoderJudge("cross-encoder/ms-marco-MiniLM-L-6-v2", margin=0.25)
    assert FakeCrossEncoder.loaded == ["cross-encoder/ms-marco-MiniLM-L-6-v2"]
    assert judge("t", "q", "strength 9", "strength 3") == "left"
    assert judge("t", "q", "strength 3", "strength 9") == "right"
    assert judge("t", "q", "strength 5", "strength 7") == "unsure"      # 0.2 apart: within the margin
    assert judge.model.seen[:2] == [("q", "strength 9"), ("q", "strength 3")]
    assert judge.usage() == dict(calls=3, cached=0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0, unsure=1,
                                 errors=0)
    tie = CrossEncoderJudge("m")                                          # margin 0: only ties are unsure
    assert [tie("t", "q", "strength 5", s) for s in ("strength 5", "strength 6")] == ["unsure", "right"]


@pytest.mark.parametrize("spec, message", [
    ("nothing", "--scorer: give NAME=MODEL[,margin=X]"),
    ("s=", "--scorer: give NAME=MODEL"),
    ("bad name=m", "a name uses letters, digits"),
    ("s=m,margin=-1", "--scorer s: margin must be a number >= 0, got '-1'"),
    ("s=m,margin=wide", "--scorer s: margin must be a number >= 0, got 'wide'"),
    ("s=m,colour=red", "--scorer s: unknown part 'colour=red'"),
    ("s=missing/model", "--scorer: cannot load the cross-encoder 'missing/model' (no such model on the hub)"),
])
def test_spec_errors(fake, spec, message):
    with pytest.raises(IrbanditsError) as err:
        parse_scorer_spec(spec)
    assert message in str(err.value)


def test_parse_and_the_missing_extra(fake, monkeypatch):
    name, judge = parse_scorer_spec("ce=my/model,margin=0.5")
    assert (name, judge.model_name, judge.margin) == ("ce", "my/model", 0.5)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)      # not installed
    with pytest.raises(IrbanditsError, match=r"needs sentence-transformers: pip install 'irbandits\[scorer\]'"):
        CrossEncoderJudge("m")


def test_serve_scorer_registers_the_name(fake, tmp_path, monkeypatch):
    import uvicorn

    apps = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    monkeypatch.setenv("IRBANDITS_ADMIN_TOKEN", "t" * 32)
    result = run_cli("serve", "--db", f"sqlite:///{tmp_path / 's.db'}", "--scorer", "ce=my/model,margin=0.1")
    assert result.exit_code == 0 and len(apps) == 1, result.output
    try:
        judge = apps[0].state.campaigns.automatic.get("ce")
        assert isinstance(judge, CrossEncoderJudge) and judge.margin == 0.1
        assert judge("t", "q", "strength 1", "strength 8") == "right"
    finally:
        apps[0].state.campaigns.stop()
        apps[0].state.engine.dispose()
