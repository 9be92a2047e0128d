"""A new process answers plain BM25 searches from the scope's snapshot until it needs its cache.

"A new process" is simulated by dropping this process's cache of the scope (``answered_cold`` tells
whether the search left the cache unbuilt); the subprocess test at the end does it for real.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from memstack import Memory
from memstack.engines import Engine, open_engine
from memstack.index import registry
from memstack.search.retrieval import SEARCH_PROFILES, SearchProfile
from memstack.tiers.longterm import LongTermMemory, index_cache, snapshotter
from memstack.tiers.longterm.entry import SearchHit
from memstack.tiers.longterm.layout import LOG_MAX, ScopeKeys
from memstack.tiers.longterm.provenance import PROVENANCE_KEY

ROOT = Path(__file__).resolve().parents[3]

TEXTS = [
    "I drink green tea every morning",
    "my sister plays jazz piano",
    "we hiked along the river on Sunday",
    "the concert tickets were expensive",
    "green tea ice cream at the market",
    "coffee keeps me awake at night",
    "jazz concert by the river next week",
]


def fill(lt: LongTermMemory) -> None:
    for i, text in enumerate(TEXTS):
        lt.save(id=f"e{i}", content=text, tags=[f"t{i % 2}"])


def drop_cache(engine: Engine, scope: str) -> index_cache.ScopeCache:
    """Forget this process's cache of ``scope`` (what a new process starts with); the new one."""
    registry.drop(("longterm", engine.identity, scope))
    return index_cache.scope_cache(engine, scope)


def pairs(hits: list[SearchHit]) -> list[tuple[str, float]]:
    return [(h.entry.id, round(h.score, 9)) for h in hits]


def answered_cold(lt: LongTermMemory, query: str, **options: object) -> tuple[list[SearchHit], bool]:
    cache = drop_cache(lt.engine, lt.scope)
    hits = lt.search(query, **options)  # type: ignore[arg-type]  # options of search()
    return hits, not cache.warm


