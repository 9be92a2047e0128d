"""Serialisation of a shared memory: ``to_dict`` / ``to_json`` / ``from_dict``.

The snapshot is ``{"data": {...}, "results": [...], "messages": [...], "session_id": ...,
"custom": {key: value}}``; ``session_id`` is left out when None, the other four are always there.
Results and messages are the plain JSON values stored (see :mod:`memstack.shared.reserved`). The
cache is never serialised; ``network_name`` and ``enable_cache`` are not restored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..engines import Engine
from ..errors import InvalidValue
from ..limits import short_repr
from . import reserved as rs
from .serialize import check_key, check_value
from .store import SharedMemory

__all__ = ["from_dict", "restore", "to_dict", "to_json"]


def to_dict(memory: SharedMemory) -> dict[str, Any]:
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


def to_json(memory: SharedMemory) -> str:
    """:func:`to_dict` as JSON."""
    return json.dumps(to_dict(memory), ensure_ascii=False)


def from_dict(engine: Engine, name: str, snapshot: Mapping[str, Any], **options: Any) -> SharedMemory:
    """Open the shared memory ``name`` and replace what it holds with ``snapshot``.

    Everything is validated before anything is written; the content is then written in one
    batch after a :meth:`~SharedMemory.reset` (custom keys notify, as the seed's ``[]=`` does).

    Raises:
        InvalidValue: ``snapshot`` is not a mapping, or ``custom`` is not one.
        InvalidKey, InvalidInput: as :meth:`SharedMemory.merge`.
    """
    return restore(engine, name, snapshot, notify=True, **options)


def restore(
    engine: Engine, name: str, snapshot: Mapping[str, Any], *, notify: bool, **options: Any
) -> SharedMemory:
    """:func:`from_dict`, with custom keys written quietly when ``notify`` is False.

    Raises:
        InvalidValue: ``snapshot`` is not a mapping, or ``custom`` is not one.
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
    _validate(pairs)
    memory = SharedMemory(engine, name, **options)
    try:
        memory.reset()
        memory.merge(pairs, notify=notify)
    except BaseException:
        memory.close()
        raise
    return memory


def _validate(pairs: Mapping[str, Any]) -> None:
    for key, value in pairs.items():
        check_key(key)
        if key in rs.RESERVED:
            rs.normalise(key, value)
        else:
            check_value(value)
