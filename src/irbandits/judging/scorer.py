"""A local scorer assessor: a sentence-transformers cross-encoder the user has installed (the ``scorer``
extra, ``pip install 'irbandits[scorer]'``) scores (query, passage) for both passages and prefers the
higher; a difference within the margin is "unsure". ``irbandits serve --scorer NAME=MODEL[,margin=X]``
registers one (:func:`parse_scorer_spec`)."""

from __future__ import annotations

import math
import threading

from irbandits.errors import IrbanditsError
from irbandits.judging.assessors import Meter, check_name


class CrossEncoderJudge:
    """An automatic assessor ``f(topic, query, left, right)`` -> "left", "right" or "unsure" from
    ``sentence_transformers.CrossEncoder(model_name)``; "unsure" when the scores differ by at most
    ``margin`` (ties always)."""

    def __init__(self, model_name: str, margin: float = 0.0):
        try:
            from sentence_transformers import CrossEncoder
        except ImportError:
            raise IrbanditsError("--scorer needs sentence-transformers: pip install 'irbandits[scorer]'") from None
        try:
            self.model = CrossEncoder(model_name)
        except Exception as exc:
            raise IrbanditsError(f"--scorer: cannot load the cross-encoder {model_name!r} ({exc})") from None
        self.model_name, self.margin = model_name, margin
        self.lock = threading.Lock()
        self.meter = Meter("calls", "unsure")

    def __repr__(self) -> str:
        return f"CrossEncoderJudge({self.model_name!r}, margin={self.margin})"

    def __call__(self, topic: str, query: str, left: str, right: str) -> str:
        with self.lock:   # one prediction at a time: the model is not made for concurrent calls
            a, b = (float(s) for s in self.model.predict([(query, left), (query, right)]))
            unsure = abs(a - b) <= self.margin
            self.meter.add(calls=1, unsure=int(unsure))
            if unsure:
                return "unsure"
        return "left" if a > b else "right"

    def usage(self, mine: bool = False) -> dict:
        """Totals since it was made (``mine``: of the calling thread's calls), in the keys of
        :meth:`irbandits.judging.llm.LLMJudge.usage` (``calls``: pairs scored; no tokens, no cost)."""
        counts = self.meter.counts(mine)
        return dict(calls=counts["calls"], cached=0, prompt_tokens=0, completion_tokens=0, cost_usd=0.0,
                    unsure=counts["unsure"], errors=0)


def parse_scorer_spec(text: str) -> tuple[str, CrossEncoderJudge]:
    """``NAME=MODEL[,margin=X]`` (``--scorer``) as ``(NAME, CrossEncoderJudge)``; MODEL is a
    sentence-transformers cross-encoder's name or directory."""
    head, eq, rest = text.partition("=")
    model, *parts = rest.split(",")
    if not eq or not model.strip():
        raise IrbanditsError(f"--scorer: give NAME=MODEL[,margin=X], got {text!r}")
    name = check_name(head.strip(), "--scorer")
    margin = 0.0
    for part in parts:
        key, eq, value = part.partition("=")
        if key.strip() != "margin" or not eq:
            raise IrbanditsError(f"--scorer {name}: unknown part {part.strip()!r} (the only key is margin=X)")
        try:
            margin = float(value)
        except ValueError:
            margin = math.nan
        if not math.isfinite(margin) or margin < 0:
            raise IrbanditsError(f"--scorer {name}: margin must be a number >= 0, got {value.strip()!r}")
    return name, CrossEncoderJudge(model.strip(), margin)
