"""Working-memory key rules: pure functions over strings, no storage.

A key is a ``/``-separated path such as ``session/abc/emails``. Its *namespace* is its first two
segments (``session/abc``); a key of one or two segments is its own namespace.
Keys are compared case-insensitively, so every key is normalised to lower case once, here, and
stored and shown in that form (one rule everywhere), with one exception: the second segment of a
``session/…`` key is a session id and keeps its case as given. Session ids are case-sensitive, so
``session/alice`` and ``session/Alice`` are two sessions with two namespaces; folding them would let
one session read and forget the other's entries. Entries stored before this rule sit under the
lower-cased id: an all-lower-case session keeps them, and they stay readable by their full path.

Segments are 1+ characters of ``[A-Za-z0-9_.:@+=-]``; a whole key is at most :data:`MAX_KEY_LENGTH`
characters. Prefixes match whole segments: ``session/s1`` covers ``session/s1`` and
``session/s1/…`` but never ``session/s10/…``.
"""

from __future__ import annotations

import re
from typing import Final

from ...foundation.errors import InvalidKey
from ...foundation.limits import bad_segment, short_repr

__all__ = [
    "MAX_KEY_LENGTH",
    "covers",
    "is_user_namespace",
    "namespace_of",
    "normalize_key",
    "normalize_namespace",
    "normalize_prefix",
    "resolve_read",
    "resolve_write",
    "top_segment",
]

MAX_KEY_LENGTH: Final = 512
_SESSION_TOP: Final = "session"
_SEGMENT = re.compile(r"[A-Za-z0-9_.:@+=\-]+")
_RULE = f"a '/'-separated path of segments of [A-Za-z0-9_.:@+=-], at most {MAX_KEY_LENGTH} characters"


def normalize_key(key: object) -> str:
    """``key`` checked and lower-cased, except a session id (``session/{id}/…``), kept as given.

    Raises:
        InvalidKey: not a string, empty, too long, or with an empty or ill-formed segment.
    """
    if not isinstance(key, str):
        raise InvalidKey(f"working-memory key {short_repr(key)}: must be a string ({_RULE})")
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidKey(f"working-memory key {short_repr(key)}: must be {_RULE}")
    if (segment := bad_segment(key, _SEGMENT)) is not None:
        raise InvalidKey(
            f"working-memory key {short_repr(key)}: segment {short_repr(segment)} breaks the rule ({_RULE})"
        )
    return _fold(key)


def _fold(key: str) -> str:
    parts = key.split("/", 2)
    top = parts[0].lower()
    if top != _SESSION_TOP or len(parts) == 1:
        return key.lower()
    return "/".join([top, parts[1], *(p.lower() for p in parts[2:])])


def namespace_of(key: str) -> str:
    """The first two segments of a normalised key (the key itself when it has fewer)."""
    return "/".join(key.split("/", 2)[:2])


def top_segment(key: str) -> str:
    """The first segment of a normalised key."""
    return key.split("/", 1)[0]


def normalize_namespace(namespace: object) -> str:
    """A namespace to bind a :class:`WorkingMemory` to: exactly two segments, normalised.

    Raises:
        InvalidKey: not a valid key, or not of exactly two segments (``session/abc``).
    """
    ns = normalize_key(namespace)
    if ns.count("/") != 1:
        raise InvalidKey(
            f"working-memory namespace {short_repr(namespace)}: "
            f"must be exactly two segments, e.g. 'session/abc'"
        )
    return ns


def normalize_prefix(prefix: object) -> str:
    """A list/search prefix: ``""`` for everything, else a normalised path (trailing ``/`` dropped).

    Raises:
        InvalidKey: an ill-formed path.
    """
    if prefix is None:
        return ""
    if not isinstance(prefix, str):
        raise InvalidKey(f"working-memory prefix {short_repr(prefix)}: must be a string ({_RULE})")
    stripped = prefix.strip().rstrip("/")
    return normalize_key(stripped) if stripped else ""


def covers(prefix: str, key: str) -> bool:
    """True when normalised ``key`` lies under normalised ``prefix`` by whole segments."""
    return not prefix or key == prefix or key.startswith(prefix + "/")


def resolve_read(namespace: str, key: object) -> str:
    """The full key a read of ``key`` means: a path (contains ``/``) as is, else under ``namespace``.

    Raises:
        InvalidKey: an ill-formed key.
    """
    if isinstance(key, str) and "/" not in key:
        return f"{namespace}/{normalize_key(key)}"
    return normalize_key(key)


def resolve_write(namespace: str, key: object) -> str:
    """The full key a write of ``key`` means; writes stay in the bound ``namespace``.

    Raises:
        InvalidKey: an ill-formed key, or a full path into another namespace.
    """
    full = resolve_read(namespace, key)
    if namespace_of(full) != namespace:
        raise InvalidKey(
            f"working-memory key {short_repr(key)}: writes go to "
            f"the own namespace {short_repr(namespace)} only "
            f"(its namespace is {namespace_of(full)!r})"
        )
    return full


def is_user_namespace(namespace: str) -> bool:
    """True for a user session's namespace (``session/…``, any case): the ones RockBot injects."""
    return namespace.lower().startswith("session/")
