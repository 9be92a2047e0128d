"""Nothing an anonymous client sends holds a real ``memstack serve``: half-open connections and
header lines that never end are closed or evicted, and a body without a key is never read.

These run a server process (uvicorn, SQLite) and talk to it through raw sockets, as an attacker
would; the server's memory is read from /proc.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn")

from memstack.doors.server.connections import DRAIN_SECONDS
from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import open_engine

from .live import Served, memstack_serve

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def keyed(tmp_path: Path) -> tuple[str, str]:
    """A SQLite file with one key: the URL and the key."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    engine = open_engine(url)
    try:
        _, token = ApiKeyStore(engine).create(["acme"])
    finally:
        engine.close()
    return url, token


def _address(served: Served) -> tuple[str, int]:
    host, port = served.base.removeprefix("http://").split(":")
    return host, int(port)


def _rss_kib(served: Served) -> int:
    for line in Path(f"/proc/{served.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@contextlib.contextmanager
def _sockets(count: int, served: Served, first_bytes: bytes | None) -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(_address(served), timeout=10)
            opened.append(sock)
            if first_bytes is not None:
                sock.sendall(first_bytes)
        yield opened
    finally:
        for sock in opened:
            sock.close()


def _answers_at_once(served: Served, token: str) -> None:
    # A fresh client each: a new connection must get in past the held ones.
    with httpx.Client(base_url=served.base, timeout=1.0) as client:
        assert client.get("/healthz").status_code == 200
    with httpx.Client(base_url=served.base, timeout=1.0) as client:
        read = client.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"})
        assert read.status_code == 200


def test_half_open_and_slow_header_connections_leave_room_for_health_and_reads(
    keyed: tuple[str, str],
) -> None:
    url, token = keyed
    with (
        memstack_serve(url, "--max-connections", "1000", "--head-timeout", "120") as served,
        _sockets(550, served, None),
        _sockets(550, served, b"GET /v1/sessions HTTP/1.1\r\nHost: x\r\nX-Slow: aaaa"),
    ):
        _answers_at_once(served, token)


def test_a_header_line_that_never_ends_is_closed_at_the_head_deadline(keyed: tuple[str, str]) -> None:
    url, _ = keyed
    with (
        memstack_serve(url, "--head-timeout", "1") as served,
        _sockets(1, served, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a") as (sock,),
    ):
        sock.settimeout(30)
        assert sock.recv(100) == b""  # closed by the server (a wait for the close, not a sleep)


def test_a_trickled_body_is_cut_at_the_body_deadline(keyed: tuple[str, str]) -> None:
    url, token = keyed
    head = (
        f"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
    ).encode()
    with memstack_serve(url, "--body-timeout", "1") as served, _sockets(1, served, head) as (sock,):
        sock.settimeout(30)
        assert sock.recv(100) == b""


def _settled_rss(served: Served, target: float) -> int:
    """The RSS once it is under ``target``, or the last one read: an answered body left unread
    lingers DRAIN_SECONDS before its connection closes and the flood's memory is handed back."""
    deadline = time.monotonic() + DRAIN_SECONDS + 15
    rss = _rss_kib(served)
    while rss >= target and time.monotonic() < deadline:
        time.sleep(0.2)  # a condition polled to a deadline, not a timing
        rss = _rss_kib(served)
    return rss


def test_held_keyless_bodies_are_never_read_and_memory_comes_back(keyed: tuple[str, str]) -> None:
    url, token = keyed
    size = 1 << 20
    head = (
        f"POST /v1/memories?scope=s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    ).encode()
    body = b'{"content": "' + b"a" * (size - 20)
    with memstack_serve(url) as served:
        for _ in range(20):  # the first requests import and cache what every later one uses
            _answers_at_once(served, token)
        start = _rss_kib(served)
        answered = 0
        with _sockets(1000, served, head) as opened:
            for sock in opened:
                sock.setblocking(False)
                with contextlib.suppress(BlockingIOError, ConnectionError):
                    sock.send(body)  # as much of the body as the socket takes: held, not finished
            for sock in opened:
                sock.settimeout(10)
                with contextlib.suppress(ConnectionError):
                    answered += sock.recv(64).startswith(b"HTTP/1.1 401")
            during = _rss_kib(served)
        _answers_at_once(served, token)
        after = _settled_rss(served, start * 1.1)
    assert answered > 900  # refused at the head, before the body (a reset may eat a few answers)
    # While held: at most the read-ahead of each connection (uvicorn pauses past 64 KiB), never
    # the gigabyte of bodies.
    assert during < start + 1000 * 128, (start, during)
    assert after < start * 1.1, (start, after)


def _guesses(served: Served, count: int) -> list[int]:
    statuses = []
    with httpx.Client(base_url=served.base, timeout=10) as client:
        for n in range(count):
            headers = {"Authorization": "Bearer msk_000000000000_guess", "X-Forwarded-For": f"203.0.113.{n}"}
            statuses.append(client.get("/v1/sessions", headers=headers).status_code)
    return statuses


def test_forwarded_for_from_loopback_names_no_one_by_default(keyed: tuple[str, str]) -> None:
    url, _ = keyed
    with memstack_serve(url, "--auth-failure-burst", "2") as served:
        assert _guesses(served, 4) == [401, 401, 429, 429]  # a fresh forwarded address buys nothing


def test_forwarded_for_is_read_from_the_proxies_named(keyed: tuple[str, str]) -> None:
    url, _ = keyed
    args = ("--auth-failure-burst", "2", "--forwarded-allow-ips", "127.0.0.1")
    with memstack_serve(url, *args) as served:
        assert _guesses(served, 4) == [401] * 4  # each forwarded client has its own allowance


@pytest.mark.parametrize("expect", [False, True])
def test_a_keyless_large_body_gets_its_401_not_a_reset(keyed: tuple[str, str], expect: bool) -> None:
    url, _ = keyed
    size = 1 << 20
    head = (
        "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n" + ("Expect: 100-continue\r\n" if expect else "") + "\r\n"
    ).encode()
    with memstack_serve(url) as served, _sockets(1, served, head) as (sock,):
        sock.settimeout(10)
        if not expect:  # a client that sends a part of its body before it reads (never read)
            sock.sendall(b"{" + b" " * (256 * 1024))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 401"), answer[:80]
