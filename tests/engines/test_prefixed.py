"""A tenant view sees only its own keys and channels, on every engine."""

from __future__ import annotations

import threading

import pytest

from memstack.engines import Engine
from memstack.engines.prefixed import PrefixedEngine, tenant_engine
from memstack.foundation.errors import InvalidInput, MemstackError


def test_tenants_never_see_each_other(engine: Engine) -> None:
    a, b = tenant_engine(engine, "acme"), tenant_engine(engine, "beta")
    a.set("k", "from-a")
    a.hset("h", {"f": "1"})
    assert b.get("k") is None
    assert b.hgetall("h") == {}
    assert not b.exists("k")
    assert list(b.scan("")) == []
    assert sorted(a.scan("")) == ["h", "k"]
    assert engine.get("t:acme:k") == "from-a"
    b.set("k", "from-b")
    assert a.get("k") == "from-a"


def test_batches_and_guards_are_rewritten(engine: Engine) -> None:
    view = tenant_engine(engine, "acme")
    with view.batch() as batch:
        batch.require_missing("{s}:x")
        batch.set("{s}:x", "1")
        batch.rpush("{s}:l", "a")
        batch.copy_ttl("{s}:x", "{s}:l")
    assert batch.result is not None and batch.result.applied
    assert engine.lrange("t:acme:{s}:l", 0, -1) == ["a"]
    assert view.mget(["{s}:x", "{s}:nope"]) == ["1", None]
    assert view.delete("{s}:x", "{s}:l") == 2


def test_flush_of_a_view_keeps_other_tenants(engine: Engine) -> None:
    tenant_engine(engine, "acme").set("k", "1")
    tenant_engine(engine, "beta").set("k", "2")
    tenant_engine(engine, "acme").flush()
    assert engine.get("t:acme:k") is None
    assert engine.get("t:beta:k") == "2"


def test_channels_are_per_tenant(engine: Engine) -> None:
    a, b = tenant_engine(engine, "acme"), tenant_engine(engine, "beta")
    got: list[str] = []
    done = threading.Event()

    def on_message(message: str) -> None:
        got.append(message)
        done.set()

    with a.subscribe("news", on_message):
        b.publish("news", "for beta")
        a.publish("news", "for acme")
        assert done.wait(5)
    assert got == ["for acme"]


def test_identity_differs_per_tenant_and_close_keeps_inner(engine: Engine) -> None:
    a, b = tenant_engine(engine, "acme"), tenant_engine(engine, "beta")
    assert a.identity != b.identity != engine.identity
    a.close()
    assert engine.set("still", "open")


@pytest.mark.parametrize("bad", ["", "a b", "x" * 65, "{tag}", "a:b"])
def test_bad_tenant_names(bad: str) -> None:
    from memstack.engines.memory import MemoryEngine

    with MemoryEngine(sweep_interval=None) as inner, pytest.raises(InvalidInput, match="tenant"):
        tenant_engine(inner, bad)


def test_prefix_with_braces_is_refused() -> None:
    from memstack.engines.memory import MemoryEngine

    with MemoryEngine(sweep_interval=None) as inner, pytest.raises(InvalidInput, match="braces"):
        PrefixedEngine(inner, "{x}:")


MALFORMED = [
    [("set", ("k", "v")), ("nope", ("k",))],  # an unknown command
    [("set", ("k", "v")), ("set", ["k2", "v"])],  # arguments not a tuple
    [("set", ("k", "v")), ("set", ("k2",))],  # too few
    [("set", ("k", "v")), ("get", ("k", "extra"))],  # too many
    [("set", ("k", "v")), ("set", (5, "v"))],  # a key that is not text
    [("set", ("k", "v")), ("set", ("k2", "\ud800"))],  # a lone surrogate
    [("set", ("k", "v")), ("require_missing", ("k2",))],  # a guard after a write
    [("set", ("k", "v")), ("incrby", ("n", 2**70))],  # an int outside 64 bits
    [("set", ("k", "v")), "not an op"],
]


@pytest.mark.parametrize("ops", MALFORMED, ids=range(len(MALFORMED)))
def test_a_malformed_batch_fails_as_on_the_bare_engine_and_writes_nothing(
    engine: Engine, ops: list[object]
) -> None:
    """The view leaves the checks to the inner engine (once), yet names the problem as the caller
    wrote it: the same error, the same words, and no write."""
    with pytest.raises(MemstackError) as bare:
        engine.execute(ops)  # type: ignore[arg-type]  # malformed on purpose
    with pytest.raises(type(bare.value)) as viewed:
        tenant_engine(engine, "acme").execute(ops)  # type: ignore[arg-type]
    assert str(viewed.value) == str(bare.value) and "acme" not in str(viewed.value)
    assert engine.get("k") is None and engine.get("t:acme:k") is None
