"""Where the session tier keeps its data: the seed's Redis key layout, as data.

| key | type | holds |
|---|---|---|
| ``rr:memory:{sid}:{key}`` | string | the JSON value (counters: the JSON number text) |
| ``rr:memory:{sid}:__keys__`` | set | the session's keys |
| ``rr:memory:{sid}:__history__`` | list | JSON history entries, oldest first |
| ``rr:memory:{sid}:__meta__`` | hash | ``created_at`` = str(time), ``ttl_seconds`` = str(ttl) or ``'None'`` |
| ``rr:memory:{sid}:#summary`` | string | summarisation generation (``#`` is never in a user key) |
| ``rr:memory:__sessions__`` | set | every session id (never expires; stale ids are dropped lazily) |

On a clustered engine ``{sid}`` is ``engine.tag(sid)`` (a hash tag), so every key of one session
shares a slot and one batch covers them; ``__sessions__`` lives in another slot.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PREFIX", "SESSIONS_KEY", "Layout"]

PREFIX: Final = "rr:memory:"
SESSIONS_KEY: Final = PREFIX + "__sessions__"


class Layout:
    """The keys of one session; ``scope`` is the session id as the engine tags it.

    The structural key names are computed once: a store keeps one layout per hot session.
    """

    __slots__ = ("_prefix", "generation", "history", "keys", "meta", "scope")

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self._prefix = f"{PREFIX}{scope}:"
        self.keys = self._prefix + "__keys__"
        """The set of the session's keys."""
        self.history = self._prefix + "__history__"
        """The list of JSON history entries."""
        self.meta = self._prefix + "__meta__"
        """The hash whose existence is the session's liveness (it carries the TTL)."""
        self.generation = self._prefix + "#summary"
        """The summarisation generation (guards concurrent summarisers)."""

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