def test_a_cold_search_ranks_as_a_warm_one(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    warm = {q: pairs(lt.search(q)) for q in ("green tea", "jazz river", "night coffee", "nothing")}
    assert lt.snapshot()
    for query, expected in warm.items():
        hits, cold = answered_cold(lt, query)
        assert cold and pairs(hits) == expected
        assert all(h.sources == ("bm25",) and h.bm25 == h.score for h in hits)
    cache = index_cache.scope_cache(engine, "u")
    assert cache.cold is not None and not cache.warm
    lt.save(id="late", content="green tea after the snapshot")
    assert lt.search("green tea")[0].entry.id == "late"  # replayed from the log
    assert not cache.warm
    assert [h.entry.id for h in lt.search("green tea", tags=["t0"])] == ["e0", "e4"]  # needs the cache
    assert cache.warm and cache.cold is None


def test_changes_after_the_snapshot_are_replayed(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    assert lt.snapshot()
    lt.save(id="e1", content="my sister plays the cello")  # updated
    lt.save(id="new", content="green tea with lemon and green honey")  # added
    other = LongTermMemory(engine, "u")
    other.save(id="e2", content="tea by the river")
    hits, cold = answered_cold(lt, "green tea")
    assert cold
    assert [h.entry.id for h in hits] == [h.entry.id for h in lt.search("green tea")]
    assert hits[0].entry.id == "new"
    assert answered_cold(lt, "jazz piano")[0][0].entry.id == "e6"  # e1 no longer mentions jazz


def test_deleting_an_entry_deletes_the_snapshot(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    keys = ScopeKeys.of(engine, "u")
    assert lt.snapshot()
    assert engine.get(keys.snapshot) is not None
    assert lt.delete("e0")
    assert engine.mget([keys.snapshot, keys.snapshot_version]) == [None, None]  # its terms went with it
    hits, cold = answered_cold(lt, "green tea")
    assert not cold and [h.entry.id for h in hits] == ["e4"]
    assert lt.snapshot()  # written again from the current state
    hits, cold = answered_cold(lt, "green tea")
    assert cold and [h.entry.id for h in hits] == ["e4"]


def test_a_snapshot_taken_before_a_deletion_never_lands(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    keys = ScopeKeys.of(engine, "u")
    real_mget = engine.mget

    def mget_then_delete(names: list[str]) -> list[str | None]:
        found = real_mget(names)
        if names == [keys.epoch, keys.deletions]:
            engine.mget = real_mget  # type: ignore[method-assign]  # once: the deletion races the snapshot
            LongTermMemory(engine, "u").delete("e0")
        return found

    engine.mget = mget_then_delete  # type: ignore[method-assign]  # restored inside, after one call
    try:
        assert not lt.snapshot()
    finally:
        engine.mget = real_mget  # type: ignore[method-assign]
    assert engine.get(keys.snapshot) is None


def test_filtered_and_listing_searches_wait_for_the_cache(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    assert lt.snapshot()
    expected = pairs(lt.search("green tea", tags=["t0"]))
    hits, cold = answered_cold(lt, "green tea", tags=["t0"])
    assert not cold and pairs(hits) == expected
    assert not answered_cold(lt, "")[1]


@pytest.mark.parametrize("profile", ["default", "t-spread"])
def test_conversation_scopes_wait_for_the_cache(
    engine: Engine, profile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # t-spread propagates along conversations without the context field: the snapshot has no
    # threads to propagate along either
    monkeypatch.setitem(SEARCH_PROFILES, "t-spread", SearchProfile(name="t-spread", neighbour_weight=0.3))
    lt = LongTermMemory(engine, "u", profile=profile)
    fill(lt)
    lt.save(
        id="turn",
        content="yes, in Chicago",
        metadata={PROVENANCE_KEY: {"id": "c1", "turn": 1, "speaker": "Ann"}},
    )
    assert lt.snapshot()
    expected = pairs(lt.search("Chicago"))
    hits, cold = answered_cold(lt, "Chicago")
    assert not cold and pairs(hits) == expected


def test_a_snapshot_older_than_the_log_is_not_used(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    assert lt.snapshot()
    for n in range(LOG_MAX + 1):
        lt.save(id="churn", content=f"churn {n}")
    hits, cold = answered_cold(lt, "green tea")
    assert not cold and [h.entry.id for h in hits] == ["e0", "e4"]


def test_a_damaged_snapshot_is_ignored(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    expected = pairs(lt.search("green tea"))
    engine.set(ScopeKeys.of(engine, "u").snapshot, 'memstack-bm25/1\n{"ids": []}\n')
    with caplog.at_level(logging.WARNING, logger="memstack.tiers.longterm"):
        hits, cold = answered_cold(lt, "green tea")
    assert not cold and pairs(hits) == expected
    assert "damaged BM25 snapshot" in caplog.text


def test_closing_a_memory_writes_the_pending_snapshot(
    engine_kind: str, engine_url_for: str, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    if engine_kind == "memory":
        pytest.skip("a memory:// engine's data ends when it closes")
    monkeypatch.setattr(snapshotter, "MIN_ENTRIES", 3)
    monkeypatch.setattr(snapshotter, "QUIET", 3600.0)
    monkeypatch.setattr(snapshotter, "MAX_DELAY", 3600.0)
    mem = Memory(engine)
    fill(mem.long_term("u"))
    keys = ScopeKeys.of(engine, "u")
    assert engine.get(keys.snapshot_version) is None  # the quiet period has not passed
    mem.close()  # so close runs the pending snapshot
    with open_engine(engine_url_for) as again:
        assert again.get(keys.snapshot_version) == again.get(keys.version)


def test_small_scopes_get_no_background_snapshot(engine: Engine) -> None:
    mem = Memory(engine)
    fill(mem.long_term("u"))
    keys = ScopeKeys.of(engine, "u")
    snapshotter.flush_all(engine)
    assert engine.get(keys.snapshot) is None  # below MIN_ENTRIES a cold build is fast anyway
    mem.close()


def test_a_new_process_answers_from_the_snapshot(
    engine_kind: str, engine_url_for: str, engine: Engine
) -> None:
    if engine_kind == "memory":
        pytest.skip("a memory:// engine lives in one process")
    lt = LongTermMemory(engine, "proc")
    fill(lt)
    assert lt.snapshot()
    script = (
        "import sys; from memstack.engines import open_engine\n"
        "from memstack.tiers.longterm import LongTermMemory\n"
        "from memstack.tiers.longterm.index_cache import scope_cache\n"
        "with open_engine(sys.argv[1]) as e:\n"
        "    hits = LongTermMemory(e, 'proc').search('jazz river')\n"
        "    print(not scope_cache(e, 'proc').warm, *[h.entry.id for h in hits])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, engine_url_for],
        check=True,
        cwd=ROOT,
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert out.stdout.split() == ["True", *[h.entry.id for h in lt.search("jazz river")]]


def test_the_cache_adopts_the_snapshot_index_and_agrees_with_a_fresh_build(engine: Engine) -> None:
    lt = LongTermMemory(engine, "u")
    fill(lt)
    for n in range(30):
        lt.save(id=f"x{n}", content=f"river tea jazz {n} " + "word " * (n % 5))
    assert lt.snapshot()
    assert answered_cold(lt, "green tea")[1]
    cache = index_cache.scope_cache(engine, "u")
    restored = cache.cold.index  # type: ignore[attr-defined]  # a Snapshot while cold
    other = LongTermMemory(engine, "u")
    other.save(id="new", content="green tea from a new entry")
    other.save(id="e1", content="my sister plays the cello")
    assert other.delete("x3")
    other.save(id="x4", content="changed and changed back")
    other.save(id="x4", content="river tea jazz 4 word word word word ")
    lt.search("tea", tags=["t0"])  # builds the cache
    assert cache.warm and cache.indexes["default"] is restored  # adopted, not rebuilt
    # it holds the cache's id strings, not the snapshot's copies (its byte count leaves them out)
    assert all(any(i is t for t in cache.texts if t == i) for i in restored.ids())
    fresh = index_cache.ScopeCache()
    fresh.refresh(engine, ScopeKeys.of(engine, "u"))
    for query in ("green tea", "jazz river", "cello", "word", "sister plays jazz"):
        # the same documents and scores; ties may follow another insertion order (seq)
        ours, theirs = cache.index("default").search(query), fresh.index("default").search(query)
        assert sorted((round(s, 9), i) for i, s in ours) == sorted((round(s, 9), i) for i, s in theirs)
    other.save(id="x5", content="now about green tea only")  # later changes apply as usual
    assert lt.search("green tea only")[0].entry.id == "x5"
