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

from dataclasses import dataclass
from typing import Final

__all__ = ["PREFIX", "SESSIONS_KEY", "Layout"]

PREFIX: Final = "rr:memory:"
SESSIONS_KEY: Final = PREFIX + "__sessions__"


@dataclass(frozen=True, slots=True)
class Layout:
    """The keys of one session; ``scope`` is the session id as the engine tags it."""

    scope: str

    def data(self, key: str) -> str:
        """The string key holding ``key``'s JSON value."""
        return f"{PREFIX}{self.scope}:{key}"

    @property
    def keys(self) -> str:
        """The set of the session's keys."""
        return f"{PREFIX}{self.scope}:__keys__"

    @property
    def history(self) -> str:
        """The list of JSON history entries."""
        return f"{PREFIX}{self.scope}:__history__"

    @property
    def meta(self) -> str:
        """The hash whose existence is the session's liveness (it carries the TTL)."""
        return f"{PREFIX}{self.scope}:__meta__"

    @property
    def generation(self) -> str:
        """The summarisation generation (guards concurrent summarisers)."""
        return f"{PREFIX}{self.scope}:#summary"

    def structural(self) -> tuple[str, str, str, str]:
        """Every non-data key of the session."""
        return self.keys, self.history, self.meta, self.generation
