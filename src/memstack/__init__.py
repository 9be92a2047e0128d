"""memstack: every kind of memory an LLM agent or pipeline needs, on one storage engine.

>>> import memstack
>>> with memstack.open("memory://") as mem:
...     mem.engine.set("greeting", "hello")
...     mem.engine.get("greeting")
True
'hello'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._memory import Memory, open  # noqa: A004 - memstack.open is the entry point, like io.open
from .clock import Clock, ManualClock, SystemClock
from .errors import (
    AlreadyExists,
    Conflict,
    CrossSlot,
    EmbeddingError,
    EngineClosed,
    EngineError,
    EngineFull,
    EngineUnavailable,
    EntryNotFound,
    InvalidCategory,
    InvalidConfiguration,
    InvalidFilter,
    InvalidInput,
    InvalidKey,
    InvalidRequest,
    InvalidSessionId,
    InvalidUrl,
    InvalidValue,
    LimitReached,
    MemstackError,
    NamespaceFull,
    NotANumber,
    NotFound,
    NotReplicated,
    SessionExists,
    SessionLimitReached,
    SessionNotFound,
    UnknownTool,
    WaitTimeout,
    WrongType,
)

if TYPE_CHECKING:
    from .context import BuiltContext, ContextBuilder

__version__ = "0.1.0"

__all__ = [
    "AlreadyExists",
    "BuiltContext",
    "Clock",
    "Conflict",
    "ContextBuilder",
    "CrossSlot",
    "EmbeddingError",
    "EngineClosed",
    "EngineError",
    "EngineFull",
    "EngineUnavailable",
    "EntryNotFound",
    "InvalidCategory",
    "InvalidConfiguration",
    "InvalidFilter",
    "InvalidInput",
    "InvalidKey",
    "InvalidRequest",
    "InvalidSessionId",
    "InvalidUrl",
    "InvalidValue",
    "LimitReached",
    "ManualClock",
    "Memory",
    "MemstackError",
    "NamespaceFull",
    "NotANumber",
    "NotFound",
    "NotReplicated",
    "SessionExists",
    "SessionLimitReached",
    "SessionNotFound",
    "SystemClock",
    "UnknownTool",
    "WaitTimeout",
    "WrongType",
    "__version__",
    "open",
]


def __getattr__(name: str) -> Any:
    # The context builder pulls in numpy and the stemmer; load it on first use, not on import.
    if name in ("BuiltContext", "ContextBuilder"):
        from . import context

        return getattr(context, name)
    raise AttributeError(f"module 'memstack' has no attribute {name!r}")
