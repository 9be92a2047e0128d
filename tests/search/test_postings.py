"""The flat posting lists of a BM25 index: blocks of two shared arrays, moved and packed as they grow."""

from __future__ import annotations

import base64
import gc
import random

import numpy as np
import pytest

from memstack.search.bm25 import Bm25Index
from memstack.search.bm25_state import decode_state, encode_state
from memstack.search.postings import Postings


def _lists(postings: Postings) -> dict[str, list[tuple[int, int]]]:
    """Every term's (slot, tf) pairs as the arrays hold them."""
    out = {}
    for term in postings.names:
        found = postings.block(term)
        assert found is not None
        start, count = found
        out[term] = list(
            zip(
                postings.slots[start : start + count].tolist(),
                postings.tfs[start : start + count].tolist(),
                strict=True,
            )
        )
    return out


def test_appends_keep_every_list_while_blocks_move_and_the_arrays_pack() -> None:
    rng = random.Random(4)
    vocabulary = [f"w{i}" for i in range(300)]
    postings, want = Postings(), {}
    for slot in range(3000):
        counts = {t: rng.randint(1, 4) for t in rng.choices(vocabulary, k=rng.randint(1, 12))}
        postings.add(slot, counts)
        for term, tf in counts.items():
            want.setdefault(term, []).append((slot, tf))
        if slot % 500 == 0:
            assert _lists(postings) == want
    assert _lists(postings) == want
    assert postings.pairs == sum(map(len, want.values()))
    # garbage is packed away: the rows in use stay within a small multiple of the pairs
    assert postings.used <= 2 * postings.pairs + 1024


def test_a_packed_index_gives_back_its_room_and_scores_and_grows_as_before() -> None:
    rng = random.Random(9)
    vocabulary = [f"w{i}" for i in range(400)]
    texts = [" ".join(rng.choices(vocabulary, k=rng.randint(3, 15))) for _ in range(4000)]
    index, fresh = Bm25Index(), Bm25Index()
    for n, text in enumerate(texts[:3000]):
        index.add(f"d{n}", text)
        fresh.add(f"d{n}", text)
    index.remove("d7")
    fresh.remove("d7")
    some = [f"d{n}" for n in range(0, 3000, 3)]
    mask, fresh_mask = index.mask(some), fresh.mask(some)
    before, lists = index.nbytes(), _lists(index._postings)
    index.pack()
    postings = index._postings
    assert _lists(postings) == lists and postings.used == postings.held == postings.pairs
    assert len(postings.slots) == postings.pairs and len(index._dl) == len(index._seq) == 3000
    assert before - index.nbytes() >= 6 * (len(fresh._postings.slots) - postings.pairs) > 0
    for query in ("w1 w2", "w17 w300 w5", "w399"):
        assert index.search(query, 20) == fresh.search(query, 20)
        assert index.search(query, 20, mask) == fresh.search(query, 20, fresh_mask)
    for n, text in enumerate(texts[3000:], start=3000):  # the blocks grow room again
        index.add(f"d{n}", text)
        fresh.add(f"d{n}", text)
    assert index.search("w3 w4 w5", 30) == fresh.search("w3 w4 w5", 30)
    assert _lists(index._postings) == _lists(fresh._postings)


def test_live_csr_and_from_csr_round_trip() -> None:
    postings = Postings()
    for slot, counts in enumerate([{"a": 1, "b": 2}, {"b": 1}, {"c": 3, "a": 2}, {"a": 1}]):
        postings.add(slot, counts)
    kept, terms, offsets, slots, tfs = postings.live_csr(np.array([True, False, True, True]))
    assert kept.tolist() == [0, 2, 3]
    assert terms == ["a", "b", "c"]
    again = Postings.from_csr(terms, offsets, slots, tfs)
    assert _lists(again) == {"a": [(0, 1), (1, 2), (2, 1)], "b": [(0, 2)], "c": [(1, 3)]}
    again.add(3, {"b": 5, "d": 1})  # a restored (tight) block takes appends too
    assert _lists(again)["b"] == [(0, 2), (3, 5)]
    assert again.df("a", None) == 3
    assert again.df("a", np.array([True, False, True, True])) == 2
    assert again.df("nothing", None) == 0


def _tracked() -> int:
    gc.collect()
    return len(gc.get_objects())


@pytest.mark.parametrize("docs", [10, 3000])
def test_an_index_holds_a_few_objects_for_the_collector_whatever_its_size(docs: int) -> None:
    """A full collection walks every tracked object: an object per term (a list, its arrays) made
    thousands of cached scopes cost a million of them. The index's count stays a small constant."""
    rng = random.Random(docs)
    ids = [f"d{n}" for n in range(docs)]
    texts = [" ".join(f"term{rng.randrange(5000)}" for _ in range(12)) for _ in range(docs)]

    def build() -> Bm25Index:
        index = Bm25Index()
        for doc_id, text in zip(ids, texts, strict=True):
            index.add(doc_id, text)
        for doc_id in ids[::3]:
            index.remove(doc_id)
        assert index.search("term1 term2 term3") is not None
        return index

    build()  # first use fills process-wide memos (the stemmer's, numpy's): not the index's objects
    before = _tracked()
    index = build()
    assert _tracked() - before <= 30
    assert len(index) == docs - len(ids[::3])


