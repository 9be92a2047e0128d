"""``WorkingMemory`` on every engine: RockBot's working memory, with whole-segment
prefixes and one key case."""

from __future__ import annotations

import threading

import pytest

from memstack import ManualClock, Memory
from memstack.engines import Engine, open_engine
from memstack.foundation.errors import InvalidKey, InvalidValue, NamespaceFull
from memstack.tiers.working import WorkingEntry, WorkingMemory


def test_values_round_trip_exactly_and_fresh(mem: Memory) -> None:
    wm = mem.working("session/abc")
    wm.set("s", "123")
    wm.set("d", {"list": [1, 2.5, None, True], "text": "ünï"})
    assert wm.get("s").value == "123"  # type: ignore[union-attr]  # set above
    first = wm.get("d")
    assert first is not None
    assert first.value == {"list": [1, 2.5, None, True], "text": "ünï"}
    first.value["list"].append(9)
    assert wm.get("d").value["list"] == [1, 2.5, None, True]  # type: ignore[union-attr]  # set above


def test_set_returns_the_entry_with_defaults(mem: Memory, clock: ManualClock) -> None:
    wm = mem.working("session/abc")
    entry = wm.set("emails", "x", category="email", tags=["inbox", "unread"])
    now = mem.engine.now_ms() / 1000
    assert entry == WorkingEntry("session/abc/emails", "x", now, now + 300, "email", ("inbox", "unread"))
    assert wm.get("emails") == entry


def test_keys_are_case_insensitive(mem: Memory) -> None:
    wm = mem.working("Session/abc")
    wm.set("Emails", "v1")
    wm.set("EMAILS", "v2")
    assert [e.key for e in wm.list()] == ["session/abc/emails"]
    assert wm.get("SESSION/abc/Emails").value == "v2"  # type: ignore[union-attr]  # set above
    assert mem.working("session/abc").get("emails") is not None


def test_expiry_is_exact_under_the_manual_clock(mem: Memory, clock: ManualClock) -> None:
    wm = mem.working("session/abc")
    wm.set("default", "d")
    wm.set("short", "s", ttl=1.5)
    clock.advance(1.499)
    assert wm.get("short") is not None
    clock.advance(0.001)
    assert wm.get("short") is None
    assert [e.key for e in wm.list()] == ["session/abc/default"]
    clock.advance(298.499)
    assert wm.get("default") is not None
    clock.advance(0.001)
    assert wm.get("default") is None
    assert wm.list() == []


def test_default_ttl_is_configurable(mem: Memory, clock: ManualClock) -> None:
    wm = mem.working("session/abc", default_ttl=10)
    wm.set("k", 1)
    clock.advance(10)
    assert wm.get("k") is None


@pytest.mark.parametrize("ttl", [0, -5])
def test_non_positive_ttl_is_refused_and_nothing_written(mem: Memory, ttl: float) -> None:
    wm = mem.working("session/abc")
    with pytest.raises(InvalidValue, match="ttl"):
        wm.set("k", "v", ttl=ttl)
    assert wm.get("k") is None


def test_bad_value_does_not_corrupt_the_old_one(mem: Memory) -> None:
    wm = mem.working("session/abc")
    wm.set("k", "good")
    with pytest.raises(InvalidValue):
        wm.set("k", object())
    assert wm.get("k").value == "good"  # type: ignore[union-attr]  # set above


def test_value_size_limit(mem: Memory) -> None:
    wm = mem.working("session/abc", max_value_bytes=10)
    wm.set("ok", "12345678")  # 10 bytes of JSON with its quotes
    with pytest.raises(InvalidValue, match="11 bytes of JSON exceed the limit of 10 bytes"):
        wm.set("big", "123456789")
    with pytest.raises(InvalidValue, match="the limit of 10 bytes"):
        wm.set("ok", "ééééé")  # 12 bytes in UTF-8
    assert wm.get("ok").value == "12345678"  # type: ignore[union-attr]  # set above
    assert mem.working("session/abc").max_value_bytes == 1 << 20
    with pytest.raises(InvalidValue):
        mem.working("session/abc", max_value_bytes=0)


def test_cap_refuses_a_new_key_with_a_typed_error(mem: Memory) -> None:
    wm = mem.working("session/abc", max_entries_per_namespace=3)
    for i in range(3):
        wm.set(f"k{i}", i)
    with pytest.raises(NamespaceFull, match=r"'session/abc'.*cap is 3"):
        wm.set("k3", 3)
    assert wm.get("k3") is None
    assert len(wm.list()) == 3


def test_default_cap_is_fifty(mem: Memory) -> None:
    wm = mem.working("session/abc")
    for i in range(50):
        wm.set(f"k{i}", i)
    with pytest.raises(NamespaceFull):
        wm.set("k50", 50)


def test_overwrite_at_the_cap_is_allowed(mem: Memory) -> None:
    wm = mem.working("session/abc", max_entries_per_namespace=2)
    wm.set("a", 1)
    wm.set("b", 2)
    wm.set("A", 10)
    assert wm.get("a").value == 10  # type: ignore[union-attr]  # set above


