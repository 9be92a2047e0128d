"""The auth mode is fixed at start-up; an emptied or unreachable key store never opens the API."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.auth import decide_mode, is_loopback
from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import Engine, open_engine
from memstack.foundation.errors import InvalidConfiguration

from .live import own_redis


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.0.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("example.org", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_mode_is_decided_from_flag_keys_and_host(engine: Engine) -> None:
    keys = ApiKeyStore(engine)
    assert decide_mode(keys, None, "127.0.0.1") == "none"
    assert decide_mode(keys, None, "0.0.0.0") == "keys"
    assert decide_mode(keys, "keys", "127.0.0.1") == "keys"
    assert decide_mode(keys, "none", "::1") == "none"
    with pytest.raises(InvalidConfiguration, match="only allowed on loopback"):
        decide_mode(keys, "none", "0.0.0.0")
    with pytest.raises(InvalidConfiguration, match="auth mode 'Keys'"):
        decide_mode(keys, "Keys", "127.0.0.1")  # type: ignore[arg-type]  # a caller without type checks
    keys.create(["acme"])
    assert decide_mode(keys, None, "127.0.0.1") == "keys"
    assert decide_mode(keys, "none", "127.0.0.1") == "none"  # asked for explicitly, on loopback


def test_no_auth_off_loopback_is_refused_by_create_app(engine: Engine) -> None:
    with pytest.raises(InvalidConfiguration, match=r"'0\.0\.0\.0'"):
        create_app(engine, ServerSettings(auth="none", host="0.0.0.0"))


def test_revoking_the_last_key_keeps_the_api_closed(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    store = ApiKeyStore(engine)
    record, token = store.create(["acme"])
    with TestClient(create_app(engine)) as client:
        headers = {"Authorization": f"Bearer {token}"}
        assert client.get("/v1/sessions", headers=headers).status_code == 200
        store.revoke(record.key_id)
        with caplog.at_level(logging.WARNING, logger="memstack.doors.server"):
            for _ in range(3):
                assert client.get("/v1/sessions", headers=headers).status_code == 401
                assert client.get("/v1/sessions").status_code == 401
                victim = client.put(
                    "/v1/shared/board/keys/k", json={"value": 1}, headers={"X-Memstack-Tenant": "v"}
                )
                assert victim.status_code == 401
        warnings = [r for r in caplog.records if "key store is empty" in r.getMessage()]
        assert len(warnings) == 1  # one warning, not one per request


def test_deleted_key_records_keep_the_api_closed(engine: Engine) -> None:
    _, token = ApiKeyStore(engine).create(["acme"])
    with TestClient(create_app(engine)) as client:
        engine.delete("auth:keys")
        response = client.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 401 and response.headers["WWW-Authenticate"] == "Bearer"
        assert client.post("/mcp", json={}).status_code == 401


@pytest.fixture
def gone_redis() -> Iterator[Engine]:
    """An engine on a real Redis that was stopped after the engine connected."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    with own_redis() as server:
        engine = open_engine(server.url)
        server.stop()
        try:
            yield engine
        finally:
            engine.close()


def test_an_unreachable_key_store_is_a_503_never_open(gone_redis: Engine) -> None:
    app = create_app(gone_redis, ServerSettings(auth="keys"))
    with TestClient(app) as client:
        for headers in ({"Authorization": "Bearer msk_0123456789ab_secret"}, {}):
            response = client.get("/v1/sessions", headers=headers)
            assert response.status_code in (401, 503)
        response = client.get("/v1/sessions", headers={"Authorization": "Bearer msk_0123456789ab_secret"})
        assert response.status_code == 503 and response.headers["Retry-After"] == "1"
        assert response.json()["title"] == "ServiceUnavailable"
        mcp = client.post("/mcp", json={}, headers={"Authorization": "Bearer msk_0123456789ab_secret"})
        assert mcp.status_code == 503 and mcp.headers["Retry-After"] == "1"


def test_a_key_store_unreadable_at_start_means_keys_mode(gone_redis: Engine) -> None:
    assert create_app(gone_redis).state.auth.mode == "keys"


def test_key_management_needs_an_admin_key(engine: Engine) -> None:
    store = ApiKeyStore(engine)
    _, admin = store.create(["ops"], label="root", admin=True)
    _, plain = store.create(["acme"])
    with TestClient(create_app(engine)) as client:
        assert client.get("/v1/keys").status_code == 401
        forbidden = client.get("/v1/keys", headers={"Authorization": f"Bearer {plain}"})
        assert forbidden.status_code == 403 and "admin key" in forbidden.json()["detail"]
        as_admin = {"Authorization": f"Bearer {admin}"}
        listed = client.get("/v1/keys", headers=as_admin).json()["items"]
        assert sorted((k["tenants"], k["admin"]) for k in listed) == [(["acme"], False), (["ops"], True)]
        assert all(k["created_at"].endswith("Z") and "token" not in k for k in listed)
        created = client.post("/v1/keys", json={"tenants": ["beta"], "label": "ci"}, headers=as_admin)
        assert created.status_code == 201
        token = created.json()["token"]
        assert client.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        key_id = created.json()["key_id"]
        assert client.delete(f"/v1/keys/{key_id}", headers=as_admin).json() == {
            "key_id": key_id,
            "revoked": True,
        }
        again = client.delete(f"/v1/keys/{key_id}", headers=as_admin)
        assert again.status_code == 404 and again.json()["error"] == "EntryNotFound"
        assert client.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 401
        bad = client.post("/v1/keys", json={"tenants": ["bad name"]}, headers=as_admin)
        assert bad.status_code == 400 and "'bad name'" in bad.json()["detail"]


def test_key_management_is_absent_without_auth(engine: Engine) -> None:
    with TestClient(create_app(engine)) as client:
        assert client.get("/v1/keys").status_code == 404
        assert client.post("/v1/keys", json={"tenants": ["x"]}).status_code == 404
        assert "/v1/keys" not in client.get("/openapi.json").json()["paths"]


def test_every_route_needs_a_key_in_keys_mode(engine: Engine) -> None:
    ApiKeyStore(engine).create(["acme"])
    with TestClient(create_app(engine)) as client:
        assert client.get("/v1/tools").status_code == 401  # even a route without tenant data
        assert client.get("/healthz").status_code == 200
