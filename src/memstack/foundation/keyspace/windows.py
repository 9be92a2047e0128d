"""The scope of a sliding window (hetumind / n8n ``004``): ``{workflow}__{session}``, or
``{workflow}__{node}__{session}`` for a node's own window, written and read by one rule.

Workflow and node ids are segments of ``[A-Za-z0-9.-]`` joined by single ``_`` (never ``__``, never
a ``_`` at either end), so the first ``__`` ends the workflow id (and the second the node id) and
the session id is everything after, whatever it holds: ``wf__a__b`` is session ``a__b`` of ``wf``.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["SEGMENT_RULE", "SESSION_RULE", "window_scope", "window_session"]

SEGMENT_RULE: Final = re.compile(r"[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*")
"""A workflow or node id (its length is the caller's rule)."""
SESSION_RULE: Final = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
"""A window's session id."""


def window_scope(workflow_id: str, session_id: str, node_id: str | None = None) -> str:
    """The scope part of a window's keys (the ids are the caller's to check)."""
    if node_id is None:
        return f"{workflow_id}__{session_id}"
    return f"{workflow_id}__{node_id}__{session_id}"


def window_session(scope: str, *, node: bool) -> str | None:
    """The session id of a window scope (``node``: a node's own window), or None when ``scope``
    is not one."""
    parts = scope.split("__", 2 if node else 1)
    if len(parts) != (3 if node else 2):
        return None
    *ids, session = parts
    if not all(SEGMENT_RULE.fullmatch(i) for i in ids) or not SESSION_RULE.fullmatch(session):
        return None
    return session
