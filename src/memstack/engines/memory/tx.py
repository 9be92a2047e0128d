"""The memory engine's data model and one batch's context: entries, sorted sets, the undo log.

A :class:`Tx` is what every handler of ``ops`` works on: the engine's dict, its expiry
heap, the batch's time, the undo steps of what the batch changed so far, and the messages it
publishes. Each change records its undo step, so a batch that raises is rolled back whole.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable
from typing import Any, Final

from ..base import WrongType

__all__ = ["Entry", "Tx", "Undo", "ZSet", "dead"]

Undo = Callable[[], None]
NOT_A_STRING: Final = object()  # what ``Tx.string_at`` finds at a key of another type: equal to nothing


class ZSet:
    """Members with scores, kept ordered by (score, member) for rank and score ranges."""

    __slots__ = ("order", "scores")

    def __init__(self) -> None:
        self.scores: dict[str, float] = {}
        self.order: list[tuple[float, str]] = []

    def add(self, member: str, score: float) -> float | None:
        old = self.scores.get(member)
        if old is not None:
            if old == score:
                return old
            del self.order[bisect.bisect_left(self.order, (old, member))]
        self.scores[member] = score
        bisect.insort(self.order, (score, member))
        return old

    def remove(self, member: str) -> float | None:
        old = self.scores.pop(member, None)
        if old is not None:
            del self.order[bisect.bisect_left(self.order, (old, member))]
        return old

    def __len__(self) -> int:
        return len(self.scores)


class Entry:
    """One key: its type, its value (str, dict, set, list or :class:`ZSet`), its expire-at."""

    __slots__ = ("expire", "kind", "value")

    def __init__(self, kind: str, value: Any, expire: int | None = None) -> None:
        self.kind = kind
        self.value = value
        self.expire = expire


_FACTORY: dict[str, Callable[[], Any]] = {"hash": dict, "set": set, "list": list, "zset": ZSet}


def dead(entry: Entry, now: int) -> bool:
    """True when ``entry`` has expired at ``now``."""
    return entry.expire is not None and entry.expire <= now


class Tx:
    """One batch on the memory engine (run under the engine's lock)."""

    __slots__ = ("data", "expiries", "now", "published", "undo")

    def __init__(self, data: dict[str, Entry], expiries: list[tuple[int, str]], now: int) -> None:
        self.data = data
        self.expiries = expiries
        self.now = now
        self.undo: list[Undo] = []
        self.published: list[tuple[str, str]] = []

    def rollback(self) -> None:
        """Undo every change of the batch, newest first."""
        for step in reversed(self.undo):
            step()

    def live(self, key: str) -> Entry | None:
        """The live entry of ``key`` (an expired one is purged) or None."""
        entry = self.data.get(key)
        if entry is not None and dead(entry, self.now):
            del self.data[key]
            return None
        return entry

    def typed(self, key: str, kind: str) -> Entry | None:
        """The live entry of ``key`` (None if absent); WrongType if it holds another type."""
        entry = self.live(key)
        if entry is None or entry.kind == kind:
            return entry
        raise WrongType(f"key {key!r} holds a {entry.kind}, not a {kind}")

    def string_at(self, key: str) -> object:
        """The string at ``key``, None when absent, :data:`NOT_A_STRING` for another type."""
        entry = self.live(key)
        if entry is not None and entry.kind != "string":
            return NOT_A_STRING
        return None if entry is None else entry.value

    def exists(self, key: str) -> bool:
        """True if ``key`` is live."""
        return self.live(key) is not None

    def container(self, key: str, kind: str) -> Entry:
        """The live entry of ``kind`` at ``key``, created empty (with an undo) when absent.

        Raises:
            WrongType: ``key`` holds another type.
        """
        entry = self.typed(key, kind)
        if entry is None:
            entry = Entry(kind, _FACTORY[kind]())
            self.data[key] = entry
            self.undo.append(lambda: self.restore(key, None))
        return entry

    def drop_if_empty(self, key: str, entry: Entry) -> None:
        """An emptied container no longer exists."""
        if not len(entry.value):
            del self.data[key]
            self.undo.append(lambda: self.data.__setitem__(key, entry))

    def replace(self, key: str, entry: Entry | None) -> None:
        """``key`` gets ``entry`` (None: deleted)."""
        old = self.data.get(key)
        if entry is None:
            self.data.pop(key, None)
        else:
            self.data[key] = entry
            if entry.expire is not None:
                heapq.heappush(self.expiries, (entry.expire, key))
        self.undo.append(lambda: self.restore(key, old))

    def restore(self, key: str, old: Entry | None) -> None:
        """Put back ``old`` (None: no key)."""
        if old is None:
            self.data.pop(key, None)
        else:
            self.data[key] = old

    def set_expire(self, key: str, entry: Entry, expire: int | None) -> None:
        """New expire-at of a live entry."""
        old = entry.expire
        entry.expire = expire
        if expire is not None:
            heapq.heappush(self.expiries, (expire, key))
        self.undo.append(lambda: setattr(entry, "expire", old))
