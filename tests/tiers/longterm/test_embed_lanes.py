"""The background vector thread: one per embedder, waiting for work between saves, stopped by the
close of the last scope using it, never left behind."""

from __future__ import annotations

import gc
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

import memstack
from _forked import held_by_a_thread, in_child
from memstack import Memory
from memstack.engines import Engine
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.vectors import stop_at_exit


class ThreadNoting(FakeEmbedder):
    """A FakeEmbedder that notes the threads its background batches run on."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.threads: list[threading.Thread] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.threads.append(threading.current_thread())
        return super().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return super().embed(texts)  # a search's own embedding, on the caller's thread


def _embed_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "memstack-embed"]


def test_saves_and_searches_share_one_waiting_thread(mem: Memory) -> None:
    embedder = ThreadNoting()
    memories = mem.long_term("lanes", embedder=embedder)
    for n in range(12):
        memories.save(id=f"m{n}", content=f"the tram line {n} closes in May")
        # A search waits for its own process's vectors: the queue drains between saves, and the
        # next save finds the same thread waiting instead of starting one.
        hits = memories.search(f"tram line {n}")
        assert hits and all(h.vector is not None for h in hits)
    assert len(embedder.threads) >= 12
    assert len(set(embedder.threads)) == 1
    assert embedder.threads[0].name == "memstack-embed"


def test_scopes_of_one_embedder_share_its_thread_and_each_gets_its_vectors(mem: Memory) -> None:
    embedder = ThreadNoting()
    scopes = [mem.long_term(f"user{n}", embedder=embedder) for n in range(8)]
    for n in range(40):
        scopes[n % 8].save(id=f"m{n}", content=f"entry {n} about green tea")
    for scope in scopes:
        assert scope.flush_embeddings(timeout=30)
        assert len(scope.engine.hgetall(scope.keys.vectors)) == 5
    assert len(set(embedder.threads)) == 1


def test_closing_the_memory_stops_the_thread(engine: Engine) -> None:
    embedder = ThreadNoting()
    mem = Memory(engine, embedder=embedder)
    first, second = mem.long_term("a"), mem.long_term("b")
    first.save(content="one")
    second.save(content="two")
    assert first.flush_embeddings(timeout=30) and second.flush_embeddings(timeout=30)
    (thread,) = set(embedder.threads)
    first.close()
    assert thread.is_alive()  # the other scope still uses it
    mem.close()
    assert not thread.is_alive()  # the last close joined it


def test_many_saves_leave_no_thread_behind(engine: Engine) -> None:
    before = set(_embed_threads())  # other tests' lanes may end meanwhile: only new ones count
    embedder = ThreadNoting()
    with Memory(engine, embedder=embedder) as mem:
        for n in range(200):
            mem.long_term(f"s{n % 20}").save(content=f"note {n}")
            assert len(set(_embed_threads()) - before) <= 1
        for n in range(20):
            assert mem.long_term(f"s{n}").flush_embeddings(timeout=30)
        assert len(set(embedder.threads)) == 1
    assert set(_embed_threads()) - before == set()
    assert not embedder.threads[0].is_alive()


def test_a_scope_dropped_without_a_close_lets_its_thread_go(engine: Engine) -> None:
    embedder = ThreadNoting()
    scope = LongTermMemory(engine, "dropped", embedder=embedder)
    scope.save(content="left to the garbage collector")
    assert scope.flush_embeddings(timeout=30)
    (thread,) = set(embedder.threads)
    del scope
    gc.collect()
    thread.join(30)  # the dropped worker woke its lane, which found no other
    assert not thread.is_alive()


def test_a_save_after_the_thread_stopped_starts_another(engine: Engine) -> None:
    embedder = ThreadNoting()
    first = LongTermMemory(engine, "a", embedder=embedder)
    first.save(content="one")
    first.close()
    second = LongTermMemory(engine, "b", embedder=embedder)
    second.save(content="two")
    assert second.flush_embeddings(timeout=30)
    assert len(engine.hgetall(second.keys.vectors)) == 1
    assert len(set(embedder.threads)) == 2 and not embedder.threads[0].is_alive()
    first.save(content="not embedded: its worker is closed")
    assert len(engine.hgetall(first.keys.vectors)) == 1
    second.close()
    assert not embedder.threads[-1].is_alive()


def test_at_exit_every_thread_stops(engine: Engine) -> None:
    embedder = ThreadNoting()
    scope = LongTermMemory(engine, "exit", embedder=embedder)  # never closed by its owner
    scope.save(content="one")
    assert scope.flush_embeddings(timeout=30)
    stop_at_exit()  # what atexit runs before the interpreter ends daemon threads
    assert not embedder.threads[0].is_alive()
    assert scope.close() == 0  # idempotent afterwards


def test_a_forked_child_embeds_its_own_saves() -> None:
    """The parent's lane thread does not run in a child made by ``fork``: the child's saves start a
    lane of their own. On memory:// (a process property; a server connection is never shared across
    a fork), the child checks its own copy and reports through its exit status."""
    mem = memstack.open("memory://", embedder=FakeEmbedder(dim=16))
    memories = mem.long_term("forked")
    memories.save(id="before", content="saved before the fork")
    assert memories.flush_embeddings(timeout=30)
    assert _embed_threads()  # the parent's lane waits for work

    def child() -> bool:
        memories.save(id="after", content="saved in the child")
        return memories.flush_embeddings(timeout=30) and "after" in memories.engine.hgetall(
            memories.keys.vectors
        )

    assert in_child(child)  # a child stuck on the parent's lane is killed: False
    mem.close()


def test_a_save_a_parent_thread_was_making_at_the_fork_blocks_nothing_in_the_child(engine: Engine) -> None:
    # Caught between taking the scope's gate and joining a lane: no lane knows the worker yet.
    memories = LongTermMemory(engine, "gated", embedder=FakeEmbedder(dim=16))
    assert memories._worker is not None

    def child() -> bool:
        memories.save(id="after", content="saved in the child")
        return memories.flush_embeddings(timeout=30) and "after" in engine.hgetall(memories.keys.vectors)

    with held_by_a_thread(memories._worker._gate):
        assert in_child(child, deadline=60)
    memories.close()
