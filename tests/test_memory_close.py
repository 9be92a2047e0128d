"""Closing a ``Memory`` finishes its pending vectors or hands them over, and leaves no thread behind;
``memstack.open`` resolves the embedder as every door does."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import memstack
from memstack import Memory
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.search.embedders import FakeEmbedder, LocalEmbedder
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.backfill import VectorFollower, pending_vectors
from memstack.tiers.longterm.vectors import stop_at_exit

THREADS = ("memstack-embed", "memstack-vectors")


class GatedEmbedder(FakeEmbedder):
    """A FakeEmbedder whose calls wait for a gate (a model still computing)."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.entered = threading.Event()
        self.gate = threading.Event()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.entered.set()
        assert self.gate.wait(30)
        return super().embed(texts)


_EARLIER: set[threading.Thread] = set()


@pytest.fixture(autouse=True)
def _earlier_threads() -> None:
    """The background threads of earlier tests' scopes (a lane lives until its last scope is
    closed or collected): not this test's to stop."""
    _EARLIER.clear()
    _EARLIER.update(threading.enumerate())


def _ours() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name in THREADS and t.is_alive() and t not in _EARLIER]


def test_close_finishes_the_pending_vectors(engine: Engine) -> None:
    view = tenant_engine(engine, "default")  # closing a view leaves the engine open to look at
    embedder = GatedEmbedder()
    mem = Memory(view, embedder=embedder, follow=True)
    scope = mem.long_term("s")
    for n in range(5):
        scope.save(content=f"I drink green tea every morning {n}")
    assert embedder.entered.wait(10)
    embedder.gate.set()
    mem.close()
    assert len(view.hgetall(LongTermMemory(view, "s").keys.vectors)) == 5
    assert pending_vectors(view, FakeEmbedder(dim=16)) == (0, 0)
    assert _ours() == []


def test_what_close_cannot_finish_is_handed_over(engine: Engine) -> None:
    view = tenant_engine(engine, "default")
    embedder = GatedEmbedder()
    scope = LongTermMemory(view, "s", embedder=embedder)
    scope.save(content="first")
    assert embedder.entered.wait(10)  # the worker holds "first"; the next two wait in its queue
    scope.save(content="second")
    scope.save(content="third")
    left: list[int] = []
    closing = threading.Thread(target=lambda: left.append(scope.close(timeout=0)))
    closing.start()
    embedder.gate.set()  # the batch in flight finishes; the queue is not started
    closing.join(30)
    assert left == [2]
    assert pending_vectors(view, embedder) == (2, 0)
    assert VectorFollower(view, FakeEmbedder(dim=16), grace=0.0).step(now=0.0) == 2  # any process
    assert pending_vectors(view, embedder) == (0, 0)
    assert _ours() == []


def test_at_exit_no_embedding_thread_is_left_running(engine: Engine) -> None:
    embedder = GatedEmbedder()
    scope = LongTermMemory(engine, "exit", embedder=embedder)  # never closed by its owner
    scope.save(content="one")
    assert embedder.entered.wait(10)
    scope.save(content="two")
    releaser = threading.Timer(0.05, embedder.gate.set)  # the model finishes its current batch
    releaser.start()
    stop_at_exit()  # what atexit runs before the interpreter ends daemon threads
    releaser.join()
    assert _ours() == []


def test_open_resolves_the_embedder_as_every_door(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    monkeypatch.setenv("MEMSTACK_EMBEDDER", "none")
    with memstack.open(url) as mem:
        assert mem.embedder is None and _ours() == []  # BM25 alone: no follower either
    monkeypatch.setenv("MEMSTACK_EMBEDDER", "local")
    with memstack.open(url) as mem:
        assert isinstance(mem.embedder, LocalEmbedder)
        assert [t.name for t in _ours()] == ["memstack-vectors"]  # it fills in others' vectors
    assert _ours() == []
    fake = FakeEmbedder(dim=8)
    with memstack.open(url, embedder=fake) as mem:  # the argument wins over the environment
        assert mem.embedder is fake
    with memstack.open(url, embedder="none") as mem:
        assert mem.embedder is None
    monkeypatch.delenv("MEMSTACK_EMBEDDER")
    with memstack.open(url) as mem:  # unset: the local model, installed by the dev set-up
        assert isinstance(mem.embedder, LocalEmbedder)
