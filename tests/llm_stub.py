"""A stub OpenAI-compatible chat-completions server for the tests (no network): ``POST
/v1/chat/completions`` on 127.0.0.1, answered in a thread, with a scripted behaviour and a log of every
request it got.

Behaviour, in order, for each request:

1. ``failures``: the next scripted failure, if any: an HTTP status (429 comes with ``Retry-After: 0``),
   or ``"slow"`` (the reply waits ``delay`` seconds, beyond the client's timeout);
2. ``replies``: the next scripted reply text, if any ("I cannot decide" is unparsable);
3. with probability ``bias`` (seeded), "1" whatever the passages (a position bias);
4. else ``prefer(prompt)``: the reply; by default :func:`stronger`, the passage whose text has the
   larger "strength N" (the first one shown is Passage 1).

Every reply has a ``usage`` field (``usage``: prompt and completion tokens). ``log`` has one dict per
request (``prompt``, ``model``, ``temperature``, ``authorization``, ``status``); ``max_in_flight`` is the
most requests it was answering at once (each is held ``hold`` seconds). Attributes may change mid-test
(``stub.prefer = ...`` turns the judge random)."""

from __future__ import annotations

import json
import random
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_STRENGTH = re.compile(r"strength (\d+)")


def stronger(prompt: str) -> str:
    """ "1" if the first passage shown has the larger "strength N", else "2"."""
    first, second = (int(s) for s in _STRENGTH.findall(prompt)[:2])
    return "1" if first > second else "2"


class Stub:
    """The server; use as a context manager (``with Stub() as stub: stub.url``)."""

    def __init__(self, prefer=stronger, bias: float = 0.0, seed: int = 0, failures=(), replies=(),
                 delay: float = 30.0, hold: float = 0.0, usage: tuple[int, int] = (100, 2)):
        self.prefer, self.bias, self.rng = prefer, bias, random.Random(seed)
        self.failures, self.replies = list(failures), list(replies)
        self.delay, self.hold, self.usage = delay, hold, usage
        self.log: list[dict] = []
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        self.closing = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Stub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def prompts(self, status: int = 200) -> list[str]:
        """The prompts of the logged requests answered with ``status``."""
        with self.lock:
            return [r["prompt"] for r in self.log if r["status"] == status]

    def _next(self, prompt: str) -> tuple[int | str, str]:
        """The scripted status (or "slow") and reply text of the next request."""
        with self.lock:
            failure = self.failures.pop(0) if self.failures else 200
            if failure != 200:
                return failure, ""
            if self.replies:
                return 200, self.replies.pop(0)
            biased = self.rng.random() < self.bias
        return 200, "1" if biased else self.prefer(prompt)

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                prompt = body["messages"][-1]["content"]
                status, text = stub._next(prompt)
                entry = dict(path=self.path, prompt=prompt, model=body.get("model"),
                             temperature=body.get("temperature"), authorization=self.headers.get("Authorization"),
                             status=status)
                with stub.lock:
                    stub.log.append(entry)
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                try:
                    stub.closing.wait(stub.hold)
                    if status == "slow":
                        stub.closing.wait(stub.delay)
                        status = 200
                finally:   # before the answer leaves: once it has, the client may send its next request
                    with stub.lock:
                        stub.in_flight -= 1
                self._send(status, text)

            def _send(self, status: int, text: str) -> None:
                if self.path != "/v1/chat/completions":
                    status = 404
                if status == 200:
                    p, c = stub.usage
                    data = {"id": "stub", "object": "chat.completion",
                            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                         "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}
                else:
                    data = {"error": {"message": f"stub status {status}"}}
                raw = json.dumps(data).encode()
                try:
                    self.send_response(status)
                    if status == 429:
                        self.send_header("Retry-After", "0")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:   # the client gave up (timed out) and closed the connection
                    pass

        return Handler
