"""Key layout and stored record of the LangGraph store (:mod:`memstack.agent.lgstore`).

Every key of one namespace embeds ``engine.tag(code)``, ``code`` being the namespace as compact
JSON, so one batch may touch any of them on a Redis Cluster:

| key | type | holds |
|---|---|---|
| ``lg:{code}:e:{key}`` | string | the item's record (JSON, see :class:`Record`), with the engine's TTL |
| ``lg:{code}:ids`` | set | every key of the namespace (expired ones until pruned): its size is
  the namespace's count |
| ``lg:{code}:vec`` | hash | key -> the item's vectors (see ``_lg_embed``) |
| ``lg:{code}:ver``, ``:log``, ``:epoch`` | | the index kit's change log (:mod:`memstack.index.changelog`) |
| ``lg:{code}:exp`` | zset | key -> expire-at (ms) of every item with a TTL |

The registry's keys share the tag ``~lg`` (a code always starts with ``[``, so never collides):
``lg:{~lg}:ns``, the set of namespaces that ever held an item, ``lg:{~lg}:ttl``, those that ever
held an item with a TTL, and ``nsver``/``nsepoch``, which let every process keep the two sets
cached (+1 per registration; a new epoch after a flush). The sets never shrink (a read never
writes); a namespace is listed while its count minus its expired items is positive.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Final

from ...engines import Engine
from ...foundation.errors import InvalidValue
from ...foundation.keyspace import family_named
from ...foundation.keyspace.families import LANGGRAPH, LANGGRAPH_REGISTRY
from ...tiers.longterm.layout import ScopeKeys

__all__ = [
    "GLOBAL_TAG",
    "NamespaceKeys",
    "Record",
    "RegistryKeys",
    "decode_item",
    "decode_record",
    "encode_record",
    "ns_code",
]

GLOBAL_TAG: Final = "~lg"
_REGISTRY: Final = ("names", "ttls", "names_version", "names_epoch")
_EXPIRY: Final = family_named("langgraph.expiry").tail


@functools.lru_cache(maxsize=4096)
def ns_code(namespace: tuple[str, ...]) -> str:
    """The namespace as compact JSON: what its keys embed (memoised: every op computes it)."""
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class RegistryKeys:
    """The registry's keys (one slot): ``names`` and ``ttls`` (sets of codes), ``version`` (+1
    per registration) and ``epoch`` (random, set by the first registration after a flush)."""

    names: str
    ttls: str
    version: str
    epoch: str

    @classmethod
    def of(cls, engine: Engine) -> RegistryKeys:
        base = LANGGRAPH_REGISTRY.render(engine.tag)
        return cls(*(base + family_named(f"langgraph.{n}").tail for n in _REGISTRY))


@dataclass(frozen=True, slots=True)
class NamespaceKeys:
    """The keys of one namespace; ``scope`` is long-term memory's key shape under ``lg:``."""

    code: str
    scope: ScopeKeys

    @classmethod
    def of(cls, engine: Engine, code: str) -> NamespaceKeys:
        return _namespace_keys(code, engine.tag(code))

    def item(self, key: str) -> str:
        return self.scope.entry(key)

    @property
    def expiry(self) -> str:
        return self.scope.base + _EXPIRY


@dataclass(frozen=True, slots=True)
class Record:
    """One stored item: ``seq`` orders a namespace by first insertion; ``ttl`` is in minutes,
    ``expires_ms`` the engine-clock time the item dies at (None: never); ``vectors``: whether the
    ``vec`` hash holds vectors for it."""

    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    seq: int
    ttl: float | None = None
    expires_ms: int | None = None
    vectors: bool = False

    def refreshed(self, now_ms: int) -> Record:
        """The same record with its TTL counted again from ``now_ms``."""
        return replace(self, expires_ms=None if self.ttl is None else now_ms + ttl_ms(self.ttl))


@functools.lru_cache(maxsize=4096)
def _namespace_keys(code: str, tagged: str) -> NamespaceKeys:
    """The keys of a namespace whose tag is ``tagged`` (memoised: every op needs them)."""
    return NamespaceKeys(code, ScopeKeys(LANGGRAPH.render(lambda _: tagged, code=code)))


MAX_TTL_MINUTES: Final = 100 * 365 * 24 * 60
"""The longest TTL an item may have (100 years)."""


def ttl_ms(minutes: float) -> int:
    """A TTL in minutes as whole milliseconds (at least 1).

    Raises:
        InvalidValue: not a positive finite number.
    """
    if isinstance(minutes, bool) or not isinstance(minutes, int | float):
        raise InvalidValue(f"ttl={minutes!r}: must be a number of minutes")
    if not math.isfinite(minutes) or minutes <= 0:
        raise InvalidValue(f"ttl={minutes!r}: must be a positive, finite number of minutes")
    if minutes > MAX_TTL_MINUTES:  # in milliseconds, a larger one overflows the engines' TTLs
        raise InvalidValue(f"ttl={minutes!r}: must be at most {MAX_TTL_MINUTES} minutes (100 years)")
    return max(1, math.ceil(minutes * 60_000))


def encode_record(record: Record) -> str:
    """The stored JSON of ``record``.

    Raises:
        InvalidValue: the value is not JSON (a non-str key, NaN, an object json cannot write).
    """
    try:
        return json.dumps(
            {
                "value": record.value,
                "created_at": record.created_at.isoformat(),
                "updated_at": record.updated_at.isoformat(),
                "seq": record.seq,
                "ttl": record.ttl,
                "exp": record.expires_ms,
                "vec": record.vectors,
            },
            ensure_ascii=False,
            allow_nan=False,
            separators=(",", ":"),
        )
    except (TypeError, ValueError) as exc:
        raise InvalidValue(f"LangGraph item value is not JSON: {exc}") from None


def decode_record(raw: str) -> Record:
    """The record stored as ``raw``.

    Raises:
        InvalidValue: ``raw`` is not a record of this store.
    """
    try:
        data = json.loads(raw)
        return Record(
            value=data["value"],
            created_at=datetime.fromisoformat(data["created_at"]),
            updated_at=datetime.fromisoformat(data["updated_at"]),
            seq=int(data.get("seq", 0)),
            ttl=data.get("ttl"),
            expires_ms=data.get("exp"),
            vectors=bool(data.get("vec", False)),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidValue(f"stored LangGraph item is not a record: {exc}") from None


def decode_item(raw: str) -> tuple[dict[str, Any], datetime, datetime, float | None]:
    """``(value, created_at, updated_at, ttl)`` of the record stored as ``raw``: what a get needs,
    read without building a :class:`Record` (a get is the store's most frequent op).

    Raises:
        InvalidValue: ``raw`` is not a record of this store.
    """
    try:
        data = json.loads(raw)
        return (
            data["value"],
            datetime.fromisoformat(data["created_at"]),
            datetime.fromisoformat(data["updated_at"]),
            data.get("ttl"),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidValue(f"stored LangGraph item is not a record: {exc}") from None


def now_datetime(engine: Engine) -> datetime:
    """The engine clock as an aware UTC datetime."""
    return datetime.fromtimestamp(engine.clock.now(), UTC)
