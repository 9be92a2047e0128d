"""The storage seam: a narrow, Redis-shaped vocabulary every engine implements.

Tiers talk to storage only through :class:`Engine`. An engine implements one method,
:meth:`Engine.execute`, which applies a list of :data:`Op` atomically; every command method
(``get``, ``hset``, ``zadd``, ...) is written once in :class:`Commands` and shared by engines
(run at once) and batches (queued). Scans, subscriptions and ``close`` are the only other
engine methods.

Semantics every engine follows (the conformance suite in ``tests/engines/`` pins them):

* Keys, values, hash fields, set and sorted-set members are ``str``; scores are ``float``.
* A key holds one type (string, hash, set, list, zset). Using a command of another type on it
  raises :class:`WrongType`. A hash, set, list or zset that becomes empty no longer exists.
* Time comes from the engine's clock (milliseconds, ``int(clock.now() * 1000)``). A key with
  expire-at ``E`` is live while ``now < E``; an expired key behaves as absent everywhere and is
  purged lazily (and by a bounded background sweep where the engine has one).
* ``set`` without ``keepttl`` clears the TTL, like Redis; other writes keep it.
* Guards (``require_exists``, ``require_missing``, ``require_equal``) must come before the first
  write of a batch. If any guard fails, nothing of the batch is applied and the result has
  ``applied=False``.
* ``publish`` inside a batch is delivered only if the batch applied, after it committed.
* In a clustered engine every key of one ``execute`` must hash to one slot (use
  :meth:`Engine.tag`), else :class:`~memstack.errors.CrossSlot`.
"""

from __future__ import annotations

import abc
import builtins
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from ..clock import Clock, SystemClock
from ..errors import InvalidInput, InvalidValue, MemstackError, WrongType

__all__ = [
    "GUARDS",
    "OPS",
    "READS",
    "Batch",
    "BatchResult",
    "Commands",
    "Engine",
    "Number",
    "Op",
    "Subscription",
    "WrongType",
]

Number = int | float
Op = tuple[str, tuple[Any, ...]]
"""One command: its name (a key of :data:`OPS`) and its positional arguments."""

