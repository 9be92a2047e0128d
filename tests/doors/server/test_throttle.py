"""Failed authentications limited per client address: token buckets, 429 with Retry-After."""

from __future__ import annotations

import logging
from collections import Counter

import httpx
import pytest
from fastapi.testclient import TestClient

from _serving import serving
from memstack import ManualClock
from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.doors.server.throttle import AuthThrottle, FailureThrottle, client_of
from memstack.engines import Engine
from memstack.foundation.errors import InvalidConfiguration

WRONG = "msk_0123456789ab_not-the-secret-at-all"


def test_300_wrong_keys_from_one_client_are_mostly_429_and_another_client_is_untouched(
    engine: Engine,
) -> None:
    """Over a real server: the guesser and the honest client connect from two loopback addresses."""
    _, token = ApiKeyStore(engine).create(["acme"])
    app = create_app(engine, ServerSettings(require_auth=True), mcp=False)
    statuses: Counter[int] = Counter()
    with serving(app) as base:
        guesser = httpx.Client(base_url=base, transport=httpx.HTTPTransport(local_address="127.0.0.2"))
        honest = httpx.Client(base_url=base, transport=httpx.HTTPTransport(local_address="127.0.0.3"))
        with guesser, honest:
            for i in range(300):
                response = guesser.get("/v1/sessions", headers={"Authorization": f"Bearer {WRONG}{i}"})
                statuses[response.status_code] += 1
                if response.status_code == 429:
                    assert int(response.headers["Retry-After"]) >= 1
                    assert response.json()["title"] == "TooManyRequests"
                if i % 50 == 0:
                    ok = honest.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"})
                    assert ok.status_code == 200, ok.text
            # The guesser's own valid key is refused too while it is throttled: no oracle.
            blocked = guesser.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"})
            assert blocked.status_code == 429
            # Open paths stay open for it.
            assert guesser.get("/healthz").status_code == 200
    assert statuses[429] >= 200 and statuses[401] == 10, statuses
    assert set(statuses) == {401, 429}


def test_allowance_comes_back_with_time(engine: Engine, clock: ManualClock) -> None:
    _, token = ApiKeyStore(engine).create(["acme"])
    settings = ServerSettings(require_auth=True, auth_throttle=AuthThrottle(burst=3, per_minute=6))
    with TestClient(create_app(engine, settings, mcp=False), client=("198.51.100.7", 4000)) as client:
        wrong = {"Authorization": f"Bearer {WRONG}"}
        assert [client.get("/v1/sessions", headers=wrong).status_code for _ in range(4)] == [
            401,
            401,
            401,
            429,
        ]
        refused = client.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"})
        assert refused.status_code == 429 and refused.headers["Retry-After"] == "10"
        clock.advance(10)  # one failure forgiven every 10 s
        assert client.get("/v1/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
        assert client.get("/v1/sessions", headers=wrong).status_code == 401
        assert client.get("/v1/sessions", headers=wrong).status_code == 429


def test_requests_without_a_key_are_not_guesses(engine: Engine) -> None:
    settings = ServerSettings(require_auth=True, auth_throttle=AuthThrottle(burst=2, per_minute=1))
    with TestClient(create_app(engine, settings, mcp=False)) as client:
        assert {client.get("/v1/sessions").status_code for _ in range(20)} == {401}
        assert {client.get("/ui/api/whoami").status_code for _ in range(5)} == {200}


def test_the_throttle_logs_the_address_once_and_never_the_token(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    settings = ServerSettings(require_auth=True, auth_throttle=AuthThrottle(burst=5, per_minute=1))
    with (
        caplog.at_level(logging.INFO),
        TestClient(create_app(engine, settings, mcp=False), client=("203.0.113.9", 1)) as client,
    ):
        for i in range(40):
            client.get("/v1/sessions", headers={"Authorization": f"Bearer {WRONG}{i}"})
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    throttled = [m for m in warnings if "failed to authenticate" in m]
    assert len(throttled) == 1 and "203.0.113.9" in throttled[0]
    assert all("not-the-secret" not in r.getMessage() for r in caplog.records)


def test_keyless_mode_has_no_throttle(engine: Engine) -> None:
    settings = ServerSettings(auth="none", auth_throttle=AuthThrottle(burst=1, per_minute=1))
    app = create_app(engine, settings, mcp=False)
    assert app.state.throttle is None
    with TestClient(app) as client:
        wrong = {"Authorization": f"Bearer {WRONG}"}
        assert {client.get("/v1/sessions", headers=wrong).status_code for _ in range(10)} == {200}


def test_settings_from_options_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert AuthThrottle.from_env(environ={}) == AuthThrottle(10, 6.0)
    env = {"MEMSTACK_AUTH_FAILURE_BURST": "4", "MEMSTACK_AUTH_FAILURE_RATE": "0.5"}
    assert AuthThrottle.from_env(environ=env) == AuthThrottle(4, 0.5)
    assert AuthThrottle.from_env(7, None, environ=env) == AuthThrottle(7, 0.5)
    for bad in ({"MEMSTACK_AUTH_FAILURE_BURST": "many"}, {"MEMSTACK_AUTH_FAILURE_RATE": "-1"}):
        with pytest.raises(InvalidConfiguration):
            AuthThrottle.from_env(environ=bad)
    with pytest.raises(InvalidConfiguration):
        AuthThrottle(burst=-1)
    assert not FailureThrottle(AuthThrottle(burst=0), ManualClock()).enabled


def test_addresses_are_counted_per_host_and_per_ipv6_network() -> None:
    assert client_of("192.0.2.1") == "192.0.2.1"
    assert client_of("2001:db8::1") == client_of("2001:db8::ffff:1") == "2001:db8::/64"
    assert client_of("2001:db8:0:1::1") != client_of("2001:db8::1")
    assert client_of("::ffff:192.0.2.1") == "192.0.2.1"
    assert client_of("testclient") == "testclient"
    clock = ManualClock()
    throttle = FailureThrottle(AuthThrottle(burst=1, per_minute=60), clock, max_clients=3)
    for host in ("a", "b", "c", "d"):
        assert throttle.failed(host)  # one failure spends a burst of one
    assert len(throttle) == 3  # the least recently failed address was forgotten
    assert throttle.retry_after("a") == 0 and throttle.retry_after("d") == 1
