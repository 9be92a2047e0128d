"""A model endpoint that never finishes or never stops: the whole call ends at its deadline,
however slowly the reply trickles, and a reply past the size cap is refused as it streams in."""

from __future__ import annotations

import contextlib
import socket
import threading
import tracemalloc
from collections.abc import Callable, Iterator

import pytest

from memstack.foundation.errors import ChatError, InvalidConfiguration
from memstack.llm.chat import ChatClient, chat_model_from_env


class Hostile:
    """A loopback HTTP server whose every answer is written by ``answer(conn, stop)``; it
    counts the bytes it managed to send before the client went away."""

    def __init__(self, answer: Callable[[socket.socket, threading.Event], int]) -> None:
        self.answer = answer
        self.sent = 0
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            conn, _ = self.listener.accept()
            with conn:
                conn.recv(65536)  # the request (small): its content does not matter here
                with contextlib.suppress(OSError):
                    self.sent = self.answer(conn, self.stop)


@contextlib.contextmanager
def hostile(answer: Callable[[socket.socket, threading.Event], int]) -> Iterator[Hostile]:
    server = Hostile(answer)
    server.thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.listener.close()
        server.thread.join(timeout=10)


def _trickle(conn: socket.socket, stop: threading.Event) -> int:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    sent = 0
    while sent < 1000 and not stop.wait(0.2):  # a byte at a time, each well inside the read timeout
        conn.sendall(b" ")
        sent += 1
    return sent


def _flood(declare: bool) -> Callable[[socket.socket, threading.Event], int]:
    size = 600 * 1024 * 1024

    def answer(conn: socket.socket, stop: threading.Event) -> int:
        length = f"Content-Length: {size}\r\n" if declare else "Connection: close\r\n"
        conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{length}\r\n".encode())
        piece, sent = b"[" + b"1," * 32767, 0
        while sent < size and not stop.is_set():
            conn.sendall(piece)
            sent += len(piece)
        return sent

    return answer


def test_a_trickled_reply_is_cut_at_the_whole_call_deadline() -> None:
    with hostile(_trickle) as server:
        client = ChatClient(server.url, "m", timeout=5, deadline=1.0, retries=0)
        with pytest.raises(ChatError, match="deadline"):
            client.complete([{"role": "user", "content": "hi"}])
        server.thread.join(timeout=30)
    assert server.sent < 1000  # the server was still trickling when the client cut it


@pytest.mark.parametrize("declare", [True, False], ids=["declared", "streamed"])
def test_a_600_mb_reply_is_refused_at_the_cap_with_memory_bounded(declare: bool) -> None:
    with hostile(_flood(declare)) as server:
        client = ChatClient(server.url, "m", retries=0, max_reply_bytes=1 << 20)
        tracemalloc.start()
        try:
            with pytest.raises(ChatError, match="larger than 1048576 bytes"):
                client.complete([{"role": "user", "content": "hi"}])
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        server.stop.set()
        server.thread.join(timeout=30)
    assert peak < 8 * 1024 * 1024
    assert server.sent < 64 * 1024 * 1024  # the rest of the 600 MB was never asked for


def test_the_deadline_and_cap_come_from_the_environment() -> None:
    env = {"MEMSTACK_CHAT_URL": "http://127.0.0.1:9/v1", "MEMSTACK_CHAT_MODEL": "m"}
    chosen = chat_model_from_env(
        {**env, "MEMSTACK_CHAT_DEADLINE": "7.5", "MEMSTACK_CHAT_MAX_REPLY_BYTES": "4096"}
    )
    assert chosen is not None and (chosen.deadline, chosen.max_reply_bytes) == (7.5, 4096)
    with pytest.raises(InvalidConfiguration, match="MEMSTACK_CHAT_DEADLINE"):
        chat_model_from_env({**env, "MEMSTACK_CHAT_DEADLINE": "soon"})
    with pytest.raises(InvalidConfiguration, match="max_reply_bytes"):
        ChatClient("http://127.0.0.1:9/v1", "m", max_reply_bytes=10)
