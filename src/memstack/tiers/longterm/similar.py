"""Duplicate detection without an LLM: exact (normalised text) and near (token cosine, vectors).

Used by the ``dedupe=`` save policy of :class:`~memstack.tiers.longterm.LongTermMemory` and by the
offline ``dedupe`` dream pass. Two entries are:

- **exact** duplicates when their normalised contents are equal: Unicode NFKC, case-folded,
  runs of whitespace collapsed, leading/trailing whitespace and punctuation dropped;
- **near** duplicates when they are exact duplicates, or, when they hold the same numbers and
  identifiers (every token with a digit: ``INV-2041``, ``3.5``, ``v2``), the cosine of their BM25 term-count
  vectors (the default tokeniser: stemmed, stop words out) is at least :data:`NEAR_THRESHOLD`
  over texts of at least :data:`NEAR_MIN_TERMS` terms, or, when both have vectors of the same
  model, the cosine of their embeddings is at least :data:`VECTOR_THRESHOLD` and the term cosine
  at least :data:`VECTOR_TERM_FLOOR`. Candidates are found with BM25 (the top
  :data:`CANDIDATES` hits of each entry's text), so a pass costs one search per entry.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Final, Literal

import numpy as np

from ...foundation.errors import InvalidValue
from ...search import Bm25Index
from ...search.tokenize import tokenize
from .entry import MemoryEntry

__all__ = [
    "CANDIDATES",
    "NEAR_MIN_TERMS",
    "NEAR_THRESHOLD",
    "VECTOR_TERM_FLOOR",
    "VECTOR_THRESHOLD",
    "DedupeMode",
    "check_mode",
    "duplicate_groups",
    "find_duplicate",
    "normalise_text",
    "term_cosine",
]

DedupeMode = Literal["exact", "near"]
NEAR_THRESHOLD: Final = 0.85
"""Term-count cosine at or above which two texts are near duplicates."""
NEAR_MIN_TERMS: Final = 4
"""Texts with fewer terms than this are only ever exact duplicates (too little evidence)."""
VECTOR_THRESHOLD: Final = 0.95
"""Embedding cosine at or above which two entries are near duplicates (with the term floor)."""
VECTOR_TERM_FLOOR: Final = 0.5
"""Term cosine an embedding match also needs, so paraphrases with other facts stay apart."""
CANDIDATES: Final = 8
"""BM25 hits of an entry's text examined as its possible duplicates."""

_EDGE = string.punctuation + string.whitespace + "\u2026\u2013\u2014\u00a0"

Vectors = Mapping[str, Sequence[float]]


def check_mode(mode: object) -> DedupeMode | None:
    """``mode`` if it is None, ``"exact"`` or ``"near"``.

    Raises:
        InvalidValue: anything else.
    """
    if mode is None or mode in ("exact", "near"):
        return mode
    raise InvalidValue(f"dedupe {mode!r}: must be None, 'exact' or 'near'")


def normalise_text(text: str) -> str:
    """The exact-duplicate key of ``text`` (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).strip(_EDGE)


def _terms(text: str) -> Counter[str]:
    return Counter(tokenize(text))


def term_cosine(a: str, b: str) -> float:
    """Cosine of the BM25 term-count vectors of two texts (0.0 when either has no term)."""
    return _cosine_counts(_terms(a), _terms(b))


def _cosine_counts(x: Counter[str], y: Counter[str]) -> float:
    if not x or not y:
        return 0.0
    dot = sum(v * y.get(k, 0) for k, v in x.items())
    return dot / (math.sqrt(sum(v * v for v in x.values())) * math.sqrt(sum(v * v for v in y.values())))


_MARK: Final = re.compile(r"[^\W_]*\d[\w.:/+-]*", re.UNICODE)


def _marks(text: str) -> frozenset[str]:
    """The numbers and identifiers of ``text`` (every token holding a digit), case-folded: two
    texts that differ in one of them are never near duplicates (a digit changes the fact)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return frozenset(m.rstrip(".:/+-") for m in _MARK.findall(folded))


