"""Real HTTP servers in the test process for the endpoints the tests cannot run
(an embeddings model, a cross-encoder): they speak the wire protocol, so the
code under test goes through its real client, sockets and timeouts."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (status, body) where a str body is sent as-is and anything else as JSON.
Reply = tuple[int, Any]
Handler = Callable[[str, dict[str, Any]], Reply]


class FakeServer:
    """A running server: ``url`` to call, ``requests`` it received, ``handler`` swappable,
    ``close()`` to take it down before the ``with`` block ends (an endpoint that is down)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.url = ""
        self.close: Callable[[], None] = lambda: None


@contextmanager
def serve(handler: Handler) -> Iterator[FakeServer]:
    """Run ``handler(path, json_body) -> (status, body)`` on 127.0.0.1 on a free port."""
    fake = FakeServer(handler)

    class _Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            fake.requests.append((self.path, body))
            status, payload = fake.handler(self.path, body)
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    closed = []

    def close() -> None:
        if not closed:
            closed.append(True)
            server.shutdown()
            server.server_close()
            thread.join(5)

    fake.close = close
    try:
        yield fake
    finally:
        close()


# Topic words for a deterministic "semantic" embedding: texts sharing a topic point the
# same way even when they share no word (摔伤 and 意外伤害), which BM25 cannot see.
TOPICS = [
    ("摔伤", "意外", "伤害", "住院", "骨折", "受伤"),
    ("销售", "业绩", "营收", "卖了"),
    ("请假", "年假", "病假", "休假", "假期"),
    ("退货", "退款", "运费", "换货"),
]
DIM = len(TOPICS) + 2


def topic_vector(text: str) -> list[float]:
    """One axis per topic (count of its words in ``text``) plus two small constant axes."""
    return [float(sum(text.count(w) for w in words)) for words in TOPICS] + [0.1, 0.05]


def embeddings_reply(body: dict[str, Any], vector: Callable[[str], list[float]] = topic_vector,
                     ) -> Reply:
    """An OpenAI ``/v1/embeddings`` answer for ``body``."""
    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
    return 200, {"object": "list", "model": body.get("model", "fake"),
                 "data": [{"object": "embedding", "index": i, "embedding": vector(t)}
                          for i, t in enumerate(texts)],
                 "usage": {"prompt_tokens": 1, "total_tokens": 1}}
