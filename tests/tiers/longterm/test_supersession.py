"""Supersession and validity on every engine: Lisbon then Berlin, the views of a search, the rules
of ``supersedes``, and nothing written by a save that fails."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import Conflict, EntryNotFound, InvalidKey, InvalidValue
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.entry import current_at, valid_at
from memstack.tiers.longterm.index_cache import clear_caches

DAY = 86400.0


def _contents(memories: LongTermMemory, query: str | None, **options: object) -> list[str]:
    return [hit.entry.content for hit in memories.search(query, **options)]  # type: ignore[arg-type]  # test options


def _lisbon_then_berlin(mem: Memory, clock: ManualClock) -> tuple[LongTermMemory, str, str, float]:
    memories = mem.long_term("alice")
    lisbon = memories.save(content="The user lives in Lisbon", category="user/home")
    memories.save(content="Alice likes jazz")
    clock.advance(10 * DAY)
    between = clock.now() - 5 * DAY
    berlin = memories.save(
        content="The user lives in Berlin now", category="user/home", supersedes=[lisbon.id]
    )
    return memories, lisbon.id, berlin.id, between


def test_lisbon_then_berlin(mem: Memory, clock: ManualClock) -> None:
    memories, lisbon, berlin, between = _lisbon_then_berlin(mem, clock)
    assert _contents(memories, "where does the user live") == ["The user lives in Berlin now"]

    every = memories.search("where does the user live", include_history=True)
    assert {h.entry.id for h in every} == {lisbon, berlin}
    old = next(h.entry for h in every if h.entry.id == lisbon)
    new = next(h.entry for h in every if h.entry.id == berlin)
    assert old.valid_to == new.valid_from == new.created_at and old.superseded_by == berlin
    assert new.valid_to is None and new.superseded_by is None

    assert _contents(memories, "where does the user live", as_of=between) == ["The user lives in Lisbon"]
    assert _contents(memories, "where does the user live", as_of=clock.now()) == [
        "The user lives in Berlin now"
    ]
    # before either was known: nothing; a listing as of then has only what was valid
    assert _contents(memories, "lives", as_of=between - 30 * DAY) == []
    assert sorted(_contents(memories, None, as_of=between)) == [
        "Alice likes jazz",
        "The user lives in Lisbon",
    ]

    stored = memories.get(lisbon)  # superseded entries stay readable
    assert stored is not None and stored.superseded_by == berlin and not current_at(stored, clock.now())
    assert valid_at(stored, between) and not valid_at(stored, clock.now())


def test_history_lists_both_versions_with_actors(mem: Memory, clock: ManualClock) -> None:
    memories, lisbon, berlin, _ = _lisbon_then_berlin(mem, clock)
    old_events = memories.history(lisbon)
    assert [(e.op, e.actor) for e in old_events] == [("create", "api"), ("supersede", "api")]
    assert old_events[0].old is None and old_events[0].new is not None
    assert old_events[0].new.content == "The user lives in Lisbon" and old_events[0].new.valid_to is None
    assert old_events[1].old == old_events[0].new
    assert old_events[1].new is not None and old_events[1].new.superseded_by == berlin
    assert old_events[1].related_ids == (berlin,)
    new_events = memories.history(berlin)
    assert [(e.op, e.actor, e.related_ids) for e in new_events] == [("create", "api", (lisbon,))]
    assert new_events[0].new is not None and new_events[0].new.content == "The user lives in Berlin now"
    assert old_events[1].at == new_events[0].at  # one batch, one time


def test_views_survive_a_new_process(mem: Memory, clock: ManualClock) -> None:
    _, lisbon, berlin, between = _lisbon_then_berlin(mem, clock)
    clear_caches()  # another process: the caches are built from the engine
    fresh = LongTermMemory(mem.engine, "alice")
    assert [h.entry.id for h in fresh.search("user lives")] == [berlin]
    assert [h.entry.id for h in fresh.search("user lives", as_of=between)] == [lisbon]
    assert fresh.current_count() == 2 and len(fresh) == 3


def test_a_given_valid_from_closes_the_old_fact_then(mem: Memory, clock: ManualClock) -> None:
    memories = mem.long_term("bob")
    lisbon = memories.save(content="Bob lives in Lisbon", valid_from=clock.now() - 100 * DAY)
    moved = clock.now() - 20 * DAY  # told today, true since then
    berlin = memories.save(content="Bob lives in Berlin", supersedes=lisbon.id, valid_from=moved)
    assert berlin.valid_from is not None and berlin.valid_from.timestamp() == pytest.approx(moved)
    stored = memories.get(lisbon.id)
    assert stored is not None and stored.valid_to == berlin.valid_from
    assert _contents(memories, "lives", as_of=moved - 1) == ["Bob lives in Lisbon"]
    assert _contents(memories, "lives", as_of=moved + 1) == ["Bob lives in Berlin"]
    # a fact can start later than it was written: valid_from after created_at
    future = memories.save(content="Bob moves to Paris", valid_from=clock.now() + 30 * DAY)
    assert future.id in [h.entry.id for h in memories.search("Bob")]  # not superseded: current
    assert future.id not in [h.entry.id for h in memories.search("Bob", as_of=clock.now())]


def test_an_update_keeps_the_validity_and_can_resupersede_the_same(mem: Memory, clock: ManualClock) -> None:
    memories, lisbon, berlin, _ = _lisbon_then_berlin(mem, clock)
    clock.advance(60)
    memories.save(id=lisbon, content="The user lived in Lisbon")  # an edit of a past fact
    edited = memories.get(lisbon)
    assert edited is not None and edited.superseded_by == berlin and edited.valid_to is not None
    assert _contents(memories, "Lisbon") == []
    memories.save(id=berlin, content="The user lives in Berlin", supersedes=[lisbon])  # says it again
    assert [e.op for e in memories.history(lisbon)] == ["create", "supersede", "update"]


@pytest.mark.parametrize(
    ("supersedes", "error", "match"),
    [
        (["nope"], EntryNotFound, "no such memory"),
        (["bad id!"], InvalidKey, "memory id"),
        ([{"id": 1}], InvalidKey, "memory id"),
        (7, InvalidValue, "list of memory ids"),
    ],
)
def test_bad_supersedes_write_nothing(
    mem: Memory, supersedes: object, error: type[Exception], match: str
) -> None:
    memories = mem.long_term("carol")
    kept = memories.save(content="Carol likes tea")
    given: Any = [kept.id, *supersedes] if isinstance(supersedes, list) else supersedes  # hostile input
    with pytest.raises(error, match=match):
        memories.save(content="Carol likes coffee", supersedes=given)
    assert [e.content for e in memories.entries()] == ["Carol likes tea"]
    assert [e.op for e in memories.history(kept.id)] == ["create"]
    stored = memories.get(kept.id)
    assert stored == kept


def test_an_entry_is_superseded_once_and_never_by_itself(mem: Memory, clock: ManualClock) -> None:
    memories, lisbon, berlin, _ = _lisbon_then_berlin(mem, clock)
    with pytest.raises(Conflict, match=f"already superseded by '{berlin}'"):
        memories.save(content="The user lives in Paris", supersedes=[lisbon])
    with pytest.raises(InvalidValue, match="cannot supersede itself"):
        memories.save(id=berlin, content="x", supersedes=[berlin.upper()])
    with pytest.raises(InvalidValue, match="before the valid_from"):
        memories.save(
            content="The user lives in Rome", supersedes=[berlin], valid_from=clock.now() - 50 * DAY
        )
    assert len(memories) == 3 and _contents(memories, "lives") == ["The user lives in Berlin now"]


def test_search_parameters_are_checked(mem: Memory) -> None:
    memories = mem.long_term("dave")
    with pytest.raises(InvalidValue, match="include_history"):
        memories.search("x", include_history="yes")  # type: ignore[arg-type]  # hostile input
    with pytest.raises(InvalidValue, match="as_of and include_history"):
        memories.search("x", as_of=datetime.now(UTC), include_history=True)
    with pytest.raises(InvalidValue, match="as_of"):
        memories.search("x", as_of=datetime(2024, 1, 1))  # naive: its zone would be a guess


def test_filter_language_reaches_the_validity_fields(mem: Memory, clock: ManualClock) -> None:
    memories, lisbon, berlin, _ = _lisbon_then_berlin(mem, clock)
    found = memories.search(None, include_history=True, filter={"superseded_by": berlin})
    assert [h.entry.id for h in found] == [lisbon]
    found = memories.search(None, include_history=True, filter={"valid_to": {"$exists": True}})
    assert [h.entry.id for h in found] == [lisbon]
    cutoff = datetime.fromtimestamp(clock.now() - DAY, UTC) + timedelta(0)
    found = memories.search(None, filter={"valid_from": {"$gte": cutoff.isoformat()}})
    assert [h.entry.id for h in found] == [berlin]


def test_dedupe_and_the_context_builder_see_current_entries_only(mem: Memory, clock: ManualClock) -> None:
    from memstack.agent.context import ContextBuilder

    memories, lisbon, _, _ = _lisbon_then_berlin(mem, clock)
    again = memories.save(content="The user lives in Lisbon", dedupe="exact")
    assert again.id != lisbon  # the superseded fact is history, not a duplicate of a current one
    memories.delete(again.id)
    built = ContextBuilder(mem, scope="alice").build("s1", "where do I live?")
    text = "\n".join(m["content"] for m in built.messages)
    assert "Berlin" in text and "Lisbon" not in text
    assert lisbon not in {item.ident for item in built.explain}


def test_a_cold_search_never_answers_with_a_superseded_entry(mem: Memory, clock: ManualClock) -> None:
    from memstack.index import registry
    from memstack.tiers.longterm import index_cache

    memories, lisbon, berlin, _ = _lisbon_then_berlin(mem, clock)
    memories.save(content="The user lives near the sea")
    assert memories.snapshot()
    registry.drop(("longterm", mem.engine.identity, "alice"))  # a new process: no cache, a snapshot
    cold = LongTermMemory(mem.engine, "alice")
    ids = [h.entry.id for h in cold.search("user lives Lisbon", limit=2)]
    assert lisbon not in ids and berlin in ids
    assert index_cache.scope_cache(mem.engine, "alice").warm  # the full cache answered
    registry.drop(("longterm", mem.engine.identity, "alice"))
    assert [h.entry.content for h in cold.search("sea")] == ["The user lives near the sea"]
    assert not index_cache.scope_cache(mem.engine, "alice").warm  # nothing hidden: the snapshot answered
