"""The message ids of turns: the rule, and the id of a log entry written before turns had ids."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final

__all__ = ["MESSAGE_ID_RULE", "message_id_of"]

MESSAGE_ID_RULE: Final = re.compile(r"[A-Za-z0-9_.:@-]{1,128}")
"""A turn's message id: 1-128 of letters, digits, ``_ . : @ -`` (generated: 12 hex characters)."""


def message_id_of(entry: dict[str, Any]) -> str:
    """The message id of a turn-log entry; an entry logged before turns had ids gets one derived
    from what it holds (stable: the same entry always gets the same id)."""
    given = entry.get("message_id")
    if isinstance(given, str) and MESSAGE_ID_RULE.fullmatch(given):
        return given
    text = json.dumps(entry, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return "l" + hashlib.sha256(text.encode()).hexdigest()[:11]
