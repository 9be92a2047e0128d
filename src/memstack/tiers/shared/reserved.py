"""The reserved keys of a shared memory and how values written to them are normalised (pure).

| key | holds | initial | on write |
|---|---|---|---|
| ``data`` | JSON object (``StateProxy`` view) | ``{}`` | a mapping with str keys, replaced |
| ``results`` | list of results | ``[]`` | None → ``[]``; a list/tuple → its items; one item → ``[item]`` |
| ``messages`` | list of messages | ``[]`` | each a dict (or an object with ``to_dict()``) |
| ``session_id`` | str or None | None | a str or None |
| ``cache`` | the :class:`SemanticCache` | built | never: reassigning raises |

A result or message is stored as a plain JSON value; an object with a ``to_dict()`` method is
stored as what that method returns, and reads back as that dict. Messages are conventionally
``{"role": ..., "content": ...}``; results ``{"output": [...], "tool_calls": [...], ...}``.
Reserved writes never notify subscribers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ...foundation.errors import InvalidInput, InvalidKey, InvalidValue
from ...foundation.limits import MAX_VALUE_BYTES, check_text, short_repr
from .serialize import check_value

__all__ = [
    "CACHE_REASSIGN",
    "DEFAULTS",
    "RESERVED",
    "STORED_RESERVED",
    "default_of",
    "normalise",
    "reject_cache_write",
    "reject_reserved_delete",
]

RESERVED: Final = ("data", "results", "messages", "session_id", "cache")
STORED_RESERVED: Final = ("data", "results", "messages", "session_id")
DEFAULTS: Final[dict[str, Callable[[], Any]]] = {
    "data": dict,
    "results": list,
    "messages": list,
    "session_id": lambda: None,
}
CACHE_REASSIGN: Final = "Cannot reassign cache - it is initialized automatically"


def default_of(key: str) -> Any:
    """A fresh initial value of stored reserved ``key``."""
    return DEFAULTS[key]()


def _plain(item: object) -> object:
    to_dict = getattr(item, "to_dict", None)
    return to_dict() if callable(to_dict) and not isinstance(item, Mapping) else item


def _data(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidValue(f"data {short_repr(value)}: must be a mapping with str keys")
    out: dict[str, Any] = check_value(dict(value), "data")
    return out


def _results(value: object) -> list[Any]:
    if value is None:
        return []
    items = list(value) if isinstance(value, list | tuple) else [value]
    out: list[Any] = check_value([_plain(i) for i in items], "results")
    return out


def message(item: object) -> dict[str, Any]:
    """One message as a stored dict.

    Raises:
        InvalidValue: not a dict nor an object with ``to_dict()``, or not JSON.
    """
    plain = _plain(item)
    if not isinstance(plain, Mapping):
        raise InvalidValue(f"Invalid message: must be a dict or have to_dict(), got {short_repr(item)}")
    out: dict[str, Any] = check_value(dict(plain), "message")
    return out


def _messages(value: object) -> list[dict[str, Any]]:
    if value is None:
        return []
    items = list(value) if isinstance(value, list | tuple) else [value]
    return [message(i) for i in items]


def _session_id(value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InvalidValue(f"session_id {short_repr(value)}: must be a str or None")
    return None if value is None else check_text(value, "session_id", max_bytes=MAX_VALUE_BYTES)


_NORMALISERS: Final[dict[str, Callable[[object], Any]]] = {
    "data": _data,
    "results": _results,
    "messages": _messages,
    "session_id": _session_id,
}


def normalise(key: str, value: object) -> Any:
    """The stored form of ``value`` written to reserved ``key``.

    Raises:
        InvalidInput: ``key`` is ``cache`` (reassigning the cache).
        InvalidValue: the value does not fit the key (see the table above).
    """
    if key == "cache":
        reject_cache_write()
    return _NORMALISERS[key](value)


def reject_cache_write() -> None:
    """Raises InvalidInput: the cache is never reassigned."""
    raise InvalidInput(CACHE_REASSIGN)


def reject_reserved_delete(key: str) -> None:
    """Raises InvalidKey: reserved keys are never deleted."""
    raise InvalidKey(f"Cannot delete reserved key: {key}")
