"""memstack: every kind of memory an LLM agent or pipeline needs, on one storage engine.

>>> import memstack
>>> with memstack.open("memory://") as mem:
...     mem.engine.set("greeting", "hello")
...     mem.engine.get("greeting")
True
'hello'
"""

from __future__ import annotations

from ._memory import Memory, open  # noqa: A004 - memstack.open is the entry point, like io.open
from .clock import Clock, ManualClock, SystemClock
from .context import BuiltContext, ContextBuilder
from .errors import (
    AlreadyExists,
    Conflict,
    CrossSlot,
    EmbeddingError,
    EngineClosed,
    EngineError,
    EngineUnavailable,
    EntryNotFound,
    InvalidCategory,
    InvalidConfiguration,
    InvalidInput,
    InvalidKey,
    InvalidSessionId,
    InvalidUrl,
    InvalidValue,
    LimitReached,
    MemstackError,
    NamespaceFull,
    NotANumber,
    NotFound,
    SessionExists,
    SessionLimitReached,
    SessionNotFound,
    WaitTimeout,
)

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
    "EngineUnavailable",
    "EntryNotFound",
    "InvalidCategory",
    "InvalidConfiguration",
    "InvalidInput",
    "InvalidKey",
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
    "SessionExists",
    "SessionLimitReached",
    "SessionNotFound",
    "SystemClock",
    "WaitTimeout",
    "__version__",
    "open",
]
