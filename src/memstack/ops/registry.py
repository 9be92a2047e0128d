"""The registry: every operation of every tier, in the order the doors list them.

Each tier module under :mod:`memstack.ops` holds a tuple ``OPS``; :data:`OPERATIONS` joins them
and :func:`check` proves the doors they generate cannot collide (one name per operation, tool,
command and route).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from . import (
    agent,
    conversations,
    dream,
    loop,
    memories,
    sessions,
    shared,
    shared_cache,
    store,
    tool_door,
    turn,
    working,
)
from .spec import Op

__all__ = ["GROUPS", "OPERATIONS", "check", "client_method", "operation", "tool_operation", "tool_table"]

GROUPS: Mapping[str, str] = MappingProxyType(
    {
        "sessions": "Session state: sessions, keys, counters, history.",
        "conversations": "Conversations: messages, the active thread, token-limited history.",
        "memories": "Long-term memories: save, search, scopes, categories, tags, export, import.",
        "working": "Working memory: namespaces, list, search, set, get, delete.",
        "shared": "Shared boards: keys with versions, the semantic cache and documents.",
        "dream": "Dream passes: consolidate, preferences, dedupe, extract; history, show, undo, feedback.",
        "turns": "The turn log: copy its older entries into conversations, where the passes read turns.",
    }
)
"""The command groups of the generated commands, with their help (in the order shown)."""

_MODULES = (sessions, conversations, memories, working, shared, shared_cache, store, dream, turn, loop, agent)


def check(ops: Iterable[Op[Any]]) -> dict[str, Op[Any]]:
    """The operations by name, after proving their doors cannot collide.

    Raises:
        ValueError: two operations with one name, tool, command or route, or a door naming a
            field its request does not have.
    """
    by_name: dict[str, Op[Any]] = {}
    seen: dict[str, str] = {}
    for op in ops:
        doors = [f"name {op.name}"]
        doors += [f"tool {op.tool.name}"] if op.tool else []
        doors += [f"command {op.cli.words}"] if op.cli else []
        doors += [f"route {h.method} {re.sub(r'{[^}]+}', '{}', h.path)}" for h in op.http]
        for door in doors:
            if door in seen:
                raise ValueError(f"{op.name} and {seen[door]} share the {door}")
            seen[door] = op.name
        named = [f for h in op.http for f in (*h.path_fields, *(h.query or ()))]
        if op.cli:
            named += [*op.cli.args, *op.cli.names, *op.cli.defaults, *op.cli.blank_is_null]
        if op.tool:
            named += [*(op.tool.fields or ()), *op.tool.fixed, *op.tool.defaults]
        unknown = sorted(set(named) - set(op.fields))
        if unknown:
            raise ValueError(f"{op.name}: its doors name fields its request lacks: {unknown}")
        if op.cli and op.cli.group is not None and op.cli.group not in GROUPS:
            raise ValueError(f"{op.name}: command group {op.cli.group!r} is not in GROUPS")
        by_name[op.name] = op
    return by_name


_BASE = [op for module in _MODULES for op in module.OPS]

_TOOLS: Mapping[str, Op[Any]] = MappingProxyType(
    {
        op.tool.name: op
        for op in sorted(_BASE, key=lambda op: not op.name.startswith("agent."))
        if op.tool is not None
    }
)
"""Tool name -> its operation: the original systems' memory tools first, then the others."""

OPERATIONS: Mapping[str, Op[Any]] = MappingProxyType(check([*_BASE, *tool_door.door_ops(lambda: _TOOLS)]))
"""Every operation by name, in door order (the tool door's own two last)."""


def tool_table() -> Mapping[str, Op[Any]]:
    """Every tool's operation by tool name, in the order the tool door lists them."""
    return _TOOLS


def operation(name: str) -> Op[Any]:
    """The operation called ``name``.

    Raises:
        KeyError: no such operation.
    """
    return OPERATIONS[name]


def tool_operation(name: str) -> Op[Any] | None:
    """The operation whose tool is called ``name``, or None."""
    return _TOOLS.get(name)


_CLIENT_NAMESPACES: Mapping[str, str] = MappingProxyType(
    {"cache": "shared.cache", "documents": "shared.documents"}
)


def client_method(name: str) -> str:
    """The method of operation ``name`` in the TypeScript client (the HTTP document's
    ``x-memstack-client``): its tier's namespace and its verb (``cache.lookup`` is
    ``shared.cache.lookup``; ``forget`` is ``forget.run``; ``save_many`` is ``saveMany``, the
    language's own spelling)."""
    tier, _, verb = name.partition(".")
    head, *rest = (verb or "run").split("_")
    return f"{_CLIENT_NAMESPACES.get(tier, tier)}.{head}{''.join(w.capitalize() for w in rest)}"