# Commands that only read; a batch of reads needs no write lock.
READS: Final = frozenset(
    {
        "exists", "pttl", "get", "mget", "hget", "hmget", "hgetall", "hkeys", "hlen",
        "smembers", "sismember", "scard", "lrange", "llen", "lindex",
        "zscore", "zcard", "zrange", "zrangebyscore",
    }
)  # fmt: skip
GUARDS: Final = frozenset({"require_exists", "require_missing", "require_equal"})
WRITES: Final = frozenset(
    {
        "delete", "pexpire", "persist", "copy_ttl", "set", "incr", "hset", "hdel", "hincr",
        "sadd", "srem", "rpush", "lpush", "ltrim", "lpop", "rpop", "zadd", "zrem", "publish",
    }
)  # fmt: skip
OPS: Final = READS | GUARDS | WRITES
"""Every command name an engine must execute."""


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What :meth:`Engine.execute` returns.

    ``applied`` is False when a guard failed; then nothing was written and ``results`` holds the
    results up to and including the failed guard.
    """

    applied: bool
    results: list[Any] = field(default_factory=list)

    def __getitem__(self, index: int) -> Any:
        return self.results[index]


class Subscription:
    """A live subscription to one channel; ``close()`` stops delivery. Context manager."""

    def __init__(self, on_close: Callable[[], None]) -> None:
        self._on_close: Callable[[], None] | None = on_close

    def close(self) -> None:
        """Stop delivery; idempotent."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._on_close is None

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_int(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {value!r}")


class Commands(abc.ABC):
    """The command vocabulary, written once; each method builds one :data:`Op`.

    Subclasses decide what happens to an op: an engine runs it at once, a batch queues it.
    """

    @abc.abstractmethod
    def _op(self, name: str, *args: Any) -> Any: ...

    # -- keys --------------------------------------------------------------------------------
    def exists(self, key: str) -> bool:
        """True if ``key`` is live."""
        return cast(bool, self._op("exists", key))

    def delete(self, *keys: str) -> int:
        """Delete keys; returns how many existed."""
        return cast(int, self._op("delete", *keys))

    def pexpire(self, key: str, ms: int) -> bool:
        """Expire ``key`` in ``ms`` milliseconds (``ms <= 0`` deletes it). False if absent."""
        _check_int("ms", ms)
        return cast(bool, self._op("pexpire", key, ms))

    def persist(self, key: str) -> bool:
        """Remove the TTL of ``key``; True if it had one."""
        return cast(bool, self._op("persist", key))

    def pttl(self, key: str) -> int:
        """Remaining milliseconds; -1 for no TTL, -2 for a missing key (as Redis)."""
        return cast(int, self._op("pttl", key))

    def copy_ttl(self, src: str, *dsts: str) -> int:
        """Give every live key of ``dsts`` the expire-at of ``src`` when ``src`` has a TTL;
        returns how many got it (0 when ``src`` is missing or has no TTL)."""
        return cast(int, self._op("copy_ttl", src, *dsts))

    # -- strings -----------------------------------------------------------------------------
    def get(self, key: str) -> str | None:
        """The string at ``key`` or None."""
        result: str | None = self._op("get", key)
        return result

    def mget(self, keys: Sequence[str]) -> list[str | None]:
        """Strings at ``keys`` (None where absent or not a string)."""
        result: list[str | None] = self._op("mget", *keys)
        return result

    def set(
        self,
        key: str,
        value: str,
        *,
        px: int | None = None,
        nx: bool = False,
        xx: bool = False,
        keepttl: bool = False,
    ) -> bool:
        """Set a string. ``px``: TTL in ms; ``nx``/``xx``: only if absent/present. True if set.

        Raises:
            InvalidValue: ``px`` is not a positive number of milliseconds (as Redis refuses it).
        """
        if px is not None:
            _check_int("px", px)
            if px <= 0:
                raise InvalidValue(f"set px={px!r}: a TTL must be a positive number of milliseconds")
        return cast(bool, self._op("set", key, value, px, nx, xx, keepttl))

    def incr(self, key: str, amount: Number = 1) -> Number:
        """Add ``amount`` to the JSON number at ``key`` (missing = 0) and return the new value.

        The result is an ``int`` when both are ints, else a ``float``; the key keeps its TTL.

        Raises:
            NotANumber: the stored value is not a JSON number.
        """
        if isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount):
            raise TypeError(f"amount must be a finite int or float, got {amount!r}")
        result: Number = self._op("incr", key, amount)
        return result

    # -- hashes ------------------------------------------------------------------------------
    def hset(self, key: str, mapping: Mapping[str, str]) -> int:
        """Set hash fields; returns how many were new."""
        return cast(int, self._op("hset", key, dict(mapping)))

    def hget(self, key: str, field: str) -> str | None:
        """One hash field or None."""
        result: str | None = self._op("hget", key, field)
        return result

    def hmget(self, key: str, fields: Sequence[str]) -> list[str | None]:
        """Several hash fields (None where absent)."""
        result: list[str | None] = self._op("hmget", key, *fields)
        return result

    def hgetall(self, key: str) -> dict[str, str]:
        """The whole hash ({} if absent)."""
        result: dict[str, str] = self._op("hgetall", key)
        return result

    def hkeys(self, key: str) -> list[str]:
        """The field names of a hash."""
        result: list[str] = self._op("hkeys", key)
        return result

    def hlen(self, key: str) -> int:
        """Number of fields."""
        return cast(int, self._op("hlen", key))

    def hdel(self, key: str, *fields: str) -> int:
        """Delete fields; returns how many existed."""
        return cast(int, self._op("hdel", key, *fields))

    def hincr(self, key: str, field: str, amount: Number = 1) -> Number:
        """:meth:`incr` for one hash field."""
        if isinstance(amount, bool) or not isinstance(amount, int | float) or not math.isfinite(amount):
            raise TypeError(f"amount must be a finite int or float, got {amount!r}")
        result: Number = self._op("hincr", key, field, amount)
        return result

    # -- sets --------------------------------------------------------------------------------
    def sadd(self, key: str, *members: str) -> int:
        """Add members; returns how many were new."""
        return cast(int, self._op("sadd", key, *members))

    def srem(self, key: str, *members: str) -> int:
        """Remove members; returns how many existed."""
        return cast(int, self._op("srem", key, *members))

    def smembers(self, key: str) -> builtins.set[str]:
        """All members (empty set if absent)."""
        result: builtins.set[str] = self._op("smembers", key)
        return result

    def sismember(self, key: str, member: str) -> bool:
        """Membership test."""
        return cast(bool, self._op("sismember", key, member))

    def scard(self, key: str) -> int:
        """Number of members."""
        return cast(int, self._op("scard", key))

    # -- lists -------------------------------------------------------------------------------
    def rpush(self, key: str, *values: str) -> int:
        """Append values; returns the new length."""
        return cast(int, self._op("rpush", key, *values))

    def lpush(self, key: str, *values: str) -> int:
        """Prepend values one by one (as Redis: the last value ends up first); new length."""
        return cast(int, self._op("lpush", key, *values))

    def lrange(self, key: str, start: int, stop: int) -> list[str]:
        """Elements ``start..stop`` inclusive; negative indexes count from the end (as Redis)."""
        _check_int("start", start)
        _check_int("stop", stop)
        result: list[str] = self._op("lrange", key, start, stop)
        return result

    def llen(self, key: str) -> int:
        """Length of the list (0 if absent)."""
        return cast(int, self._op("llen", key))

    def lindex(self, key: str, index: int) -> str | None:
        """Element at ``index`` (negative from the end) or None."""
        _check_int("index", index)
        result: str | None = self._op("lindex", key, index)
        return result

    def ltrim(self, key: str, start: int, stop: int) -> None:
        """Keep only ``start..stop`` inclusive (as Redis)."""
        _check_int("start", start)
        _check_int("stop", stop)
        self._op("ltrim", key, start, stop)

    def lpop(self, key: str) -> str | None:
        """Remove and return the first element."""
        result: str | None = self._op("lpop", key)
        return result

    def rpop(self, key: str) -> str | None:
        """Remove and return the last element."""
        result: str | None = self._op("rpop", key)
        return result

    # -- sorted sets -------------------------------------------------------------------------
    def zadd(self, key: str, mapping: Mapping[str, float]) -> int:
        """Add or re-score members; returns how many were new.

        Raises:
            InvalidValue: a NaN score (Redis has none; every engine refuses it alike).
        """
        scores = {m: float(s) for m, s in mapping.items()}
        bad = [m for m, s in scores.items() if math.isnan(s)]
        if bad:
            raise InvalidValue(f"zadd {key!r}: score of {bad[0]!r} is NaN; scores must be numbers")
        return cast(int, self._op("zadd", key, scores))

    def zrem(self, key: str, *members: str) -> int:
        """Remove members; returns how many existed."""
        return cast(int, self._op("zrem", key, *members))

    def zscore(self, key: str, member: str) -> float | None:
        """Score of ``member`` or None."""
        result: float | None = self._op("zscore", key, member)
        return result

    def zcard(self, key: str) -> int:
        """Number of members."""
        return cast(int, self._op("zcard", key))

    def zrange(self, key: str, start: int, stop: int, *, desc: bool = False) -> list[tuple[str, float]]:
        """Members by rank ``start..stop`` inclusive (negative from the end), with scores.

        Ties are ordered by member, as Redis does; ``desc`` reverses the whole order.
        """
        _check_int("start", start)
        _check_int("stop", stop)
        result: list[tuple[str, float]] = self._op("zrange", key, start, stop, desc)
        return result

    def zrangebyscore(
        self,
        key: str,
        min: float,  # noqa: A002 - mirrors the Redis argument name
        max: float,  # noqa: A002 - mirrors the Redis argument name
        *,
        desc: bool = False,
        offset: int = 0,
        count: int | None = None,
    ) -> list[tuple[str, float]]:
        """Members with ``min <= score <= max`` (inclusive; ``±math.inf`` allowed), with scores.

        ``desc`` orders from high to low; ``offset``/``count`` page the ordered result.
        """
        _check_int("offset", offset)
        if count is not None:
            _check_int("count", count)
        result: list[tuple[str, float]] = self._op(
            "zrangebyscore", key, float(min), float(max), desc, offset, count
        )
        return result

    # -- notifications -----------------------------------------------------------------------
    def publish(self, channel: str, message: str) -> None:
        """Send ``message`` to every subscriber of ``channel`` (in any process on the engine)."""
        self._op("publish", channel, message)

    # -- guards (meaningful in batches) ------------------------------------------------------
    def require_exists(self, key: str) -> bool:
        """Guard: abort the batch unless ``key`` is live."""
        return cast(bool, self._op("require_exists", key))

    def require_missing(self, key: str) -> bool:
        """Guard: abort the batch if ``key`` is live."""
        return cast(bool, self._op("require_missing", key))

    def require_equal(self, key: str, value: str | None) -> bool:
        """Guard: abort the batch unless the string at ``key`` equals ``value`` (None = absent)."""
        return cast(bool, self._op("require_equal", key, value))


