"""The session state tier: a key-value map per session id, history, counters, whole-session TTL.

>>> import memstack
>>> with memstack.open("memory://") as mem:
...     mem.sessions.create("s1")
...     mem.sessions.put("s1", "name", "Ada")
...     mem.sessions.increment("s1", "visits")
...     mem.sessions.get("s1", "name")
1
'Ada'
"""

from __future__ import annotations

from .store import DEFAULT_MEMORY_SESSION_CAP, SessionStore
from .validate import DEFAULT_MAX_VALUE_BYTES, RESERVED_KEYS

__all__ = ["DEFAULT_MAX_VALUE_BYTES", "DEFAULT_MEMORY_SESSION_CAP", "RESERVED_KEYS", "SessionStore"]
