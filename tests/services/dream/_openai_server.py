"""A real OpenAI-compatible ``/v1/chat/completions`` server on loopback, playing a script.

Each script item is the assistant's text (a ``str``) or a :class:`Step` (status, raw body, delay,
headers) for hostile behaviours: errors, timeouts, bodies that are not JSON. Every request body
and its headers are recorded.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    status: int = 200
    content: str | None = None
    body: bytes | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class FakeOpenAI:
    def __init__(
        self, script: list[str | Step], answer: Callable[[dict[str, Any]], str] | None = None
    ) -> None:
        self.script = list(script)
        self.answer = answer  # answers every request once the script is spent (the order is free)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.url = ""

    def next_step(self, body: dict[str, Any], headers: dict[str, str]) -> Step:
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self.script and self.answer is not None:
                return Step(content=self.answer(body))
            if not self.script:
                return Step(status=500, body=b'{"error": "script exhausted"}')
            item = self.script.pop(0)
        return Step(content=item) if isinstance(item, str) else item


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            step = fake.next_step(body, {k.lower(): v for k, v in self.headers.items()})
            if step.delay:
                time.sleep(step.delay)
            if step.body is not None:
                payload = step.body
            else:
                payload = json.dumps(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": step.content}}],
                    }
                ).encode()
            try:
                self.send_response(step.status)
                for name, value in step.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
            pass

    return Handler


@contextlib.contextmanager
def fake_openai(
    script: list[str | Step], answer: Callable[[dict[str, Any]], str] | None = None
) -> Iterator[FakeOpenAI]:
    """Serve ``script`` on 127.0.0.1 (a free port), then ``answer(body)`` for each further
    request; ``fake.url`` is the ``/v1`` root."""
    fake = FakeOpenAI(script, answer)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
