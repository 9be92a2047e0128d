"""Conversation structure as arrays, so that propagation runs on numpy instead of per-id Python.

:mod:`.propagation` states the three steps over callables and visits every fused id and neighbour
in Python: ~3 ms a search at 100,000 turns (``bench/search_speed.py --conversations``), against a
few tenths of a millisecond here. A :class:`ThreadTable` numbers the turns of a scope once (the
caller keeps it until the scope changes); :func:`propagate`, :func:`speaker_boost` and
:func:`session_boost` then take the scored ids as :class:`Scored` arrays and return exactly the
scores, in exactly the order, that their namesakes in :mod:`.propagation` return for the same
threads (float64 arithmetic in the same order of operations; tests/search/test_thread_table.py
compares them).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .propagation import _idle, named_words

__all__ = ["Scored", "ThreadTable", "propagate", "session_boost", "speaker_boost"]

Slots = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, eq=False)
class ThreadTable:
    """The turns of a scope numbered by *slot*: each conversation's turns are consecutive slots in
    turn order. Build it with :meth:`build`."""

    ids: list[str]  # slot -> id
    slot: dict[str, int]  # id -> slot
    start: Slots  # slot -> first slot of its conversation
    end: Slots  # slot -> one past the last slot of its conversation
    session: Slots  # slot -> session number (-1: none)
    speaker: Slots  # slot -> speaker number (-1: none)
    speakers: list[frozenset[str]]  # speaker number -> the words of the name (named_words)

    @classmethod
    def build(
        cls,
        conversations: Iterable[Sequence[str]],
        session_of: Callable[[str], Hashable | None],
        speaker_of: Callable[[str], str | None],
    ) -> ThreadTable:
        """The table of ``conversations`` (each its ids in turn order), with each id's session and
        speaker as ``session_of`` and ``speaker_of`` give them (None: none). Each id is listed once.
        """
        ids: list[str] = []
        start: list[int] = []
        end: list[int] = []
        for turns in conversations:
            first = len(ids)
            ids.extend(turns)
            start.extend([first] * len(turns))
            end.extend([len(ids)] * len(turns))
        sessions: dict[Hashable, int] = {}
        speakers: dict[str, int] = {}
        # Lists, then one array each: assigning array items one by one cost twice as much.
        session = [-1 if (s := session_of(i)) is None else sessions.setdefault(s, len(sessions)) for i in ids]
        speaker = [
            -1 if (name := speaker_of(i)) is None else speakers.setdefault(name, len(speakers)) for i in ids
        ]
        return cls(
            ids=ids,
            slot={entry_id: n for n, entry_id in enumerate(ids)},
            start=np.array(start, dtype=np.int64),
            end=np.array(end, dtype=np.int64),
            session=np.array(session, dtype=np.int64),
            speaker=np.array(speaker, dtype=np.int64),
            speakers=[frozenset(named_words(name)) for name in speakers],
        )

    def slots(self, ids: Iterable[str]) -> Slots:
        """The slot of each id (-1: not in the table)."""
        get = self.slot.get
        return np.fromiter((get(i, -1) for i in ids), dtype=np.int64)

    def neighbours(self, slots: Slots, window: int) -> Slots:
        """Per slot, the slots of the ``window`` turns before and after it (``(len(slots), 2 · window)``,
        in the order of :meth:`ConversationThreads.neighbours
        <memstack.tiers.longterm.context.ConversationThreads.neighbours>`, -1 where there is none: the
        conversation's edge, or a slot of -1)."""
        if window <= 0:
            return np.zeros((len(slots), 0), dtype=np.int64)
        offsets = np.array([*range(-window, 0), *range(1, window + 1)], dtype=np.int64)
        known = slots >= 0
        safe = np.where(known, slots, 0)
        near = slots[:, None] + offsets[None, :]
        inside = (near >= self.start[safe][:, None]) & (near < self.end[safe][:, None]) & known[:, None]
        out: Slots = np.where(inside, near, -1)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class Scored:
    """Scored ids in order (the order decides ties), their slots in a :class:`ThreadTable` (-1: not
    in it) and their scores."""

    ids: list[str]
    slots: Slots
    scores: Scores

    @classmethod
    def of(cls, table: ThreadTable, ids: list[str], scores: Iterable[float]) -> Scored:
        """``ids`` with ``scores`` (same length, ids distinct), their slots looked up in ``table``."""
        return cls(ids, table.slots(ids), np.fromiter(scores, dtype=np.float64, count=len(ids)))

    def top(self, keep: int) -> list[tuple[str, float]]:
        """The ``keep`` best ``(id, score)``, best first, ties in order (as ``heapq.nlargest``)."""
        order = np.argsort(-self.scores, kind="stable")[: max(keep, 0)]
        ids = self.ids
        return [(ids[n], score) for n, score in zip(order.tolist(), self.scores[order].tolist(), strict=True)]


def _find(slots: Slots, wanted: Slots) -> tuple[Slots, npt.NDArray[np.bool_]]:
    """For each of ``wanted``, its position in ``slots`` and whether it is there (never for -1)."""
    order = np.argsort(slots)
    ordered = slots[order]
    if not len(ordered):
        return np.zeros(wanted.shape, dtype=np.int64), np.zeros(wanted.shape, dtype=bool)
    at = np.minimum(np.searchsorted(ordered, wanted), len(ordered) - 1)
    found = (ordered[at] == wanted) & (wanted >= 0)
    return order[at], found


def propagate(
    table: ThreadTable,
    scored: Scored,
    window: int,
    weight: float,
    *,
    allowed: Callable[[str], bool] | None = None,
) -> Scored:
    """:func:`memstack.search.propagation.propagate` with the table's ``window`` neighbours.

    Raises:
        InvalidInput: ``weight`` negative, infinite or NaN.
    """
    if _idle(weight):
        return scored
    near = table.neighbours(scored.slots, window)
    at, found = _find(scored.slots, near)
    flat = near.ravel()  # row by row: the order in which neighbours are met there
    met = flat[(flat >= 0) & ~found.ravel()]
    _, first = np.unique(met, return_index=True)
    new = met[np.sort(first)]
    new_ids = list(map(table.ids.__getitem__, new.tolist()))
    if allowed is not None and new_ids:
        keep = np.fromiter((allowed(i) for i in new_ids), dtype=bool, count=len(new_ids))
        new, new_ids = new[keep], [i for i, k in zip(new_ids, keep, strict=True) if k]
    near_new = table.neighbours(new, window)
    at_new, found_new = _find(scored.slots, near_new)
    # an unscored neighbour counts 0, as there
    around = np.where(np.concatenate([found, found_new]), scored.scores[np.concatenate([at, at_new])], 0.0)
    best = around.max(axis=1, initial=0.0)
    base = np.concatenate([scored.scores, np.zeros(len(new))])
    return Scored([*scored.ids, *new_ids], np.concatenate([scored.slots, new]), base + weight * best)


def speaker_boost(table: ThreadTable, scored: Scored, query: str, weight: float) -> Scored:
    """:func:`memstack.search.propagation.speaker_boost` with the table's speakers.

    Raises:
        InvalidInput: ``weight`` negative, infinite or NaN.
    """
    if _idle(weight):
        return scored
    words = named_words(query)
    speaker = np.where(scored.slots >= 0, table.speaker[np.maximum(scored.slots, 0)], -1)
    named = [n for n in np.unique(speaker[speaker >= 0]) if not table.speakers[n].isdisjoint(words)]
    hit = np.isin(speaker, named)
    return Scored(scored.ids, scored.slots, np.where(hit, scored.scores + weight, scored.scores))


def session_boost(table: ThreadTable, scored: Scored, weight: float) -> Scored:
    """:func:`memstack.search.propagation.session_boost` with the table's sessions.

    Raises:
        InvalidInput: ``weight`` negative, infinite or NaN.
    """
    if _idle(weight):
        return scored
    session = np.where(scored.slots >= 0, table.session[np.maximum(scored.slots, 0)], -1)
    member = session >= 0
    groups, which = np.unique(session[member], return_inverse=True)
    best = np.zeros(len(groups), dtype=np.float64)
    np.maximum.at(best, which, scored.scores[member])
    out = scored.scores.copy()
    out[member] = scored.scores[member] + weight * best[which]
    return Scored(scored.ids, scored.slots, out)
