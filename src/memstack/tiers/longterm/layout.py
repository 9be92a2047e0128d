"""Key layout of the long-term tier, from the keyspace registry: every key starts with ``lt:`` and
embeds the scope's tag.

| key (family ``long_term.…``) | type | holds |
|---|---|---|
| ``lt:{scope}:e:{id}`` (``entry``) | string | the entry's JSON (with its subject label) |
| ``lt:{scope}:h:{id}`` (``history``) | list | the entry's changes (:mod:`.history`) |
| ``lt:{scope}:exp`` (``expiry``) | sorted set | id → ``expires_at`` of the entries that expire |
| ``lt:{scope}:ids`` (``ids``) | set | every id of the scope |
| ``lt:{scope}:vec`` (``vectors``) | hash | id → vector payload (model, dim, text hash, float32) |
| ``lt:{scope}:ver`` (``version``) | string | change counter: +1 per save, delete and vector write |
| ``lt:{scope}:log`` (``log``) | list | ``"{op} {id}"`` per change, the last :data:`LOG_MAX` kept |
| ``lt:{scope}:epoch`` (``epoch``) | string | random token, set by the first write after the scope was
  empty or wiped: a new one means caches built before are void (reads never create it) |
| ``lt:{scope}:snap`` (``snapshot``) | string | BM25 snapshot for cold starts (:mod:`.snapshot`) |
| ``lt:{scope}:snapver`` (``snapshot_version``) | string | the version that snapshot was taken at |
| ``lt:{scope}:ann`` (``ann``) | string | the vectors' approximate graph for cold starts (:mod:`.ann`) |
| ``lt:{scope}:dels`` (``deletions``) | string | deletions: no snapshot taken before one is written |
| ``lt:~inj:{session}`` (``injected``) | set | memory ids already injected in a session |

Scopes never contain ``~`` or ``:``, so the two families never collide. All keys of one
scope embed ``engine.tag(scope)``, so one batch may touch any of them on a Redis Cluster.
The log entry of version ``v`` sits at position ``v - ver + len(log) - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ...engines import Engine
from ...foundation.keyspace import KeyUnder, family_named
from ...foundation.keyspace.families import LONG_TERM
from ...index.changelog import LOG_MAX, SetKeys, log_change  # the change log of every entry set

__all__ = ["LOG_MAX", "PREFIX", "ScopeKeys", "injected_key", "log_change"]

PREFIX: Final = LONG_TERM.lead
"""``lt:``: what every key of the tier starts with."""
_INJECTED: Final = family_named("long_term.injected")
_HISTORY: Final = family_named("long_term.history").tail_prefix


@dataclass(frozen=True, slots=True)
class ScopeKeys(SetKeys):
    """The keys of one scope on one engine, under the stem ``base`` (``lt:{scope}:``; the
    LangGraph store keeps the same shapes under its own stem): the change log, vectors and
    ``entry(id)`` of every entry set (:class:`~memstack.index.changelog.SetKeys`), and the
    scope's own records."""

    @classmethod
    def of(cls, engine: Engine, scope: str) -> ScopeKeys:
        return cls(LONG_TERM.render(engine.tag, scope=scope))

    entry_prefix = KeyUnder("long_term.entry", prefix=True)
    history_prefix = KeyUnder("long_term.history", prefix=True)
    expiry = KeyUnder("long_term.expiry")
    snapshot = KeyUnder("long_term.snapshot")
    snapshot_version = KeyUnder("long_term.snapshot_version")
    ann = KeyUnder("long_term.ann")
    deletions = KeyUnder("long_term.deletions")

    def history(self, entry_id: str) -> str:
        return f"{self.base}{_HISTORY}{entry_id}"


def injected_key(engine: Engine, session_id: str) -> str:
    """The set of memory ids injected in ``session_id``."""
    return _INJECTED.key(engine.tag, session=session_id)
