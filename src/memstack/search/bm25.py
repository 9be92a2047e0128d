"""An incremental BM25 index with vectorised (numpy) scoring.

Layout: every stored text lives in a *slot*. Per term there is a posting list (slot numbers and term
frequencies), every term's list a block of two shared arrays (:mod:`memstack.search.postings`: a
handful of objects per index whatever its size, none of them walked by the garbage collector); per
slot a document length, a live flag and an insertion sequence number. Adding a text appends one slot
and one posting per distinct term; replacing or removing marks the old slot dead (a tombstone), its
postings staying until compaction (a term's document frequency counts its live slots). Nothing is
rebuilt per operation; when tombstones outnumber live slots the arrays are compacted once (amortised
O(1) per operation).

A search (its arithmetic: :mod:`memstack.search.bm25_scoring`) computes the ``idf·tf`` contributions of
the query terms' postings in one batch, sums them per slot, drops dead and non-candidate slots and
selects the top k with a partial sort (``np.partition``); it touches the query's postings only, never
every slot (the ``rockbot`` phrase bonus, scored over raw texts, uses an array over all slots). Ties
follow the order in which ids were first added (re-adding an id keeps its place). The index is
thread-safe: every public method holds an internal lock.
"""

from __future__ import annotations

import math
import sys
import threading
from collections import Counter
from collections.abc import Collection, Iterable, Mapping

import numpy as np
import numpy.typing as npt

from memstack.foundation.errors import InvalidConfiguration, InvalidInput
from memstack.search.bm25_scoring import (
    ScoreArgs,
    candidate_mask,
    collection_stats,
    idf_mass,
    sparse_term_scores,
    term_scores,
    top_hits,
)
from memstack.search.bm25_state import Bm25State
from memstack.search.phrases import add_phrase_scores, query_phrases
from memstack.search.postings import Postings, int_bytes
from memstack.search.profiles import Bm25Profile, get_profile
from memstack.search.tokenize import get_tokenizer

__all__ = ["Bm25Index"]

_F64 = npt.NDArray[np.float64]
_MIN_COMPACT = 1024
_INDEX_BYTES = 2_000  # the index object, its lock, arrays' and memoryviews' headers


