"""The cache's in-process index: its freshness on every engine (change log, log overflow, expiry,
clear, engine flush). The index kit itself: tests/index/."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memstack import ManualClock
from memstack.engines import Engine
from memstack.index import changelog
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.shared import SemanticCache


@pytest.fixture
def cache(engine: Engine) -> SemanticCache:
    return SemanticCache(engine, "idx", embedder=FakeEmbedder(dim=64))


def test_a_writer_elsewhere_is_seen_through_the_log(engine: Engine, cache: SemanticCache) -> None:
    assert cache.search("anything") == []  # the reader's index is built (empty)
    writer = SemanticCache(engine, "idx", embedder=FakeEmbedder(dim=64))
    writer.store("blue whales eat krill", "yes")
    assert [e["response"] for e in cache.search("what do blue whales eat")] == ["yes"]
    writer.delete("blue whales eat krill")
    assert cache.search("blue whales") == []


def test_a_reader_far_behind_rebuilds(
    engine: Engine, cache: SemanticCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changelog, "LOG_MAX", 3)
    cache.store("first entry about tea", "tea")
    assert len(cache.search("tea")) == 1
    writer = SemanticCache(engine, "idx", embedder=FakeEmbedder(dim=64))
    for word in ("coffee", "cocoa", "mate", "chai", "juice"):
        writer.store(f"second entry about {word}", word)
    assert engine.llen("shared:c:" + engine.tag("idx") + ":log") == 3
    assert sorted(e["response"] for e in cache.search("entry about", limit=10)) == [
        "chai", "cocoa", "coffee", "juice", "mate", "tea",
    ]  # fmt: skip


def test_expired_entries_leave_every_index(engine: Engine, cache: SemanticCache, clock: ManualClock) -> None:
    cache.store("short lived fact", "v", ttl=1)
    cache.store("long lived fact", "w")
    assert cache.exists("short lived fact")
    clock.advance(2)
    assert not cache.exists("short lived fact", threshold=0.99)
    assert [e["response"] for e in cache.search("lived fact", limit=5)] == ["w"]
    assert len(engine.smembers("shared:c:" + engine.tag("idx") + ":ids")) == 1  # logged as gone


def test_an_engine_flush_starts_a_new_epoch(engine: Engine, cache: SemanticCache) -> None:
    for i in range(3):
        cache.store(f"old entry {i}", i)
    assert len(cache.search("old entry")) == 3
    engine.flush()
    cache.store("brand new entry", "new")  # version 1 again: only the epoch tells the change
    assert [e["response"] for e in cache.search("brand new entry")] == ["new"]
    assert cache.stats()["entries"] == 1


def test_clear_empties_every_index(engine: Engine, cache: SemanticCache) -> None:
    cache.store("a cached answer", 1)
    other = SemanticCache(engine, "idx", embedder=FakeEmbedder(dim=64))
    assert other.exists("a cached answer")
    cache.clear()
    assert not other.exists("a cached answer")
    other.store("after the clear", 2)
    assert [e["response"] for e in cache.search("after the clear")] == [2]


WRITER = """
import sys
from memstack.engines import open_engine
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.shared import SemanticCache, DocumentStore
engine = open_engine(sys.argv[1])
cache = SemanticCache(engine, "idx", embedder=FakeEmbedder(dim=64))
cache.store("written by another process", "theirs")
assert cache.delete("written here first", threshold=0.99)
DocumentStore(engine, "kb").store("theirs", "a document from another process")
engine.close()
"""


def test_changes_made_by_another_process_reach_this_index(
    engine_kind: str, engine: Engine, engine_url_for: str, cache: SemanticCache
) -> None:
    if engine_kind == "memory":
        pytest.skip("the memory engine lives in one process")
    from memstack.tiers.shared import DocumentStore

    cache.store("written here first", "ours")
    docs = DocumentStore(engine, "kb")
    docs.store("ours", "a document from this process")
    assert [e["response"] for e in cache.search("written", limit=5)] == ["ours"]  # index built
    assert [h["key"] for h in docs.search("document process")] == ["ours"]
    subprocess.run([sys.executable, "-c", WRITER, engine_url_for], check=True, timeout=120)
    assert [e["response"] for e in cache.search("written", limit=5)] == ["theirs"]
    assert sorted(h["key"] for h in docs.search("document process")) == ["ours", "theirs"]


@pytest.mark.parametrize("text", ["What is Ruby?", "capital of Peru", "x y z w v u t s r q"])
def test_an_identical_query_hits_at_threshold_one(cache: SemanticCache, text: str) -> None:
    cache.store(text, "v")
    [entry] = cache.search(text, limit=1)
    assert -1.0 <= entry["similarity"] <= 1.0
    assert cache.exists(text, threshold=1.0)


def test_stats_count_live_entries_without_reading_them(
    engine: Engine, cache: SemanticCache, clock: ManualClock
) -> None:
    cache.store("kept", 1)
    cache.store("short", 2, ttl=1)
    cache.store("also short", 3, ttl=5)
    assert cache.stats()["entries"] == 3
    clock.advance(2)
    assert cache.stats()["entries"] == 2
    clock.advance(10)
    assert cache.stats()["entries"] == 1
    # An entry of the layout before expiry times (id in the set, no expiry score) is still counted.
    engine.sadd("shared:c:" + engine.tag("idx") + ":ids", "legacy")
    engine.set("shared:c:" + engine.tag("idx") + ":e:legacy", "{}")
    assert cache.stats()["entries"] == 2
