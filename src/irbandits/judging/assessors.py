"""Automatic assessors: callables ``f(topic, query, left_text, right_text) -> "left" | "right" |
"unsure"`` (a language-model judge, a classifier, a simulated assessor), found by name in a registry.
"unsure" leaves the pair to someone else (the service's hybrid campaigns send it to people). An
assessor may also have a ``usage(mine=False)`` method: a dict of its totals (``calls``, ``cached``,
``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``unsure``, ``errors``), with ``mine`` those of
the calling thread's calls only (a :class:`Meter` keeps both), as
:class:`irbandits.judging.llm.LLMJudge` has; :func:`metered` tells what one call cost.

Which code may judge is decided by whoever runs irbandits, never by a request. An
:class:`AssessorRegistry` knows three sources: the built-ins below (:data:`BUILTIN`), the
``irbandits.assessors`` entry-point group of installed packages, and what whoever starts the server
gives: ``NAME=module:function`` pairs (``irbandits serve --assessor``) and ready assessors
(``--llm``, :mod:`irbandits.judging.llm`; ``--scorer``, :mod:`irbandits.judging.scorer`). The service's
``POST /api/campaigns/{CID}/assessors`` names one of them; any other string is refused and nothing is
imported. The CLI's ``irbandits judge run --assessor`` takes a registered name or, since it runs the
caller's own code on the caller's machine, a ``module:function``.

The built-ins need no model and no ground truth; they are what an organiser tries a campaign's
quality rules with, and a floor a real judge must beat:

- ``lexical``: the passage containing more of the query's distinct words (a lexical-overlap baseline);
- ``coin``: a fair coin, fixed per pair (a random clicker: the test pairs should catch it);
- ``left``: always the left passage (a position-biased spammer: the left share shows it).
"""

from __future__ import annotations

import hashlib
import importlib
import re
import threading
from importlib.metadata import entry_points
from typing import Callable

from irbandits.errors import IrbanditsError

Assessor = Callable[[str, str, str, str], str]
USAGE = ("calls", "cached", "prompt_tokens", "completion_tokens", "cost_usd")  # what one call costs
GROUP = "irbandits.assessors"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_WORD = re.compile(r"\w+")


def lexical(topic: str, query: str, left: str, right: str) -> str:
    """The passage with more of the query's distinct words (ties: the one where they are denser, then
    :func:`coin`, so that no side is favoured).

    >>> lexical("1", "why does bread go stale", "Stale bread is dry bread.", "Sourdough rises slowly.")
    'left'
    """
    terms = {w for w in _WORD.findall(query.lower()) if len(w) > 2}

    def score(text: str) -> tuple[int, float]:
        words = _WORD.findall(text.lower())
        hits = [w for w in words if w in terms]
        return len(set(hits)), len(hits) / max(len(words), 1)

    a, b = score(left), score(right)
    return coin(topic, query, left, right) if a == b else "left" if a > b else "right"


def coin(topic: str, query: str, left: str, right: str) -> str:
    """A fair coin, the same for the same pair shown the same way (a random assessor).

    >>> coin("1", "q", "a text", "another") == coin("1", "q", "a text", "another")
    True
    """
    digest = hashlib.sha256("\x1f".join((topic, query, left, right)).encode("utf-8", "surrogatepass")).digest()
    return "left" if digest[0] < 128 else "right"


def always_left(topic: str, query: str, left: str, right: str) -> str:
    """Always the left passage (an assessor who does not read)."""
    return "left"


BUILTIN: dict[str, Assessor] = {"lexical": lexical, "coin": coin, "left": always_left}


def load_callable(spec: str, what: str = "--assessor") -> Assessor:
    """The callable that ``module:function`` names (for whoever runs irbandits, never for a request);
    an unknown module or function is an error naming it."""
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise IrbanditsError(f"{what}: give module:function, got {spec!r}")
    try:
        found = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise IrbanditsError(f"{what} {spec}: cannot import {module} ({exc})") from None
    except AttributeError:
        raise IrbanditsError(f"{what} {spec}: {module} has no {name}") from None
    if not callable(found):
        raise IrbanditsError(f"{what} {spec}: {name} is not callable")
    return found


def check_name(name: str, what: str) -> str:
    """``name`` if it may name an assessor (letters, digits, . _ -, at most 64), else an error."""
    if not _NAME.fullmatch(name):
        raise IrbanditsError(f"{what} {name[:80]!r}: a name uses letters, digits and . _ - (at most 64)")
    return name


