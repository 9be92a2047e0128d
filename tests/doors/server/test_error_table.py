"""One table from the exception tree to status, name and MCP code; scrubbed, generic where needed."""

from __future__ import annotations

import inspect

import pytest
from fastapi.testclient import TestClient

from memstack.doors.server import create_app
from memstack.doors.server.error_table import INTERNAL, MAX_DETAIL, TABLE, describe, rule_of, scrub
from memstack.engines import Engine
from memstack.foundation import errors

EXPECTED = {
    errors.InvalidSessionId: 400,
    errors.InvalidValue: 400,
    errors.InvalidConfiguration: 400,
    errors.SessionNotFound: 404,
    errors.EntryNotFound: 404,
    errors.UnknownTool: 404,
    errors.SessionExists: 409,
    errors.Conflict: 409,
    errors.NotANumber: 409,
    errors.NamespaceFull: 429,
    errors.SessionLimitReached: 429,
    errors.WaitTimeout: 408,
    errors.EmbeddingError: 502,
    errors.EngineUnavailable: 503,
    errors.EngineFull: 503,
    errors.NotReplicated: 503,
    errors.WrongType: 500,
    errors.CrossSlot: 500,
    errors.EngineClosed: 500,
    errors.ScriptExhausted: 500,
}


def test_every_error_class_has_its_status() -> None:
    classes = [
        c for _, c in inspect.getmembers(errors, inspect.isclass) if issubclass(c, errors.MemstackError)
    ]
    for cls in classes:
        assert rule_of(cls("x")) is not INTERNAL, cls  # the tree is covered by the table
    for cls, status in EXPECTED.items():
        assert rule_of(cls("x")).status == status, cls
    assert set(TABLE) <= set(classes)


def test_retry_after_only_where_retrying_helps() -> None:
    retried = {cls for cls in EXPECTED if rule_of(cls("x")).retry}
    assert retried == {errors.EngineUnavailable, errors.EngineFull, errors.NotReplicated}


def test_describe_hides_what_the_caller_must_not_see() -> None:
    rule, name, detail = describe(RuntimeError("boom at /srv/secret.db t:acme:rr:memory:s1:k"))
    assert (rule.status, name) == (500, "InternalError")
    assert "boom" not in detail and "secret" not in detail
    rule, name, detail = describe(errors.EngineUnavailable("redis://10.1.2.3:6379: Connection refused"))
    assert (rule.status, name) == (503, "EngineUnavailable") and "10.1.2.3" not in detail
    rule, name, detail = describe(errors.WrongType("WRONGTYPE at t:acme:lt:{s}:entries"))
    assert (rule.status, name) == (500, "WrongType") and "t:acme" not in detail
    _, name, detail = describe(errors.SessionNotFound("Session 's1' not found"))
    assert (name, detail) == ("SessionNotFound", "Session 's1' not found")


@pytest.mark.parametrize(
    "key",
    [
        "t:acme:rr:memory:s1:c2",
        "t:acme:lt:{default}:entries",
        "rr:memory:__sessions__",
        "lt:{scope}:e:abc",
        "wm:{session/s1}:entries",
        "t:victim:shared:m:board:plan",
        "auth:keys",
        "t:a-b_c:anything",
    ],
)
def test_scrub_removes_internal_keys(key: str) -> None:
    scrubbed = scrub(f"key '{key}' holds the wrong type; see {key}, or ({key})")
    assert key not in scrubbed and "acme" not in scrubbed and "victim" not in scrubbed
    assert scrubbed.count("<internal key>") == 3


def test_scrub_keeps_ordinary_text_and_makes_it_sendable() -> None:
    text = "session 's1' has no key 'alt:x' (a salt: fine); 3:45 lt"
    assert scrub(text) == text
    assert scrub("bad \ud800 char\nsecond line") == "bad \\ud800 char second line"
    assert len(scrub("x" * 10_000)) == MAX_DETAIL


def test_an_unexpected_error_is_a_generic_500(engine: Engine) -> None:
    app = create_app(engine)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("secret t:acme:rr:memory:s1:c2 /srv/data")

    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/boom")
    assert response.status_code == 500
    body = response.json()
    assert body["error"] == "InternalError" and body["title"] == "InternalError"
    assert "secret" not in response.text and "RuntimeError" not in response.text


def test_a_typed_engine_error_is_a_500_without_its_text(engine: Engine) -> None:
    app = create_app(engine)

    @app.get("/wrongtype")
    def wrongtype() -> None:
        raise errors.WrongType("WRONGTYPE Operation against t:acme:rr:memory:s1:k")

    with TestClient(app) as client:
        response = client.get("/wrongtype")
    assert response.status_code == 500 and response.json()["error"] == "WrongType"
    assert "t:acme" not in response.text and "WRONGTYPE" not in response.text


def test_a_full_engine_is_a_503_with_retry_after(engine: Engine) -> None:
    app = create_app(engine)

    @app.get("/full")
    def full() -> None:
        raise errors.EngineFull("OOM command not allowed when used memory > 'maxmemory'")

    with TestClient(app) as client:
        response = client.get("/full")
    assert response.status_code == 503 and response.headers["Retry-After"] == "1"
    assert response.json()["error"] == "EngineFull" and "maxmemory" not in response.text
