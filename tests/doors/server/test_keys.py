"""API keys are stored hashed, verified in constant time, revocable, on every engine."""

from __future__ import annotations

import pytest

from memstack.doors.server.keys import ApiKeyStore
from memstack.engines import Engine
from memstack.foundation.errors import InvalidInput


def test_create_verify_revoke(engine: Engine) -> None:
    store = ApiKeyStore(engine)
    assert not store.any()
    record, token = store.create(["acme", "beta"], label="ci")
    assert store.any()
    assert token.startswith(f"msk_{record.key_id}_")
    found = store.verify(token)
    assert found is not None and found.tenants == ("acme", "beta") and found.label == "ci"
    secret = token.split("_", 2)[2]
    assert all(secret not in value for value in engine.hgetall("auth:keys").values())
    assert store.verify(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.revoke(record.key_id)
    assert store.verify(token) is None
    assert not store.revoke(record.key_id)


@pytest.mark.parametrize("token", ["", "msk", "msk__x", "msk_nope_x", "Bearer x", "msk_a_b_c"])
def test_malformed_tokens_are_rejected(engine: Engine, token: str) -> None:
    ApiKeyStore(engine).create(["acme"])
    assert ApiKeyStore(engine).verify(token) is None


def test_tenant_rules(engine: Engine) -> None:
    store = ApiKeyStore(engine)
    with pytest.raises(InvalidInput, match="at least one tenant"):
        store.create([])
    with pytest.raises(InvalidInput, match="tenant 'a b'"):
        store.create(["a b"])
    assert store.list() == []


def test_list_is_oldest_first(engine: Engine, clock) -> None:  # type: ignore[no-untyped-def]
    store = ApiKeyStore(engine)
    first, _ = store.create(["a"])
    clock.advance(1)
    second, _ = store.create(["b"])
    assert [k.key_id for k in store.list()] == [first.key_id, second.key_id]
