"""Rules of the long-term tier: scopes, ids, categories, tags, content, metadata, times.

Ids follow one rule everywhere (store and injection tracker): they are case-insensitive and
normalised to lower case, so ``ABC`` and ``abc`` name the same memory.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Final

from ..errors import InvalidCategory, InvalidKey, InvalidSessionId, InvalidValue

__all__ = [
    "CATEGORY_SEGMENT",
    "ID_RULE",
    "SCOPE_RULE",
    "check_category",
    "check_content",
    "check_metadata",
    "check_scope",
    "check_session_id",
    "check_tags",
    "check_time",
    "new_id",
    "normalise_id",
]

SCOPE_RULE: Final = re.compile(r"[A-Za-z0-9_.@-]{1,128}")
"""A scope (user, agent): 1-128 of letters, digits, ``_ . @ -``.

No ``:``, ``~`` or braces, so keys stay unambiguous."""
ID_RULE: Final = re.compile(r"[a-z0-9_-][a-z0-9_.-]{0,127}")
"""A memory id after lower-casing: 1-128 of ``a-z 0-9 _ . -``, no leading dot (ids are file names)."""
SESSION_RULE: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
CATEGORY_SEGMENT: Final = re.compile(r"[A-Za-z0-9_-]+")
MAX_TAG_LENGTH: Final = 256


def new_id() -> str:
    """A fresh id: the first 12 lower-case hex characters of a uuid4 (the seed's rule)."""
    return uuid.uuid4().hex[:12]


def check_scope(scope: object) -> str:
    """Raises: InvalidKey: ``scope`` breaks :data:`SCOPE_RULE`."""
    if not isinstance(scope, str) or not SCOPE_RULE.fullmatch(scope):
        raise InvalidKey(f"scope {scope!r}: must be 1-128 characters of letters, digits, '_', '.', '@', '-'")
    return scope


def normalise_id(entry_id: object) -> str:
    """``entry_id`` lower-cased.

    Raises:
        InvalidKey: not a string matching :data:`ID_RULE` once lower-cased.
    """
    if not isinstance(entry_id, str) or not ID_RULE.fullmatch(entry_id.lower()):
        raise InvalidKey(
            f"memory id {entry_id!r}: must be 1-128 characters of letters, digits, '_', '.', '-' "
            "and not start with '.'"
        )
    return entry_id.lower()


def check_session_id(session_id: object) -> str:
    """Raises: InvalidSessionId: not 1-128 characters of ``[A-Za-z0-9_-]``."""
    if not isinstance(session_id, str) or not SESSION_RULE.fullmatch(session_id):
        raise InvalidSessionId(f"session id {session_id!r}: must be 1-128 characters of [A-Za-z0-9_-]")
    return session_id


def check_category(category: object) -> str | None:
    """``category`` (None allowed), checked segment by segment (spec item 8).

    Raises:
        InvalidCategory: empty or whitespace, absolute, containing ``..``, or a segment that is
            not ``[A-Za-z0-9_-]+`` (so no path can escape a directory).
    """
    if category is None:
        return None
    if not isinstance(category, str):
        raise InvalidCategory(f"category {category!r}: must be a string or None")
    if not category.strip():
        raise InvalidCategory(f"category {category!r}: must not be empty or whitespace")
    if category.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", category):
        raise InvalidCategory(f"category {category!r}: must be a relative path, not absolute")
    if ".." in category:
        raise InvalidCategory(f"category {category!r}: must not contain '..'")
    for segment in category.split("/"):
        if not CATEGORY_SEGMENT.fullmatch(segment):
            raise InvalidCategory(
                f"category {category!r}: segment {segment!r} must be 1+ characters of [A-Za-z0-9_-] "
                "(segments separated by single '/')"
            )
    return category


def check_content(content: object) -> str:
    """Raises: InvalidValue: ``content`` is not a non-blank string."""
    if not isinstance(content, str) or not content.strip():
        raise InvalidValue(f"content {content!r}: must be a non-blank string")
    return content


def check_tags(tags: Iterable[str] | str | None) -> tuple[str, ...]:
    """Tags as a tuple: a comma-separated string is split; blanks are dropped, others stripped.

    Raises:
        InvalidValue: a tag that is not a string or longer than 256 characters.
    """
    if tags is None:
        return ()
    items: Iterable[object] = tags.split(",") if isinstance(tags, str) else tags
    out: list[str] = []
    for tag in items:
        if not isinstance(tag, str):
            raise InvalidValue(f"tag {tag!r}: must be a string")
        tag = tag.strip()
        if len(tag) > MAX_TAG_LENGTH:
            raise InvalidValue(f"tag {tag[:40]!r}…: longer than {MAX_TAG_LENGTH} characters")
        if tag:
            out.append(tag)
    return tuple(out)


def check_metadata(metadata: object) -> dict[str, Any] | None:
    """A JSON-serialisable copy of ``metadata`` (None allowed).

    Raises:
        InvalidValue: not a dict with string keys, or not JSON-serialisable (NaN included).
    """
    if metadata is None:
        return None
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise InvalidValue(f"metadata {metadata!r}: must be a dict with string keys")
    try:
        text = json.dumps(metadata, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidValue(f"metadata {metadata!r}: not JSON-serialisable ({exc})") from None
    copied: dict[str, Any] = json.loads(text)
    return copied


def check_time(value: object, name: str) -> datetime | None:
    """A timezone-aware datetime (or epoch seconds) as UTC; None passes.

    Raises:
        InvalidValue: a naive datetime (its zone would be a guess) or another type.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidValue(f"{name} {value!r}: must be timezone-aware (e.g. datetime.now(UTC))")
        return value.astimezone(UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return datetime.fromtimestamp(value, UTC)
    raise InvalidValue(f"{name} {value!r}: must be a timezone-aware datetime or epoch seconds")
