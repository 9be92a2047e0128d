"""Expiry per entry on every engine, on the manual clock: ``expires_at`` / ``ttl``, hidden from
searches and contexts at that moment, shown to audits, deleted by the retention sweep."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidValue
from memstack.services.lifecycle.retention import Retention, sweep
from memstack.tiers.longterm.index_cache import clear_caches

HOUR = 3600.0


def test_ttl_hides_at_its_moment_and_the_sweep_deletes(mem: Memory, clock: ManualClock) -> None:
    memories = mem.long_term("u")
    short = memories.save(content="The door code is 4321", ttl=HOUR)
    kept = memories.save(content="The door is blue")
    assert short.expires_at is not None
    assert short.expires_at.timestamp() == pytest.approx(clock.now() + HOUR, abs=1e-5)
    clock.advance(HOUR - 1)
    assert {h.entry.id for h in memories.search("door")} == {short.id, kept.id}
    assert sweep(mem, Retention())["expired"] == 0
    clock.advance(1)
    assert [h.entry.id for h in memories.search("door")] == [kept.id]
    assert [h.entry.id for h in memories.search(None)] == [kept.id]
    audit = memories.search("door", include_expired=True)
    assert {h.entry.id for h in audit} == {short.id, kept.id}
    assert memories.current_count() == 1 and len(memories) == 2
    assert memories.get(short.id) is not None  # readable until the sweep
    assert sweep(mem, Retention())["expired"] == 1
    assert memories.get(short.id) is None and memories.history(short.id) == []
    assert memories.search("door", include_expired=True)[0].entry.id == kept.id
    assert not mem.engine.exists(memories.keys.expiry)
    assert sweep(mem, Retention())["expired"] == 0


def test_expires_at_and_the_past(mem: Memory, clock: ManualClock) -> None:
    memories = mem.long_term("u")
    when = datetime.fromtimestamp(clock.now() + 2 * HOUR, UTC)
    saved = memories.save(content="Promo code SPRING", expires_at=when)
    assert saved.expires_at == when
    before = clock.now()
    clock.advance(3 * HOUR)
    assert memories.search("promo") == []
    assert [h.entry.id for h in memories.search("promo", as_of=before)] == [saved.id]
    assert memories.search("promo", as_of=clock.now()) == []
    assert [h.entry.id for h in memories.search("promo", as_of=clock.now(), include_expired=True)] == [
        saved.id
    ]


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"ttl": 0}, "ttl"),
        ({"ttl": -5}, "ttl"),
        ({"ttl": True}, "ttl"),
        ({"ttl": "1h"}, "ttl"),
        ({"ttl": 1e12}, "ten years"),
        ({"ttl": 60, "expires_at": 10**10}, "give one"),
        ({"expires_at": 1.0}, "must be in the future"),
        ({"expires_at": datetime(2099, 1, 1)}, "timezone-aware"),
    ],
)
def test_bad_expiry_writes_nothing(mem: Memory, options: dict[str, object], match: str) -> None:
    memories = mem.long_term("u")
    with pytest.raises(InvalidValue, match=match):
        memories.save(content="x", **options)  # type: ignore[arg-type]  # hostile input
    assert len(memories) == 0 and not mem.engine.exists(memories.keys.expiry)


def test_an_update_replaces_the_expiry(mem: Memory, clock: ManualClock) -> None:
    memories = mem.long_term("u")
    saved = memories.save(content="temporary", ttl=HOUR)
    memories.save(id=saved.id, content="permanent now")  # not given: no expiry any more
    clock.advance(2 * HOUR)
    assert [h.entry.content for h in memories.search(None)] == ["permanent now"]
    assert sweep(mem, Retention())["expired"] == 0 and memories.get(saved.id) is not None
    dup = memories.save(content="permanent now", dedupe="exact", tags=["x"])
    assert dup.id == saved.id and dup.expires_at is None


def test_the_context_builder_never_injects_an_expired_memory(mem: Memory, clock: ManualClock) -> None:
    from memstack.agent.context import ContextBuilder

    memories = mem.long_term("u")
    memories.save(content="The wifi password is hunter2", ttl=60)
    clock.advance(61)
    clear_caches()
    built = ContextBuilder(mem, scope="u").build("s1", "what is the wifi password?")
    assert "hunter2" not in "\n".join(m["content"] for m in built.messages)
