"""The in-process engine (``memory://``): thread-safe dicts under one lock, lost at exit.

A product feature for tests and single-process demos, and the reference the conformance suite
holds the other engines to. Atomic batches run under the lock with an undo log, so a failing
command leaves nothing of its batch behind.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..clock import Clock
from ..errors import EngineClosed
from . import _semantics as sem
from ._dispatch import Dispatcher
from .base import GUARDS, BatchResult, Engine, Number, Op, Subscription, WrongType

__all__ = ["MemoryEngine"]

Undo = Callable[[], None]

# Each memory engine holds its own data, so caches must never confuse two of them.
_INSTANCES = itertools.count(1)


class _ZSet:
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


class _Entry:
    __slots__ = ("expire", "kind", "value")

    def __init__(self, kind: str, value: Any, expire: int | None = None) -> None:
        self.kind = kind
        self.value = value
        self.expire = expire


_FACTORY: dict[str, Callable[[], Any]] = {"hash": dict, "set": set, "list": list, "zset": _ZSet}


class MemoryEngine(Engine):
    """``memory://``: everything in this process.

    Args:
        url: kept for display.
        clock: time source for TTLs.
        sweep_interval: seconds between background sweeps of expired keys (None: lazy only).
        sweep_limit: most keys one sweep removes (keeps the lock hold short).
    """

    name = "memory"

    def __init__(
        self,
        url: str = "memory://",
        clock: Clock | None = None,
        *,
        sweep_interval: float | None = 1.0,
        sweep_limit: int = 1000,
    ) -> None:
        super().__init__(url, clock)
        self._identity = f"{url}#{next(_INSTANCES)}"
        self._data: dict[str, _Entry] = {}
        self._expiries: list[tuple[int, str]] = []  # heap; stale items are skipped lazily
        self._lock = threading.RLock()
        self._dispatch = Dispatcher("memory")
        self._closed = threading.Event()
        self._sweep_limit = sweep_limit
        self._sweeper: threading.Thread | None = None
        if sweep_interval is not None:
            self._sweeper = threading.Thread(
                target=self._sweep_loop, args=(sweep_interval,), name="memstack-memory-sweep", daemon=True
            )
            self._sweeper.start()

    @property
    def identity(self) -> str:
        return self._identity

    # -- engine API --------------------------------------------------------------------------
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        if self._closed.is_set():
            raise EngineClosed(f"{self.url}: engine is closed")
        published: list[tuple[str, str]] = []
        with self._lock:
            now = self.now_ms()
            undo: list[Undo] = []
            results: list[Any] = []
            try:
                for name, args in ops:
                    if name == "publish":
                        published.append((args[0], args[1]))
                        results.append(None)
                        continue
                    result = getattr(self, "_op_" + name)(now, undo, *args)
                    results.append(result)
                    if name in GUARDS and not result:
                        return BatchResult(False, results)
            except BaseException:
                for step in reversed(undo):
                    step()
                raise
        for channel, message in published:
            self._dispatch.deliver(channel, message)
        return BatchResult(True, results)

    def scan(self, prefix: str) -> Iterator[str]:
        with self._lock:
            now = self.now_ms()
            keys = [k for k, e in self._data.items() if k.startswith(prefix) and not _dead(e, now)]
        return iter(keys)

    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        return self._dispatch.subscribe(channel, callback)

    def flush(self) -> None:
        with self._lock:
            self._data.clear()
            self._expiries.clear()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._dispatch.close()
        if self._sweeper is not None and self._sweeper is not threading.current_thread():
            self._sweeper.join(timeout=5)

    def sweep(self) -> int:
        """Remove up to ``sweep_limit`` expired keys now; returns how many went."""
        removed = 0
        with self._lock:
            now = self.now_ms()
            while self._expiries and self._expiries[0][0] <= now and removed < self._sweep_limit:
                _, key = heapq.heappop(self._expiries)
                entry = self._data.get(key)
                if entry is not None and entry.expire is not None and entry.expire <= now:
                    del self._data[key]
                    removed += 1
        return removed

    def _sweep_loop(self, interval: float) -> None:
        while not self._closed.wait(interval):
            self.sweep()

    # -- helpers -----------------------------------------------------------------------------
    def _live(self, key: str, now: int) -> _Entry | None:
        entry = self._data.get(key)
        if entry is not None and _dead(entry, now):
            del self._data[key]
            return None
        return entry

    def _typed(self, key: str, kind: str, now: int) -> _Entry | None:
        entry = self._live(key, now)
        if entry is not None and entry.kind != kind:
            raise WrongType(f"key {key!r} holds a {entry.kind}, not a {kind}")
        return entry

    def _container(self, key: str, kind: str, now: int, undo: list[Undo]) -> _Entry:
        """The live entry of ``kind`` at ``key``, created empty (with an undo) when absent."""
        entry = self._typed(key, kind, now)
        if entry is None:
            entry = _Entry(kind, _FACTORY[kind]())
            self._data[key] = entry
            undo.append(lambda: self._restore(key, None))
        return entry

    def _drop_if_empty(self, key: str, entry: _Entry, undo: list[Undo]) -> None:
        if not len(entry.value):
            del self._data[key]
            undo.append(lambda: self._data.__setitem__(key, entry))

    def _replace(self, key: str, entry: _Entry | None, undo: list[Undo]) -> None:
        old = self._data.get(key)
        if entry is None:
            self._data.pop(key, None)
        else:
            self._data[key] = entry
            if entry.expire is not None:
                heapq.heappush(self._expiries, (entry.expire, key))
        undo.append(lambda: self._restore(key, old))

    def _restore(self, key: str, old: _Entry | None) -> None:
        if old is None:
            self._data.pop(key, None)
        else:
            self._data[key] = old

    def _set_expire(self, key: str, entry: _Entry, expire: int | None, undo: list[Undo]) -> None:
        old = entry.expire
        entry.expire = expire
        if expire is not None:
            heapq.heappush(self._expiries, (expire, key))
        undo.append(lambda: setattr(entry, "expire", old))

    # -- keys --------------------------------------------------------------------------------
    def _op_exists(self, now: int, undo: list[Undo], key: str) -> bool:
        return self._live(key, now) is not None

    def _op_delete(self, now: int, undo: list[Undo], *keys: str) -> int:
        count = 0
        for key in dict.fromkeys(keys):
            if self._live(key, now) is not None:
                self._replace(key, None, undo)
                count += 1
        return count

    def _op_pexpire(self, now: int, undo: list[Undo], key: str, ms: int) -> bool:
        entry = self._live(key, now)
        if entry is None:
            return False
        if ms <= 0:
            self._replace(key, None, undo)
        else:
            self._set_expire(key, entry, now + ms, undo)
        return True

    def _op_persist(self, now: int, undo: list[Undo], key: str) -> bool:
        entry = self._live(key, now)
        if entry is None or entry.expire is None:
            return False
        self._set_expire(key, entry, None, undo)
        return True

    def _op_pttl(self, now: int, undo: list[Undo], key: str) -> int:
        entry = self._live(key, now)
        if entry is None:
            return -2
        return -1 if entry.expire is None else entry.expire - now

    def _op_copy_ttl(self, now: int, undo: list[Undo], src: str, *dsts: str) -> int:
        source = self._live(src, now)
        if source is None or source.expire is None:
            return 0
        copied = 0
        for dst in dsts:
            target = self._live(dst, now)
            if target is not None:
                self._set_expire(dst, target, source.expire, undo)
                copied += 1
        return copied

    # -- strings -----------------------------------------------------------------------------
    def _op_get(self, now: int, undo: list[Undo], key: str) -> str | None:
        entry = self._typed(key, "string", now)
        return None if entry is None else str(entry.value)

    def _op_mget(self, now: int, undo: list[Undo], *keys: str) -> list[str | None]:
        out: list[str | None] = []
        for key in keys:
            entry = self._live(key, now)
            out.append(entry.value if entry is not None and entry.kind == "string" else None)
        return out

    def _op_set(
        self,
        now: int,
        undo: list[Undo],
        key: str,
        value: str,
        px: int | None,
        nx: bool,
        xx: bool,
        keepttl: bool,
    ) -> bool:
        old = self._live(key, now)
        if (nx and old is not None) or (xx and old is None):
            return False
        if px is not None:
            expire: int | None = now + px
        elif keepttl and old is not None:
            expire = old.expire
        else:
            expire = None
        self._replace(key, _Entry("string", value, expire), undo)
        return True

    def _op_incr(self, now: int, undo: list[Undo], key: str, amount: Number) -> Number:
        entry = self._typed(key, "string", now)
        total = sem.add_numbers(sem.parse_number(None if entry is None else entry.value, key), amount, key)
        self._replace(key, _Entry("string", sem.format_number(total), entry.expire if entry else None), undo)
        return total

    # -- hashes ------------------------------------------------------------------------------
    def _op_hset(self, now: int, undo: list[Undo], key: str, mapping: dict[str, str]) -> int:
        if not mapping:
            return 0
        entry = self._container(key, "hash", now, undo)
        fields: dict[str, str] = entry.value
        new = 0
        for field, value in mapping.items():
            old = fields.get(field)
            new += old is None
            fields[field] = value
            undo.append(_hash_undo(fields, field, old))
        return new

    def _op_hget(self, now: int, undo: list[Undo], key: str, field: str) -> str | None:
        entry = self._typed(key, "hash", now)
        return None if entry is None else entry.value.get(field)

    def _op_hmget(self, now: int, undo: list[Undo], key: str, *fields: str) -> list[str | None]:
        entry = self._typed(key, "hash", now)
        values: dict[str, str] = {} if entry is None else entry.value
        return [values.get(f) for f in fields]

    def _op_hgetall(self, now: int, undo: list[Undo], key: str) -> dict[str, str]:
        entry = self._typed(key, "hash", now)
        return {} if entry is None else dict(entry.value)

    def _op_hkeys(self, now: int, undo: list[Undo], key: str) -> list[str]:
        entry = self._typed(key, "hash", now)
        return [] if entry is None else list(entry.value)

    def _op_hlen(self, now: int, undo: list[Undo], key: str) -> int:
        entry = self._typed(key, "hash", now)
        return 0 if entry is None else len(entry.value)

    def _op_hdel(self, now: int, undo: list[Undo], key: str, *fields: str) -> int:
        entry = self._typed(key, "hash", now)
        if entry is None:
            return 0
        values: dict[str, str] = entry.value
        count = 0
        for field in dict.fromkeys(fields):
            old = values.pop(field, None)
            if old is not None:
                count += 1
                undo.append(_hash_undo(values, field, old))
        self._drop_if_empty(key, entry, undo)
        return count

    def _op_hincr(self, now: int, undo: list[Undo], key: str, field: str, amount: Number) -> Number:
        entry = self._typed(key, "hash", now)
        current = None if entry is None else entry.value.get(field)
        total = sem.add_numbers(sem.parse_number(current, f"{key}.{field}"), amount, f"{key}.{field}")
        self._op_hset(now, undo, key, {field: sem.format_number(total)})
        return total

    # -- sets --------------------------------------------------------------------------------
    def _op_sadd(self, now: int, undo: list[Undo], key: str, *members: str) -> int:
        if not members:
            return 0
        entry = self._container(key, "set", now, undo)
        values: set[str] = entry.value
        added = [m for m in dict.fromkeys(members) if m not in values]
        values.update(added)
        undo.append(lambda: values.difference_update(added))
        return len(added)

    def _op_srem(self, now: int, undo: list[Undo], key: str, *members: str) -> int:
        entry = self._typed(key, "set", now)
        if entry is None:
            return 0
        values: set[str] = entry.value
        removed = [m for m in dict.fromkeys(members) if m in values]
        values.difference_update(removed)
        undo.append(lambda: values.update(removed))
        self._drop_if_empty(key, entry, undo)
        return len(removed)

    def _op_smembers(self, now: int, undo: list[Undo], key: str) -> set[str]:
        entry = self._typed(key, "set", now)
        return set() if entry is None else set(entry.value)

    def _op_sismember(self, now: int, undo: list[Undo], key: str, member: str) -> bool:
        entry = self._typed(key, "set", now)
        return entry is not None and member in entry.value

    def _op_scard(self, now: int, undo: list[Undo], key: str) -> int:
        entry = self._typed(key, "set", now)
        return 0 if entry is None else len(entry.value)

    # -- lists -------------------------------------------------------------------------------
    def _op_rpush(self, now: int, undo: list[Undo], key: str, *values: str) -> int:
        if not values:  # pushing nothing must not leave an empty list behind
            return self._op_llen(now, undo, key)
        entry = self._container(key, "list", now, undo)
        items: list[str] = entry.value
        items.extend(values)
        count = len(values)
        undo.append(lambda: items.__delitem__(slice(len(items) - count, None)))
        return len(items)

    def _op_lpush(self, now: int, undo: list[Undo], key: str, *values: str) -> int:
        if not values:  # pushing nothing must not leave an empty list behind
            return self._op_llen(now, undo, key)
        entry = self._container(key, "list", now, undo)
        items: list[str] = entry.value
        items[:0] = reversed(values)
        count = len(values)
        undo.append(lambda: items.__delitem__(slice(0, count)))
        return len(items)

    def _op_lrange(self, now: int, undo: list[Undo], key: str, start: int, stop: int) -> list[str]:
        entry = self._typed(key, "list", now)
        if entry is None:
            return []
        lo, hi = sem.slice_bounds(start, stop, len(entry.value))
        return list(entry.value[lo:hi])

    def _op_llen(self, now: int, undo: list[Undo], key: str) -> int:
        entry = self._typed(key, "list", now)
        return 0 if entry is None else len(entry.value)

    def _op_lindex(self, now: int, undo: list[Undo], key: str, index: int) -> str | None:
        entry = self._typed(key, "list", now)
        if entry is None:
            return None
        items: list[str] = entry.value
        return items[index] if -len(items) <= index < len(items) else None

    def _op_ltrim(self, now: int, undo: list[Undo], key: str, start: int, stop: int) -> None:
        entry = self._typed(key, "list", now)
        if entry is None:
            return
        items: list[str] = entry.value
        lo, hi = sem.slice_bounds(start, stop, len(items))
        head, tail = items[:lo], items[hi:]
        del items[hi:]
        del items[:lo]

        def restore() -> None:
            items[:0] = head
            items.extend(tail)

        undo.append(restore)
        self._drop_if_empty(key, entry, undo)

    def _op_lpop(self, now: int, undo: list[Undo], key: str) -> str | None:
        entry = self._typed(key, "list", now)
        if entry is None:
            return None
        items: list[str] = entry.value
        value = items.pop(0)
        undo.append(lambda: items.insert(0, value))
        self._drop_if_empty(key, entry, undo)
        return value

    def _op_rpop(self, now: int, undo: list[Undo], key: str) -> str | None:
        entry = self._typed(key, "list", now)
        if entry is None:
            return None
        items: list[str] = entry.value
        value = items.pop()
        undo.append(lambda: items.append(value))
        self._drop_if_empty(key, entry, undo)
        return value

    # -- sorted sets -------------------------------------------------------------------------
    def _op_zadd(self, now: int, undo: list[Undo], key: str, mapping: dict[str, float]) -> int:
        if not mapping:
            return 0
        entry = self._container(key, "zset", now, undo)
        zset: _ZSet = entry.value
        new = 0
        for member, score in mapping.items():
            old = zset.add(member, score)
            new += old is None
            undo.append(_zset_undo(zset, member, old))
        return new

    def _op_zrem(self, now: int, undo: list[Undo], key: str, *members: str) -> int:
        entry = self._typed(key, "zset", now)
        if entry is None:
            return 0
        zset: _ZSet = entry.value
        count = 0
        for member in dict.fromkeys(members):
            old = zset.remove(member)
            if old is not None:
                count += 1
                undo.append(_zset_undo(zset, member, old))
        self._drop_if_empty(key, entry, undo)
        return count

    def _op_zscore(self, now: int, undo: list[Undo], key: str, member: str) -> float | None:
        entry = self._typed(key, "zset", now)
        return None if entry is None else entry.value.scores.get(member)

    def _op_zcard(self, now: int, undo: list[Undo], key: str) -> int:
        entry = self._typed(key, "zset", now)
        return 0 if entry is None else len(entry.value)

    def _op_zrange(
        self, now: int, undo: list[Undo], key: str, start: int, stop: int, desc: bool
    ) -> list[tuple[str, float]]:
        entry = self._typed(key, "zset", now)
        if entry is None:
            return []
        order: list[tuple[float, str]] = entry.value.order
        lo, hi = sem.slice_bounds(start, stop, len(order))
        if desc:
            n = len(order)
            picked = order[n - hi : n - lo][::-1]
        else:
            picked = order[lo:hi]
        return [(m, s) for s, m in picked]

    def _op_zrangebyscore(
        self,
        now: int,
        undo: list[Undo],
        key: str,
        low: float,
        high: float,
        desc: bool,
        offset: int,
        count: int | None,
    ) -> list[tuple[str, float]]:
        entry = self._typed(key, "zset", now)
        if entry is None or low > high or offset < 0:  # a negative offset selects nothing, as Redis
            return []
        order: list[tuple[float, str]] = entry.value.order
        lo = bisect.bisect_left(order, low, key=lambda item: item[0])
        hi = bisect.bisect_right(order, high, key=lambda item: item[0])
        picked = order[lo:hi]
        if desc:
            picked = picked[::-1]
        end = None if count is None or count < 0 else offset + count
        return [(m, s) for s, m in picked[offset:end]]

    # -- guards ------------------------------------------------------------------------------
    def _op_require_exists(self, now: int, undo: list[Undo], key: str) -> bool:
        return self._live(key, now) is not None

    def _op_require_missing(self, now: int, undo: list[Undo], key: str) -> bool:
        return self._live(key, now) is None

    def _op_require_equal(self, now: int, undo: list[Undo], key: str, value: str | None) -> bool:
        entry = self._live(key, now)
        if entry is None:
            return value is None
        return entry.kind == "string" and entry.value == value


def _dead(entry: _Entry, now: int) -> bool:
    return entry.expire is not None and entry.expire <= now


def _hash_undo(fields: dict[str, str], field: str, old: str | None) -> Undo:
    def undo() -> None:
        if old is None:
            fields.pop(field, None)
        else:
            fields[field] = old

    return undo


def _zset_undo(zset: _ZSet, member: str, old: float | None) -> Undo:
    def undo() -> None:
        if old is None:
            zset.remove(member)
        else:
            zset.add(member, old)

    return undo
