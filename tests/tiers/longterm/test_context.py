"""The thread table of a scope's conversations: the same neighbours, sessions and speakers as the
threads themselves, through deletes and entries without provenance."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from memstack.tiers.longterm.context import ConversationThreads
from memstack.tiers.longterm.entry import MemoryEntry
from memstack.tiers.longterm.provenance import conversation_metadata

START = datetime(2024, 1, 1, tzinfo=UTC)


def test_the_table_answers_as_the_threads_do() -> None:
    rng = random.Random(5)
    entries: dict[str, MemoryEntry] = {}
    for n in range(120):
        meta = None
        if n % 9:  # some entries have no provenance
            when = START + timedelta(days=rng.randint(0, 3))
            meta = conversation_metadata(
                f"c{n % 4}", rng.randint(0, 60), rng.choice(["Ann", "Bob", None]), when
            )
        entries[f"e{n}"] = MemoryEntry(id=f"e{n}", content="text", metadata=meta)
    threads = ConversationThreads()
    threads.apply(list(entries), entries)
    gone = [f"e{n}" for n in range(0, 120, 7)]
    for entry_id in gone:
        del entries[entry_id]
    threads.apply(gone, entries)

    table = threads.table()
    assert sorted(table.ids) == sorted(i for i in entries if threads.session(i) is not None)
    slots = table.slots([*entries, "e0"])
    for window in (1, 2):
        near = table.neighbours(slots, window)
        for entry_id, row in zip([*entries, "e0"], near, strict=True):
            assert [table.ids[s] for s in row if s >= 0] == threads.neighbours(entry_id, window)
    for entry_id, slot in zip(entries, slots[:-1], strict=True):
        if slot < 0:
            continue
        speaker = threads.speaker(entry_id)
        code = table.speaker[slot]
        assert (code < 0) if speaker is None else table.speakers[code] == {speaker.casefold()}
        same = [i for i in entries if threads.session(i) == threads.session(entry_id)]
        assert [i for i in table.ids if table.session[table.slot[i]] == table.session[slot]] == [
            i for i in table.ids if i in same
        ]
