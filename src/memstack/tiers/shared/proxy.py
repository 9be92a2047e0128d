"""``StateProxy``: the ``data`` reserved key of a shared memory, with attribute access.

A live view, not a copy: every read fetches the stored ``data`` dict and every write is one
atomic read-modify-write of it in storage, so ``memory.data.x = 1`` is seen by every process
opening the same memory (memstack writes through, unlike the seed's copy). Keys are ``str``;
values are JSON (see :mod:`memstack.tiers.shared.serialize`).

Attribute access: ``proxy.name`` reads key ``name`` and raises ``AttributeError`` when it is
absent; ``proxy.name = v`` always writes. Keys that start with ``_`` or are named like a method
(``keys``, ``items``, ``get``, ...) are reachable with ``proxy["keys"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...foundation.limits import short_repr
from .serialize import check_key, check_value

__all__ = ["StateProxy"]

Read = Callable[[], dict[str, Any]]
Update = Callable[[Callable[[dict[str, Any]], dict[str, Any]]], tuple[dict[str, Any], dict[str, Any]]]
OnChange = Callable[[str, Any, Any], object]


class StateProxy:
    """Dict-like, attribute-accessible live view of a stored JSON object.

    Args:
        read: returns the current stored dict (a fresh copy).
        update: applies a function old-dict → new-dict atomically, returns (old, new).
        on_change: called as ``on_change(key, old, new)`` after a write that changed the value.
    """

    __slots__ = ("_on_change", "_read", "_update")
    _read: Read
    _update: Update
    _on_change: OnChange | None

    def __init__(self, read: Read, update: Update, on_change: OnChange | None = None) -> None:
        object.__setattr__(self, "_read", read)
        object.__setattr__(self, "_update", update)
        object.__setattr__(self, "_on_change", on_change)

    # -- item access -------------------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        """The value of ``key`` or None when absent."""
        return self._read().get(key)

    def __setitem__(self, key: str, value: Any) -> None:
        """Write ``key`` through to storage.

        Raises:
            InvalidKey: ``key`` breaks the key rule.
            InvalidValue: ``value`` is not JSON.
        """
        key = check_key(key)
        self._set(key, check_value(value, f"data[{short_repr(key)}]"))

    def _set(self, key: str, value: Any) -> None:
        def apply(current: dict[str, Any]) -> dict[str, Any]:
            current[key] = value
            return current

        old, _ = self._update(apply)
        if self._on_change is not None and old.get(key) != value:
            self._on_change(key, old.get(key), value)

    def __delitem__(self, key: str) -> None:
        self.delete(key)

    def __contains__(self, key: object) -> bool:
        return key in self._read()

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StateProxy):
            return self._read() == other._read()
        if isinstance(other, Mapping):
            return self._read() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mutable view is not hashable

    # -- attribute access --------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        data = self._read()
        if name not in data:
            raise AttributeError(f"StateProxy has no key {short_repr(name)}")
        return data[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("_"):
            raise AttributeError(
                f"StateProxy key {short_repr(name)}: keys starting with '_' need proxy[{short_repr(name)}]"
            )
        self[name] = value

    def __delattr__(self, name: str) -> None:
        if name not in self:
            raise AttributeError(f"StateProxy has no key {short_repr(name)}")
        self.delete(name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {k for k in self._read() if k.isidentifier()})

    # -- dict-style methods ------------------------------------------------------------------
    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` or ``default``."""
        return self._read().get(key, default)

    def keys(self) -> list[str]:
        """The keys, in stored order."""
        return list(self._read())

    def values(self) -> list[Any]:
        """The values, in stored order."""
        return list(self._read().values())

    def items(self) -> list[tuple[str, Any]]:
        """``(key, value)`` pairs, in stored order."""
        return list(self._read().items())

    def delete(self, key: str) -> Any:
        """Remove ``key``; returns its value or None."""
        removed: list[Any] = []

        def apply(current: dict[str, Any]) -> dict[str, Any]:
            removed[:] = [current.pop(key, None)]
            return current

        self._update(apply)
        return removed[0]

    def merge(self, mapping: Mapping[str, Any]) -> StateProxy:
        """Write every pair of ``mapping`` in one atomic update; returns the proxy.

        Raises:
            InvalidKey, InvalidValue: a bad pair (nothing is written).
        """
        pairs = {check_key(k): check_value(v) for k, v in mapping.items()}
        old, _ = self._update(lambda current: {**current, **pairs})
        if self._on_change is not None:
            for key, value in pairs.items():
                if old.get(key) != value:
                    self._on_change(key, old.get(key), value)
        return self

    def to_dict(self) -> dict[str, Any]:
        """A fresh plain-dict copy of the stored data."""
        return self._read()

    @property
    def empty(self) -> bool:
        """True when no key is stored."""
        return not self._read()

    def __repr__(self) -> str:
        return f"<StateProxy {self._read()!r}>"
