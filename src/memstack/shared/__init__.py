"""Reactive shared memory: a named key-value blackboard for agents, threads and processes.

>>> from memstack.engines import open_engine
>>> from memstack.shared import SharedMemory
>>> m = SharedMemory(open_engine("memory://"), "pipeline", enable_cache=False)
>>> m["stage"] = "intake"
>>> m.get("stage", wait=1.0)
'intake'
>>> m.close(); m.engine.close()

See :mod:`memstack.shared.store` (the API), :mod:`memstack.shared.reserved` (reserved keys),
:mod:`memstack.shared.serialize` (rules for keys, names and values), :mod:`memstack.shared.glob`
(subscription patterns), :mod:`memstack.shared.network` and :mod:`memstack.shared.cache`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .change import MemoryChange
from .glob import glob_match
from .network import Network
from .proxy import StateProxy
from .reserved import RESERVED
from .store import SharedMemory

if TYPE_CHECKING:
    from .cache import SemanticCache

__all__ = ["RESERVED", "MemoryChange", "Network", "SemanticCache", "SharedMemory", "StateProxy", "glob_match"]


def __getattr__(name: str) -> Any:
    # The cache needs numpy and the search package: imported only when asked for.
    if name == "SemanticCache":
        from .cache import SemanticCache

        return SemanticCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
