"""Which long-term scopes hold entries: a scan of the tier's keys through the engine seam.

A scope exists while it holds an entry: its id set (``lt:{scope}:ids``, see :mod:`.layout`) is
the one key every non-empty scope has. The scan reads key names only, never values; its cost
grows with the number of long-term keys of the engine (or the tenant).
"""

from __future__ import annotations

from ...engines import Engine
from .layout import PREFIX

__all__ = ["list_scopes"]

_IDS = ":ids"


def list_scopes(engine: Engine) -> list[str]:
    """The scopes of ``engine`` that hold at least one entry, sorted.

    Raises:
        EngineUnavailable: the engine cannot be reached.

    >>> import memstack
    >>> with memstack.open("memory://") as mem:
    ...     _ = mem.long_term("bob").save(content="Bob plays chess")
    ...     _ = mem.long_term("alice").save(content="Alice plays the violin")
    ...     list_scopes(mem.engine)
    ['alice', 'bob']
    """
    found = set()
    for key in engine.scan(PREFIX):
        if not key.endswith(_IDS):
            continue
        tag = key[len(PREFIX) : -len(_IDS)]
        scope = tag[1:-1] if engine.clustered and tag.startswith("{") and tag.endswith("}") else tag
        if scope and ":" not in scope and not scope.startswith("~"):
            found.add(scope)
    return sorted(found)
