"""Working memory: path-keyed scratch entries with per-entry TTL and a cap per namespace.

Keys are paths (``session/abc/emails``, ``patrol/heartbeat/alerts``, ``subagent/t1/notes``); the
first two segments are the namespace. A :class:`WorkingMemory` is bound to one namespace: it
writes there only and reads anywhere. RockBot's file layout lives in
:mod:`memstack.compat.rockbot.working_files`.
"""

from __future__ import annotations

from .entry import WorkingEntry
from .keys import is_user_namespace, namespace_of
from .namespaces import list_namespaces
from .store import DEFAULT_MAX_ENTRIES, DEFAULT_MAX_VALUE_BYTES, DEFAULT_TTL, WorkingMemory

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "DEFAULT_MAX_VALUE_BYTES",
    "DEFAULT_TTL",
    "WorkingEntry",
    "WorkingMemory",
    "is_user_namespace",
    "list_namespaces",
    "namespace_of",
]
