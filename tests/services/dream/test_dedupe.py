"""Duplicates without an LLM: the ``dedupe=`` save policy and the ``dedupe`` pass, on every engine."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from memstack import ManualClock, Memory
from memstack.foundation.errors import InvalidValue
from memstack.index import ann as graph
from memstack.index import quantise
from memstack.index.codec import unit_rows
from memstack.services.dream import Dreamer
from memstack.tiers.longterm.index_cache import scope_cache
from memstack.tiers.longterm.similar import VECTOR_THRESHOLD, duplicate_groups, normalise_text, term_cosine


def test_saving_the_same_text_three_times_gives_one_entry_with_exact(mem: Memory) -> None:
    memory = mem.long_term("u1")
    first = memory.save(content="Alice lives in Chicago.", tags=["home"], dedupe="exact")
    assert isinstance(mem.clock, ManualClock)
    mem.clock.advance(10)
    second = memory.save(content="  alice LIVES in   chicago ", tags=["HOME", "city"], dedupe="exact")
    third = memory.save(content="Alice lives in Chicago!", dedupe="exact")
    assert first.id == second.id == third.id and len(memory) == 1
    stored = memory.get(first.id)
    assert stored is not None
    assert stored.content == "Alice lives in Chicago." and stored.tags == ("home", "city")
    assert stored.created_at == first.created_at and stored.updated_at is not None
    assert stored.updated_at > first.created_at
    assert memory.save(content="Alice lives in Chicago.").id == first.id  # equal words: no new entry
    assert len(memory) == 1


def test_near_catches_small_edits_but_not_other_facts(mem: Memory) -> None:
    memory = mem.long_term("u1")
    base = memory.save(
        content="Caroline went to the LGBTQ support group yesterday and found it powerful", dedupe="near"
    )
    same = memory.save(
        content="Caroline went to an LGBTQ support group yesterday and found it very powerful", dedupe="near"
    )
    other = memory.save(content="Melanie painted a sunrise over the lake last weekend", dedupe="near")
    assert same.id == base.id and other.id != base.id and len(memory) == 2
    with pytest.raises(InvalidValue, match="dedupe"):
        memory.save(content="x", dedupe="fuzzy")  # type: ignore[arg-type]  # the point is the bad mode
    with pytest.raises(InvalidValue, match="only for a new entry"):
        memory.save(content="x", id="abc", dedupe="exact")


def test_similarity_rules() -> None:
    assert normalise_text(" Hello,  WORLD! ") == "hello, world"
    assert term_cosine("a b c", "") == 0.0
    assert term_cosine("red apples taste sweet", "red apples taste sweet") == pytest.approx(1.0)


def test_short_texts_are_only_exact_duplicates() -> None:
    from memstack.tiers.longterm import MemoryEntry

    entries = [MemoryEntry("a", "thanks a lot"), MemoryEntry("b", "thanks"), MemoryEntry("c", "Thanks!")]
    assert [[e.id for e in g] for g in duplicate_groups(entries, "near")] == [["b", "c"]]


def test_dedupe_pass_merges_into_the_oldest_and_undo_restores(mem: Memory) -> None:
    memory = mem.long_term("u1")
    assert isinstance(mem.clock, ManualClock)
    keep = memory.save(content="Bob plays the cello every Sunday morning", tags=["music"])
    mem.clock.advance(5)
    # an id: an exact duplicate (as data saved before equal saves were one entry holds them)
    dup = memory.save(id="dup", content="bob plays the cello every sunday morning.", tags=["weekly"])
    mem.clock.advance(5)
    near = memory.save(content="Bob plays his cello every Sunday morning", tags=["Music"])
    mem.clock.advance(5)
    other = memory.save(content="Dana is allergic to peanuts")
    before = memory.entries()
    dreamer = Dreamer(memory)  # no model needed
    record = dreamer.dedupe()
    assert record is not None and record.kind == "dedupe" and record.status == "applied"
    after = {e.id: e for e in memory.entries()}
    assert set(after) == {keep.id, other.id}
    merged = after[keep.id]
    assert merged.tags == ("music", "weekly") and merged.created_at == keep.created_at
    assert merged.updated_at is not None
    assert record.created[0].source_ids == (keep.id, dup.id, near.id)
    assert dreamer.dedupe() is None  # nothing left to merge
    dreamer.undo(record.id)
    assert memory.entries() == before


def test_exact_dedupe_pass_leaves_near_duplicates(mem: Memory) -> None:
    memory = mem.long_term("u1")
    memory.save(content="Bob plays the cello every Sunday morning")
    memory.save(content="Bob plays his cello every Sunday morning")
    memory.save(content="something else entirely here")
    assert Dreamer(memory).dedupe(mode="exact") is None


def test_undo_keeps_a_created_entry_changed_since(mem: Memory) -> None:
    memory = mem.long_term("u1")
    a = memory.save(content="Eve likes green tea in the afternoon")
    assert isinstance(mem.clock, ManualClock)
    mem.clock.advance(1)
    b = memory.save(id="b", content="eve likes green tea in the afternoon")  # an id: an exact duplicate
    memory.save(content="unrelated one")
    memory.save(content="unrelated two here")
    dreamer = Dreamer(memory)
    record = dreamer.dedupe()
    assert record is not None
    memory.save(id=a.id, content="Eve likes green tea, and jasmine")
    report = dreamer.undo(record.id)
    assert report.kept == (a.id,) and report.restored == (b.id,)
    stored = memory.get(a.id)
    assert stored is not None and stored.content == "Eve likes green tea, and jasmine"
    assert memory.get(b.id) == b
    from memstack.foundation.errors import Conflict

    with pytest.raises(Conflict, match="undone"):
        dreamer.undo(record.id)


def test_embeddings_join_paraphrases_only_above_both_thresholds() -> None:
    from memstack.tiers.longterm import MemoryEntry

    a = MemoryEntry("a", "Sam adores spicy ramen noodles")
    b = MemoryEntry("b", "Sam adores very spicy ramen soup")  # term cosine between the floor and 0.85
    c = MemoryEntry("c", "Sam adores spicy ramen noodles from Tokyo stalls")
    assert duplicate_groups([a, b], "near") == []
    same = {"a": [1.0, 0.0], "b": [0.99, 0.05], "c": [0.0, 1.0]}
    assert [[e.id for e in g] for g in duplicate_groups([a, b, c], "near", same)] == [["a", "b"]]
    far = {"a": [1.0, 0.0], "b": [0.7, 0.7]}
    assert duplicate_groups([a, b], "near", far) == []


class TableEmbedder:
    """Vectors chosen by the test: a text's vector is looked up by its first word."""

    model_id = "table:2"
    dim = 2

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray([self.table[t.split()[0]] for t in texts], dtype=np.float32)


