"""MemstackStore's TTL API as LangGraph's stores have it, its attributes and its set-up methods."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import IndexConfig

from _forked import held_by_a_thread, in_child
from memstack.agent.lgstore._lg_layout import NamespaceKeys, ns_code
from memstack.doors.integrations.langgraph import MemstackStore
from memstack.engines import Engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import InvalidConfiguration


def _ids(engine: Engine, namespace: tuple[str, ...]) -> set[str]:
    return engine.smembers(NamespaceKeys.of(engine, ns_code(namespace)).scope.ids)


def test_sweep_reports_and_removes_what_expired(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine, ttl={"default_ttl": 1.0})
    store.put(("t",), "short", {"v": 1})
    store.put(("t", "x"), "short", {"v": 1}, ttl=0.5)
    store.put(("t",), "kept", {"v": 2}, ttl=None)
    assert store.sweep_ttl() == 0
    clock.advance(31)
    assert store.sweep_ttl() == 1  # ("t", "x")'s item
    clock.advance(30)
    assert store.get(("t",), "short") is None  # expired: the engine hides it before any sweep
    assert store.sweep_ttl() == 1
    assert store.sweep_ttl() == 0
    assert _ids(engine, ("t",)) == {"kept"} and _ids(engine, ("t", "x")) == set()
    assert store.list_namespaces() == [("t",)]


def test_reads_refresh_as_the_configuration_says(engine: Engine, clock: ManualClock) -> None:
    quiet = MemstackStore(engine, ttl={"default_ttl": 1.0})  # refresh_on_read unsaid: reads don't
    quiet.put(("q",), "k", {"v": 1})
    clock.advance(40)
    assert quiet.get(("q",), "k") is not None
    assert quiet.search(("q",)) != []
    clock.advance(21)
    assert quiet.get(("q",), "k") is None
    quiet.put(("q",), "k", {"v": 1})
    clock.advance(40)
    assert quiet.get(("q",), "k", refresh_ttl=True) is not None  # an explicit refresh always does
    clock.advance(40)
    assert quiet.get(("q",), "k") is not None
    eager = MemstackStore(engine, ttl={"default_ttl": 1.0, "refresh_on_read": True})
    eager.put(("e",), "k", {"v": 1})
    clock.advance(40)
    assert [h.key for h in eager.search(("e",))] == ["k"]  # refreshes
    clock.advance(40)
    assert eager.get(("e",), "k", refresh_ttl=False) is not None
    clock.advance(21)
    assert eager.get(("e",), "k") is None
    bare = MemstackStore(engine)  # no TTL configuration: reads refresh (LangGraph's default)
    bare.put(("b",), "k", {"v": 1}, ttl=1.0)
    clock.advance(40)
    assert bare.get(("b",), "k") is not None
    clock.advance(40)
    assert bare.get(("b",), "k") is not None


def test_the_sweeper_runs_until_stopped(engine: Engine) -> None:
    swept = threading.Event()

    class Watched(MemstackStore):
        def sweep_ttl(self) -> int:
            count = super().sweep_ttl()
            swept.set()
            return count

    assert MemstackStore(engine).start_ttl_sweeper().done()  # no TTL configuration: nothing starts
    store = Watched(engine, ttl={"default_ttl": 1.0, "sweep_interval_minutes": 0.0005})
    future = store.start_ttl_sweeper()
    assert swept.wait(30), "the sweeper never swept"
    assert not future.done()
    assert store.stop_ttl_sweeper(timeout=30)
    assert future.result(timeout=30) is None
    assert store.stop_ttl_sweeper()  # not running: nothing to stop
    again = store.start_ttl_sweeper(sweep_interval_minutes=60)
    again.cancel()  # cancelling the future stops the thread
    assert store.stop_ttl_sweeper(timeout=30)


@pytest.mark.parametrize(
    "ttl", [{"default_ttl": 0}, {"default_ttl": -1.0}, {"sweep_interval_minutes": "5"}, {"default_ttl": True}]
)
def test_bad_ttl_configurations_are_refused(engine: Engine, ttl: dict[str, object]) -> None:
    with pytest.raises(InvalidConfiguration, match="ttl"):
        MemstackStore(engine, ttl=ttl)  # type: ignore[arg-type]


def test_the_attributes_langgraph_code_reads(engine: Engine) -> None:
    embeddings = DeterministicFakeEmbedding(size=8)
    store = MemstackStore(engine, index={"dims": 8, "embed": embeddings, "text_fields": ["body"]})
    assert store.supports_ttl and store.ttl_config is None
    assert store.embeddings is embeddings
    assert store.index_config is not None and store.index_config["dims"] == 8
    assert store.index_config["text_fields"] == ["body"]  # type: ignore[typeddict-item]  # the SQLite store's key
    store.put(("a",), "k", {"body": "hello", "other": "world"})
    assert store.search(("a",), query="hello")[0].score == pytest.approx(1.0)  # only "body" was embedded
    plain = MemstackStore(engine, ttl={"default_ttl": 2.0})
    assert plain.embeddings is None and plain.index_config is None
    assert plain.ttl_config == {"default_ttl": 2.0, "refresh_on_read": False}  # what it does, said
    with pytest.raises(InvalidConfiguration, match="distance_type"):
        MemstackStore(engine, index=IndexConfig(dims=8, embed=embeddings, distance_type="l2"))  # type: ignore[typeddict-unknown-key]


def test_functions_are_wrapped_and_kept(engine: Engine) -> None:
    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, float(len(t))] for t in texts]

    store = MemstackStore(engine, index={"dims": 2, "embed": embed})
    assert store.embeddings is not None and store.embeddings.embed_documents(["ab"]) == [[1.0, 2.0]]  # type: ignore[union-attr]


def test_setup_and_from_conn_string(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lg.db'}"
    with MemstackStore.from_conn_string(url, ttl={"default_ttl": 5.0}) as store:
        store.setup()  # nothing to migrate: runs as LangGraph's SQL stores' setup() does
        store.put(("a",), "k", {"v": 1})
        assert store.ttl_config is not None and store.ttl_config["default_ttl"] == 5.0
    with MemstackStore.from_conn_string(url) as again:
        item = again.get(("a",), "k")
        assert item is not None and item.value == {"v": 1}


def test_async_reads_refresh_as_sync_ones(engine: Engine, clock: ManualClock) -> None:
    store = MemstackStore(engine, ttl={"default_ttl": 1.0, "refresh_on_read": True})

    async def run() -> None:
        await store.aput(("a",), "k", {"v": 1})
        clock.advance(40)
        assert [h.key for h in await store.asearch(("a",), refresh_ttl=True)] == ["k"]
        clock.advance(40)
        assert await store.aget(("a",), "k", refresh_ttl=False) is not None
        clock.advance(21)
        assert await store.aget(("a",), "k") is None

    asyncio.run(run())


def test_a_forked_child_sweeps_again_in_its_own_thread_from_its_first_batch(engine: Engine) -> None:
    sweepers: list[int] = []  # the pid of each sweep (appending needs no lock a fork could hold)

    class Watched(MemstackStore):
        def sweep_ttl(self) -> int:
            sweepers.append(os.getpid())
            return super().sweep_ttl()

    store = Watched(engine, ttl={"default_ttl": 1.0, "sweep_interval_minutes": 0.0005})
    store.start_ttl_sweeper()

    def child() -> bool:
        store.put(("f",), "k", {"v": 1})  # the first batch starts the sweeping the parent did
        until = time.monotonic() + 10
        while os.getpid() not in sweepers and time.monotonic() < until:
            time.sleep(0.01)
        return os.getpid() in sweepers and store.stop_ttl_sweeper(timeout=10)

    with held_by_a_thread(store._sweeper._lock):  # a parent thread starting or stopping it
        assert in_child(child, deadline=60)
    assert store.stop_ttl_sweeper(timeout=30)