def _is_near(
    a: MemoryEntry, b: MemoryEntry, terms: Callable[[MemoryEntry], Counter[str]], vectors: Vectors | None
) -> bool:
    if normalise_text(a.content) == normalise_text(b.content):
        return True
    if _marks(a.content) != _marks(b.content):
        return False  # "invoice INV-2041" and "invoice INV-2047" are two facts, however alike
    ta, tb = terms(a), terms(b)
    cosine = _cosine_counts(ta, tb)
    if min(sum(ta.values()), sum(tb.values())) >= NEAR_MIN_TERMS and cosine >= NEAR_THRESHOLD:
        return True
    if vectors is not None and cosine >= VECTOR_TERM_FLOOR:
        va, vb = vectors.get(a.id), vectors.get(b.id)
        if va is not None and vb is not None and len(va) == len(vb):
            x, y = np.asarray(va, dtype=np.float64), np.asarray(vb, dtype=np.float64)
            norm = float(np.linalg.norm(x) * np.linalg.norm(y))
            return norm > 0 and float(x @ y) / norm >= VECTOR_THRESHOLD
    return False


def find_duplicate(
    entries: Sequence[MemoryEntry],
    content: str,
    mode: DedupeMode,
    index: Bm25Index | None = None,
) -> MemoryEntry | None:
    """The oldest entry of ``entries`` that duplicates ``content`` under ``mode``, or None.

    ``index`` (a BM25 index over ``entries``' ids) narrows the near search to its top hits.
    """
    key = normalise_text(content)
    exact = [e for e in entries if normalise_text(e.content) == key]
    if exact or mode == "exact":
        return min(exact, key=lambda e: (e.created_at, e.id), default=None)
    probe = MemoryEntry(id="~probe", content=content)
    by_id = {e.id: e for e in entries}
    if index is not None:
        pool = [by_id[i] for i, _ in index.search(content, k=CANDIDATES) if i in by_id]
    else:
        pool = list(entries)
    cache: dict[str, Counter[str]] = {}

    def terms(entry: MemoryEntry) -> Counter[str]:
        if entry.id not in cache:
            cache[entry.id] = _terms(entry.content)
        return cache[entry.id]

    near = [e for e in pool if _is_near(probe, e, terms, None)]
    return min(near, key=lambda e: (e.created_at, e.id), default=None)


def duplicate_groups(
    entries: Sequence[MemoryEntry], mode: DedupeMode, vectors: Vectors | None = None
) -> list[list[MemoryEntry]]:
    """Groups (2+ entries, oldest first) of mutual duplicates under ``mode``; groups sorted by
    their oldest entry. Near groups are closed transitively (a ~ b, b ~ c: one group)."""
    parent = {e.id: e.id for e in entries}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(a: str, b: str) -> None:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    by_key: dict[str, str] = {}
    for entry in entries:
        key = normalise_text(entry.content)
        if key in by_key:
            join(by_key[key], entry.id)
        else:
            by_key[key] = entry.id
    if mode == "near":
        by_id = {e.id: e for e in entries}
        counts = {e.id: _terms(e.content) for e in entries}
        index = Bm25Index()
        index.add_many((e.id, e.content) for e in entries)
        for entry in entries:
            if sum(counts[entry.id].values()) < NEAR_MIN_TERMS and vectors is None:
                continue
            for other, _ in index.search(entry.content, k=CANDIDATES):
                if (
                    other != entry.id
                    and root(other) != root(entry.id)
                    and _is_near(entry, by_id[other], lambda e: counts[e.id], vectors)
                ):
                    join(entry.id, other)
    groups: dict[str, list[MemoryEntry]] = {}
    for entry in entries:
        groups.setdefault(root(entry.id), []).append(entry)
    found = [sorted(g, key=lambda e: (e.created_at, e.id)) for g in groups.values() if len(g) > 1]
    return sorted(found, key=lambda g: (g[0].created_at, g[0].id))
