"""Language-model pairwise assessors on any OpenAI-compatible chat-completions endpoint (vLLM, Ollama,
llama.cpp's server, hosted APIs).

An :class:`LLMJudge` is an automatic assessor (:mod:`irbandits.judging.assessors`): it shows the query
and the two passages in a prompt (:data:`DEFAULT_TEMPLATE`, in the style of the published pairwise
prompts of Qin et al. 2023 and Thomas et al. 2023, or the organiser's own template), asks in both orders
to cancel position bias, and answers "left" or "right" when both orders agree, else "unsure" (the
service's hybrid campaigns send those pairs to people). Replies are cached by endpoint, model and prompt
(in memory, or in a SQLite file shared across runs, so a rerun makes no calls); tokens and cost are
counted (:meth:`LLMJudge.usage`).

Whoever runs irbandits configures it, never a request: ``irbandits serve --llm SPEC`` and ``irbandits
judge run --llm SPEC`` take the spec of :func:`parse_llm_spec`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable
from urllib.parse import urlsplit

from irbandits.errors import IrbanditsError
from irbandits.judging.assessors import Meter, check_name

DEFAULT_TEMPLATE = """\
You are a search quality rater evaluating the relevance of passages to a search query.

Given the query "{query}", which of the following two passages is more relevant to the query?

Passage 1: {passage1}

Passage 2: {passage2}

Reply with 1 or 2 only: 1 if Passage 1 is more relevant, 2 if Passage 2 is more relevant."""
PLACEHOLDERS = ("{query}", "{passage1}", "{passage2}")
_PLACEHOLDER = re.compile(r"\{(query|passage1|passage2)\}")
_CHOICE = re.compile(r"(?<![\w.,])([12])(?![\w]|[.,]\d)")   # a standalone 1 or 2 ("Passage 2", "1." count)
RETRIED = (429, 500, 502, 503, 504)
MAX_WAIT = 60.0


def parse_reply(text: str) -> int | None:
    """The passage a reply prefers: its first standalone 1 or 2, else None.

    >>> [parse_reply(t) for t in ("2", "Passage 1.", "**Passage 2** is better", "I cannot decide", "10 or 1.5")]
    [2, 1, 2, None, None]
    """
    found = _CHOICE.search(text)
    return int(found.group(1)) if found else None


def fill(template: str, query: str, passage1: str, passage2: str) -> str:
    """The prompt: ``template`` with its placeholders replaced in one pass (a passage that contains
    ``{query}`` stays as it is).

    >>> fill("Q: {query} / {passage1} / {passage2}", "q", "a {passage2}", "b")
    'Q: q / a {passage2} / b'
    """
    values = {"query": query, "passage1": passage1, "passage2": passage2}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def load_template(path: str | Path) -> str:
    """An organiser's template file: text with ``{query}``, ``{passage1}`` and ``{passage2}``; a missing
    placeholder is an error naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IrbanditsError(f"template={path}: cannot read it ({exc.__class__.__name__})") from None
    missing = [p for p in PLACEHOLDERS if p not in text]
    if missing:
        raise IrbanditsError(f"template={path}: no {', '.join(missing)} placeholder (a template shows "
                             f"{', '.join(PLACEHOLDERS)})")
    return text


class _Cache:
    """Replies by key: in memory, or in a SQLite file (``path``) shared across runs and processes."""

    def __init__(self, path: str | Path | None = None):
        self.lock = threading.Lock()
        self.memory: dict[str, str] = {}
        self.db = None
        if path is not None:
            try:
                self.db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
                self.db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
                self.db.commit()
            except sqlite3.Error as exc:
                raise IrbanditsError(f"cache={path}: not a usable SQLite file ({exc})") from None

    def get(self, key: str) -> str | None:
        with self.lock:
            if self.db is None:
                return self.memory.get(key)
            row = self.db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            return None if row is None else row[0]

    def put(self, key: str, reply: str) -> None:
        with self.lock:
            if self.db is None:
                self.memory[key] = reply
            else:
                self.db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, reply))
                self.db.commit()


