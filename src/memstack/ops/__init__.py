"""The operations registry: every operation of memstack declared once, every door generated from it.

Each :class:`Op` names its request model (strict: unknown fields and wrong JSON types are refused),
its handler over a :class:`~memstack.Memory`, the JSON type of its result (:mod:`memstack.ops.wire`),
its HTTP routes, its CLI command, its agent tool and its one-line help; it is declared on its
handler (:class:`~memstack.ops.spec.Ops`). ``memstack.doors.server`` builds the HTTP routes, the MCP
tools and ``/v1/tools`` from :data:`OPERATIONS`; ``memstack.doors.cli`` builds the commands;
:mod:`memstack.ops.surfaces` writes the README's tables. Handlers import the tiers they use when
first called, so a command starts without loading what it does not run.

>>> import memstack
>>> from memstack.ops import call, operation
>>> with memstack.open("memory://") as mem:
...     saved = call(operation("memories.save"), mem, {"scope": "alice", "content": "Alice plays the violin"})
...     call(operation("memories.scopes"), mem, {})
{'items': ['alice'], 'next_cursor': None}
"""

from __future__ import annotations

from .registry import GROUPS, OPERATIONS, operation, tool_operation
from .request import field_kind, from_text, parse
from .run import arun, call, run
from .spec import CONTEXT, Cli, Http, Op, Request, Tool

__all__ = [
    "CONTEXT",
    "GROUPS",
    "OPERATIONS",
    "Cli",
    "Http",
    "Op",
    "Request",
    "Tool",
    "arun",
    "call",
    "field_kind",
    "from_text",
    "operation",
    "parse",
    "run",
    "tool_operation",
]
