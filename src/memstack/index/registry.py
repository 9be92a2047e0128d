"""The process's one registry of in-process indexes (mirrors), bounded in count and in memory.

Every tier keeps its per-scope indexes here, under a key naming the tier, the engine's identity and
the scope (``("longterm", identity, scope)``, ``("langgraph", identity, namespace, profile)``...),
so one process shares one index per scope between every instance on the same data. The least
recently used are dropped first when the registry holds more than :data:`MAX_MIRRORS` or their
estimated memory (:meth:`~memstack.index.mirror.Mirror.approx_bytes`) passes :func:`memory_bound`
(``MEMSTACK_INDEX_MEMORY_MB``, default 1024). A dropped index is rebuilt from the engine when asked
for again; a caller still holding it keeps a working copy.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Final, TypeVar

from ..foundation.errors import InvalidConfiguration
from .mirror import Mirror

__all__ = ["MAX_MIRRORS", "clear", "drop", "held", "memory_bound", "mirror", "mirrors"]

MAX_MIRRORS: Final = 4096
"""Indexes one process keeps at most."""
CHECK_EVERY: Final = 1024
"""Lookups between two checks of the memory bound (each sums every index's estimate; a new index
is checked at once)."""

M = TypeVar("M", bound=Mirror)
_mirrors: OrderedDict[Hashable, Mirror] = OrderedDict()
_lock = threading.Lock()
_lookups = 0


def memory_bound() -> int:
    """The bound in bytes: ``MEMSTACK_INDEX_MEMORY_MB`` megabytes (default 1024).

    Raises:
        InvalidConfiguration: the variable is not a positive integer.
    """
    raw = os.environ.get("MEMSTACK_INDEX_MEMORY_MB", "1024")
    if not raw.isdigit() or int(raw) < 1:
        raise InvalidConfiguration(f"MEMSTACK_INDEX_MEMORY_MB={raw!r}: must be a positive integer")
    return int(raw) << 20


def mirror(key: Hashable, make: Callable[[], M], kind: type[M]) -> M:
    """The process's index under ``key`` (built by ``make`` on first use, or when the one held is
    of another kind); marks it most recently used."""
    global _lookups
    with _lock:
        found = _mirrors.get(key)
        created = not isinstance(found, kind)
        if created:
            found = _mirrors[key] = make()
        else:
            _mirrors.move_to_end(key)
        _lookups += 1
        if created or _lookups % CHECK_EVERY == 0:
            _shrink(key)
        assert isinstance(found, kind)
        return found


def _shrink(keep: Hashable) -> None:
    """Drop least recently used indexes (never ``keep``) past the count or memory bound."""
    while len(_mirrors) > MAX_MIRRORS:
        oldest = next(iter(_mirrors))
        if oldest == keep:
            break
        del _mirrors[oldest]
    bound = memory_bound()
    total = sum(m.approx_bytes() for m in _mirrors.values())
    for key in list(_mirrors):
        if total <= bound:
            break
        if key == keep:
            continue
        total -= _mirrors.pop(key).approx_bytes()


def held() -> dict[Hashable, int]:
    """Every index held, by key, with its estimated bytes (least recently used first)."""
    with _lock:
        return {key: m.approx_bytes() for key, m in _mirrors.items()}


def mirrors(kind: str) -> list[Mirror]:
    """Every index held whose key starts with ``kind`` (for metrics: read them under their lock)."""
    with _lock:
        return [m for key, m in _mirrors.items() if isinstance(key, tuple) and key and key[0] == kind]


def drop(key: Hashable) -> bool:
    """Drop the index under ``key`` (the next lookup builds a new one); True if one was held."""
    with _lock:
        return _mirrors.pop(key, None) is not None


def clear(kind: str | None = None) -> None:
    """Drop every index (those whose key starts with ``kind``): tests simulate a new process."""
    with _lock:
        for key in list(_mirrors):
            if kind is None or (isinstance(key, tuple) and key and key[0] == kind):
                del _mirrors[key]