def test_removals_and_compaction_leave_the_scores_of_a_fresh_index() -> None:
    rng = random.Random(9)
    texts = {f"d{n}": " ".join(f"w{rng.randrange(60)}" for _ in range(8)) for n in range(2600)}
    index = Bm25Index()
    for doc_id, text in texts.items():
        index.add(doc_id, text)
    gone = set(rng.sample(sorted(texts), 1500))  # more dead than live: the index compacts
    for doc_id in gone:
        index.remove(doc_id)
    fresh = Bm25Index()
    for doc_id, text in texts.items():
        if doc_id not in gone:
            fresh.add(doc_id, text)
    for query in ("w1 w2", "w3", "w5 w7 w11 w13", "w59 w0"):
        assert index.search(query, k=20) == fresh.search(query, k=20)
        assert index.query_mass(query) == fresh.query_mass(query)
    index.add("new", "w1 w1 w2")
    fresh.add("new", "w1 w1 w2")
    assert index.search("w1 w2", k=5) == fresh.search("w1 w2", k=5)


def test_a_snapshot_round_trip_keeps_searches_adds_and_removals() -> None:
    index = Bm25Index()
    for n in range(200):
        index.add(f"d{n}", f"topic{n % 7} word{n % 13} shared")
    index.remove("d3")
    state, meta = decode_state(encode_state(index.export_state(), {"version": 3}))
    restored = Bm25Index.from_state(state)
    assert meta == {"version": 3}
    assert restored.search("topic1 word2", k=10) == index.search("topic1 word2", k=10)
    for target in (index, restored):
        target.add("late", "topic1 word2 word2")
        target.remove("d8")
    assert restored.search("topic1 word2 shared", k=15) == index.search("topic1 word2 shared", k=15)
    assert restored.ids() == index.ids()


# Written by the index of per-term posting objects (before the flat layout) from the texts below,
# with "c" removed and "b" replaced: the snapshot format did not change, and old snapshots still read.
_OLD_SNAPSHOT = (
    "bWVtc3RhY2stYm0yNS8xCnsidmVyc2lvbiI6NywicHJvZmlsZSI6ImRlZmF1bHQiLCJpZHMiOlsiYSIsImQiLCJlIiwiYiJdLCJ0ZXJt"
    "cyI6WyJqYXp6IiwiY2x1YiIsIm9sZCIsInRvd24iLCJ0ZWEiLCJjbG9zZSIsIm1pZG5pZ2h0IiwiZ3JlZW4iLCJyZWNvcmQiXSwicG9z"
    "dGluZ3MiOjEyfQoAAAAAAAAQQAAAAAAAAAhAAAAAAAAACEAAAAAAAAAQQAAAAAAAAAAAAwAAAAAAAAAEAAAAAAAAAAEAAAAAAAAAAAAA"
    "AAAAAAADAAAAAAAAAAUAAAAAAAAABgAAAAAAAAAHAAAAAAAAAAgAAAAAAAAACQAAAAAAAAAKAAAAAAAAAAsAAAAAAAAADAAAAAAAAAAA"
    "AAAAAgAAAAMAAAAAAAAAAQAAAAAAAAAAAAAAAwAAAAEAAAABAAAAAwAAAAMAAAABAAAAAwAAAAEAAAABAAAAAQAAAAEAAAABAAAAAQAA"
    "AAEAAAABAAAAAQAAAAEAAAA="
)


def test_a_snapshot_written_before_the_flat_layout_reads_and_scores_the_same() -> None:
    state, meta = decode_state(base64.b64decode(_OLD_SNAPSHOT))
    old = Bm25Index.from_state(state)
    assert meta == {"version": 7}
    fresh = Bm25Index()
    texts = {
        "a": "jazz club in the old town",
        "d": "the club closes at midnight",
        "e": "jazz jazz jazz",
        "b": "green tea and a jazz record",
    }
    for doc_id, text in texts.items():
        fresh.add(doc_id, text)
    # the scores the old index printed for this query, bit for bit
    want = [
        ("b", 1.474477013697908),
        ("a", 0.9918564857226773),
        ("d", 0.7361701090084937),
        ("e", 0.5781888564901557),
    ]
    assert old.search("jazz tea club") == want
    assert sorted(fresh.search("jazz tea club")) == sorted(want)
    old.add("f", "jazz tea")
    assert [d for d, _ in old.search("tea", k=1)] == ["f"]


def test_frequencies_take_two_bytes_and_widen_for_a_term_repeated_past_sixteen_bits() -> None:
    postings = Postings()
    postings.add(0, {"a": 3, "b": 1})
    assert postings.tfs.dtype == np.uint16
    postings.add(1, {"a": 70_000})  # past 65,535: widened, not cut
    postings.add(2, {"b": 2})
    assert postings.tfs.dtype == np.int32
    assert _lists(postings) == {"a": [(0, 3), (1, 70_000)], "b": [(0, 1), (2, 2)]}
    _, terms, offsets, slots, tfs = postings.live_csr(np.ones(3, dtype=bool))
    assert tfs.dtype == np.int32 and tfs.max() == 70_000
    restored = Postings.from_csr(terms, offsets, slots, tfs)
    assert restored.tfs.dtype == np.int32 and _lists(restored) == _lists(postings)
    narrow = Postings.from_csr(terms, offsets, slots, np.minimum(tfs, 9))
    assert narrow.tfs.dtype == np.uint16


def test_an_index_keeps_the_full_count_of_a_long_repetition() -> None:
    index = Bm25Index()
    index.add("long", " ".join(["echo"] * 70_000))
    index.add("short", "echo and other words here")
    state = index.export_state()
    assert int(state.tfs.max()) == 70_000
    restored = Bm25Index.from_state(decode_state(encode_state(state, {}))[0])
    assert restored.search("echo", k=2) == index.search("echo", k=2)
