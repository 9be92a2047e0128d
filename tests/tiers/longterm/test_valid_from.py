"""``MemoryEntry.valid_from`` is the start of validity a user reads: the creation time unless
another start was given, the same value the JSON of every door shows. ``given_valid_from`` keeps
"not given" apart, so an entry without validity of its own keeps RockBot's file shape."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memstack import Memory
from memstack.foundation.clock import ManualClock
from memstack.foundation.timefmt import iso_utc
from memstack.tiers.longterm.entry import MemoryEntry, entry_json, entry_to_dict, from_json, to_json

DAY = 86400.0


def test_without_a_start_valid_from_is_the_creation_time(mem: Memory, clock: ManualClock) -> None:
    notes = mem.long_term("ana")
    saved = notes.save(content="Ana lives in Lisbon")
    assert saved.valid_from == saved.created_at and saved.given_valid_from is None
    clock.advance(60)
    updated = notes.save(id=saved.id, content="Ana lives in Lisbon, Portugal")
    assert updated.updated_at is not None and updated.updated_at > saved.created_at
    assert updated.valid_from == saved.created_at and updated.given_valid_from is None
    stored = notes.get(saved.id)
    assert stored is not None and stored.valid_from == saved.created_at
    assert "validFrom" not in entry_to_dict(stored)  # the file keeps RockBot's shape
    assert entry_json(stored)["valid_from"] == entry_json(stored)["created_at"]


def test_a_given_start_is_what_valid_from_reads(mem: Memory, clock: ManualClock) -> None:
    notes = mem.long_term("ana")
    start = clock.now() - 10 * DAY
    saved = notes.save(content="Ana lives in Berlin", valid_from=start)
    expected = datetime.fromtimestamp(start, UTC)
    assert saved.valid_from == saved.given_valid_from == expected != saved.created_at
    clock.advance(60)
    notes.save(id=saved.id, content="Ana lives in Berlin, Germany")  # an update keeps the start
    stored = notes.get(saved.id)
    assert stored is not None and stored.valid_from == expected == stored.given_valid_from
    assert from_json(to_json(stored)).given_valid_from == expected  # stored as given
    assert entry_json(stored)["valid_from"] == iso_utc(expected)


def test_the_start_that_was_not_given_stays_not_given_through_restore(mem: Memory) -> None:
    notes = mem.long_term("ana")
    plain = notes.save(content="Ana likes tea")
    copied = notes.restore(from_json(to_json(plain)))
    assert copied.given_valid_from is None and copied.valid_from == plain.created_at


def test_valid_from_is_read_only_and_the_old_keyword_is_refused(mem: Memory) -> None:
    entry = mem.long_term("ana").save(content="Ana likes tea")
    with pytest.raises(TypeError):
        replace(entry, valid_from=entry.created_at)  # type: ignore[call-arg]
    moved = replace(entry, given_valid_from=datetime(2020, 1, 1, tzinfo=UTC))
    assert moved.valid_from == datetime(2020, 1, 1, tzinfo=UTC) and moved.valid_since == moved.valid_from
    assert isinstance(MemoryEntry(id="a1", content="x").valid_from, datetime)
