"""The keys of one sliding window, from the keyspace registry, and the ids they are made of.

Without a node id, one buffer per ``{workflow_id}__{session_id}`` (hetumind's and n8n's key),
with that scope as the hash tag; a node's own buffer (n8n's N8N-9916) has the scope
``{workflow_id}__{node_id}__{session_id}`` under ``win:n:`` (the ``n:`` mark keeps the two apart:
a workflow id never holds a colon). The session is read back from a key by the registry's rule
(:func:`memstack.foundation.keyspace.window_session`), whatever the session id holds::

    win:{t}:buf    list    messages (JSON ``{role, content, timestamp, message_id, metadata}``)
    win:{t}:seen   string  last access, engine-clock milliseconds
    win:{t}:meta   hash    workflow_id, session_id, created, expiry_ms (+ node_id)
"""

from __future__ import annotations

from typing import Final

from ...engines.base import Engine
from ...foundation.errors import InvalidKey
from ...foundation.keyspace import family_named, window_scope
from ...foundation.keyspace.families import NODE_WINDOW, WINDOW
from ...foundation.keyspace.windows import SEGMENT_RULE, SESSION_RULE
from ...foundation.limits import check_match, short_repr

__all__ = ["BUFFER", "META", "PREFIX", "SEEN", "window_base"]

PREFIX: Final = WINDOW.lead
BUFFER, SEEN = family_named("window.buffer").tail, family_named("window.seen").tail
META: Final = family_named("window.meta").tail


def _check_segment(value: object, name: str) -> str:
    if not isinstance(value, str) or not SEGMENT_RULE.fullmatch(value) or len(value) > 128:
        raise InvalidKey(f"{name} {short_repr(value)}: 1-128 characters of [A-Za-z0-9_.-] without '__'")
    return value


def window_base(engine: Engine, workflow_id: str, session_id: str, node_id: str | None = None) -> str:
    """What every key of one window starts with (a buffer key is it plus :data:`BUFFER`).

    Raises:
        InvalidKey: a malformed workflow, node or session id.
    """
    _check_segment(workflow_id, "workflow_id")
    check_match(session_id, SESSION_RULE, "session_id", "1-128 characters of [A-Za-z0-9_.:@-]", InvalidKey)
    if node_id is None:
        return WINDOW.render(engine.tag, window=window_scope(workflow_id, session_id))
    scope = window_scope(workflow_id, session_id, _check_segment(node_id, "node_id"))
    return NODE_WINDOW.render(engine.tag, node_window=scope)