def parse_assessor_option(text: str) -> tuple[str, str]:
    """``NAME=module:function`` of ``irbandits serve --assessor`` as ``(NAME, module:function)``.

    >>> parse_assessor_option("llm=my_judges:gpt")
    ('llm', 'my_judges:gpt')
    """
    name, eq, spec = text.partition("=")
    if not eq or not _NAME.fullmatch(name.strip()):
        raise IrbanditsError(f"--assessor: give NAME=module:function (NAME: letters, digits, . _ -), got {text!r}")
    return name.strip(), spec.strip()


class AssessorRegistry:
    """The automatic assessors one process may run, by name: ``given`` (``NAME -> module:function``,
    imported now, so a mistake stops the start, or ``NAME -> assessor``, a ready one such as an
    :class:`~irbandits.judging.llm.LLMJudge`), then the built-ins, then the ``irbandits.assessors``
    entry points (imported when first named)."""

    def __init__(self, given: dict[str, str | Assessor] | None = None):
        self.loaded: dict[str, Assessor] = dict(BUILTIN)
        for name, spec in (given or {}).items():
            check_name(name, "--assessor")
            self.loaded[name] = spec if callable(spec) else load_callable(spec, f"--assessor {name}")
        self.plugins = {ep.name: ep for ep in entry_points(group=GROUP) if ep.name not in self.loaded}

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted({*self.loaded, *self.plugins})

    def get(self, name: str, what: str = "automatic") -> Assessor:
        """The assessor registered as ``name``; any other string is an error listing the names (nothing
        is imported for it)."""
        found = self.loaded.get(name)
        if found is not None:
            return found
        plugin = self.plugins.get(name)
        if plugin is None:
            shown = name if len(name) <= 80 else name[:77] + "..."
            raise IrbanditsError(f"{what}: no automatic assessor is registered as {shown!r}; registered: "
                                 f"{', '.join(self.names())} (whoever starts the server adds more with "
                                 f"--assessor NAME=module:function or --llm NAME=URL)")
        try:
            found = plugin.load()
        except Exception as exc:
            raise IrbanditsError(f"{what} {name}: the installed plugin {plugin.value} fails to load ({exc})") from None
        if not callable(found):
            raise IrbanditsError(f"{what} {name}: the installed plugin {plugin.value} is not callable")
        self.loaded[name] = found
        return found


def load_assessor(spec: str) -> Assessor:
    """The CLI's assessor: a registered name, or the caller's own ``module:function``."""
    if ":" in spec:
        return load_callable(spec)
    return AssessorRegistry().get(spec, "--assessor")


def ask(judge: Assessor, spec: str, topic: str, query: str, left: str, right: str) -> str:
    """One answer of the assessor, checked: "left", "right" or "unsure" (the assessor leaves the pair to
    someone else)."""
    side = judge(topic, query, left, right)
    if side not in ("left", "right", "unsure"):
        raise IrbanditsError(f"assessor {spec} answered {side!r} on topic {topic}; it must return 'left', "
                             f"'right' or 'unsure'")
    return side


class Meter:
    """An assessor's usage counts, in total and per calling thread (so that threads sharing one assessor,
    as the service's campaigns do, each see what their own calls cost).

    >>> m = Meter("calls", "unsure"); m.add(calls=2); m.counts(), m.counts(mine=True)
    ({'calls': 2, 'unsure': 0}, {'calls': 2, 'unsure': 0})
    """

    def __init__(self, *names: str):
        self.lock = threading.Lock()
        self.total = dict.fromkeys(names, 0)
        self.local = threading.local()

    def _mine(self) -> dict:
        counts = getattr(self.local, "counts", None)
        if counts is None:
            counts = self.local.counts = dict.fromkeys(self.total, 0)
        return counts

    def add(self, **added: int) -> None:
        with self.lock:
            mine = self._mine()
            for name, value in added.items():
                self.total[name] += value
                mine[name] += value

    def counts(self, mine: bool = False) -> dict:
        """The totals, or (``mine``) the calling thread's."""
        with self.lock:
            return dict(self._mine() if mine else self.total)


def metered(judge: Assessor, call: Callable[[], str]) -> tuple[str, dict | None]:
    """``call()`` (which asks ``judge``) and what it cost: the :data:`USAGE` differences of
    ``judge.usage(mine=True)`` over it, or None for an assessor that counts nothing."""
    usage = getattr(judge, "usage", None)
    if usage is None:
        return call(), None
    before = usage(mine=True)
    result = call()
    after = usage(mine=True)
    return result, {k: after.get(k, 0) - before.get(k, 0) for k in USAGE}