def test_dedupe_pass_uses_the_scopes_current_vectors(mem: Memory) -> None:
    embedder = TableEmbedder({"Sam": [1.0, 0.0], "Sam,": [0.99, 0.05], "Mo": [0.0, 1.0]})
    memory = mem.long_term("v1", embedder=embedder)
    memory.save(content="Sam adores spicy ramen noodles")
    b = memory.save(content="Sam, adores very spicy ramen soup")
    memory.save(content="Mo walks to work on Mondays")
    memory.flush_embeddings()
    dreamer = Dreamer(memory)
    assert dreamer.dedupe(dry_run=True) is not None
    embedder.table["Sam,"] = [0.0, 1.0]
    memory.save(id=b.id, content="Sam, adores very spicy ramen soups")  # new text: a new, distant vector
    memory.flush_embeddings()
    assert dreamer.dedupe() is None
    assert Dreamer(mem.long_term("v1")).dedupe() is None  # no embedder: terms alone say no


class KnownEmbedder:
    """Vectors chosen by the test for the texts it names; any other text a seeded random vector."""

    model_id = "known:64"
    dim = 64

    def __init__(self, known: dict[str, npt.NDArray[np.float32]]) -> None:
        self.known = known

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [self.known.get(t, None) for t in texts]
        return np.asarray(
            [
                r if r is not None else np.random.default_rng(zlib.crc32(t.encode())).normal(size=self.dim)
                for r, t in zip(rows, texts, strict=True)
            ],
            dtype=np.float32,
        )


def quantised_cosine(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    """The cosine of ``a`` and ``b`` as a graph-backed scope holds them: unit rows in 4 bits."""
    rows = unit_rows(np.stack([a, b]))
    codes, scales = quantise.encode(rows, 4)
    back = unit_rows(quantise.decode(codes, scales, rows.shape[1], 4))
    return float(back[0] @ back[1])


def test_dedupe_pass_compares_the_float_vectors_of_a_graph_backed_scope(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not graph.available():
        pytest.skip("usearch is not installed")
    monkeypatch.setattr(graph, "ANN_FROM", 200)
    rng = np.random.default_rng(11)

    def pair(duplicates: bool) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Two vectors that are duplicates (``duplicates``) or not, and the other way in 4 bits."""
        a = unit_rows(rng.normal(size=64))[0]
        for _ in range(10_000):
            b = unit_rows(a + 0.32 * unit_rows(rng.normal(size=64))[0])[0]
            exact, held = float(a @ b), quantised_cosine(a, b)
            clear = exact >= VECTOR_THRESHOLD + 0.002 if duplicates else exact < VECTOR_THRESHOLD - 0.002
            if clear and (held >= VECTOR_THRESHOLD) != duplicates:
                return a, b
        raise AssertionError("no such pair")

    (a, b), (c, d) = pair(False), pair(True)
    apart = "Sam adores spicy ramen noodles", "Sam, adores very spicy ramen soup"
    alike = "Mo walks his old dog along the river", "Mo, walks his small dog along the canal"
    known = dict(zip(apart + alike, (a, b, c, d), strict=True))
    memory = mem.long_term("g1", embedder=KnownEmbedder(known))
    memory.save_many([{"content": f"filler note {n} about topic{n}"} for n in range(220)])
    saved = {text: memory.save(content=text).id for text in known}
    assert memory.flush_embeddings(timeout=60)
    memory.search("ramen", limit=3)  # the scope is now searched through its graph, its vectors in 4 bits
    cache = scope_cache(memory.engine, "g1")
    assert cache.anns
    assert cache.vector_index("known:64", 64).quantised == 4
    record = Dreamer(memory).dedupe(dry_run=True)  # by their float vectors: one pair is, one is not
    assert record is not None
    assert [sorted(c.source_ids) for c in record.created] == [sorted(saved[t] for t in alike)]
