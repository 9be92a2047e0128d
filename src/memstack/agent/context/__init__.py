"""The per-turn context builder: what an LLM sees on each turn, in a cache-friendly order.

>>> import memstack
>>> with memstack.open("memory://") as mem:
...     builder = memstack.ContextBuilder(mem, system_prompt="You are helpful.")
...     [m["role"] for m in builder.build("s1", "hello").messages]
['system', 'user']
"""

from __future__ import annotations

from .budget import DROP_ORDER, ExplainItem
from .builder import BuiltContext, ContextBuilder

__all__ = ["DROP_ORDER", "BuiltContext", "ContextBuilder", "ExplainItem"]