def test_expired_entries_never_count_toward_the_cap(mem: Memory, clock: ManualClock) -> None:
    wm = mem.working("session/abc", max_entries_per_namespace=2)
    wm.set("a", 1, ttl=5)
    wm.set("b", 2, ttl=50)
    clock.advance(5)
    wm.set("c", 3)
    assert [e.key for e in wm.list()] == ["session/abc/b", "session/abc/c"]
    with pytest.raises(NamespaceFull):
        wm.set("d", 4)


def test_cap_is_per_namespace(mem: Memory) -> None:
    one = mem.working("session/one", max_entries_per_namespace=1)
    two = mem.working("session/two", max_entries_per_namespace=1)
    one.set("a", 1)
    two.set("a", 1)
    with pytest.raises(NamespaceFull):
        one.set("b", 2)


def test_writes_go_to_the_own_namespace_only(mem: Memory) -> None:
    wm = mem.working("session/abc")
    with pytest.raises(InvalidKey, match="own namespace"):
        wm.set("sub/path", 1)
    with pytest.raises(InvalidKey, match="own namespace"):
        wm.set("patrol/heartbeat/alert", "x")
    with pytest.raises(InvalidKey):
        wm.delete("patrol/heartbeat/alert")
    with pytest.raises(InvalidKey):
        wm.clear("patrol/heartbeat")
    assert wm.set("session/abc/full/path", 1).key == "session/abc/full/path"


def test_reads_cross_namespaces(mem: Memory) -> None:
    mem.working("patrol/heartbeat").set("alert", "disk full", tags=["urgent"])
    session = mem.working("session/abc")
    entry = session.get("patrol/heartbeat/alert")
    assert entry is not None
    assert entry.value == "disk full"
    assert session.get("alert") is None


def test_list_prefixes_match_whole_segments(mem: Memory) -> None:
    mem.working("session/s1").set("a", 1)
    mem.working("session/s1").set("session/s1/notes/x", 2)
    mem.working("session/s10").set("b", 3)
    mem.working("patrol/heartbeat").set("c", 4)
    mem.working("patrol/news").set("d", 5)
    wm = mem.working("session/s1")
    assert [e.key for e in wm.list()] == ["session/s1/a", "session/s1/notes/x"]
    assert [e.key for e in wm.list("session/s1")] == ["session/s1/a", "session/s1/notes/x"]
    assert [e.key for e in wm.list("session/s1/notes")] == ["session/s1/notes/x"]
    assert [e.key for e in wm.list("session")] == ["session/s1/a", "session/s1/notes/x", "session/s10/b"]
    assert [e.key for e in wm.list("Patrol/")] == ["patrol/heartbeat/c", "patrol/news/d"]
    assert len(wm.list("")) == 5
    assert wm.list("nothing") == []


def test_list_many_answers_each_prefix_as_list_does(mem: Memory) -> None:
    mem.working("session/s1").set("a", 1)
    mem.working("patrol/heartbeat").set("c", 4)
    mem.working("subagent/t1").set("x-index", 5)
    wm = mem.working("session/s1")
    prefixes = [None, "patrol", "", "subagent/t1", "session", "nothing"]
    assert wm.list_many(prefixes) == [wm.list(p) for p in prefixes]
    assert [len(group) for group in wm.list_many(prefixes)] == [1, 1, 3, 1, 1, 0]


def test_list_without_values_reads_metadata_only(mem: Memory) -> None:
    wm = mem.working("session/abc")
    wm.set("k", "big value", category="c", tags=["t"])
    (entry,) = wm.list(with_values=False)
    assert (entry.key, entry.value, entry.category, entry.tags) == ("session/abc/k", None, "c", ("t",))


def test_delete(mem: Memory, clock: ManualClock) -> None:
    wm = mem.working("session/abc")
    wm.set("a", 1)
    wm.set("b", 2, ttl=1)
    assert wm.delete("A") is True
    assert wm.delete("a") is False
    clock.advance(1)
    assert wm.delete("b") is False
    assert wm.list() == []


def test_clear_prefix_and_all(mem: Memory) -> None:
    wm = mem.working("session/abc")
    wm.set("session/abc/notes/a", 1)
    wm.set("session/abc/notes/b", 2)
    wm.set("notesx", 3)
    other = mem.working("session/other")
    other.set("keep", 1)
    assert wm.clear("notes") == 2
    assert [e.key for e in wm.list()] == ["session/abc/notesx"]
    assert wm.clear() == 1
    assert wm.list() == []
    assert [e.key for e in wm.list("session")] == ["session/other/keep"]
    wm.set("again", 1)
    assert [e.key for e in wm.list("session")] == ["session/abc/again", "session/other/keep"]