class LLMJudge:
    """A pairwise assessor on an OpenAI-compatible endpoint, callable as ``f(topic, query, left, right)``
    -> "left", "right" or "unsure"; safe to call from several threads.

    Parameters
    ----------
    url
        The API's base URL, ending in ``/v1`` (``http://localhost:11434/v1`` for Ollama); replies come
        from ``POST {url}/chat/completions`` with ``temperature`` 0.
    model
        The served model's name (vLLM and Ollama need it; llama.cpp's server takes any).
    key
        Sent as ``Authorization: Bearer KEY`` when given (never shown).
    price_in, price_out
        US dollars per million prompt / completion tokens (the cost in :meth:`usage`).
    template
        The prompt, with ``{query}``, ``{passage1}`` and ``{passage2}`` (:data:`DEFAULT_TEMPLATE`).
    concurrency
        Requests in flight at once, over every thread.
    cache
        A SQLite file of replies shared across runs; None keeps them in memory.
    tries
        Attempts per request: 429, 5xx, timeouts and connection errors are retried with exponential
        back-off (``backoff`` seconds, doubled each time, at most 60; a Retry-After header is
        honoured), then an error names the endpoint and the last status.
    timeout
        Seconds to wait for one reply.
    sleep
        How to wait between tries (tests pass a recorder).
    """

    def __init__(self, url: str, model: str = "default", key: str | None = None, price_in: float = 0.0,
                 price_out: float = 0.0, template: str = DEFAULT_TEMPLATE, concurrency: int = 4,
                 cache: str | Path | None = None, tries: int = 5, timeout: float = 60.0, backoff: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep):
        try:
            import httpx
        except ImportError:
            raise IrbanditsError("a language-model assessor needs httpx: pip install 'irbandits[llm]'") from None
        self.url, self.model, self.template = url.rstrip("/"), model, template
        self.price_in, self.price_out = price_in, price_out
        self.concurrency, self.tries, self.backoff, self.sleep = concurrency, tries, backoff, sleep
        self.cache = _Cache(cache)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(timeout=timeout, headers=headers)
        self.slots = threading.Semaphore(concurrency)
        self.meter = Meter("calls", "cached", "prompt_tokens", "completion_tokens", "unsure", "errors")

    def __repr__(self) -> str:
        return f"LLMJudge({self.url!r}, model={self.model!r})"

    def __call__(self, topic: str, query: str, left: str, right: str) -> str:
        return self.decide(topic, query, left, right)[0]

    def decide(self, topic: str, query: str, left: str, right: str) -> tuple[str, str | None]:
        """The verdict ("left", "right" or "unsure") and the side the first order (left shown as Passage
        1) preferred, None when its reply did not parse."""
        first = {1: "left", 2: "right"}.get(parse_reply(self.reply(fill(self.template, query, left, right))))
        second = {1: "right", 2: "left"}.get(parse_reply(self.reply(fill(self.template, query, right, left))))
        if first is not None and first == second:
            return first, first
        self._count(unsure=1)
        return "unsure", first

    def reply(self, prompt: str) -> str:
        """The model's reply to ``prompt``: from the cache, else from the endpoint (then cached)."""
        key = hashlib.sha256(json.dumps([self.url, self.model, prompt]).encode("utf-8", "surrogatepass")).hexdigest()
        text = self.cache.get(key)
        if text is not None:
            self._count(cached=1)
            return text
        body = self._post({"model": self.model, "messages": [{"role": "user", "content": prompt}],
                           "temperature": 0})
        try:
            text = body["choices"][0]["message"]["content"]
            if not isinstance(text, str):
                raise TypeError(type(text).__name__)
        except (KeyError, IndexError, TypeError) as exc:
            raise IrbanditsError(f"LLM endpoint {self.url}: not a chat-completions reply (no "
                                 f"choices[0].message.content: {exc})") from None
        used = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        self._count(calls=1, prompt_tokens=_tokens(used, "prompt_tokens"),
                    completion_tokens=_tokens(used, "completion_tokens"))
        self.cache.put(key, text)
        return text

    def _post(self, payload: dict) -> dict:
        """One chat completion, retried on 429, 5xx, timeouts and connection errors."""
        import httpx

        last = ""
        for attempt in range(self.tries):
            wait = min(self.backoff * 2 ** attempt, MAX_WAIT)
            try:
                with self.slots:
                    r = self.client.post(f"{self.url}/chat/completions", json=payload)
            except httpx.TimeoutException:
                last = "timed out"
            except httpx.TransportError as exc:
                last = f"connection error ({exc.__class__.__name__})"
            else:
                if r.status_code == 200:
                    try:
                        return r.json()
                    except ValueError:
                        raise IrbanditsError(f"LLM endpoint {self.url}: the reply is not JSON") from None
                last = f"HTTP {r.status_code}"
                if r.status_code not in RETRIED:
                    self._count(errors=1)
                    raise IrbanditsError(f"LLM endpoint {self.url}: {last} (not retried)")
                wait = _retry_after(r.headers.get("retry-after"), wait)
            self._count(errors=1)
            if attempt + 1 < self.tries:
                self.sleep(wait)
        raise IrbanditsError(f"LLM endpoint {self.url}: no reply after {self.tries} tries (last: {last})")

    def _count(self, **added: int) -> None:
        self.meter.add(**added)

    def usage(self, mine: bool = False) -> dict:
        """Totals since this judge was made (``mine``: of the calling thread's calls): ``calls`` (replies
        from the endpoint), ``cached`` (replies from the cache), ``prompt_tokens`` and
        ``completion_tokens`` (as the endpoint's ``usage`` reports them), ``cost_usd`` (tokens x
        prices), ``unsure`` (pairs) and ``errors`` (failed attempts, retried or not)."""
        counts = self.meter.counts(mine)
        cost = (counts["prompt_tokens"] * self.price_in + counts["completion_tokens"] * self.price_out) / 1e6
        return counts | {"cost_usd": cost}


