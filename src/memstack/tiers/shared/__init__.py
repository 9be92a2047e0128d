"""Reactive shared memory: a named key-value blackboard for agents, threads and processes.

>>> from memstack.engines import open_engine
>>> from memstack.tiers.shared import SharedMemory
>>> m = SharedMemory(open_engine("memory://"), "pipeline", enable_cache=False)
>>> m["stage"] = "intake"
>>> m.get("stage", wait=1.0)
'intake'
>>> m.close(); m.engine.close()

See :mod:`memstack.tiers.shared.store` (the API), :mod:`memstack.tiers.shared.reserved` (reserved keys),
:mod:`memstack.tiers.shared.serialize` (rules for keys, names and values), :mod:`memstack.tiers.shared.glob`
(subscription patterns), :mod:`memstack.tiers.shared.network`, :mod:`memstack.tiers.shared.cache` (with
:mod:`memstack.tiers.shared.cached_chat`) and :mod:`memstack.tiers.shared.documents`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .boards import list_boards
from .change import MemoryChange
from .glob import glob_match
from .network import Network
from .proxy import StateProxy
from .reserved import RESERVED
from .store import SharedMemory

if TYPE_CHECKING:
    from .cache import SemanticCache
    from .cached_chat import CachedChat
    from .documents import DocumentStore

__all__ = [
    "RESERVED",
    "CachedChat",
    "DocumentStore",
    "MemoryChange",
    "Network",
    "SemanticCache",
    "SharedMemory",
    "StateProxy",
    "glob_match",
    "list_boards",
]

_LAZY = {"SemanticCache": "cache", "CachedChat": "cached_chat", "DocumentStore": "documents"}


def __getattr__(name: str) -> Any:
    # The cache and the documents need numpy and the search package: imported only when asked for.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
