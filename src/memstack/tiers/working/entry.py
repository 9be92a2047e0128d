"""Working-memory entries as plain data: the record, its storage codec, filters and search text.

Pure functions, no storage. An entry is stored as two hash fields under its full key: its
*meta* (expiry, store time, category, tags: small, read for cap checks and inventories) and its
*value* (JSON text, read only when asked for).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...foundation import limits
from ...foundation.errors import InvalidCategory, InvalidValue
from ...foundation.keyspace import label_of, labelled
from ...foundation.limits import short_repr

__all__ = [
    "MAX_CATEGORY_LENGTH",
    "MAX_TAG_LENGTH",
    "WorkingEntry",
    "category_matches",
    "check_category",
    "check_tags",
    "check_ttl",
    "decode_meta",
    "document_text",
    "dump_value",
    "encode_meta",
    "tags_match",
]

MAX_CATEGORY_LENGTH: Final = 256
"""Longest category path, in characters (the long-term tier's limit too)."""
MAX_TAG_LENGTH: Final = 256
"""Longest tag, in characters (the long-term tier's limit too)."""
_CATEGORY: Final = re.compile(r"[A-Za-z0-9_\-]+(?:/[A-Za-z0-9_\-]+)*")
_TO_SPACE_KEY: Final = str.maketrans({"_": " ", "-": " ", "/": " "})
_TO_SPACE_CATEGORY: Final = str.maketrans({"/": " ", "-": " "})


@dataclass(frozen=True, slots=True)
class WorkingEntry:
    """One working-memory entry.

    Attributes:
        key: the full, lower-cased path (``session/abc/emails``).
        value: the stored JSON value (a fresh object on every read), or None in a value-less listing.
        stored_at: when it was written (engine clock, seconds since the epoch).
        expires_at: when it stops being live (live while ``now < expires_at``).
        category: an optional category path (``email/inbox``).
        tags: the tags, in the order given.
        subject: the end user this version is about (None: unlabelled).
    """

    key: str
    value: Any
    stored_at: float
    expires_at: float
    category: str | None = None
    tags: tuple[str, ...] = ()
    subject: str | None = None

    def remaining(self, now: float) -> float:
        """Seconds left before expiry at ``now`` (never negative), to the millisecond.

        Computed in whole milliseconds, the engines' unit, so no float error shaves a second off
        a formatted time.
        """
        return max(0, round(self.expires_at * 1000) - round(now * 1000)) / 1000


def check_ttl(ttl: object, field: str = "ttl") -> int:
    """A TTL in seconds as whole milliseconds (at least 1).

    Raises:
        InvalidValue: not a number greater than 0 and at most ten years (names ``field``).
    """
    return max(1, math.ceil(limits.check_ttl(ttl, field) * 1000))


def check_category(category: object) -> str | None:
    """A category path (``a/b-c``) or None.

    Raises:
        InvalidCategory: not a string, blank, absolute, with a segment outside ``[A-Za-z0-9_-]``,
            or longer than :data:`MAX_CATEGORY_LENGTH` characters.
    """
    if category is None:
        return None
    if isinstance(category, str) and len(category) > MAX_CATEGORY_LENGTH:
        raise InvalidCategory(
            f"working-memory category {short_repr(category)}: {len(category)} characters, "
            f"the limit is {MAX_CATEGORY_LENGTH}"
        )
    if not isinstance(category, str) or not _CATEGORY.fullmatch(category):
        raise InvalidCategory(
            f"working-memory category {short_repr(category)}: must be segments of [A-Za-z0-9_-] joined by '/'"
        )
    return category


def check_tags(tags: object, field: str = "tags") -> tuple[str, ...]:
    """Tags as a tuple of non-blank, stripped strings (None → no tags).

    Raises:
        InvalidValue: not a list of strings, a blank tag, a tag longer than
            :data:`MAX_TAG_LENGTH` characters or with a lone surrogate (names ``tags[i]``).
    """
    if tags is None:
        return ()
    if isinstance(tags, str | bytes) or not isinstance(tags, Iterable):
        raise InvalidValue(f"{field}: must be a list of strings, got {type(tags).__name__}")
    out: list[str] = []
    for i, tag in enumerate(tags):
        tag = limits.check_text(tag, f"{field}[{i}]").strip()
        if not tag:
            raise InvalidValue(f"{field}[{i}]: a tag must be a non-blank string")
        if len(tag) > MAX_TAG_LENGTH:
            raise InvalidValue(f"{field}[{i}]: a tag of {len(tag)} characters, the limit is {MAX_TAG_LENGTH}")
        out.append(tag)
    return tuple(out)


def dump_value(value: object, max_bytes: int = limits.MAX_VALUE_BYTES) -> str:
    """``value`` as JSON text (:func:`memstack.foundation.limits.encode_json`, the rule of every tier).

    Raises:
        InvalidValue: not JSON (NaN, infinities, lone surrogates, nesting deeper than 100...) or
            more than ``max_bytes`` bytes of JSON; the message names ``value`` and the part.
    """
    return limits.encode_json(value, "value", max_bytes=max_bytes)


def encode_meta(
    expires_ms: int, stored_ms: int, category: str | None, tags: Sequence[str], subject: str | None = None
) -> str:
    """The meta field of an entry (with the version's subject label when it has one)."""
    meta = {"e": expires_ms, "s": stored_ms, "c": category, "t": list(tags)}
    return json.dumps(labelled(meta, subject), separators=(",", ":"))


def decode_meta(key: str, meta: str | dict[str, Any], value: str | None) -> WorkingEntry:
    """An entry from its stored meta, raw or parsed (and value JSON, None for a value-less listing)."""
    data = json.loads(meta) if isinstance(meta, str) else meta
    return WorkingEntry(
        key=key,
        value=None if value is None else json.loads(value),
        stored_at=data["s"] / 1000,
        expires_at=data["e"] / 1000,
        category=data["c"],
        tags=tuple(data["t"]),
        subject=label_of(data),
    )


def category_matches(wanted: str, category: str | None) -> bool:
    """The seed's category filter: exact or a sub-path, case-insensitive; no category never passes."""
    if category is None:
        return False
    have, want = category.lower(), wanted.lower().rstrip("/")
    return have == want or have.startswith(want + "/")


def tags_match(wanted: Iterable[str], tags: Iterable[str]) -> bool:
    """True when every wanted tag is on the entry (case-insensitive)."""
    have = {t.lower() for t in tags}
    return all(w.lower() in have for w in wanted)


def document_text(entry: WorkingEntry) -> str:
    """What BM25 sees (spec item 46): key with ``_ - /`` as spaces, value, tags, category."""
    value = entry.value if isinstance(entry.value, str) else json.dumps(entry.value, ensure_ascii=False)
    parts = [entry.key.translate(_TO_SPACE_KEY), value]
    if entry.tags:
        parts.append(" ".join(entry.tags))
    if entry.category is not None:
        parts.append(entry.category.translate(_TO_SPACE_CATEGORY))
    return " ".join(parts)
