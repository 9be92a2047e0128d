"""MemstackStore's storage: TTL, namespace listing, freshness across instances, exact counts."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langgraph.store.memory import InMemoryStore

from memstack.agent.lgstore._lg_cache import clear_caches
from memstack.agent.lgstore._lg_layout import NamespaceKeys, ns_code
from memstack.agent.lgstore._lg_write import PRUNE, PRUNE_GRACE_MS, put_item
from memstack.doors.integrations.langgraph import MemstackStore
from memstack.engines import Engine, open_engine
from memstack.foundation.clock import ManualClock

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def other(engine_kind: str, engine_url_for: str, engine: Engine, clock: ManualClock) -> Iterator[Engine]:
    """A second engine instance on the same data (the memory engine: the same one)."""
    if engine_kind == "memory":
        yield engine
        return
    second = open_engine(engine_url_for, clock=clock)
    yield second
    second.close()


def _count(engine: Engine, namespace: tuple[str, ...]) -> int:
    return engine.scard(NamespaceKeys.of(engine, ns_code(namespace)).scope.ids)


# -- TTL ---------------------------------------------------------------------------------------
def test_default_ttl_and_refresh_on_search(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine, ttl={"default_ttl": 1.0, "refresh_on_read": True})
    store.put(("t",), "k", {"text": "ephemeral note"})
    store.put(("t",), "keep", {"text": "kept note"}, ttl=None)  # an explicit None: no TTL
    clock.advance(50)
    assert [h.key for h in store.search(("t",), query="ephemeral")] == ["k"]  # refreshes
    clock.advance(50)
    assert [h.key for h in store.search(("t",), refresh_ttl=False)] == ["k", "keep"]
    clock.advance(11)
    assert [h.key for h in store.search(("t",))] == ["keep"]
    assert store.search(("t",), query="ephemeral") == []
    assert store.list_namespaces() == [("t",)]


def test_refresh_on_read_off(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine, ttl={"default_ttl": 1.0, "refresh_on_read": False})
    store.put(("t",), "k", {"v": 1})
    clock.advance(50)
    assert store.get(("t",), "k") is not None
    clock.advance(11)
    assert store.get(("t",), "k", refresh_ttl=True) is None


def test_expired_items_leave_the_namespace_listing(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine)
    store.put(("a",), "k", {"v": 1}, ttl=1.0)
    store.put(("b",), "k", {"v": 1}, ttl=2.0)
    store.put(("c",), "k", {"v": 1})
    clock.advance(61)
    assert store.list_namespaces() == [("b",), ("c",)]
    store.put(("a",), "k", {"v": 2})  # re-put over the expired item: counted once
    assert _count(engine, ("a",)) == 1
    clock.advance(60)
    assert store.list_namespaces() == [("a",), ("c",)]
    store.delete(("a",), "k")
    assert store.list_namespaces() == [("c",)]


def test_writes_prune_expired_items(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine)
    for n in range(PRUNE + 2):
        store.put(("p",), f"old{n}", {"v": n}, ttl=1.0)
    clock.advance(60 + PRUNE_GRACE_MS / 1000)
    store.put(("p",), "new1", {"v": 1})
    store.put(("p",), "new2", {"v": 2})
    assert _count(engine, ("p",)) == 2
    assert engine.smembers(NamespaceKeys.of(engine, ns_code(("p",))).scope.ids) == {"new1", "new2"}
    assert [h.key for h in store.search(("p",))] == ["new1", "new2"]


# -- list_namespaces -----------------------------------------------------------------------------
_NAMESPACES = [
    ("a",), ("a", "b"), ("a", "b", "c"), ("a", "x", "c"), ("b", "b"), ("b", "c", "d", "e"), ("z", "a"),
]  # fmt: skip


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"prefix": ("a",)},
        {"prefix": ("a", "*", "c")},
        {"suffix": ("c",)},
        {"suffix": ("*", "c")},
        {"prefix": ("a",), "suffix": ("c",)},
        {"max_depth": 1},
        {"max_depth": 2, "prefix": ("b",)},
        {"limit": 2},
        {"limit": 3, "offset": 2},
        {"offset": 10},
    ],
)
def test_list_namespaces_as_langgraph(engine: Engine, kwargs: dict[str, Any]) -> None:
    ours, theirs = MemstackStore(engine), InMemoryStore()
    for ns in reversed(_NAMESPACES):
        ours.put(ns, "k", {"v": 1})
        theirs.put(ns, "k", {"v": 1})
    assert ours.list_namespaces(**kwargs) == theirs.list_namespaces(**kwargs)


def test_search_spans_namespaces_under_a_prefix(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.put(("u", "a"), "1", {"text": "apple pie"})
    store.put(("u", "b"), "2", {"text": "apple tart"})
    store.put(("ux",), "3", {"text": "apple juice"})  # shares the text prefix, not the namespace
    assert sorted(h.key for h in store.search(("u",), query="apple")) == ["1", "2"]
    assert [h.key for h in store.search(("u",), limit=1, offset=1)] == ["2"]


# -- freshness across instances and processes ------------------------------------------------
def test_writes_through_another_instance_are_seen(engine: Engine, other: Engine) -> None:
    reader, writer = MemstackStore(engine), MemstackStore(other)
    reader.put(("f",), "a", {"text": "apples are red"})
    assert [h.key for h in reader.search(("f",), query="apples")] == ["a"]
    writer.put(("f",), "b", {"text": "apples are green"})
    writer.put(("f",), "a", {"text": "bananas"})
    assert [h.key for h in reader.search(("f",), query="apples")] == ["b"]
    clear_caches()  # as a fresh process would start
    writer.delete(("f",), "b")
    assert reader.search(("f",), query="apples") == []
    assert [h.key for h in reader.search(("f",), query="bananas")] == ["a"]
    assert reader.list_namespaces() == [("f",)]


def test_write_from_another_process_is_seen(engine_kind: str, engine_url_for: str, engine: Engine) -> None:
    if engine_kind == "memory":
        pytest.skip("a memory:// engine lives in one process")
    store = MemstackStore(engine)
    store.put(("proc",), "local", {"text": "local cherries"})
    assert [h.key for h in store.search(("proc",), query="cherries")] == ["local"]
    script = (
        "import sys; from memstack.engines import open_engine\n"
        "from memstack.doors.integrations.langgraph import MemstackStore\n"
        "with open_engine(sys.argv[1]) as e:\n"
        "    MemstackStore(e).put(('proc',), 'remote', {'text': 'remote cherries'})\n"
    )
    subprocess.run([sys.executable, "-c", script, engine_url_for], check=True, cwd=ROOT, timeout=60)
    assert sorted(h.key for h in store.search(("proc",), query="cherries")) == ["local", "remote"]


def test_reads_never_write(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.put(("r",), "k", {"text": "read me"})
    before = {key: engine.get(key) for key in sorted(engine.scan("lg:")) if key.endswith("ver")}
    keys_before = sorted(engine.scan(""))
    store.get(("r",), "k")
    store.search(("r",), query="read", filter={"text": "read me"})
    store.list_namespaces()
    store.search(("nothing",))
    assert sorted(engine.scan("")) == keys_before
    assert {key: engine.get(key) for key in before} == before


# -- exact counts under concurrent writers ----------------------------------------------------
def test_counts_stay_exact_under_concurrent_writers(engine: Engine, other: Engine) -> None:
    stores = [MemstackStore(engine), MemstackStore(other)]
    errors: list[BaseException] = []

    def work(n: int) -> None:
        store = stores[n % 2]
        try:
            for i in range(30):
                key = f"k{i % 6}"
                if (i + n) % 3 == 0:
                    store.delete(("c",), key)
                else:
                    store.put(("c",), key, {"v": i, "by": n})
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    live = MemstackStore(engine).search(("c",), limit=100)
    assert _count(engine, ("c",)) == len(live)
    assert MemstackStore(engine).list_namespaces() == ([("c",)] if live else [])


def test_a_damaged_record_is_replaced_by_a_put(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.put(("d",), "k", {"v": 1})
    engine.set(NamespaceKeys.of(engine, ns_code(("d",))).item("k"), "not json")
    clear_caches()  # damage bypasses the change log: only a process that reads it afresh sees it
    assert store.search(("d",)) == []  # left out of searches (a warning is logged)
    store.put(("d",), "k", {"v": 2})
    item = store.get(("d",), "k")
    assert item is not None and item.value == {"v": 2}
    assert _count(engine, ("d",)) == 1


# -- a put into a warm namespace skips its read -----------------------------------------------
def _batches(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every batch the engine runs from now on, as its command names."""
    seen: list[list[str]] = []
    run = engine.execute

    def spy(ops: Any) -> Any:
        seen.append([op[0] for op in ops])
        return run(ops)

    monkeypatch.setattr(engine, "execute", spy)
    return seen


