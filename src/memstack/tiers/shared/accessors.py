"""The reserved-key accessors of a shared memory: ``data``, ``results``, ``messages``,
``session_id`` (rules in :mod:`memstack.tiers.shared.reserved`). None of them notifies subscribers.

A mixin of :class:`~memstack.tiers.shared.store.SharedMemory`, kept apart so that each file holds one
concept; it relies on the memory's storage, writer and reserved reads declared below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Self

from . import reserved as rs
from .proxy import StateProxy
from .storage import Entry, SharedStorage, Write

__all__ = ["ReservedAccessors"]


class ReservedAccessors:
    """Accessors for the stored reserved keys."""

    _store: SharedStorage
    current_writer: str | None

    def _reserved_value(self, key: str) -> Any:
        raise NotImplementedError  # provided by SharedMemory

    def __setitem__(self, key: str, value: Any) -> None:
        raise NotImplementedError  # provided by SharedMemory

    @property
    def data(self) -> StateProxy:
        """The ``data`` reserved key as a live :class:`StateProxy` (writes reach storage)."""
        return StateProxy(partial(self._reserved_value, "data"), self._update_data)

    def _update_data(
        self, fn: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        def make(entry: Entry) -> Any:
            current = dict(entry.value) if entry.exists else {}
            return rs.normalise("data", fn(current))

        [(old, new)] = self._store.write(
            [Write("data", make, custom=False, notify=False)], writer=self.current_writer
        )
        return (dict(old.value) if old.exists else {}), new

    @property
    def results(self) -> list[Any]:
        """A copy of the stored results."""
        return list(self._reserved_value("results"))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A copy of the stored messages."""
        return list(self._reserved_value("messages"))

    @property
    def session_id(self) -> str | None:
        """The ``session_id`` reserved key."""
        value: str | None = self._reserved_value("session_id")
        return value

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self["session_id"] = value

    def append_result(self, result: Any) -> Self:
        """Append one result atomically (no notification)."""
        [item] = rs.normalise("results", [result])
        self._append("results", item)
        return self

    def append_message(self, message: Any) -> Self:
        """Append one message atomically (no notification)."""
        self._append("messages", rs.message(message))
        return self

    def _append(self, key: str, item: Any) -> None:
        def make(entry: Entry) -> Any:
            return [*(entry.value if entry.exists else []), item]

        self._store.write([Write(key, make, custom=False, notify=False)], writer=self.current_writer)

    def set_results(self, results: Sequence[Any]) -> Self:
        """Replace the results."""
        self["results"] = list(results)
        return self

    def results_from(self, index: int) -> list[Any]:
        """Results from ``index`` on (``[]`` past the end)."""
        return self.results[index:]

    def format_history(self, formatter: Callable[[Any], Sequence[Any]] | None = None) -> list[Any]:
        """Messages followed by every result expanded by ``formatter`` (default: a dict's
        ``output`` list then its ``tool_calls`` list)."""
        expand = formatter or _default_formatter
        return [*self.messages, *(item for r in self.results for item in expand(r))]


def _default_formatter(result: Any) -> list[Any]:
    if not isinstance(result, Mapping):
        return [result]
    return [*(result.get("output") or []), *(result.get("tool_calls") or [])]
