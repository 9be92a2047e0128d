"""Read your writes: a search waits (boundedly) for the vectors its own process is computing for its
scope, so a save followed by a search ranks the new entry with its vector."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memstack import Memory
from memstack.search.embedders import FakeEmbedder, available_embedder


class GatedEmbedder(FakeEmbedder):
    """Entry vectors wait until a query has been embedded: without the search's wait, the search
    would rank before the entry's vector exists."""

    def __init__(self) -> None:
        super().__init__(dim=16)
        self.gate = threading.Event()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.gate.wait(30)
        return super().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.gate.set()
        return super().embed(texts)


def test_a_search_right_after_a_save_ranks_it_with_its_vector(mem: Memory) -> None:
    memories = mem.long_term("ryw", embedder=GatedEmbedder())
    memories.save(id="m1", content="my sister moved to Lisbon in spring")
    hits = memories.search("where does the sibling live now")
    assert [h.entry.id for h in hits] == ["m1"]
    assert hits[0].vector is not None
    assert "vector" in hits[0].sources


def test_another_scope_is_not_waited_for(mem: Memory) -> None:
    slow = GatedEmbedder()
    other = mem.long_term("other", embedder=slow)
    other.save(id="x", content="never embedded while the gate is shut")
    memories = mem.long_term("ryw", embedder=FakeEmbedder(dim=16))
    memories.save(id="m1", content="the tram line closes in May")
    assert memories.flush_embeddings(timeout=30)
    assert [h.entry.id for h in memories.search("tram")] == ["m1"]
    assert not slow.gate.is_set()
    slow.gate.set()
    assert other.flush_embeddings(timeout=30)


@pytest.mark.skipif(available_embedder("minilm") is None, reason="the embeddings extra is not installed")
def test_a_fresh_process_finds_its_first_save_with_a_vector(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import memstack
        with memstack.open("sqlite:///{tmp_path / "m.db"}", embedder="local") as mem:
            memories = mem.long_term("alice")
            memories.save(id="m1", content="My wife Priya is a cardiologist")
            hits = memories.search("What is his wife's profession?")
            print(hits[0].entry.id, hits[0].vector is not None)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["m1", "True"]
