"""The node and the store when a dedicated Redis server goes down and comes back."""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _redis_servers import _start, free_port
from memstack.compat.rocketride import PersistentMemoryNode
from memstack.foundation.errors import EngineUnavailable

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


class _Server:
    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = _start(self.port, self.workdir)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def server(tmp_path: Path) -> Iterator[_Server]:
    srv = _Server(tmp_path)
    srv.start()
    yield srv
    srv.stop()


def _bounded(call: Any, seconds: float = 30.0) -> Any:
    """Run ``call`` on a thread; fail the test (instead of hanging) if it does not return in time."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed back to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"call did not return within {seconds}s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def test_node_keeps_forwarding_through_an_outage(server: _Server, caplog: pytest.LogCaptureFixture) -> None:
    config = {"backend": "redis", "redis_host": "127.0.0.1", "redis_port": server.port}
    node = PersistentMemoryNode(config)
    node.open()
    try:
        node.write_answers({"text": "a1", "metadata": {"session_id": "o"}})
        q = {"text": "q", "metadata": {"session_id": "o"}}
        assert node.write_questions(q)["metadata"]["memory_context"]["answer_count"] == 1

        server.stop()
        caplog.set_level(logging.WARNING, logger="memstack.compat.rocketride.node")
        out = _bounded(lambda: node.write_questions(q))
        assert out == q
        assert out is not q
        answer = {"text": "a2", "metadata": {"session_id": "o"}}
        assert _bounded(lambda: node.write_answers(answer)) == answer
        assert any(r.levelno == logging.WARNING for r in caplog.records)
        assert node.store is not None
        store = node.store
        with pytest.raises(EngineUnavailable):
            _bounded(lambda: store.sessions.get("o", "answer_count"))

        server.start()  # same port, empty (no persistence)
        node.write_answers({"text": "a3", "metadata": {"session_id": "o"}})
        ctx = node.write_questions(q)["metadata"]["memory_context"]
        assert ctx == {"answer_count": 1, "last_answer": "a3"}
    finally:
        node.close()


def test_strict_node_raises(server: _Server) -> None:
    config = {"backend": "redis", "redis_host": "127.0.0.1", "redis_port": server.port, "strict": True}
    node = PersistentMemoryNode(config)
    node.open()
    try:
        server.stop()
        with pytest.raises(EngineUnavailable):
            _bounded(lambda: node.write_questions({"metadata": {"session_id": "x"}}))
        with pytest.raises(EngineUnavailable):
            _bounded(lambda: node.write_answers({"metadata": {"session_id": "x"}}))
    finally:
        node.close()