def test_a_put_into_a_warm_namespace_is_one_batch(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemstackStore(engine)
    store.put(("w",), "a", {"text": "first"})  # an empty namespace: read, write, then warm
    batches = _batches(engine, monkeypatch)
    store.put(("w",), "b", {"text": "second"})
    store.put(("w",), "a", {"text": "first revised"})
    assert len(batches) == 2
    assert all(b[:2] == ["require_equal", "require_equal"] and "set" in b for b in batches)
    first = store.get(("w",), "a")
    assert first is not None and first.value == {"text": "first revised"}
    assert [h.key for h in store.search(("w",), query="revised")] == ["a"]  # the index took the put
    assert [h.key for h in store.search(("w",))] == ["a", "b"]  # first-insertion order kept
    assert _count(engine, ("w",)) == 2


def test_a_write_the_cache_missed_sends_the_put_the_reading_way(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine)
    store.put(("m",), "a", {"text": "apples"})
    keys = NamespaceKeys.of(engine, ns_code(("m",)))
    put_item(engine, keys, "b", {"text": "remote pears"}, None, None)  # a writer without this cache
    created = store.get(("m",), "b")
    assert created is not None
    clock.advance(5)
    store.put(("m",), "b", {"text": "local pears"})  # the cache thinks b is new: the guard says no
    item = store.get(("m",), "b")
    assert item is not None and item.value == {"text": "local pears"}
    assert item.created_at == created.created_at and item.updated_at > created.updated_at
    assert _count(engine, ("m",)) == 2
    assert [h.key for h in store.search(("m",), query="pears")] == ["b"]
    assert [h.key for h in store.search(("m",))] == ["a", "b"]


def test_a_flushed_namespace_is_not_brought_back_by_a_warm_cache(engine: Engine) -> None:
    store = MemstackStore(engine)
    store.put(("g",), "old", {"text": "gone soon"})
    store.put(("g",), "old2", {"text": "gone soon too"})
    engine.flush()
    store.put(("g",), "new", {"text": "fresh start"})
    assert [h.key for h in store.search(("g",))] == ["new"]
    assert store.search(("g",), query="gone") == []
    assert _count(engine, ("g",)) == 1
    assert store.list_namespaces() == [("g",)]


# -- a search or listing of unchanged namespaces is one read ------------------------------------
def test_a_search_of_unchanged_namespaces_is_one_read(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemstackStore(engine)
    store.put(("s", "a"), "1", {"text": "red apples", "kind": "x"})
    store.put(("s", "b"), "2", {"text": "green apples", "kind": "y"})
    assert len(store.search(("s",), query="apples")) == 2  # the caches are warm from here on
    batches = _batches(engine, monkeypatch)
    assert [h.key for h in store.search(("s",), filter={"kind": "x"})] == ["1"]
    assert [h.key for h in store.search(("s", "b"), query="apples")] == ["2"]
    assert store.list_namespaces(prefix=("s",)) == [("s", "a"), ("s", "b")]
    if engine.clustered:  # every namespace sits in a slot of its own: the registry's read, then one each
        assert len(batches) == (1 + 2) + (1 + 1) + (1 + 2)
    else:  # the versions of the registry and of the namespaces; the listing reads them with the counts
        assert batches == [["mget"], ["mget"], ["mget", "scard", "scard"]]


def test_a_warm_search_finds_what_another_process_added(
    engine_kind: str, engine_url_for: str, engine: Engine
) -> None:
    if engine_kind == "memory":
        pytest.skip("a memory:// engine lives in one process")
    store = MemstackStore(engine)
    store.put(("np", "a"), "1", {"text": "local plums"})
    assert [h.key for h in store.search(("np",), query="plums")] == ["1"]
    assert store.list_namespaces(prefix=("np",)) == [("np", "a")]
    script = (
        "import sys; from memstack.engines import open_engine\n"
        "from memstack.doors.integrations.langgraph import MemstackStore\n"
        "with open_engine(sys.argv[1]) as e:\n"
        "    store = MemstackStore(e)\n"
        "    store.put(('np', 'b'), '2', {'text': 'remote plums'})\n"  # a namespace new to the registry
        "    store.put(('np', 'a'), '1', {'text': 'local plums, changed remotely'})\n"
    )
    subprocess.run([sys.executable, "-c", script, engine_url_for], check=True, cwd=ROOT, timeout=60)
    found = {h.key: h.value["text"] for h in store.search(("np",), query="plums")}
    assert found == {"1": "local plums, changed remotely", "2": "remote plums"}
    assert store.list_namespaces(prefix=("np",)) == [("np", "a"), ("np", "b")]
