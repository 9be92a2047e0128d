"""Serialisation of a shared memory: the snapshot ``to_dict`` / ``to_json`` give and
``SharedMemory.from_dict`` / ``clone`` restore.

The snapshot is ``{"data": {...}, "results": [...], "messages": [...], "session_id": ...,
"custom": {key: value}}``; ``session_id`` is left out when None, the other four are always there.
Results and messages are the plain JSON values stored (see :mod:`memstack.tiers.shared.reserved`). The
cache is never serialised; ``network_name`` and ``enable_cache`` are not restored.

Pure functions over a memory (:class:`~memstack.tiers.shared.store.SharedMemory`, which imports this
module): a snapshot is checked whole (:func:`pairs_of`) before anything is written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from ...foundation.errors import InvalidValue
from ...foundation.limits import short_repr
from . import reserved as rs
from .serialize import check_key, check_value

__all__ = ["pairs_of", "to_dict", "to_json", "write_into"]


class _Memory(Protocol):
    """What a snapshot reads and writes of a shared memory."""

    @property
    def results(self) -> Any: ...

    @property
    def messages(self) -> Any: ...

    @property
    def session_id(self) -> Any: ...

    @property
    def data(self) -> Any: ...

    def keys(self) -> list[str]: ...

    def get(self, *keys: str) -> Any: ...

    def reset(self) -> Any: ...

    def merge(
        self, mapping: Mapping[str, Any], *, notify: bool = True, subject: str | None = None
    ) -> Any: ...


def to_dict(memory: _Memory) -> dict[str, Any]:
    """The snapshot of ``memory`` (one read per reserved key plus one for the custom keys)."""
    keys = memory.keys()
    custom = memory.get(*keys) if len(keys) > 1 else ({keys[0]: memory.get(keys[0])} if keys else {})
    out: dict[str, Any] = {
        "data": memory.data.to_dict(),
        "results": memory.results,
        "messages": memory.messages,
        "session_id": memory.session_id,
        "custom": custom,
    }
    if out["session_id"] is None:
        del out["session_id"]
    return out


def to_json(memory: _Memory) -> str:
    """:func:`to_dict` as JSON."""
    return json.dumps(to_dict(memory), ensure_ascii=False)


def pairs_of(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Every key a memory holding ``snapshot`` holds, with its value, all checked.

    Raises:
        InvalidValue: ``snapshot`` is not a mapping, or ``custom`` is not one, or names a reserved key.
        InvalidKey, InvalidInput: as :meth:`SharedMemory.merge`.
    """
    if not isinstance(snapshot, Mapping):
        raise InvalidValue(f"snapshot {short_repr(snapshot)}: must be a mapping")
    custom = snapshot.get("custom") or {}
    if not isinstance(custom, Mapping):
        raise InvalidValue(f"snapshot custom {short_repr(custom)}: must be a mapping")
    pairs: dict[str, Any] = {
        "data": snapshot.get("data") or {},
        "results": snapshot.get("results") or [],
        "messages": snapshot.get("messages") or [],
        "session_id": snapshot.get("session_id"),
    }
    clash = [k for k in custom if k in pairs or k == "cache"]
    if clash:
        raise InvalidValue(f"snapshot custom keys {short_repr(clash)}: reserved names cannot be custom keys")
    pairs.update(custom)
    for key, value in pairs.items():
        check_key(key)
        if key in rs.RESERVED:
            rs.normalise(key, value)
        else:
            check_value(value)
    return pairs


def write_into(memory: _Memory, pairs: Mapping[str, Any], *, notify: bool) -> None:
    """Make ``memory`` hold exactly ``pairs`` (checked by :func:`pairs_of`): a reset, then one
    batch (custom keys notify, as the seed's ``[]=`` does, unless ``notify`` is False)."""
    memory.reset()
    memory.merge(pairs, notify=notify)
