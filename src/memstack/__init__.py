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

from .foundation import errors
from .foundation.clock import Clock, ManualClock, SystemClock
from .foundation.errors import *  # noqa: F403 - the whole exception tree is public: errors.__all__ lists it once
from .foundation.moved import install as _install_moved
from .services.memory import Memory, open  # noqa: A004 - memstack.open is the entry point, like io.open

_install_moved()  # the paths modules had before the package was laid out by layers still import

if TYPE_CHECKING:
    from .agent.context import BuiltContext, ContextBuilder

__version__ = "0.1.0"

__all__ = [
    "BuiltContext",
    "Clock",
    "ContextBuilder",
    "ManualClock",
    "Memory",
    "SystemClock",
    "__version__",
    "open",
]
__all__ += errors.__all__


def __getattr__(name: str) -> Any:
    # The context builder pulls in numpy and the stemmer; load it on first use, not on import.
    if name in ("BuiltContext", "ContextBuilder"):
        from .agent import context

        return getattr(context, name)
    raise AttributeError(f"module 'memstack' has no attribute {name!r}")
