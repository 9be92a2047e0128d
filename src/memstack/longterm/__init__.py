"""Long-term memory: entries per scope searched by BM25 (+ vectors), delta injection, file layout.

>>> import memstack
>>> with memstack.open("memory://") as mem:
...     memories = mem.long_term("alice")
...     saved = memories.save(content="Alice lives in Chicago", category="user-preferences/location")
...     [hit.entry.content for hit in memories.search("where does alice live")]
['Alice lives in Chicago']
"""

from __future__ import annotations

from .entry import MemoryEntry, SearchHit
from .files import ImportReport, export_dir, import_dir
from .scopes import list_scopes
from .store import LongTermMemory
from .tracker import InjectionTracker

__all__ = [
    "ImportReport",
    "InjectionTracker",
    "LongTermMemory",
    "MemoryEntry",
    "SearchHit",
    "export_dir",
    "import_dir",
    "list_scopes",
]