def _tokens(used: dict, name: str) -> int:
    value = used.get(name)
    return value if isinstance(value, int) and value >= 0 else 0


def _retry_after(header: str | None, default: float) -> float:
    """The seconds a Retry-After header asks for (at most 60), else ``default``."""
    try:
        seconds = float(header)
    except (TypeError, ValueError):
        return default
    return min(max(seconds, 0.0), MAX_WAIT) if math.isfinite(seconds) else default


SPEC_KEYS = ("model", "key-env", "price-in", "price-out", "template", "concurrency", "cache", "tries", "timeout")
_NUMBERS = {  # spec key: LLMJudge argument, type, check, what it must be
    "price-in": ("price_in", float, lambda x: x >= 0, "a number >= 0"),
    "price-out": ("price_out", float, lambda x: x >= 0, "a number >= 0"),
    "concurrency": ("concurrency", int, lambda x: x >= 1, "a whole number >= 1"),
    "tries": ("tries", int, lambda x: x >= 1, "a whole number >= 1"),
    "timeout": ("timeout", float, lambda x: x > 0, "a number > 0"),
}


def parse_llm_spec(text: str) -> tuple[str, LLMJudge]:
    """``NAME=URL[,model=M][,key-env=VAR][,price-in=USD_PER_MTOK][,price-out=USD_PER_MTOK][,template=FILE]
    [,concurrency=N][,cache=FILE][,tries=N][,timeout=SECONDS]`` (``--llm``) as ``(NAME, LLMJudge)``;
    URL is the API's base, ending in ``/v1``; the key is read from the environment variable VAR."""
    head, eq, rest = text.partition("=")
    if not eq:
        raise IrbanditsError(f"--llm: give NAME=URL[,model=M,...], got {text!r}")
    name = check_name(head.strip(), "--llm")
    url, *parts = rest.split(",")
    url = _check_url(url.strip(), name)
    options: dict[str, str] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        key = key.strip()
        if key not in SPEC_KEYS:
            raise IrbanditsError(f"--llm {name}: unknown key {key!r} (keys: {', '.join(SPEC_KEYS)})")
        if not eq or not value.strip():
            raise IrbanditsError(f"--llm {name}: {key} needs a value ({key}=...)")
        if key in options:
            raise IrbanditsError(f"--llm {name}: {key} is given twice")
        options[key] = value.strip()
    kwargs: dict = {"model": options.get("model", "default"), "cache": options.get("cache")}
    if "key-env" in options:
        kwargs["key"] = os.environ.get(options["key-env"])
        if not kwargs["key"]:
            raise IrbanditsError(f"--llm {name}: the environment variable {options['key-env']} (key-env) is not set")
    if "template" in options:
        kwargs["template"] = load_template(options["template"])
    for key, (arg, kind, ok, bound) in _NUMBERS.items():
        if key in options:
            kwargs[arg] = _number(options[key], kind, ok, f"--llm {name}: {key} must be {bound}")
    return name, LLMJudge(url, **kwargs)


def _check_url(url: str, name: str) -> str:
    """An http(s) base URL with a host, no credentials, query or fragment."""
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or parts.port > 0   # .port raises on a bad port
    except ValueError:
        parts, port_ok = None, False
    if not port_ok or parts.scheme not in ("http", "https") or not parts.hostname:
        raise IrbanditsError(f"--llm {name}: the URL must be http(s)://HOST[:PORT]/PATH (the API's base, "
                             f"ending in /v1), got {url[:80]!r}")
    if parts.username is not None or parts.password is not None:
        raise IrbanditsError(f"--llm {name}: no credentials in the URL; give the key in an environment "
                             f"variable (key-env=VAR)")
    if parts.query or parts.fragment:
        raise IrbanditsError(f"--llm {name}: the URL is the API's base, without ? or #")
    return url


def _number(value: str, kind: type, ok: Callable[[float], bool], message: str) -> float | int:
    """``value`` as ``kind`` (int or float), finite and ``ok``, else an error: ``message``, got value."""
    try:
        number = kind(value)
    except ValueError:
        number = None
    if number is None or not math.isfinite(number) or not ok(number):
        raise IrbanditsError(f"{message}, got {value!r}")
    return number
