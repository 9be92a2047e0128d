"""Two thousand event streams on one key: refused past the key's cap, and the ones admitted
share one subscription of the board (a real ``memstack serve`` on SQLite; threads read from
/proc)."""

from __future__ import annotations

import contextlib
import socket
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("uvicorn")

from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import open_engine

from .live import Served, memstack_serve

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

STREAMS = 2000


def _threads(served: Served) -> int:
    for line in Path(f"/proc/{served.proc.pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


@contextlib.contextmanager
def _streams(served: Served, token: str, count: int) -> Iterator[Counter[int]]:
    host, port = served.base.removeprefix("http://").split(":")
    request = (
        f"GET /v1/shared/board/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        "Accept: text/event-stream\r\n\r\n"
    ).encode()
    opened: list[socket.socket] = []
    statuses: Counter[int] = Counter()
    try:
        for _ in range(count):
            sock = socket.create_connection((host, int(port)), timeout=30)
            opened.append(sock)
            sock.sendall(request)
            head = sock.recv(12)  # "HTTP/1.1 200"
            statuses[int(head[9:12])] += 1
        yield statuses
    finally:
        for sock in opened:
            sock.close()


def test_streams_past_the_key_cap_are_refused_and_one_subscription_serves_the_rest(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    engine = open_engine(url)
    try:
        _, token = ApiKeyStore(engine).create(["acme"])
    finally:
        engine.close()
    with (
        memstack_serve(url, "--max-connections", "4000") as served,
        _streams(served, token, STREAMS) as statuses,
    ):
        assert statuses[200] == 100 and statuses[429] == STREAMS - 100, statuses
        with httpx.Client(base_url=served.base, headers={"Authorization": f"Bearer {token}"}) as client:
            assert client.put("/v1/shared/board/keys/plan", json={"value": 1}).status_code == 200
            assert client.get("/healthz").status_code == 200
        assert _threads(served) < 100


def test_the_caps_are_serve_options(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    engine = open_engine(url)
    try:
        store = ApiKeyStore(engine)
        (_, first), (_, second) = store.create(["acme"]), store.create(["acme"])
    finally:
        engine.close()
    options = ("--watch-per-key", "3", "--watch-per-tenant", "5", "--watch-idle", "60")
    with (
        memstack_serve(url, *options) as served,
        _streams(served, first, 4) as by_first,
        _streams(served, second, 3) as by_second,
    ):
        assert by_first == Counter({200: 3, 429: 1})  # the key's cap
        assert by_second == Counter({200: 2, 429: 1})  # the tenant's cap: 5 streams in all


@pytest.mark.parametrize(
    ("option", "named"),
    [
        (("--watch-per-key", "0"), "per_key 0"),
        (("--watch-per-tenant", "-1"), "per_tenant -1"),
        (("--watch-idle", "0"), "idle_seconds 0"),
    ],
)
def test_a_cap_out_of_range_stops_serve_at_start(tmp_path: Path, option: tuple[str, str], named: str) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with (
        pytest.raises(RuntimeError, match=f"exited with 2: error: watch {named}"),
        memstack_serve(url, *option),
    ):
        pass  # pragma: no cover - serve must not start
