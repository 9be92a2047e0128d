"""The pure parts of the sliding windows: the input's messages (hetumind / n8n ``004``), idleness.

No storage: :mod:`memstack.compat.n8n.windows` applies them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from ...foundation.errors import InvalidValue
from ...foundation.limits import short_repr
from ...tiers.conversation.inputs import id_text

__all__ = ["ROLES", "is_idle", "iso", "parse_input_messages"]

ROLES: Final = ("system", "user", "assistant", "tool")
_log = logging.getLogger("memstack.compat.n8n.windows")


def iso(ms: int) -> str:
    """Engine milliseconds as ISO-8601 UTC text ending in ``Z``."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def is_idle(seen_ms: int, expiry_ms: int, now_ms: int) -> bool:
    """True when a window last accessed at ``seen_ms`` is idle for MORE than ``expiry_ms`` (0: never)."""
    return expiry_ms > 0 and now_ms - seen_ms > expiry_ms


def parse_input_messages(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The input's messages, first match wins (spec 5 item 6): ``messages`` → ``chat_history``
    arrays, then ``prompt`` → ``content`` strings (one user message), else none.

    Raises:
        InvalidValue: an array item without a string ``role`` or ``content``.
    """
    for field in ("messages", "chat_history"):
        items = data.get(field)
        if isinstance(items, list):
            parsed = []
            for item in items:
                if not isinstance(item, Mapping) or not isinstance(item.get("role"), str):
                    raise InvalidValue(f"Message missing 'role' field: {short_repr(item)}")
                if not isinstance(item.get("content"), str):
                    raise InvalidValue(f"Message missing 'content' field: {short_repr(item)}")
                role = item["role"] if item["role"] in ROLES else "user"
                message: dict[str, Any] = {"role": role, "content": item["content"]}
                if item.get("id") is not None:
                    message["message_id"] = id_text(item["id"], "messages.id")
                if isinstance(item.get("metadata"), Mapping):
                    message["metadata"] = dict(item["metadata"])
                parsed.append(message)
            return parsed
    for field in ("prompt", "content"):
        if isinstance(data.get(field), str):
            return [{"role": "user", "content": data[field]}]
    _log.warning("SimpleMemory input holds no messages (messages, chat_history, prompt, content)")
    return []