def test_search_filters_and_recency(mem: Memory, clock: ManualClock) -> None:
    wm = mem.working("session/abc")
    wm.set("first", "a", category="email/inbox", tags=["Urgent"])
    clock.advance(1)
    wm.set("second", "b", category="email", tags=["later"])
    clock.advance(1)
    wm.set("third", "c")
    assert [e.key for e in wm.search()] == ["session/abc/third", "session/abc/second", "session/abc/first"]
    assert [e.key for e in wm.search("  ", max_results=1)] == ["session/abc/third"]
    assert [e.key for e in wm.search(category="EMAIL")] == ["session/abc/second", "session/abc/first"]
    assert [e.key for e in wm.search(category="email/inbox")] == ["session/abc/first"]
    assert [e.key for e in wm.search(tags=["urgent"])] == ["session/abc/first"]
    with pytest.raises(InvalidValue):
        wm.search(max_results=0)


def test_search_ranks_by_bm25_over_key_value_tags_category(mem: Memory) -> None:
    pytest.importorskip("memstack.search")
    wm = mem.working("session/abc")
    wm.set("inbox_summary", "three unread messages from Alice")
    wm.set("weather", "sunny tomorrow", tags=["forecast"])
    wm.set("draft", "reply text", category="email-drafts")
    mem.working("patrol/heartbeat").set("alert", "disk almost full", category="patrol-finding")
    assert [e.key for e in wm.search("unread messages")] == ["session/abc/inbox_summary"]
    assert [e.key for e in wm.search("forecast")] == ["session/abc/weather"]
    assert [e.key for e in wm.search("drafts")] == ["session/abc/draft"]
    assert [e.key for e in wm.search("inbox")] == ["session/abc/inbox_summary"]
    assert wm.search("disk") == []
    assert [e.key for e in wm.search("disk", prefix="patrol")] == ["patrol/heartbeat/alert"]
    assert wm.search("nothing matches this") == []


def test_namespace_binding_is_validated(mem: Memory) -> None:
    with pytest.raises(InvalidKey):
        mem.working("session")
    with pytest.raises(InvalidValue):
        mem.working("session/abc", max_entries_per_namespace=0)
    with pytest.raises(InvalidValue):
        mem.working("session/abc", default_ttl=0)


def test_durable_across_engine_instances(
    engine_kind: str, engine: Engine, engine_url_for: str, clock: ManualClock
) -> None:
    if engine_kind == "memory":
        pytest.skip("the memory engine is lost at exit by design")
    WorkingMemory(engine, "session/abc").set("k", {"v": 1}, ttl=60, category="c", tags=["t"])
    with open_engine(engine_url_for, clock=clock) as second:
        other = WorkingMemory(second, "session/abc", max_entries_per_namespace=1)
        entry = other.get("k")
        assert entry is not None
        assert (entry.value, entry.category, entry.tags) == ({"v": 1}, "c", ("t",))
        with pytest.raises(NamespaceFull):
            other.set("k2", 1)
        clock.advance(60)
        assert other.get("k") is None


def test_cap_holds_under_concurrent_writers(
    engine_kind: str, engine: Engine, engine_url_for: str, clock: ManualClock
) -> None:
    cap, writers, per_writer = 10, 4, 6
    engines = [engine] * writers if engine_kind == "memory" else []
    try:
        if not engines:
            engines = [open_engine(engine_url_for, clock=clock) for _ in range(writers)]
        outcomes: list[str] = []
        lock = threading.Lock()
        barrier = threading.Barrier(writers)

        def write(n: int) -> None:
            wm = WorkingMemory(engines[n], "session/race", max_entries_per_namespace=cap)
            barrier.wait()
            for i in range(per_writer):
                try:
                    wm.set(f"w{n}-{i}", i)
                    result = "ok"
                except NamespaceFull:
                    result = "full"
                with lock:
                    outcomes.append(result)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert outcomes.count("ok") == cap
        assert outcomes.count("full") == writers * per_writer - cap
        assert len(WorkingMemory(engine, "session/race").list()) == cap
    finally:
        if engine_kind != "memory":
            for eng in engines:
                eng.close()


def _process_writer(url: str, n: int, cap: int, count: int) -> list[str]:
    with open_engine(url) as engine:
        wm = WorkingMemory(engine, "session/procs", max_entries_per_namespace=cap)
        results = []
        for i in range(count):
            try:
                wm.set(f"p{n}-{i}", i, ttl=600)
                results.append("ok")
            except NamespaceFull:
                results.append("full")
        return results


@pytest.mark.slow
def test_cap_holds_across_processes(engine_kind: str, engine: Engine, engine_url_for: str) -> None:
    if engine_kind == "memory":
        pytest.skip("the memory engine lives in one process")
    import multiprocessing

    cap, procs, per_proc = 12, 3, 8
    with multiprocessing.get_context("spawn").Pool(procs) as pool:
        outcomes = pool.starmap(_process_writer, [(engine_url_for, n, cap, per_proc) for n in range(procs)])
    flat = [o for result in outcomes for o in result]
    assert flat.count("ok") == cap
    assert flat.count("full") == procs * per_proc - cap
