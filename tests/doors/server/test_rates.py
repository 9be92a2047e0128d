"""Per-key request rates (``keys create --rate``), counted in the engine across servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memstack import ManualClock
from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.doors.server.rates import WINDOW_SECONDS, KeyRates
from memstack.engines import Engine
from memstack.foundation.errors import InvalidInput

KEYS = ServerSettings(require_auth=True)


def _start_of_window(clock: ManualClock) -> None:
    """Move the clock to the first second of a window: the estimate is then this window's count."""
    now = clock.now()
    clock.advance((WINDOW_SECONDS - now % WINDOW_SECONDS) % WINDOW_SECONDS + 0.001)


def test_a_rate_holds_across_two_servers_on_one_engine(engine: Engine, clock: ManualClock) -> None:
    store = ApiKeyStore(engine)
    _, limited = store.create(["acme"], rate=6)
    _, free = store.create(["acme"])
    _start_of_window(clock)
    with (
        TestClient(create_app(engine, KEYS, mcp=False)) as a,
        TestClient(create_app(engine, KEYS, mcp=False)) as b,
    ):
        for client in (a, b):
            client.headers["Authorization"] = f"Bearer {limited}"
        statuses = [(a if i % 2 else b).get("/v1/sessions").status_code for i in range(10)]
        assert statuses == [200] * 6 + [429] * 4
        refused = a.get("/v1/sessions")
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["Retry-After"]) <= WINDOW_SECONDS
        assert (
            refused.json()["title"] == "TooManyRequests"
            and "6 requests per minute" in refused.json()["detail"]
        )
        # Another key of the same tenant has no rate: untouched.
        assert b.get("/v1/sessions", headers={"Authorization": f"Bearer {free}"}).status_code == 200
        # Two windows later the previous minute no longer counts: the full rate again.
        clock.advance(2 * WINDOW_SECONDS)
        assert [a.get("/v1/sessions").status_code for _ in range(6)] == [200] * 6
        assert b.get("/v1/sessions").status_code == 429


def test_the_previous_minute_counts_by_its_share_of_the_window(engine: Engine, clock: ManualClock) -> None:
    key, _ = ApiKeyStore(engine).create(["acme"], rate=10)
    rates = KeyRates(engine)
    _start_of_window(clock)
    assert [rates.take(key.key_id, 10) for _ in range(10)] == [0] * 10
    assert rates.take(key.key_id, 10) > 0  # refused, and not counted
    clock.advance(WINDOW_SECONDS * 1.5)  # the next window, half-way: the last minute's 10 weigh 5
    allowed = sum(1 for _ in range(10) if rates.take(key.key_id, 10) == 0)
    assert allowed == 5


def test_refused_requests_are_not_counted(engine: Engine, clock: ManualClock) -> None:
    key, _ = ApiKeyStore(engine).create(["acme"], rate=3)
    rates = KeyRates(engine)
    _start_of_window(clock)
    results = [rates.take(key.key_id, 3) for _ in range(50)]
    assert results[:3] == [0, 0, 0] and all(r > 0 for r in results[3:])
    clock.advance(WINDOW_SECONDS)  # next window, at its start: the last minute weighs all 3
    assert rates.take(key.key_id, 3) > 0
    clock.advance(WINDOW_SECONDS * 0.34)  # a third of it gone: 3 x 0.66 + 1 <= 3
    assert rates.take(key.key_id, 3) == 0


def test_counters_live_in_the_engine_and_expire(engine: Engine, clock: ManualClock) -> None:
    key, _ = ApiKeyStore(engine).create(["acme"], rate=100)
    rates = KeyRates(engine)
    for _ in range(3):
        rates.take(key.key_id, 100)
    counters = [k for k in engine.scan("auth:rate:")]
    assert len(counters) == 1 and key.key_id in counters[0]
    assert engine.get(counters[0]) == "3"
    clock.advance(2 * WINDOW_SECONDS + 1)
    assert list(engine.scan("auth:rate:")) == []


def test_rates_are_checked_when_keys_are_made(engine: Engine) -> None:
    store = ApiKeyStore(engine)
    for bad in (0, -1, 10**9 + 1, True, 2.5, "5"):
        with pytest.raises(InvalidInput, match="rate"):
            store.create(["acme"], rate=bad)  # type: ignore[arg-type]  # wrong types on purpose
    record, _ = store.create(["acme"], rate=60)
    assert record.rate == 60 and store.list()[0].rate == 60


def test_admin_keys_create_rated_keys_over_http(engine: Engine) -> None:
    _, admin = ApiKeyStore(engine).create(["ops"], admin=True)
    with TestClient(create_app(engine, KEYS, mcp=False)) as client:
        client.headers["Authorization"] = f"Bearer {admin}"
        created = client.post("/v1/keys", json={"tenants": ["acme"], "rate": 120})
        assert created.status_code == 201 and created.json()["rate"] == 120
        assert client.post("/v1/keys", json={"tenants": ["acme"], "rate": 0}).status_code == 422
        listed = {k["key_id"]: k["rate"] for k in client.get("/v1/keys").json()["items"]}
        assert listed[created.json()["key_id"]] == 120 and None in listed.values()


def test_keys_create_rate_on_the_cli(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "memstack.doors.cli", "--url", url, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=60, env={**os.environ})

    made = cli("--json", "keys", "create", "--tenant", "acme", "--rate", "30")
    assert made.returncode == 0 and json.loads(made.stdout)["rate"] == 30
    assert json.loads(cli("--json", "keys", "list").stdout)[0]["rate"] == 30
    bad = cli("keys", "create", "--tenant", "acme", "--rate", "0")
    assert bad.returncode == 2 and "rate 0" in bad.stderr and "Traceback" not in bad.stderr
