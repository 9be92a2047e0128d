"""Conversation-aware indexing (the context field of the ``default`` / ``conversation`` profiles), on every
engine: a turn is found through its neighbours, its speaker and its session date; changes re-index only
the turns whose window holds them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memstack
from memstack import Memory
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.longterm import LongTermMemory, MemoryEntry
from memstack.tiers.longterm.index_cache import ScopeCache, scope_cache
from memstack.tiers.longterm.provenance import PROVENANCE_KEY, conversation_metadata, provenance

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def say(lt: LongTermMemory, conv: str, turn: int, speaker: str, text: str) -> None:
    lt.save(
        id=f"{conv}-{turn}",
        content=text,
        metadata=conversation_metadata(conv, turn, speaker, WHEN),
    )


@pytest.fixture
def chat(mem: Memory) -> Memory:
    lt = mem.long_term("alice")
    say(lt, "c1", 1, "Bob", "Where did you move to after college?")
    say(lt, "c1", 2, "Alice", "Yes, in Chicago")
    say(lt, "c1", 3, "Bob", "Nice, I like deep dish pizza")
    say(lt, "c1", 4, "Alice", "Me too")
    # other conversations and plain entries must not leak context into c1
    say(lt, "c2", 1, "Carol", "The weather is awful today")
    say(lt, "c2", 2, "Dan", "Indeed")
    lt.save(id="note", content="Alice bought a bicycle")
    return mem


def ids(lt: LongTermMemory, query: str) -> list[str]:
    return [h.entry.id for h in lt.search(query, max_results=10)]


def test_a_turn_is_found_through_its_neighbours(chat: Memory) -> None:
    plain = chat.long_term("alice", profile="plain")
    context = chat.long_term("alice", profile="conversation")
    assert "c1-2" not in ids(plain, "where did she move")  # the answer shares no word with the question
    found = ids(context, "where did she move")
    assert found[0] == "c1-1"  # the turn that holds the words still ranks first (main field > context)
    assert "c1-2" in found
    assert "c2-2" not in found and "note" not in found


def test_speaker_and_session_date_are_in_the_context_field(chat: Memory) -> None:
    context = chat.long_term("alice", profile="conversation")
    assert set(ids(context, "Dan")) == {"c2-2"}  # only the turn Dan said names him (plus none of c1)
    assert "c1-4" in ids(context, "May 2023")
    assert ids(chat.long_term("alice", profile="plain"), "Dan") == []


def test_window_is_bounded_and_ordered_by_turn(mem: Memory) -> None:
    lt = mem.long_term("bob", profile="conversation")
    for turn in (5, 1, 4, 2, 3, 6):  # saved out of order: "turn" orders the conversation
        say(lt, "c", turn, "X", f"word{turn}")
    # window 2 of turn 3 is 1, 2, 4, 5: turn 6 is out of reach
    assert "c-3" in ids(lt, "word1")
    assert "c-3" in ids(lt, "word5")
    assert "c-1" not in ids(lt, "word4")  # turn 4 is 3 turns from turn 1
    assert "c-6" not in ids(lt, "word3")


def test_changes_reindex_the_neighbours(chat: Memory) -> None:
    context = chat.long_term("alice", profile="conversation")
    assert "c1-2" in ids(context, "where did she move")  # builds the context index
    context.save(id="c1-1", content="How was the concert?", metadata=conversation_metadata("c1", 1, "Bob"))
    assert "c1-2" not in ids(context, "where did she move")
    assert "c1-2" in ids(context, "concert")
    say(context, "c1", 0, "Bob", "Where did you move to?")  # a new turn before the others
    assert "c1-2" in ids(context, "move")  # turn 0 is two turns before turn 2
    context.delete("c1-0")
    assert "c1-2" not in ids(context, "move")
    # an entry that loses its provenance loses its context field
    context.save(id="c1-3", content="Nice, I like deep dish pizza")
    assert "c1-3" not in ids(context, "Chicago")
    assert "c1-4" not in ids(context, "pizza")


def test_entries_without_provenance_score_as_in_plain(mem: Memory) -> None:
    lt = mem.long_term("carol")
    for n, text in enumerate(["jazz concert in town", "rock concert tonight", "jazz records"]):
        lt.save(id=f"e{n}", content=text)
    plain = [(h.entry.id, h.score) for h in mem.long_term("carol", profile="plain").search("jazz concert")]
    default = [
        (h.entry.id, h.score) for h in mem.long_term("carol", profile="default").search("jazz concert")
    ]
    assert default == plain


@pytest.mark.parametrize(
    "value",
    [None, "c1", {"turn": 1}, {"id": "", "turn": 1}, {"id": "c", "turn": "1"}, {"id": "c", "turn": True},
     {"id": "c", "turn": float("nan")}],
)  # fmt: skip
def test_malformed_provenance_is_no_provenance(value: object) -> None:
    entry = MemoryEntry(id="x", content="hi", metadata={PROVENANCE_KEY: value})
    assert provenance(entry) is None


def test_provenance_round_trip_and_created_at_fallback() -> None:
    meta = conversation_metadata("c", 3, "Ann", WHEN)
    got = provenance(MemoryEntry(id="x", content="hi", metadata=meta))
    assert got is not None
    assert (got.conversation, got.turn, got.speaker, got.time) == ("c", 3.0, "Ann", WHEN)
    entry = MemoryEntry(id="y", content="hi", created_at=WHEN, metadata=conversation_metadata("c", 1))
    found = provenance(entry)
    assert found is not None and found.time == WHEN and found.speaker is None


def test_vector_side_adds_the_best_neighbour_cosine(mem: Memory) -> None:
    embedder = FakeEmbedder(1024)
    lt = mem.long_term("vec", embedder=embedder)
    texts = ["Where did you relocate after college?", "Yes, in Chicago", "Nice", "Indeed", "Great"]
    for turn, text in enumerate(texts, start=1):
        say(lt, "c", turn, "Bob", text)
    assert lt.flush_embeddings(timeout=30)
    query = "relocate college"
    cosines = (embedder.embed(texts) @ embedder.embed([query])[0]).tolist()
    raw = dict(zip([f"c-{n}" for n in range(1, 6)], cosines, strict=True))
    assert raw["c-1"] > 0.5 and max(raw["c-2"], raw["c-3"], raw["c-4"], raw["c-5"]) == 0.0
    plain = {h.entry.id for h in mem.long_term("vec", profile="plain", embedder=embedder).search(query)}
    # the context row: the vector side on, no propagation after fusion (which would bring in c-4)
    searcher = mem.long_term("vec", profile="context", embedder=embedder)
    context = {h.entry.id: h.vector for h in searcher.search(query)}
    assert plain == {"c-1"}
    assert context["c-1"] == pytest.approx(raw["c-1"], abs=1e-6)  # its neighbours add nothing
    assert context["c-2"] == pytest.approx(0.5 * raw["c-1"], abs=1e-6)  # own cosine 0, neighbour's half
    assert context["c-3"] == pytest.approx(0.5 * raw["c-1"], abs=1e-6)
    assert "c-4" not in context and "c-5" not in context  # outside window 2 of the only match


WORDS = ["moved", "chicago", "pizza", "concert", "jazz", "painting", "sunrise", "adoption"]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["save", "delete", "strip"]),
        st.integers(0, 7),  # entry number
        st.sampled_from(["c1", "c2"]),
        st.integers(0, 9),  # turn
        st.sampled_from(WORDS),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(ops=OPS)
def test_incremental_context_index_equals_a_rebuild(ops: list[tuple[str, int, str, int, str]]) -> None:
    with memstack.open("memory://") as mem:
        lt = mem.long_term("prop", profile="conversation")
        lt.search("warm")  # the caches exist from the start, so every later change is applied incrementally
        for op, n, conv, turn, word in ops:
            if op == "delete":
                lt.delete(f"e{n}")
            elif op == "strip":  # the entry stays, its provenance goes
                lt.save(id=f"e{n}", content=f"plain {word}")
            else:
                meta = conversation_metadata(conv, turn, "Bob", WHEN)
                lt.save(id=f"e{n}", content=f"{word} number {n}", metadata=meta)
            lt.search(word)  # applies the change to the live indexes
        live = scope_cache(mem.engine, "prop")
        fresh = ScopeCache()
        with live.lock:
            live.refresh(mem.engine, lt.keys)
            fresh.refresh(mem.engine, lt.keys)
            for word in WORDS:
                got = live.context_index("default", 2).search(word)
                want = fresh.context_index("default", 2).search(word)
                assert dict(got) == pytest.approx(dict(want)), word