class Batch(Commands):
    """Commands queued for one atomic :meth:`Engine.execute`.

    Use as a context manager (executes on a clean exit) or call :meth:`execute`. Command methods
    return placeholders; read the real values from :attr:`result` after execution.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.ops: list[Op] = []
        self.result: BatchResult | None = None
        self._wrote = False

    def _op(self, name: str, *args: Any) -> Any:
        if name in GUARDS and self._wrote:
            raise InvalidInput(f"guard {name!r} after a write: guards must come first in a batch")
        if name in WRITES:
            self._wrote = True
        self.ops.append((name, args))
        return None

    def execute(self) -> BatchResult:
        """Apply the queued ops atomically (once)."""
        if self.result is None:
            self.result = self._engine.execute(self.ops)
        return self.result

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.execute()


class Engine(Commands):
    """A storage engine. Subclasses implement :meth:`execute`, :meth:`scan`,
    :meth:`subscribe`, :meth:`flush` and :meth:`close`.

    Attributes:
        name: ``memory``, ``sqlite``, ``redis`` or ``redis-cluster``.
        url: the URL the engine was opened with.
        clock: the engine's time source.
        clustered: True when keys of one batch must share a hash slot.
    """

    name: str = "engine"
    clustered: bool = False

    def __init__(self, url: str, clock: Clock | None = None) -> None:
        self.url = url
        self.clock: Clock = clock if clock is not None else SystemClock()

    @property
    def identity(self) -> str:
        """What in-process caches of tier data key on: two engines with the same identity hold
        the same data (the URL; a prefixed view adds its prefix, so tenants never share a cache)."""
        return self.url

    def now_ms(self) -> int:
        """The engine clock in integer milliseconds."""
        return int(self.clock.now() * 1000)

    def _op(self, name: str, *args: Any) -> Any:
        result = self.execute([(name, args)])
        return result.results[0] if result.results else None

    def batch(self) -> Batch:
        """A new :class:`Batch` bound to this engine."""
        return Batch(self)

    def tag(self, scope: str) -> str:
        """``scope`` as a Redis Cluster hash tag (``{scope}``) on clustered engines, else as is.

        Keys that must share one atomic batch embed the same tag.
        """
        return "{" + scope + "}" if self.clustered else scope

    @abc.abstractmethod
    def execute(self, ops: Sequence[Op]) -> BatchResult:
        """Apply ``ops`` atomically and return their results in order.

        Raises:
            WrongType: a command met a key of another type (nothing applied).
            NotANumber: ``incr``/``hincr`` met a non-number (nothing applied).
            CrossSlot: clustered engine, keys of several slots.
            EngineUnavailable: the storage cannot be reached.
        """

    @abc.abstractmethod
    def scan(self, prefix: str) -> Iterator[str]:
        """Live keys starting with ``prefix``, in no particular order."""

    @abc.abstractmethod
    def subscribe(self, channel: str, callback: Callable[[str], None]) -> Subscription:
        """Call ``callback(message)`` for every message published on ``channel``.

        Callbacks run on one background thread per engine, in publication order; an exception
        in a callback is logged and never reaches the publisher.
        """

    @abc.abstractmethod
    def flush(self) -> None:
        """Delete every key (tests, ``memstack reset``)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections and background threads; idempotent."""

    def ping(self) -> bool:
        """True when the engine answers (raises EngineUnavailable otherwise)."""
        self.exists("__memstack_ping__")
        return True

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url!r}>"


def ensure_memstack_error(exc: BaseException) -> bool:
    """True if ``exc`` is one of ours (helps engines decide what to wrap)."""
    return isinstance(exc, MemstackError)
