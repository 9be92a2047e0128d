"""``Engine.raw_items`` on every engine: every record, internal ones included, with its whole content;
``internal_items`` and ``drop_internal`` for the records an engine keeps for itself."""

from __future__ import annotations

import secrets

from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.clock import ManualClock

from ._keyspace import key, populate


def test_every_key_with_its_whole_content(engine: Engine) -> None:
    populate(engine)
    marker = secrets.token_hex(6)
    with engine.batch() as b:
        b.hset(key(engine, "h2"), {f"f-{marker}": f"v-{marker}"})
        b.sadd(key(engine, "set2"), f"m-{marker}")
        b.rpush(key(engine, "list2"), f"e-{marker}")
        b.zadd(key(engine, "z2"), {f"z-{marker}": 2.5})
    items = dict(engine.raw_items())
    assert set(engine.scan("")) <= set(items)
    assert f"f-{marker}\tv-{marker}" in items[key(engine, "h2")]
    assert f"m-{marker}" in items[key(engine, "set2")]
    assert f"e-{marker}" in items[key(engine, "list2")]
    assert f"z-{marker}\t2.5" in items[key(engine, "z2")]
    assert all(text.startswith(where) for where, text in items.items())


def test_expired_records_not_yet_purged_are_still_seen(engine: Engine, clock: ManualClock) -> None:
    engine.set("short", "lived", px=1000)
    clock.advance(2)
    assert "short" not in set(engine.scan(""))
    items = dict(engine.raw_items())
    assert "short" not in items or "lived" in items["short"]  # Redis may purge on its own


def test_a_tenant_view_yields_everything_of_the_engine(engine: Engine) -> None:
    engine.set("outside", "1")
    view = tenant_engine(engine, "acme")
    view.set("inside", "2")
    assert {"outside", "t:acme:inside"} <= {where for where, _ in view.raw_items()}


def test_internal_records_carry_what_was_written_and_can_be_dropped(engine: Engine) -> None:
    marker = secrets.token_hex(6)
    with engine.batch() as b:
        b.set(key(engine, "a"), marker)
        b.publish(key(engine, "channel"), f"message {marker}")
    with engine.batch() as b:
        b.get(key(engine, "a"))
        b.set(key(engine, "b"), "2")  # a write batch whose reply holds the value read
    internal = dict(engine.internal_items())
    if engine.name == "memory":
        assert internal == {}  # messages are delivered in process, never stored
        return
    carrying = [where for where, text in internal.items() if marker in text]
    assert carrying and all(where in dict(engine.raw_items()) for where in carrying)
    assert engine.drop_internal(carrying) == len(carrying)
    assert not any(marker in text for _, text in engine.internal_items())
    assert engine.get(key(engine, "a")) == marker  # the data itself stays
    assert engine.drop_internal(["no such record", key(engine, "a")]) == 0
    assert engine.get(key(engine, "a")) == marker
