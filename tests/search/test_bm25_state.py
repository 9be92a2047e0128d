"""A BM25 index exported to arrays and bytes comes back identical, and damaged bytes are refused."""

from __future__ import annotations

import random

import numpy as np
import pytest

from memstack.foundation.errors import InvalidConfiguration, InvalidValue
from memstack.search import Bm25Index
from memstack.search.bm25_state import decode_state, encode_state

WORDS = ["apple", "banana", "cherry", "tea", "coffee", "morning", "evening"]
WORDS += ["music", "jazz", "hiking", "river", "stone", "paper"]


def corpus(n: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) for _ in range(n)]


def restored(index: Bm25Index) -> Bm25Index:
    state, meta = decode_state(encode_state(index.export_state(), {"version": 7}))
    assert meta == {"version": 7}
    return Bm25Index.from_state(state)


def same(a: Bm25Index, b: Bm25Index) -> None:
    for query in [*WORDS, "apple tea", "jazz music morning", "unknown"]:
        assert a.search(query) == b.search(query), query
    assert a.ids() == b.ids()


def test_round_trip_keeps_scores_ties_and_order() -> None:
    index = Bm25Index()
    for i, text in enumerate(corpus(300)):
        index.add(f"d{i}", text)
    for i in range(0, 300, 7):
        index.remove(f"d{i}")  # tombstones are not exported
    for i in range(1, 300, 11):
        index.add(f"d{i}", "river stone river")  # a replaced text keeps its place in tie order
    copy = restored(index)
    same(index, copy)
    assert len(copy) == len(index)


def test_a_restored_index_takes_the_same_changes() -> None:
    index = Bm25Index()
    for i, text in enumerate(corpus(500)):
        index.add(f"d{i}", text)
    copy = restored(index)
    for target in (index, copy):
        for i in range(0, 500, 3):
            target.remove(f"d{i}")  # the restored slots' terms are derived on first removal
        for i in range(1, 500, 3):
            target.add(f"d{i}", "coffee coffee paper")
        for i in range(500, 700):
            target.add(f"n{i}", "evening jazz")
    same(index, copy)
    for target in (index, copy):
        for i in range(700):
            target.remove(f"d{i}")  # enough tombstones to compact both
    same(index, copy)


def test_an_empty_index_round_trips() -> None:
    copy = restored(Bm25Index())
    assert len(copy) == 0 and copy.search("tea") == []
    copy.add("a", "tea")
    assert [i for i, _ in copy.search("tea")] == ["a"]


def test_phrase_profiles_are_not_exported() -> None:
    index = Bm25Index("rockbot")
    index.add("a", "green tea")
    with pytest.raises(InvalidConfiguration, match="rockbot"):
        index.export_state()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda b: b"nonsense" + b, "unknown format"),
        (lambda b: b[:-3], "truncated"),
        (lambda b: b + b"\0\0\0\0", "trailing bytes"),
        (lambda b: b.replace(b'"ids":', b'"idz":', 1), "bad header"),
    ],
)
def test_damaged_bytes_are_refused(damage: object, message: str) -> None:
    index = Bm25Index()
    index.add("a", "green tea")
    index.add("b", "black coffee")
    data = encode_state(index.export_state(), {})
    with pytest.raises(InvalidValue, match=message):
        decode_state(damage(data))  # type: ignore[operator]  # a lambda from the table


def test_out_of_range_slots_are_refused() -> None:
    index = Bm25Index()
    index.add("a", "green tea")
    state = index.export_state()
    bad = np.array(state.slots)
    bad[0] = 5
    hostile = type(state)(
        state.profile, state.ids, state.lengths, state.seq, state.terms, state.offsets, bad, state.tfs
    )
    decoded, _ = decode_state(encode_state(hostile, {}))
    with pytest.raises(InvalidValue, match="out of range"):
        Bm25Index.from_state(decoded)
    with pytest.raises(InvalidValue, match="out of range"):
        Bm25Index.from_state(hostile)


def test_a_restored_index_holds_its_owners_id_strings() -> None:
    """A snapshot's ids are copies; once the cache's own strings are shared the index holds those
    (its byte count leaves id strings to their owner), and answers exactly as before."""
    index = Bm25Index()
    for i, text in enumerate(corpus(200)):
        index.add(f"d{i}", text)
    index.remove("d5")
    copy = restored(index)
    owner = ["".join(["d", str(i)]) for i in range(200) if i != 5]  # equal strings, other objects
    assert not any(a is b for a, b in zip(copy.ids(), owner, strict=True))
    copy.share_ids(owner[:-1])  # an owner without every id: nothing changes
    assert not any(a is b for a, b in zip(copy.ids(), owner, strict=True))
    copy.share_ids(owner)
    assert all(a is b for a, b in zip(copy.ids(), owner, strict=True))
    same(index, copy)
    copy.remove("d7")
    copy.add("d9", "river stone")
    index.remove("d7")
    index.add("d9", "river stone")
    same(index, copy)
