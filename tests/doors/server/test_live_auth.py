"""Fail closed, against a real ``memstack serve`` process (SQLite and Redis).

The server starts with keys, so its auth mode is keys for good. Then the key store is emptied in
every way an attacker or an unlucky operator could: (a) every key revoked, (b) the key records
deleted behind the server's back, (c) Redis restarted without persistence while the server keeps
running. After each, 1,000 requests across every route of the OpenAPI document and ``/mcp``
without a key, with a revoked key, with a garbage key and with ``X-Memstack-Tenant: victim``: none
succeeds (only 401, 404 or 503), and no tenant data changes. The failed-authentication throttle is
off here (its 429 would stop most requests before the key check under test); tests/doors/server/
test_throttle.py tests it.
"""

from __future__ import annotations

import io
import itertools
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import Engine, open_engine
from memstack.services.transfer.dump import export_jsonl

from .live import OwnRedis, memstack_serve, own_redis

REQUESTS = 1000
REFUSED = {401, 404, 503}
NO_THROTTLE = ("--auth-failure-burst", "0")
# Liveness, readiness and the API's own description answer everyone; they hold no tenant data.
OPEN_PATHS = {"/healthz", "/readyz", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
MCP_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "session_put", "arguments": {"key": "pwned", "value": 1, "session_id": "s1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def _routes(spec: dict[str, Any]) -> list[tuple[str, str]]:
    routes = []
    for path, operations in spec["paths"].items():
        if path in OPEN_PATHS:
            continue
        filled = re.sub(r"\{[^}]+\}", "board", path)
        routes += [(method.upper(), filled) for method in operations]
    # Outside the OpenAPI document but holding tenant data: the inspector's live board stream.
    routes.append(("GET", "/ui/api/shared/board/events"))
    return routes


def _identities(revoked: str, revoked_admin: str) -> list[dict[str, str]]:
    return [
        {},
        {"X-Memstack-Tenant": "victim"},
        {"Authorization": f"Bearer {revoked}"},
        {"Authorization": f"Bearer {revoked}", "X-Memstack-Tenant": "victim"},
        {"Authorization": f"Bearer {revoked_admin}"},
        {"Authorization": "Bearer msk_000000000000_garbage"},
        {"Authorization": "Bearer garbage", "X-Memstack-Tenant": "victim"},
        {"Authorization": "Basic dmljdGltOg=="},
        {"Authorization": "Bearer"},
    ]


def _hammer(base: str, routes: list[tuple[str, str]], identities: list[dict[str, str]]) -> Counter[int]:
    """``REQUESTS`` requests cycling through every route and ``/mcp`` with every identity."""
    calls = itertools.cycle(itertools.product([*routes, ("MCP", "/mcp")], identities))
    statuses: Counter[int] = Counter()
    with httpx.Client(base_url=base, timeout=60) as client:  # a loaded CI machine is slow, never open
        for (method, path), headers in itertools.islice(calls, REQUESTS):
            if method == "MCP":
                response = client.post(path, json=MCP_CALL, headers={**MCP_HEADERS, **headers})
            elif method in ("POST", "PUT", "PATCH"):
                body = {"value": "pwned", "session_id": "s1", "content": "pwned", "message": "x"}
                response = client.request(method, path, json=body, headers=headers)
            else:
                response = client.request(method, path, headers=headers, params={"namespace": "session/s1"})
            statuses[response.status_code] += 1
    return statuses


def _tenant_data(engine: Engine) -> str:
    out = io.StringIO()
    export_jsonl(engine, out, prefix="t:")
    return out.getvalue()


def _write_victim_data(base: str, token: str) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=10) as client:
        assert client.put("/v1/shared/board/keys/plan", json={"value": "victim plan"}).status_code == 200
        assert client.post("/v1/sessions", json={"session_id": "board"}).status_code == 201


class _Attack:
    """One server on ``url`` with a victim key, an admin key and the OpenAPI routes."""

    def __init__(self, url: str, engine: Engine) -> None:
        self.url = url
        self.engine = engine
        store = ApiKeyStore(engine)
        self.victim_key, self.victim = store.create(["victim"])
        self.admin_key, self.admin = store.create(["ops"], admin=True)

    def identities(self) -> list[dict[str, str]]:
        return _identities(self.victim, self.admin)

    def assert_closed(self, base: str, routes: list[tuple[str, str]], phase: str) -> Counter[int]:
        statuses = _hammer(base, routes, self.identities())
        assert sum(statuses.values()) == REQUESTS
        assert set(statuses) <= REFUSED, f"{phase}: {statuses}"
        return statuses


@pytest.fixture
def redis_server() -> Iterator[OwnRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    with own_redis() as server:
        yield server


def _start_attack(url: str) -> tuple[_Attack, Engine]:
    engine = open_engine(url)
    return _Attack(url, engine), engine


def test_sqlite_server_stays_closed_when_its_keys_go(tmp_path: Any) -> None:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    attack, engine = _start_attack(url)
    try:
        with memstack_serve(url, *NO_THROTTLE) as served:
            spec = httpx.get(f"{served.base}/openapi.json").json()
            routes = _routes(spec)
            assert ("GET", "/v1/keys") in routes and len(routes) > 25
            _write_victim_data(served.base, attack.victim)
            before = _tenant_data(engine)

            store = ApiKeyStore(engine)
            for key in store.list():  # (a) revoke every key
                assert store.revoke(key.key_id)
            attack.assert_closed(served.base, routes, "every key revoked")
            assert _tenant_data(engine) == before

            _, fresh = store.create(["victim"])  # (b) the records deleted behind the server's back
            engine.delete("auth:keys")
            statuses = attack.assert_closed(served.base, routes, "key records deleted")
            assert statuses[401] == REQUESTS
            assert _tenant_data(engine) == before
            with httpx.Client(base_url=served.base, headers={"Authorization": f"Bearer {fresh}"}) as client:
                assert client.get("/v1/shared/board").status_code == 401

            # A key created now works again: closed, not broken.
            _, renewed = store.create(["victim"])
            with httpx.Client(base_url=served.base, headers={"Authorization": f"Bearer {renewed}"}) as client:
                assert client.get("/v1/shared/board/keys/plan").json()["value"] == "victim plan"
        assert "the API key store is empty" in served.stderr
    finally:
        engine.close()


def test_redis_server_stays_closed_through_flush_and_restart(redis_server: OwnRedis) -> None:
    attack, engine = _start_attack(redis_server.url)
    try:
        with memstack_serve(redis_server.url, *NO_THROTTLE) as served:
            routes = _routes(httpx.get(f"{served.base}/openapi.json").json())
            _write_victim_data(served.base, attack.victim)
            before = _tenant_data(engine)

            store = ApiKeyStore(engine)
            for key in store.list():  # (a)
                store.revoke(key.key_id)
            attack.assert_closed(served.base, routes, "every key revoked")
            store.create(["victim"])  # (b)
            engine.delete("auth:keys")
            attack.assert_closed(served.base, routes, "key records deleted")
            assert _tenant_data(engine) == before

            redis_server.stop()  # (c) down: the key store cannot be read, so 503, never open
            down = _hammer(served.base, routes[:8], attack.identities()[2:4])
            assert set(down) <= {401, 503} and down[503] > 0, down
            redis_server.start()  # back without persistence: no keys, no data
            statuses = attack.assert_closed(served.base, routes, "redis restarted without persistence")
            assert statuses[401] > 0
            assert _tenant_data(engine) == "" and not store.any()
    finally:
        engine.close()
