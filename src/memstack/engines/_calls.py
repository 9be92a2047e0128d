"""The command vocabulary written once: each method of :class:`Commands` builds one op.

Methods only shape their op (a mapping becomes a ``dict``, a score a ``float``); every rule on
arguments is checked by the engine's ``execute`` (``engines._checks``), so an op built here and
one handed to ``execute`` raw meet the same checks.
"""

from __future__ import annotations

import abc
import builtins
from collections.abc import Mapping, Sequence
from typing import Any, cast

__all__ = ["Commands", "Number"]

Number = int | float


def _score(value: Any) -> Any:
    """``value`` as a float score when it is a number that converts (else left to the checks)."""
    if value.__class__ is float:
        return value
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return value


class Commands(abc.ABC):
    """The command vocabulary, written once; each method builds one op.

    Every method raises what ``Engine.execute`` raises (see ``engines._checks`` for the argument
    rules: ``InvalidInput``/``InvalidValue`` for malformed arguments).

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
            InvalidValue: ``px`` is not 1 ms to 10 years (:data:`MAX_TTL_MS`).
        """
        return cast(bool, self._op("set", key, value, px, nx, xx, keepttl))

    def incr(self, key: str, amount: Number = 1) -> Number:
        """Add ``amount`` to the JSON number at ``key`` (missing = 0) and return the new value.

        The result is an ``int`` when both are ints, else a ``float``; the key keeps its TTL.

        Raises:
            NotANumber: the stored value is not a JSON number, or the int sum leaves 64 bits.
            InvalidValue: ``amount`` is not a finite int or float.
        """
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
        result: list[str] = self._op("lrange", key, start, stop)
        return result

    def llen(self, key: str) -> int:
        """Length of the list (0 if absent)."""
        return cast(int, self._op("llen", key))

    def lindex(self, key: str, index: int) -> str | None:
        """Element at ``index`` (negative from the end) or None."""
        result: str | None = self._op("lindex", key, index)
        return result

    def ltrim(self, key: str, start: int, stop: int) -> None:
        """Keep only ``start..stop`` inclusive (as Redis)."""
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
        return cast(int, self._op("zadd", key, {m: _score(s) for m, s in mapping.items()}))

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

        ``desc`` orders from high to low; ``offset``/``count`` page the ordered result (as a Python
        slice ``[offset:offset + count]``: a negative ``offset`` counts from the end).
        """
        result: list[tuple[str, float]] = self._op(
            "zrangebyscore", key, _score(min), _score(max), desc, offset, count
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
