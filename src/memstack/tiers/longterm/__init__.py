"""Long-term memory: entries per scope searched by BM25 (+ vectors), delta injection.

RockBot's file layout lives in :mod:`memstack.compat.rockbot.longterm_files`.

>>> import memstack
>>> with memstack.open("memory://") as mem:
...     memories = mem.long_term("alice")
...     saved = memories.save(content="Alice lives in Chicago", category="user-preferences/location")
...     [hit.entry.content for hit in memories.search("where does alice live")]
['Alice lives in Chicago']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .entry import MemoryEntry, SearchHit
    from .scopes import list_scopes
    from .store import LongTermMemory
    from .tracker import InjectionTracker

__all__ = [
    "InjectionTracker",
    "LongTermMemory",
    "MemoryEntry",
    "SearchHit",
    "list_scopes",
]

# Loaded on first use: the store pulls in the search package (numpy, the stemmer), and a light
# submodule (the doors' search parameters, the scope listing) must not pay for it.
_LAZY = {
    "InjectionTracker": "tracker",
    "LongTermMemory": "store",
    "MemoryEntry": "entry",
    "SearchHit": "entry",
    "list_scopes": "scopes",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
