"""Rules of the long-term tier: scopes, ids, categories, tags, content, metadata, times.

Ids follow one rule everywhere (store and injection tracker): they are case-insensitive and
normalised to lower case, so ``ABC`` and ``abc`` name the same memory.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Final

from ...foundation.errors import InvalidCategory, InvalidKey, InvalidSessionId, InvalidValue
from ...foundation.limits import MAX_VALUE_BYTES, bad_segment, check_text, encode_json, short_repr

__all__ = [
    "CATEGORY_SEGMENT",
    "ID_RULE",
    "MAX_CATEGORY_LENGTH",
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
MAX_CATEGORY_LENGTH: Final = 256
"""Longest category path, in characters (it becomes a directory path in the files layout)."""


def new_id() -> str:
    """A fresh id: the first 12 lower-case hex characters of a uuid4 (RockBot's rule)."""
    # The same 48 random bits a uuid4's first 12 hex characters hold, without building the uuid.
    return os.urandom(6).hex()


def check_scope(scope: object) -> str:
    """Raises: InvalidKey: ``scope`` breaks :data:`SCOPE_RULE`."""
    if not isinstance(scope, str) or not SCOPE_RULE.fullmatch(scope):
        raise InvalidKey(
            f"scope {short_repr(scope)}: must be 1-128 characters of letters, digits, '_', '.', '@', '-'"
        )
    return scope


def normalise_id(entry_id: object) -> str:
    """``entry_id`` lower-cased.

    Raises:
        InvalidKey: not a string matching :data:`ID_RULE` once lower-cased.
    """
    if not isinstance(entry_id, str) or not ID_RULE.fullmatch(entry_id.lower()):
        raise InvalidKey(
            f"memory id {short_repr(entry_id)}: must be 1-128 characters of letters, digits, '_', '.', '-' "
            "and not start with '.'"
        )
    return entry_id.lower()


def check_session_id(session_id: object) -> str:
    """Raises: InvalidSessionId: not 1-128 characters of ``[A-Za-z0-9_-]``."""
    if not isinstance(session_id, str) or not SESSION_RULE.fullmatch(session_id):
        raise InvalidSessionId(
            f"session id {short_repr(session_id)}: must be 1-128 characters of [A-Za-z0-9_-]"
        )
    return session_id


def check_category(category: object) -> str | None:
    """``category`` (None allowed), checked segment by segment.

    Raises:
        InvalidCategory: empty or whitespace, absolute, containing ``..``, a segment that is
            not ``[A-Za-z0-9_-]+`` (so no path can escape a directory), or longer than
            :data:`MAX_CATEGORY_LENGTH` characters.
    """
    if category is None:
        return None
    if not isinstance(category, str):
        raise InvalidCategory(f"category {short_repr(category)}: must be a string or None")
    if len(category) > MAX_CATEGORY_LENGTH:
        raise InvalidCategory(
            f"category {short_repr(category)}: {len(category)} characters, the limit is {MAX_CATEGORY_LENGTH}"
        )
    if not category.strip():
        raise InvalidCategory(f"category {short_repr(category)}: must not be empty or whitespace")
    if category.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", category):
        raise InvalidCategory(f"category {short_repr(category)}: must be a relative path, not absolute")
    if ".." in category:
        raise InvalidCategory(f"category {short_repr(category)}: must not contain '..'")
    if (segment := bad_segment(category, CATEGORY_SEGMENT)) is not None:
        raise InvalidCategory(
            f"category {short_repr(category)}: segment "
            f"{short_repr(segment)} must be 1+ characters of [A-Za-z0-9_-] "
            "(segments separated by single '/')"
        )
    return category


def check_content(content: object, field: str = "content") -> str:
    """``content`` if it is non-blank text of at most :data:`~memstack.foundation.limits.MAX_VALUE_BYTES`
    UTF-8 bytes.

    Raises:
        InvalidValue: not a string, blank, too long, or with a lone surrogate (names ``field``).
    """
    if not isinstance(content, str) or not content.strip():
        raise InvalidValue(f"{field} {short_repr(content)}: must be a non-blank string")
    return check_text(content, field, max_bytes=MAX_VALUE_BYTES)


def check_tags(tags: Iterable[str] | str | None) -> tuple[str, ...]:
    """Tags as a tuple: a comma-separated string is split; blanks are dropped, others stripped.

    Raises:
        InvalidValue: not a string or an iterable of strings, a tag that is not a string, longer
            than 256 characters or with a lone surrogate (the message names ``tags[i]``).
    """
    if tags is None:
        return ()
    if isinstance(tags, bytes) or not isinstance(tags, str | Iterable):
        raise InvalidValue(f"tags: expected a string or a list of strings, got {type(tags).__name__}")
    items: Iterable[object] = tags.split(",") if isinstance(tags, str) else tags
    out: list[str] = []
    for i, tag in enumerate(items):
        if not isinstance(tag, str):
            raise InvalidValue(f"tags[{i}]: tag {short_repr(tag)} must be a string")
        tag = check_text(tag, f"tags[{i}]").strip()
        if len(tag) > MAX_TAG_LENGTH:
            raise InvalidValue(
                f"tags[{i}]: tag {short_repr(tag[:40])}… is longer than {MAX_TAG_LENGTH} characters"
            )
        if tag:
            out.append(tag)
    return tuple(out)


def check_metadata(metadata: object) -> dict[str, Any] | None:
    """A JSON-serialisable copy of ``metadata`` (None allowed).

    Raises:
        InvalidValue: not a dict, or not JSON within :mod:`memstack.foundation.limits` (NaN, non-string
            keys, lone surrogates, nesting deeper than 100, over 1 MiB); names ``metadata['x']``.
    """
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise InvalidValue(f"metadata: must be a dict with string keys, got {type(metadata).__name__}")
    text = encode_json(metadata, "metadata")
    copied: dict[str, Any] = json.loads(text)
    return copied


def check_time(value: object, name: str) -> datetime | None:
    """A timezone-aware datetime (or epoch seconds) as UTC; None passes.

    Raises:
        InvalidValue: a naive datetime (its zone would be a guess), epoch seconds outside the
            years 1-9999, or another type.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidValue(f"{name} {short_repr(value)}: must be timezone-aware (e.g. datetime.now(UTC))")
        try:
            when = value.astimezone(UTC)
            # Times travel as epoch-seconds floats: the last instants of year 9999 round up into
            # year 10000 there, which no datetime holds.
            datetime.fromtimestamp(when.timestamp(), UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidValue(f"{name} {short_repr(value)}: outside the years 1-9999") from None
        return when
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidValue(
                f"{name}: {short_repr(value)} epoch seconds are outside the years 1-9999"
            ) from None
    raise InvalidValue(f"{name} {short_repr(value)}: must be a timezone-aware datetime or epoch seconds")
