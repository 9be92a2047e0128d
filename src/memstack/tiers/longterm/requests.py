"""The long-term tier's write requests: one typed save (create or update, alone or in a batch),
owned by the tier and checked once.

Each field's rule lives here and only here: :data:`RULES` gives what a door shows of it (its
description and JSON-schema bounds), :meth:`SaveMemory.of` runs the tier's checks
(:func:`~.validate.check_content`, ``check_category``, ``check_tags``, ``check_metadata``, the
times, :func:`~.supersede.check_expiry`...). ``LongTermMemory.save``, each item of ``save_many``
(through :func:`~.plan.plan_save`) and the operations' handlers all build this request, so a bad
value gets the same error class and message on every door. What depends on the store's clock
(an ``expires_at`` must be in the future, a ``ttl`` counts from now) is settled when the request
is written (:func:`~.plan.plan_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, TypedDict, Unpack

from ...foundation.errors import InvalidValue
from ...foundation.keyspace import check_subject
from ...foundation.limits import MAX_TTL_SECONDS
from ...foundation.rules import Rule
from .entry import MemoryEntry
from .supersede import MAX_SUPERSEDES, check_expiry, check_supersedes
from .validate import (
    MAX_CATEGORY_LENGTH,
    MAX_TAG_LENGTH,
    check_category,
    check_content,
    check_metadata,
    check_tags,
    check_time,
    new_id,
    normalise_id,
)

__all__ = ["RULES", "SAVE_FIELDS", "Rule", "SaveMemory", "SaveOptions"]

RULES: Final[Mapping[str, Rule]] = {
    "scope": Rule("Whose long-term memories: a user or an agent.", {"maxLength": 128}),
    "id": Rule("A memory id.", {"maxLength": 128}),
    "save_id": Rule("Save under this id (an update when it exists).", {"maxLength": 128}),
    "content": Rule("The fact or preference (non-blank)."),
    "category": Rule("A path such as user-preferences/music.", {"maxLength": MAX_CATEGORY_LENGTH}),
    "tags": Rule(f"Tags: a list, or one comma-separated text (each at most {MAX_TAG_LENGTH} characters)."),
    "metadata": Rule("Any JSON object kept with it."),
    "subject": Rule("The end user this is about (for forget).", {"maxLength": 256}),
    "supersedes": Rule(
        f"Ids of memories this one replaces (at most {MAX_SUPERSEDES}): they get valid_to and superseded_by."
    ),
    "valid_from": Rule("When the fact became true (default: when saved)."),
    "expires_at": Rule("When the memory expires (hidden, then deleted)."),
    "ttl": Rule(
        "Seconds until it expires (instead of expires_at).",
        {"exclusiveMinimum": 0, "maximum": MAX_TTL_SECONDS},
    ),
}
"""Field name -> its rule as the doors show it (``save_id``: the id a save takes)."""


class SaveOptions(TypedDict, total=False):
    """A save's fields, as ``LongTermMemory.save`` takes them (and each item of ``save_many``)."""

    content: str | None
    category: str | None
    tags: Iterable[str] | str | None
    metadata: dict[str, Any] | None
    id: str | None
    created_at: datetime | float | None
    subject: str | None
    supersedes: Iterable[str] | str | None
    valid_from: datetime | float | None
    expires_at: datetime | float | None
    ttl: float | None


SAVE_FIELDS: Final = frozenset(SaveOptions.__annotations__)
"""The fields a save takes by name."""
_GIVEN: Final = ("content", "category", "tags", "metadata", "id", "created_at")
"""The fields a :class:`~.entry.MemoryEntry` gives instead (with :data:`_KEPT`, unless given beside it)."""
_KEPT: Final = ("given_valid_from", "expires_at", "subject")


@dataclass(frozen=True, slots=True, kw_only=True)
class SaveMemory:
    """A checked save: ``id`` lower-cased (``generated``: made here, no id was given); at most one
    of ``expires_at`` and ``ttl``."""

    id: str
    content: str
    category: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None
    subject: str | None = None
    supersedes: tuple[str, ...] = ()
    created_at: datetime | None = None
    valid_from: datetime | None = None
    expires_at: datetime | None = None
    ttl: float | None = None
    generated: bool = False

    @classmethod
    def of(cls, entry: MemoryEntry | None = None, **options: Unpack[SaveOptions]) -> SaveMemory:
        """The save of ``entry`` (its fields; ``subject``, ``valid_from`` and the expiry may be
        given beside it) or of the fields, checked.

        Raises:
            InvalidValue: blank content, bad tags/metadata/time/subject, an unknown field, both
                ``entry`` and content or id, both ``expires_at`` and ``ttl``, a bad ``ttl``, an
                entry superseding itself (the message names the field).
            InvalidCategory: a category that breaks the path rule or is over 256 characters.
            InvalidKey: a bad id (of the entry or of one it supersedes).
        """
        unknown = sorted(set(options) - SAVE_FIELDS)
        if unknown:
            raise InvalidValue(
                f"unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(SAVE_FIELDS))}"
            )
        subject = options.get("subject")
        if subject is not None:
            check_subject(subject)
        superseded = check_supersedes(options.get("supersedes"))
        valid = check_time(options.get("valid_from"), "valid_from")
        expires_at, ttl = check_expiry(options.get("expires_at"), options.get("ttl"))
        given: dict[str, Any] = {
            name: options.get(name) for name in ("content", "category", "tags", "metadata")
        }
        given["id"], given["created_at"] = options.get("id"), options.get("created_at")
        if entry is not None:
            if given["content"] is not None or given["id"] is not None:
                raise InvalidValue("save(): pass either a MemoryEntry or content=/id=, not both")
            given = {
                name: getattr(entry, name) for name in (*given, "given_valid_from", "expires_at", "subject")
            }
            valid = valid or check_time(given["given_valid_from"], "valid_from")
            if expires_at is None and ttl is None:
                expires_at = check_time(given["expires_at"], "expires_at")
            if subject is None and given["subject"] is not None:
                subject = check_subject(given["subject"])
        entry_id = new_id() if given["id"] is None else normalise_id(given["id"])
        return cls(
            id=entry_id,
            content=check_content(given["content"]),
            category=check_category(given["category"]),
            tags=check_tags(given["tags"]),
            metadata=check_metadata(given["metadata"]),
            subject=subject,
            supersedes=check_supersedes(superseded, entry_id) if superseded else (),
            created_at=check_time(given["created_at"], "created_at"),
            valid_from=valid,
            expires_at=expires_at,
            ttl=ttl,
            generated=given["id"] is None,
        )
