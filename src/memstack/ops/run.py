"""Running an operation: the handler on a tenant's memory, sync or async, the same on every door."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from typing import Any

from ..services.memory import Memory
from .request import parse
from .spec import Op

__all__ = ["arun", "call", "run"]


def run(op: Op[Any], mem: Memory, request: Any) -> Any:
    """The JSON result of ``op`` on ``mem`` for a parsed ``request`` (an async handler runs in a
    fresh event loop: call :func:`arun` from async code).

    Raises:
        MemstackError: whatever the handler raises.
    """
    result = op.handler(mem, request)
    if inspect.isawaitable(result):
        return asyncio.run(_await(result))
    return result


async def arun(op: Op[Any], mem: Memory, request: Any) -> Any:
    """:func:`run` for the servers' event loops (anyio: the HTTP app and MCP): a sync handler runs
    in anyio's worker threads (as FastAPI runs sync routes), never on the loop."""
    if inspect.iscoroutinefunction(op.handler):
        return await op.handler(mem, request)
    import anyio.to_thread  # the servers' own dependency: only they call this

    return await anyio.to_thread.run_sync(op.handler, mem, request)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def call(op: Op[Any], mem: Memory, data: Mapping[str, Any]) -> Any:
    """Parse ``data`` (a JSON object of ``op``'s fields) and run ``op``: the library's door.

    Raises:
        InvalidRequest: ``data`` does not match the request (nothing ran).
        MemstackError: whatever the handler raises.
    """
    return run(op, mem, parse(op.request, data, operation=op.name))