class Bm25Index:
    """BM25 over (id, text) pairs, updated one entry at a time.

    ``profile`` is a name of :data:`memstack.search.PROFILES` (``"default"``, ``"rockbot"``) or a
    :class:`~memstack.search.Bm25Profile`.

    Raises:
        InvalidConfiguration: unknown profile name.
    """

    def __init__(self, profile: str | Bm25Profile = "default") -> None:
        self._profile = get_profile(profile)
        self._tokenize = get_tokenizer(self._profile.tokenizer)
        self._lock = threading.RLock()
        self._clear()

    def _clear(self) -> None:
        self._postings = Postings()
        self._slot_of: dict[str, int] = {}
        self._ids: list[str] = []
        self._raw: list[str] = []  # lower-cased raw text per slot, only for phrase profiles
        self._dl: _F64 = np.zeros(16, dtype=np.float64)
        self._live = np.zeros(16, dtype=bool)
        self._seq = np.zeros(16, dtype=np.int64)
        self._scratch: _F64 = np.zeros(16, dtype=np.float64)  # all zeros between searches
        self._nslots = 0
        self._next_seq = 0
        self._total_len = 0.0
        self._dead = 0

    @property
    def profile(self) -> Bm25Profile:
        """The scoring profile of this index."""
        return self._profile

    def __len__(self) -> int:
        with self._lock:
            return len(self._slot_of)

    @property
    def documents(self) -> int:
        """How many documents it holds, read without the lock (a dict's length is read whole): a gauge."""
        return len(self._slot_of)

    def __contains__(self, doc_id: object) -> bool:
        with self._lock:
            return doc_id in self._slot_of

    def shape(self) -> tuple[int, int, int]:
        """``(terms, postings pairs, slots)``: what the index's memory grows with."""
        with self._lock:
            return len(self._postings), self._postings.pairs, self._nslots

    def nbytes_if_free(self) -> int | None:
        """:meth:`nbytes`, or None at once while a snapshot serialises the index (0.2 s at 100k)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            return self.nbytes()
        finally:
            self._lock.release()

    def nbytes(self) -> int:
        """The bytes the index holds: its arrays, the term dict and names, the per-slot arrays, the id
        list and dict (the ids themselves are its caller's strings: see :meth:`share_ids`)."""
        with self._lock:
            per_slot = self._dl.nbytes + self._live.nbytes + self._seq.nbytes + self._scratch.nbytes
            # the list's and dict's tables and the dict's slot numbers (int objects)
            ids = sys.getsizeof(self._ids) + sys.getsizeof(self._slot_of) + int_bytes(self._nslots)
            return _INDEX_BYTES + self._postings.nbytes() + per_slot + ids

    def share_ids(self, owner: Iterable[str]) -> None:
        """Hold ``owner``'s equal id strings in place of its own (a restored snapshot's copies, about
        60 bytes an entry that :meth:`nbytes` does not count), when ``owner`` has every id."""
        with self._lock:
            found = [(d, s) for d in owner if (s := self._slot_of.get(d)) is not None]
            if len(found) == len(self._slot_of):  # a dict rebuilt from them keys the owner's strings
                self._slot_of = dict(found)
                for doc_id, slot in found:
                    self._ids[slot] = doc_id

    def ids(self) -> list[str]:
        """The ids in the index, in first-insertion order."""
        with self._lock:
            return sorted(self._slot_of, key=lambda d: int(self._seq[self._slot_of[d]]))

    def clear(self) -> None:
        """Remove every entry."""
        with self._lock:
            self._clear()

    def add(self, doc_id: str, text: str) -> None:
        """Add ``text`` under ``doc_id``; re-adding an id replaces its text (no rebuild).

        Raises:
            InvalidInput: ``doc_id`` or ``text`` is not a string.
        """
        _check_str("doc_id", doc_id)
        _check_str("text", text)
        tokens = self._tokenize(text)
        counts = Counter(tokens)
        with self._lock:
            old = self._slot_of.get(doc_id)
            if old is not None:
                seq = int(self._seq[old])
                self._kill(old)
            else:
                seq = self._next_seq
                self._next_seq += 1
            slot = self._new_slot(doc_id, float(len(tokens)), seq)
            if self._profile.phrase_weight > 0:
                self._raw.append(text.lower())
            self._postings.add(slot, counts)
            self._maybe_compact()

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        """:meth:`add` each ``(doc_id, text)`` pair in order.

        Raises:
            InvalidInput: an id or text is not a string (earlier pairs stay added).
        """
        for doc_id, text in items:
            self.add(doc_id, text)

    def remove(self, doc_id: str) -> bool:
        """Remove ``doc_id``; returns whether it was present (no rebuild)."""
        with self._lock:
            slot = self._slot_of.pop(doc_id, None) if isinstance(doc_id, str) else None
            if slot is None:
                return False
            self._kill(slot)
            self._maybe_compact()
            return True

    def _new_slot(self, doc_id: str, length: float, seq: int) -> int:
        slot = self._nslots
        if slot == len(self._dl):
            size = slot + (slot >> 2) + 16
            self._dl = np.resize(self._dl, size)
            self._live = np.resize(self._live, size)
            self._seq = np.resize(self._seq, size)
        self._dl[slot] = length
        self._live[slot] = True
        self._seq[slot] = seq
        self._nslots += 1
        self._ids.append(doc_id)
        self._slot_of[doc_id] = slot
        self._total_len += length
        return slot

    def _kill(self, slot: int) -> None:
        self._live[slot] = False
        self._total_len -= float(self._dl[slot])
        self._dead += 1

    def _maybe_compact(self) -> None:
        if self._dead < _MIN_COMPACT or self._dead < len(self._slot_of):
            return
        live_slots, terms, offsets, slots, tfs = self._postings.live_csr(self._live[: self._nslots])
        self._postings = Postings.from_csr(terms, offsets, slots, tfs)
        self._ids = [self._ids[s] for s in live_slots]
        if self._raw:
            self._raw = [self._raw[s] for s in live_slots]
        self._slot_of = {doc_id: i for i, doc_id in enumerate(self._ids)}
        self._dl = self._dl[live_slots].copy()
        self._seq = self._seq[live_slots].copy()
        self._live = np.ones(len(live_slots), dtype=bool)
        self._nslots = len(live_slots)
        self._dead = 0
        if self._nslots == 0:
            self._clear()

    def pack(self) -> None:
        """Give back the posting lists' and per-slot arrays' room to grow: scores and slots stay as
        they are, so masks made before stay valid."""
        with self._lock:
            self._postings.pack()
            n = max(16, self._nslots)
            self._dl, self._live, self._seq = self._dl[:n].copy(), self._live[:n].copy(), self._seq[:n].copy()
            if len(self._scratch) > n:
                self._scratch = np.zeros(n, dtype=np.float64)  # all zeros between searches

    def export_state(self) -> Bm25State:
        """The live documents and their postings as arrays (see :mod:`memstack.search.bm25_state`).

        Raises:
            InvalidConfiguration: a profile with a phrase bonus (its raw texts are not exported).
        """
        with self._lock:
            if self._profile.phrase_weight > 0:
                raise InvalidConfiguration(
                    f"BM25 profile {self._profile.name!r}: phrase scores cannot be exported"
                )
            live, terms, offsets, slots, tfs = self._postings.live_csr(self._live[: self._nslots])
            return Bm25State(
                profile=self._profile.name,
                ids=[self._ids[s] for s in live.tolist()],
                lengths=self._dl[live].copy(),
                seq=self._seq[live].copy(),
                terms=terms,
                offsets=offsets,
                slots=slots,
                tfs=tfs,
            )

    @classmethod
    def from_state(cls, state: Bm25State) -> Bm25Index:
        """An index holding exactly what :meth:`export_state` exported (checked first).

        Raises:
            InvalidValue: arrays that contradict each other.
            InvalidConfiguration: an unknown profile, or one with a phrase bonus.
        """
        state.check()
        index = cls(state.profile)
        if index._profile.phrase_weight > 0:
            raise InvalidConfiguration(f"BM25 profile {state.profile!r}: phrase scores cannot be restored")
        n = len(state.ids)
        index._ids = list(state.ids)
        index._slot_of = dict(zip(state.ids, range(n), strict=True))
        size = max(16, n)
        index._dl = np.zeros(size, dtype=np.float64)
        index._dl[:n] = state.lengths
        index._seq = np.zeros(size, dtype=np.int64)
        index._seq[:n] = state.seq
        index._live = np.zeros(size, dtype=bool)
        index._live[:n] = True
        index._nslots = n
        index._next_seq = int(state.seq.max()) + 1 if n else 0
        index._total_len = float(state.lengths.sum())
        index._postings = Postings.from_csr(state.terms, state.offsets, state.slots, state.tfs)
        return index

    def mask(self, candidates: Collection[str]) -> npt.NDArray[np.bool_]:
        """``candidates`` as a boolean array over this index's slots: pass it as ``candidates`` to
        reuse it across searches while the index is unchanged (cheaper than an id collection)."""
        with self._lock:
            out = np.zeros(self._nslots, dtype=bool)
            out[[s for s in map(self._slot_of.get, candidates) if s is not None]] = True
            return out

    def search(
        self,
        query: str,
        k: int | None = None,
        candidates: Collection[str] | npt.NDArray[np.bool_] | None = None,
    ) -> list[tuple[str, float]]:
        """Score ``query`` and return ``(id, score)`` pairs, best first.

        Zero scores are dropped; ties keep first-insertion order; ``k`` caps the result (``None`` = all).
        ``candidates`` restricts the result to those ids (unknown ids are ignored), or is a
        :meth:`mask` made while the index had its current slots; with a profile whose
        ``stats`` is ``"candidates"`` (``rockbot``), N, avgdl and df are computed over the candidates only.

        Raises:
            InvalidInput: ``query`` is not a string, or ``k`` is negative or not an int.
        """
        _check_str("query", query)
        tokens = self._tokenize(query)
        return self._search(tokens, dict.fromkeys(tokens, 1.0), k, candidates)

    def search_terms(
        self,
        weights: Mapping[str, float],
        k: int | None = None,
        candidates: Collection[str] | npt.NDArray[np.bool_] | None = None,
    ) -> list[tuple[str, float]]:
        """Like :meth:`search` for an already tokenised, weighted query: each term's BM25 contribution
        is multiplied by its weight (terms as :meth:`tokenize` yields them; weights <= 0 are skipped).
        The phrase bonus of ``rockbot`` does not apply (there is no query text).

        Raises:
            InvalidInput: a weight is not a finite number, or ``k`` is negative or not an int.
        """
        for term, weight in weights.items():
            if not isinstance(term, str) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
                raise InvalidInput(f"term weight {term!r}={weight!r} must be a str and a finite number")
        terms = {t: float(w) for t, w in weights.items() if w > 0}
        return self._search([], terms, k, candidates)

    def query_mass(self, query: str) -> float:
        """The query's IDF mass over the whole index (:func:`~memstack.search.bm25_scoring.idf_mass`)."""
        terms = self._tokenize(query)
        with self._lock:
            return idf_mass(terms, self._postings, float(len(self._slot_of)), self._live_if_dead())

    def tokenize(self, text: str) -> list[str]:
        """The terms this index makes of ``text`` (its profile's tokeniser)."""
        return self._tokenize(text)

    def _search(
        self,
        tokens: list[str],
        terms: dict[str, float],
        k: int | None,
        candidates: Collection[str] | npt.NDArray[np.bool_] | None,
    ) -> list[tuple[str, float]]:
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
            raise InvalidInput(f"k={k!r} must be None or an int >= 0")
        if k == 0 or not terms:
            return []
        with self._lock:
            n = self._nslots
            if n == 0:
                return []
            mask = candidate_mask(candidates, n, self._live, self._dead, self._slot_of)
            phrases = query_phrases(tokens) if self._profile.phrase_weight > 0 and tokens else []
            hits, values = self._scores(terms, mask if self._profile.stats == "candidates" else None, phrases)
            if mask is not None:
                keep = mask[hits]
                hits, values = hits[keep], values[keep]
            return top_hits(hits, values, self._seq, self._ids, k)

    def _live_if_dead(self) -> npt.NDArray[np.bool_] | None:
        return self._live[: self._nslots] if self._dead else None

    def _stats(self, mask: npt.NDArray[np.bool_] | None) -> tuple[float, float]:
        return collection_stats(len(self._slot_of), self._total_len, self._dl, mask)

    def _scores(
        self, terms: dict[str, float], stat_mask: npt.NDArray[np.bool_] | None, phrases: list[str]
    ) -> tuple[npt.NDArray[np.intp], _F64]:
        """``(slots, scores)`` of Σ weight·idf·tf over ``terms`` plus the ``phrases``' bonus; N, avgdl
        and df over ``stat_mask`` (``None`` = all live slots)."""
        prof, stats = self._profile, self._stats(stat_mask)
        kwargs: ScoreArgs = {
            "k1": prof.k1, "b": prof.b, "stats": stats, "stat_mask": stat_mask, "live": self._live_if_dead()
        }  # fmt: skip
        if not phrases:  # only the slots in the query's postings are touched
            if len(self._scratch) < self._nslots:
                self._scratch = np.zeros(len(self._dl), dtype=np.float64)
            return sparse_term_scores(terms, self._postings, self._dl, self._scratch, **kwargs)
        # the phrase bonus scores raw texts over the whole pool: a dense array
        scores = term_scores(terms, self._postings, self._dl, self._nslots, **kwargs)
        pool = np.flatnonzero(self._live[: self._nslots] if stat_mask is None else stat_mask).tolist()
        n_docs, avgdl = stats
        add_phrase_scores(
            scores, self._raw, pool, phrases, self._dl, n_docs=n_docs, avgdl=avgdl, k1=prof.k1, b=prof.b,
            weight=prof.phrase_weight,
        )  # fmt: skip
        hits = np.flatnonzero(scores > 0.0)
        return hits, scores[hits]


def _check_str(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise InvalidInput(f"{name}={value!r} must be a str (got {type(value).__name__})")
