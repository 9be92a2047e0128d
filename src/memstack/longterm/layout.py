"""Key layout of the long-term tier: every key starts with ``lt:`` and embeds the scope's tag.

| key | type | holds |
|---|---|---|
| ``lt:{scope}:e:{id}`` | string | the entry's JSON |
| ``lt:{scope}:ids`` | set | every id of the scope |
| ``lt:{scope}:vec`` | hash | id → vector payload (model, dim, text hash, base64 float32) |
| ``lt:{scope}:ver`` | string | change counter: +1 per save, delete and vector write |
| ``lt:{scope}:log`` | list | ``"{op} {id}"`` per change, the last :data:`LOG_MAX` kept |
| ``lt:{scope}:epoch`` | string | random token, set by the first write after the scope was empty or
  wiped: a new one means caches built before are void (reads never create it) |
| ``lt:{scope}:snap`` | string | BM25 snapshot for cold starts (:mod:`.snapshot`), written by writers |
| ``lt:{scope}:snapver`` | string | the version that snapshot was taken at |
| ``lt:{scope}:dels`` | string | deletion counter: a snapshot taken before a deletion is never written |
| ``lt:~inj:{session}`` | set | memory ids already injected in a session |

Scopes never contain ``~`` or ``:``, so the two families never collide. All keys of one
scope embed ``engine.tag(scope)``, so one batch may touch any of them on a Redis Cluster.
The log entry of version ``v`` sits at position ``v - ver + len(log) - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..engines import Engine
from ..index.changelog import LOG_MAX, log_change  # the change log of every entry set

__all__ = ["LOG_MAX", "PREFIX", "ScopeKeys", "injected_key", "log_change"]

PREFIX: Final = "lt:"


@dataclass(frozen=True, slots=True)
class ScopeKeys:
    """The keys of one scope on one engine."""

    base: str

    @classmethod
    def of(cls, engine: Engine, scope: str) -> ScopeKeys:
        return cls(f"{PREFIX}{engine.tag(scope)}:")

    def entry(self, entry_id: str) -> str:
        return f"{self.base}e:{entry_id}"

    @property
    def entry_prefix(self) -> str:
        return f"{self.base}e:"

    @property
    def ids(self) -> str:
        return f"{self.base}ids"

    @property
    def vectors(self) -> str:
        return f"{self.base}vec"

    @property
    def version(self) -> str:
        return f"{self.base}ver"

    @property
    def log(self) -> str:
        return f"{self.base}log"

    @property
    def epoch(self) -> str:
        return f"{self.base}epoch"

    @property
    def snapshot(self) -> str:
        return f"{self.base}snap"

    @property
    def snapshot_version(self) -> str:
        return f"{self.base}snapver"

    @property
    def deletions(self) -> str:
        return f"{self.base}dels"


def injected_key(engine: Engine, session_id: str) -> str:
    """The set of memory ids injected in ``session_id``."""
    return f"{PREFIX}~inj:{engine.tag(session_id)}"  # "~" never occurs in a scope
