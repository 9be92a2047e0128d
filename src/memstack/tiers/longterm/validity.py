"""Which entries a search shows: the current ones, or the past ones when asked.

| view | shows |
|---|---|
| default | current entries: not superseded by now (no ``valid_to``, or a later one), not expired |
| ``include_history`` | superseded entries too |
| ``include_expired`` | expired entries too (audits; the retention sweep deletes them) |
| ``as_of=T`` | the entries valid at ``T``: ``valid_from <= T < valid_to``, not expired at ``T`` |

Each scope's cache keeps a :class:`ValidityIndex` of the few entries whose validity is not the
default one (an explicit ``valid_from``, a ``valid_to``, an ``expires_at``), so a search over a
scope where nothing was superseded or expires costs nothing more; otherwise it computes the hidden
ids with a few bisections.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ...foundation.errors import InvalidValue
from .entry import MemoryEntry, on_grid
from .validate import check_time

__all__ = ["ValidityIndex", "View", "check_view"]


@dataclass(frozen=True, slots=True)
class View:
    """What a search shows (module table); ``as_of`` in epoch seconds."""

    include_history: bool = False
    include_expired: bool = False
    as_of: float | None = None

    @property
    def default(self) -> bool:
        """True for the current entries only, as of now."""
        return not self.include_history and not self.include_expired and self.as_of is None


def check_view(include_history: object, include_expired: object, as_of: object) -> View:
    """The view of a search's parameters.

    Raises:
        InvalidValue: a flag that is not a bool, a bad ``as_of`` time, or ``as_of`` with
            ``include_history`` (a time shows the entries valid then: no history to include).
    """
    for name, flag in (("include_history", include_history), ("include_expired", include_expired)):
        if not isinstance(flag, bool):
            raise InvalidValue(f"{name} {flag!r}: must be true or false")
    when: datetime | None = check_time(as_of, "as_of")
    if when is not None and include_history:
        raise InvalidValue("as_of and include_history: give one (as_of shows what was valid then)")
    return View(bool(include_history), bool(include_expired), None if when is None else when.timestamp())


def _insort(items: list[tuple[float, str]], when: datetime | None, entry_id: str) -> None:
    if when is not None:
        bisect.insort(items, (when.timestamp(), entry_id))


def _drop(items: list[tuple[float, str]], when: datetime | None, entry_id: str) -> None:
    if when is None:
        return
    at = bisect.bisect_left(items, (when.timestamp(), entry_id))
    if at < len(items) and items[at] == (when.timestamp(), entry_id):
        del items[at]


def _up_to(items: list[tuple[float, str]], at: float) -> set[str]:
    """Ids whose time is ``<= at``."""
    return {i for _, i in items[: bisect.bisect_right(items, (at, "\U0010ffff"))]}


class ValidityIndex:
    """The entries of one scope with a non-default validity (not thread-safe: the cache's lock
    guards it)."""

    def __init__(self) -> None:
        self._of: dict[str, MemoryEntry] = {}
        self._starts: list[tuple[float, str]] = []  # explicit valid_from
        self._ends: list[tuple[float, str]] = []  # valid_to
        self._expiries: list[tuple[float, str]] = []  # expires_at

    def __len__(self) -> int:
        return len(self._of)

    def add(self, entry: MemoryEntry) -> None:
        """Index ``entry`` (replacing what was indexed under its id)."""
        self.remove(entry.id)
        if entry.given_valid_from is None and entry.valid_to is None and entry.expires_at is None:
            return
        self._of[entry.id] = entry
        _insort(self._starts, entry.given_valid_from, entry.id)
        _insort(self._ends, entry.valid_to, entry.id)
        _insort(self._expiries, entry.expires_at, entry.id)

    def remove(self, entry_id: str) -> None:
        """Forget ``entry_id`` (a no-op when it is not indexed)."""
        entry = self._of.pop(entry_id, None)
        if entry is not None:
            _drop(self._starts, entry.given_valid_from, entry_id)
            _drop(self._ends, entry.valid_to, entry_id)
            _drop(self._expiries, entry.expires_at, entry_id)

    def hidden(self, view: View, now: float, created_after: Callable[[float], set[str]]) -> set[str]:
        """The ids ``view`` hides at ``now`` (empty: nothing is hidden). ``created_after(t)``
        gives the ids created after ``t`` (the filter postings know them)."""
        now = on_grid(now)
        if view.as_of is None:
            hidden = set() if view.include_history else _up_to(self._ends, now)
            return hidden if view.include_expired else hidden | _up_to(self._expiries, now)
        at = on_grid(view.as_of)
        explicit = {i for _, i in self._starts}
        started_later = {i for _, i in self._starts[bisect.bisect_right(self._starts, (at, "\U0010ffff")) :]}
        hidden = (created_after(at) - explicit) | started_later | _up_to(self._ends, at)
        return hidden if view.include_expired else hidden | _up_to(self._expiries, at)
