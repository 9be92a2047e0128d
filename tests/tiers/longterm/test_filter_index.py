"""The filter postings answer exactly what testing every entry answers, through adds, updates and
removals (random entries and filters, reproducible)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from memstack.tiers.longterm.entry import MemoryEntry
from memstack.tiers.longterm.filter_index import FilterIndex
from memstack.tiers.longterm.query import Filters
from memstack.tiers.longterm.search_request import metadata_pairs

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TAGS = ["Music", "music", "work", "home", "x"]
CATEGORIES = [None, "people", "people/alice", "People/Bob", "peoplex", "work/notes"]


def entry(rng: random.Random, n: int) -> MemoryEntry:
    return MemoryEntry(
        id=f"e{n}",
        content="c",
        category=rng.choice(CATEGORIES),
        tags=tuple(rng.sample(TAGS, rng.randrange(3))),
        created_at=T0 + timedelta(seconds=rng.randrange(100)),
        metadata=rng.choice([None, {"k": 1}, {"k": True}, {"k": "1", "j": [1]}, {"j": [1]}]),
    )


def filters(rng: random.Random) -> Filters:
    after = T0 + timedelta(seconds=rng.randrange(100)) if rng.random() < 0.4 else None
    return Filters(
        category=rng.choice([None, None, "people", "PEOPLE/alice", "work", "people/"[:-1]]),
        tags=tuple(rng.sample(["music", "WORK", "home"], rng.randrange(3))),
        created_after=after,
        created_before=(after or T0) + timedelta(seconds=rng.randrange(60)) if rng.random() < 0.4 else None,
        metadata=metadata_pairs(rng.choice([None, {"k": 1}, {"j": [1]}, {"k": True, "j": [1]}])),
    )


def test_postings_match_the_plain_filter() -> None:
    rng = random.Random(20261124)
    index, live = FilterIndex(), {}
    for step in range(3000):
        if live and rng.random() < 0.3:
            gone = rng.choice(sorted(live))
            index.remove(gone)
            del live[gone]
        else:
            new = entry(rng, rng.randrange(200))
            index.add(new)
            live[new.id] = new
        if step % 10 == 0:
            wanted = filters(rng)
            expected = None if wanted.empty else {e.id for e in wanted.apply(live.values())}
            assert index.allowed(wanted) == expected, wanted
    assert len(index) == len(live)


def test_time_bounds_are_inclusive() -> None:
    index = FilterIndex()
    index.add(MemoryEntry(id="a", content="c", created_at=T0))
    assert index.allowed(Filters(created_after=T0, created_before=T0)) == {"a"}
    assert index.allowed(Filters(created_after=T0 + timedelta(microseconds=1))) == set()


def test_same_content_follows_adds_updates_and_removals() -> None:
    index = FilterIndex()
    index.add(MemoryEntry(id="a", content="Green tea, every morning."))
    index.add(MemoryEntry(id="b", content="  green   TEA, every morning"))
    index.add(MemoryEntry(id="c", content="coffee at night"))
    assert {e.id for e in index.same_content("GREEN tea, every morning!")} == {"a", "b"}
    index.add(MemoryEntry(id="a", content="black tea"))  # an update moves it
    assert [e.id for e in index.same_content("green tea, every morning")] == ["b"]
    assert [e.id for e in index.same_content("Black tea")] == ["a"]
    index.remove("b")
    assert index.same_content("green tea, every morning") == []
    assert [e.id for e in index.same_content("coffee at night")] == ["c"]
