"""LongTermMemory on every engine: CRUD, upsert, validation, filters, recency, BM25, isolation."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidCategory, InvalidConfiguration, InvalidKey, InvalidValue
from memstack.tiers.longterm import LongTermMemory, MemoryEntry


@pytest.fixture
def lt(mem: Memory) -> LongTermMemory:
    return mem.long_term("alice")


def test_save_generates_id_and_get_round_trips(lt: LongTermMemory, clock: ManualClock) -> None:
    saved = lt.save(content="Alice lives in Chicago", category="user/location", tags=["geo", "home"],
                    metadata={"source": "chat", "n": [1, 2]})  # fmt: skip
    assert len(saved.id) == 12
    assert saved.created_at == datetime.fromtimestamp(clock.now(), UTC)
    assert saved.created_at.tzinfo is not None
    assert saved.updated_at is None
    got = lt.get(saved.id)
    assert got == saved
    assert got is not saved
    assert got is not None
    assert got.metadata is not None
    got.metadata["n"].append(3)
    assert lt.get(saved.id) == saved  # mutating what we got never reaches storage
    assert lt.get(saved.id.upper()) == saved  # ids are case-insensitive
    assert len(lt) == 1


def test_upsert_keeps_created_sets_updated_and_changes_category(
    lt: LongTermMemory, clock: ManualClock
) -> None:
    first = lt.save(content="v1", category="a/b", id="Mem-1")
    assert first.id == "mem-1"
    clock.advance(60)
    second = lt.save(content="v2", category="c", id="MEM-1", tags="x,y")
    assert second.created_at == first.created_at
    assert second.updated_at == datetime.fromtimestamp(clock.now(), UTC)
    assert lt.get("mem-1") == second
    assert len(lt) == 1
    assert lt.list_categories() == ["c"]
    assert [h.entry.id for h in lt.search(category="a")] == []
    assert [h.entry.id for h in lt.search(category="c")] == ["mem-1"]


def test_save_a_memory_entry_object(lt: LongTermMemory) -> None:
    when = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    saved = lt.save(MemoryEntry(id="e1", content="hello", tags=("t",), created_at=when))
    assert saved.created_at == when
    assert lt.get("e1") == saved
    with pytest.raises(InvalidValue, match="not both"):
        lt.save(MemoryEntry(id="e1", content="x"), content="y")


def test_delete(lt: LongTermMemory) -> None:
    saved = lt.save(content="to forget")
    assert lt.delete(saved.id.upper()) is True
    assert lt.get(saved.id) is None
    assert lt.delete(saved.id) is False
    assert lt.search("forget") == []
    assert len(lt) == 0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"content": "  "}, InvalidValue),
        ({"content": "x", "category": "../etc"}, InvalidCategory),
        ({"content": "x", "category": "/abs"}, InvalidCategory),
        ({"content": "x", "category": "a b"}, InvalidCategory),
        ({"content": "x", "id": "../x"}, InvalidKey),
        ({"content": "x", "metadata": {"f": object()}}, InvalidValue),
        ({"content": "x", "created_at": datetime(2024, 1, 1)}, InvalidValue),  # naive on purpose
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(
    lt: LongTermMemory, kwargs: dict[str, object], error: type[Exception]
) -> None:
    lt.save(content="keep me", id="keep")
    with pytest.raises(error):
        lt.save(**kwargs)  # type: ignore[arg-type]  # deliberately bad values
    assert [e.id for e in lt.entries()] == ["keep"]
    assert lt.get("keep") is not None


def test_bad_scope_and_profiles(mem: Memory) -> None:
    with pytest.raises(InvalidKey, match="scope"):
        mem.long_term("a:b")
    with pytest.raises(InvalidConfiguration, match="profile"):
        mem.long_term("a", profile="nope")
    with pytest.raises(InvalidConfiguration, match="fusion"):
        mem.long_term("a", fusion="nope")


def test_list_categories_and_tags_distinct_case_insensitive(lt: LongTermMemory, clock: ManualClock) -> None:
    lt.save(content="1", category="b-cat", tags=["Zed", "alpha"])
    clock.advance(1)
    lt.save(content="2", category="A-cat/x", tags=["ALPHA", "beta"])
    clock.advance(1)
    lt.save(content="3", category="B-CAT", tags=[])
    lt.save(content="4")
    assert lt.list_categories() == ["A-cat/x", "b-cat"]
    assert lt.list_tags() == ["alpha", "beta", "Zed"]


def test_filters_spec_item_12(lt: LongTermMemory, clock: ManualClock) -> None:
    lt.save(content="ctx root", category="project-context", id="root")
    lt.save(content="ctx rockbot", category="project-context/rockbot", id="child", tags=["Rock", "bot"])
    lt.save(content="ctx other", category="project-contextual", id="other")
    lt.save(content="no category", id="none", tags=["rock"])
    assert sorted(h.entry.id for h in lt.search(category="project-context")) == ["child", "root"]
    assert sorted(h.entry.id for h in lt.search("ctx", category="Project-Context")) == ["child", "root"]
    assert [h.entry.id for h in lt.search(tags=["ROCK", "bot"])] == ["child"]
    assert sorted(h.entry.id for h in lt.search(tags="rock")) == ["child", "none"]


def test_date_filters_inclusive(lt: LongTermMemory) -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    for day in range(3):
        lt.save(content=f"day {day}", id=f"d{day}", created_at=t0 + timedelta(days=day))
    hits = lt.search(created_after=t0 + timedelta(days=1), created_before=t0 + timedelta(days=2))
    assert sorted(h.entry.id for h in hits) == ["d1", "d2"]


def test_blank_and_none_query_list_most_recent(lt: LongTermMemory, clock: ManualClock) -> None:
    for i in range(4):
        lt.save(content=f"entry {i}", id=f"e{i}")
        clock.advance(10)
    lt.save(content="entry 0 updated", id="e0")
    for query in (None, "", "   "):
        hits = lt.search(query, max_results=3)
        assert [h.entry.id for h in hits] == ["e0", "e3", "e2"]
        assert all(h.sources == ("recent",) for h in hits)


def test_bm25_ranks_with_scores_and_sources(lt: LongTermMemory) -> None:
    lt.save(content="I went to a concert last summer", id="a")
    lt.save(content="Huge music fan, loves concerts and concert halls", id="b")
    lt.save(content="Cooking pasta at home", id="c")
    hits = lt.search("concert music")
    assert [h.entry.id for h in hits] == ["b", "a"]
    assert hits[0].score > hits[1].score > 0
    assert all(h.sources == ("bm25",) and h.bm25 == h.score and h.vector is None for h in hits)
    assert lt.search("zebra") == []
    assert [h.entry.id for h in lt.search("concert", max_results=1)] == ["b"]
    with pytest.raises(InvalidValue, match="max_results"):
        lt.search("x", max_results=0)


def test_category_and_tags_are_searchable_text(lt: LongTermMemory) -> None:
    lt.save(content="Chicago", category="user-preferences/timezone", tags=["location"], id="tz")
    assert [h.entry.id for h in lt.search("timezone preferences")] == ["tz"]
    assert [h.entry.id for h in lt.search("location")] == ["tz"]


def test_rockbot_profile_reference_scores(mem: Memory) -> None:
    lt = mem.long_term("rb", profile="rockbot")
    lt.save(content="I went to a concert last summer", id="first")
    lt.save(content="concert concert concert — huge music fan, loves concerts", id="second")
    hits = lt.search("concert music")
    assert [h.entry.id for h in hits] == ["second", "first"]
    assert hits[0].score == pytest.approx(0.8832, abs=1e-4)
    assert hits[1].score == pytest.approx(0.2145, abs=1e-4)


def test_scopes_never_leak(mem: Memory) -> None:
    alice, bob = mem.long_term("alice"), mem.long_term("bob")
    a = alice.save(content="alice secret jazz", category="music", tags=["t1"], id="same")
    bob.save(content="bob likes jazz too", category="sport", tags=["t2"], id="other")
    assert bob.get("same") is None
    assert [h.entry.id for h in bob.search("jazz")] == ["other"]
    assert [h.entry.id for h in alice.search("jazz")] == ["same"]
    assert bob.list_categories() == ["sport"]
    assert alice.list_tags() == ["t1"]
    assert bob.delete("same") is False
    assert alice.get("same") == a


def test_update_reindexes(lt: LongTermMemory) -> None:
    lt.save(content="likes jazz", id="x")
    assert [h.entry.id for h in lt.search("jazz")] == ["x"]
    lt.save(content="likes techno", id="x")
    assert lt.search("jazz") == []
    assert [h.entry.id for h in lt.search("techno")] == ["x"]


def test_keys_carry_prefix_and_scope_tag(mem: Memory) -> None:
    lt = mem.long_term("carol")
    lt.save(content="hello", id="k1")
    lt.search("hello")
    keys = set(mem.engine.scan("lt:"))
    assert keys
    assert all(mem.engine.tag("carol") in k for k in keys)
    assert not set(mem.engine.scan("")) - keys


def test_concurrent_upserts_of_one_id_all_land(lt: LongTermMemory) -> None:
    lt.save(content="start", id="hot")
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(5):
                lt.save(content=f"writer {n} step {i}", id="hot", tags=[f"w{n}"])
        except BaseException as exc:  # collected: an exception in a thread would be lost
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    final = lt.get("hot")
    assert final is not None
    assert final.content.endswith("step 4")
    assert int(lt.engine.get(lt.keys.version) or 0) == 21  # every save logged exactly once
    assert [h.entry.id for h in lt.search("writer")] == ["hot"]
