"""The process's one registry of in-process indexes (mirrors), bounded in count and in memory.

Every tier keeps its per-scope indexes here, under a key naming the tier, the engine's identity and
the scope (``("longterm", identity, scope)``, ``("langgraph", identity, namespace, profile)``...),
so one process shares one index per scope between every instance on the same data. The least
recently used are dropped first when the registry holds more than :data:`MAX_MIRRORS` or their
estimated memory (:meth:`~memstack.index.mirror.Mirror.approx_bytes`) passes :func:`memory_bound`
(``MEMSTACK_INDEX_MEMORY_MB``, default an eighth of the machine's memory, 256-4096 MB). A dropped
index is rebuilt from the engine when asked for again; a caller still holding it keeps a working copy.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Final, NamedTuple, TypeVar

from ..foundation.errors import InvalidConfiguration
from .mirror import Mirror

__all__ = [
    "MAX_MIRRORS",
    "CacheStats",
    "clear",
    "default_memory_mb",
    "drop",
    "held",
    "memory_bound",
    "mirror",
    "mirrors",
    "stats",
]

MAX_MIRRORS: Final = 4096
"""Indexes one process keeps at most."""
CHECK_EVERY: Final = 1024
"""Lookups between two checks of the memory bound (each sums every index's estimate; a new index
is checked at once)."""

M = TypeVar("M", bound=Mirror)
_mirrors: OrderedDict[Hashable, Mirror] = OrderedDict()
_lock = threading.Lock()
_lookups = 0
_evictions = 0
# Each index's bytes as last measured, and their sum: a new index is checked against the bound
# without measuring every other one (with thousands held, that made each new scope's first search
# cost milliseconds). The index looked up last is measured again at the next lookup (its caller
# has filled or grown it since); every CHECK_EVERY lookups all are measured again.
_sizes: dict[Hashable, int] = {}
_total = 0
_last: Hashable | None = None


class CacheStats(NamedTuple):
    """What the process's indexes hold: ``bytes`` (estimated), ``entries`` (indexes held),
    ``evictions`` (dropped for the count or memory bound since the start), ``bound`` (bytes)."""

    bytes: int
    entries: int
    evictions: int
    bound: int


def default_memory_mb() -> int:
    """The bound when ``MEMSTACK_INDEX_MEMORY_MB`` is unset: an eighth of the machine's memory,
    from 256 MB to 4096 MB (1024 MB where the machine's memory cannot be read). A server holds
    the indexes of its busy scopes; an eighth leaves the rest to the engine and other processes."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return 1024
    return min(4096, max(256, (total >> 20) // 8))


def memory_bound() -> int:
    """The bound in bytes: ``MEMSTACK_INDEX_MEMORY_MB`` megabytes (default: :func:`default_memory_mb`).

    Raises:
        InvalidConfiguration: the variable is not a positive integer.
    """
    raw = os.environ.get("MEMSTACK_INDEX_MEMORY_MB") or str(default_memory_mb())
    if not raw.isdigit() or int(raw) < 1:
        raise InvalidConfiguration(f"MEMSTACK_INDEX_MEMORY_MB={raw!r}: must be a positive integer")
    return int(raw) << 20


def mirror(key: Hashable, make: Callable[[], M], kind: type[M]) -> M:
    """The process's index under ``key`` (built by ``make`` on first use, or when the one held is
    of another kind); marks it most recently used."""
    global _lookups, _last
    with _lock:
        if _last is not None:
            _measure(_last)
        found = _mirrors.get(key)
        created = not isinstance(found, kind)
        if created:
            _forget(key)
            found = _mirrors[key] = make()
            _measure(key)
        else:
            _mirrors.move_to_end(key)
        _last = key
        _lookups += 1
        full = _lookups % CHECK_EVERY == 0
        if created or full:
            _shrink(key, full)
        assert isinstance(found, kind)
        return found


def _measure(key: Hashable) -> None:
    global _total
    found = _mirrors.get(key)
    if found is not None:
        size = found.approx_bytes()
        _total += size - _sizes.get(key, 0)
        _sizes[key] = size


def _forget(key: Hashable) -> Mirror | None:
    global _total, _last
    _total -= _sizes.pop(key, 0)
    if _last == key:
        _last = None
    return _mirrors.pop(key, None)


def _shrink(keep: Hashable, full: bool) -> None:
    """Drop least recently used indexes (never ``keep``) past the count or memory bound
    (``full``: measure every index first)."""
    global _evictions, _total
    while len(_mirrors) > MAX_MIRRORS:
        oldest = next(iter(_mirrors))
        if oldest == keep:
            break
        _forget(oldest)
        _evictions += 1
    if full:
        _sizes.clear()
        _sizes.update((k, m.approx_bytes()) for k, m in _mirrors.items())
        _total = sum(_sizes.values())
    bound = memory_bound()
    if _total <= bound:
        return  # listing the keys hashes every one (tuples cache no hash): ~0.3 ms at 4,096 held
    for key in list(_mirrors):
        if _total <= bound:
            break
        if key == keep:
            continue
        _forget(key)
        _evictions += 1


def stats() -> CacheStats:
    """The bytes, count and evictions of the indexes held now (for doctor, /v1/info, /metrics).

    Raises:
        InvalidConfiguration: ``MEMSTACK_INDEX_MEMORY_MB`` is not a positive integer.
    """
    with _lock:
        return CacheStats(
            sum(m.approx_bytes() for m in _mirrors.values()), len(_mirrors), _evictions, memory_bound()
        )


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
        return _forget(key) is not None


def _forget_all_in_child() -> None:
    # After a fork, in the child: a parent thread caught inside a lookup, or inside a search holding
    # an index's own lock, does not run here to release it, so the child's first lookup (or search
    # of that scope) would wait for ever. The child starts with no index and a new lock; what it
    # asks for is built again from the engine, as in a new process.
    global _lock, _total, _last
    _lock = threading.Lock()
    _mirrors.clear()
    _sizes.clear()
    _total, _last = 0, None


os.register_at_fork(after_in_child=_forget_all_in_child)


def clear(kind: str | None = None) -> None:
    """Drop every index (those whose key starts with ``kind``): tests simulate a new process."""
    with _lock:
        for key in list(_mirrors):
            if kind is None or (isinstance(key, tuple) and key and key[0] == kind):
                _forget(key)
