"""BM25's arithmetic over arrays (pure): collection statistics, scores, the best slots."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from memstack.search.bm25_scoring import (
    collection_stats,
    idf_mass,
    sparse_term_scores,
    term_scores,
    top_hits,
    top_slots,
)
from memstack.search.postings import Postings


def _postings(lists: dict[str, list[tuple[int, int]]]) -> Postings:
    """Postings holding ``lists`` (term -> its (slot, tf) pairs), added document by document."""
    made = Postings()
    for slot in sorted({s for pairs in lists.values() for s, _ in pairs}):
        made.add(slot, {term: tf for term, pairs in lists.items() for s, tf in pairs if s == slot})
    return made


def test_collection_stats_over_everything_or_a_mask() -> None:
    lengths = np.array([2.0, 4.0, 6.0])
    assert collection_stats(3, 12.0, lengths, None) == (3.0, 4.0)
    assert collection_stats(3, 12.0, lengths, np.array([True, False, True])) == (2.0, 4.0)
    assert collection_stats(0, 0.0, lengths, None) == (0.0, 1.0)  # avgdl never divides by zero


def test_term_scores_are_lucene_bm25() -> None:
    postings = _postings({"tea": [(0, 2), (2, 1)]})
    lengths = np.array([3.0, 3.0, 6.0])
    terms = {"tea": 1.0, "none": 1.0}  # a term no document holds adds nothing
    scores = term_scores(
        terms, postings, lengths, 3, k1=1.2, b=0.75, stats=(3.0, 4.0), stat_mask=None, live=None
    )
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    want0 = idf * 2.2 * 2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 4))
    assert scores.tolist() == pytest.approx([want0, 0.0, idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 6 / 4))])


def test_top_slots_keep_insertion_order_among_ties() -> None:
    scores = np.array([1.0, 3.0, 1.0, 0.0, 3.0])
    seq = np.array([4, 3, 2, 1, 0])
    ids = ["a", "b", "c", "d", "e"]
    assert top_slots(scores, seq, ids, None) == [("e", 3.0), ("b", 3.0), ("c", 1.0), ("a", 1.0)]
    assert top_slots(scores, seq, ids, 3) == [("e", 3.0), ("b", 3.0), ("c", 1.0)]


def test_live_csr_renumbers_the_live_slots_and_drops_dead_terms() -> None:
    postings = _postings({"gone": [(0, 3)], "x": [(0, 1), (2, 5)], "y": [(1, 2), (2, 1)]})
    kept, terms, offsets, slots, tfs = postings.live_csr(np.array([False, True, True]))
    assert kept.tolist() == [1, 2]
    assert terms == ["x", "y"]
    assert offsets.tolist() == [0, 1, 3]
    assert (slots.tolist(), tfs.tolist()) == ([1, 0, 1], [5, 2, 1])


@pytest.mark.parametrize("slots", [8, 200])  # 5 postings: a share of 8 slots (dense), of 200 (sparse)
def test_sparse_scores_equal_the_dense_ones_and_leave_the_scratch_zero(slots: int) -> None:
    postings = _postings({"tea": [(0, 2), (2, 1), (4, 3)], "cup": [(2, 2), (3, 1)]})
    lengths = np.array([3.0, 3.0, 6.0, 2.0, 9.0])
    terms = {"cup": 0.5, "tea": 1.0, "none": 1.0}
    scratch = np.zeros(slots)
    for mask, want in ((None, [0, 2, 3, 4]), (np.array([True, False, False, True, True]), [0, 3, 4])):
        stats = (5.0, 4.6)
        dense = term_scores(
            terms, postings, lengths, 5, k1=1.2, b=0.75, stats=stats, stat_mask=mask, live=None
        )
        hits, values = sparse_term_scores(
            terms, postings, lengths, scratch, k1=1.2, b=0.75, stats=stats, stat_mask=mask, live=None
        )
        assert hits.tolist() == want == np.flatnonzero(dense).tolist()
        assert values.tolist() == dense[hits].tolist()  # the same sums in the same order: equal bits
        assert not scratch.any()
    one = sparse_term_scores(
        {"tea": 1.0}, postings, lengths, scratch, k1=1.2, b=0.75, stats=(5.0, 4.6), stat_mask=None, live=None
    )
    assert one[0].tolist() == [0, 2, 4]
    assert not sparse_term_scores(
        {"none": 1.0}, postings, lengths, scratch, k1=1.2, b=0.75, stats=(5.0, 4.6), stat_mask=None, live=None
    )[0].size


@pytest.mark.parametrize("slots", [8, 200])
def test_dead_slots_leave_the_document_frequencies(slots: int) -> None:
    """A dead slot's pairs stay until compaction; df counts the live slots only, in both paths,
    so the live slots score as if the dead ones had never been added."""
    postings = _postings({"tea": [(0, 2), (2, 1), (4, 3)], "cup": [(2, 2), (3, 1)], "pot": [(1, 1)]})
    alive = _postings({"tea": [(0, 2), (4, 3)], "cup": [(3, 1)]})
    live = np.array([True, False, False, True, True])
    lengths = np.array([3.0, 3.0, 6.0, 2.0, 9.0])
    terms = {"cup": 0.5, "tea": 1.0, "pot": 1.0}
    args = {"k1": 1.2, "b": 0.75, "stats": (3.0, 4.6), "stat_mask": None}
    want = term_scores(terms, alive, lengths, 5, **args, live=None)
    dense = term_scores(terms, postings, lengths, 5, **args, live=live)
    assert (dense * live).tolist() == want.tolist()
    hits, values = sparse_term_scores(terms, postings, lengths, np.zeros(slots), **args, live=live)
    on_live = live[hits]
    assert hits[on_live].tolist() == [0, 3, 4]
    assert values[on_live].tolist() == want[[0, 3, 4]].tolist()


def test_top_hits_rank_by_score_then_insertion_and_drop_zeros() -> None:
    hits = np.array([0, 1, 2, 3, 4, 5])
    values = np.array([1.0, 3.0, 1.0, 0.0, 3.0, 2.0])
    seq = np.array([4, 3, 2, 1, 0, 5])
    ids = ["a", "b", "c", "d", "e", "f"]
    everything = [("e", 3.0), ("b", 3.0), ("f", 2.0), ("c", 1.0), ("a", 1.0)]
    assert top_hits(hits, values, seq, ids, None) == everything
    for k in (1, 2, 3, 4, 5, 6, 10):  # k=0 never reaches it (the index answers [] first)
        assert top_hits(hits, values, seq, ids, k) == everything[:k]


def test_top_hits_rank_many_hits_as_few() -> None:
    rng = np.random.default_rng(3)
    values = rng.integers(0, 20, 500).astype(np.float64)  # many ties, some zeros
    seq = rng.permutation(500)
    ids = [f"d{i}" for i in range(500)]
    hits = np.arange(500)
    ranked = sorted((i for i in range(500) if values[i] > 0), key=lambda i: (-values[i], seq[i]))
    want = [(ids[i], float(values[i])) for i in ranked]
    assert top_hits(hits, values, seq, ids, None) == want  # the numpy path (many rows)
    assert top_hits(hits, values, seq, ids, 10) == want[:10]  # the Python path (the few at the cut)


_MASS = """
from memstack.search.bm25 import Bm25Index

index = Bm25Index()
words = [f"w{n}" for n in range(60)]
for d in range(200):
    index.add(f"d{d}", " ".join(words[i] for i in range(60) if (d * 7 + i * 13) % (i + 2) == 0))
query = " ".join(words) + " unheard never seen"
print(repr(index.query_mass(query)), repr(index.query_mass(" ".join(reversed(words)))))
"""


def test_the_query_mass_is_the_same_in_every_process() -> None:
    """Summed over the terms in the query's order, not a set's: the exact float does not depend on
    the string hash seed of the process."""
    outputs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _MASS], capture_output=True, text=True, timeout=120, env=env, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1, outputs


def test_the_query_mass_counts_each_distinct_term_once() -> None:
    postings = _postings({"tea": [(0, 1), (1, 1)], "green": [(1, 1)]})
    once = idf_mass(["tea", "green"], postings, 3.0, None)
    assert idf_mass(["tea", "green", "tea", "green"], postings, 3.0, None) == once
    assert once == math.log(1 + 1.5 / 2.5) + math.log(1 + 2.5 / 1.5)
