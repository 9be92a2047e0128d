"""Where the session tier keeps its data: the seed's Redis key layout, from the keyspace registry.

| key (family) | type | holds |
|---|---|---|
| ``rr:memory:{sid}:{key}`` (``session.value``) | string | the JSON value (counters: the number text) |
| ``rr:memory:{sid}:__keys__`` (``session.keys``) | set | the session's keys |
| ``rr:memory:{sid}:__history__`` (``session.history``) | list | JSON history entries, oldest first |
| ``rr:memory:{sid}:__meta__`` (``session.meta``) | hash | ``created_at``, ``ttl_seconds`` (or ``'None'``) |
| ``rr:memory:{sid}:#summary`` (``session.generation``) | string | summarisation generation |
| ``rr:memory:__sessions__`` (``session.registry``) | set | every session id (stale ids dropped lazily) |

``#`` is never in a user key, so the generation never collides with a value.

On a clustered engine ``{sid}`` is ``engine.tag(sid)`` (a hash tag), so every key of one session
shares a slot and one batch covers them; ``__sessions__`` lives in another slot.
"""

from __future__ import annotations

from typing import Final

from ...foundation.keyspace import family_named, no_tag
from ...foundation.keyspace.families import SESSION

__all__ = ["PREFIX", "SESSIONS_KEY", "Layout"]

PREFIX: Final = SESSION.lead
"""``rr:memory:``: what every key of the tier starts with."""
SESSIONS_KEY: Final = family_named("session.registry").key(no_tag)
_KEYS, _HISTORY = family_named("session.keys").tail, family_named("session.history").tail
_META, _GENERATION = family_named("session.meta").tail, family_named("session.generation").tail


class Layout:
    """The keys of one session; ``scope`` is the session id as the engine tags it.

    The structural key names are computed once: a store keeps one layout per hot session.
    """

    __slots__ = ("_prefix", "generation", "history", "keys", "meta", "scope")

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self._prefix = SESSION.render(no_tag, session=scope)  # ``scope`` is tagged already
        self.keys = self._prefix + _KEYS
        """The set of the session's keys."""
        self.history = self._prefix + _HISTORY
        """The list of JSON history entries."""
        self.meta = self._prefix + _META
        """The hash whose existence is the session's liveness (it carries the TTL)."""
        self.generation = self._prefix + _GENERATION
        """The summarisation generation (guards concurrent summarisers)."""

    @property
    def prefix(self) -> str:
        """What every key of the session starts with."""
        return self._prefix

    def __repr__(self) -> str:
        return f"Layout({self.scope!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and other.scope == self.scope

    def __hash__(self) -> int:
        return hash(self.scope)

    def data(self, key: str) -> str:
        """The string key holding ``key``'s JSON value."""
        return self._prefix + key

    def structural(self) -> tuple[str, str, str, str]:
        """Every non-data key of the session."""
        return self.keys, self.history, self.meta, self.generation
