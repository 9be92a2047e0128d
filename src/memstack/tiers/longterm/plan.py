"""The small core every save shares (``save`` and ``save_many``): a checked request becomes a
:class:`SavePlan`, a plan and the stored version become the new version, and the new version with
the entries it supersedes is queued on a batch.

Keeping these three steps in one place means a single save and a bulk save validate the same
fields with the same messages, and write the same keys, history items and change-log lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from ...engines import Engine
from ...engines.base import Batch
from ...foundation.errors import InvalidValue
from ...foundation.keyspace import check_subject
from . import writes
from .entry import MemoryEntry, to_json
from .layout import ScopeKeys
from .query import document_text
from .supersede import check_supersedes, expiry_of
from .validate import (
    check_category,
    check_content,
    check_metadata,
    check_tags,
    check_time,
    new_id,
    normalise_id,
)

__all__ = ["SavePlan", "guard_version", "now_of", "plan_save", "queue_version"]


@dataclass(frozen=True, slots=True)
class SavePlan:
    """A checked save: the entry's fields (``template``), the times given, the ids superseded."""

    template: MemoryEntry
    created: datetime | None
    valid: datetime | None
    superseded: tuple[str, ...]
    generated: bool = False  # the id was made here (no id given): no earlier version can exist

    @property
    def id(self) -> str:
        return self.template.id

    def version(self, old: MemoryEntry | None, now: datetime) -> MemoryEntry:
        """The version to store over ``old`` (None: a new entry) at ``now``: an update keeps the
        creation time, ``valid_from`` (unless given) and the supersession fields."""
        t = self.template
        if old is None:  # fields in order: dataclasses.replace cost more than the rest of a bulk item
            return MemoryEntry(
                t.id, t.content, t.category, t.tags, self.created or now, t.updated_at, t.metadata,
                t.subject, self.valid, t.valid_to, t.superseded_by, t.expires_at,
            )  # fmt: skip
        return replace(
            t,
            created_at=self.created or old.created_at,
            updated_at=now,
            given_valid_from=self.valid or old.given_valid_from,
            valid_to=old.valid_to,
            superseded_by=old.superseded_by,
        )


def plan_save(
    *,
    now: float,
    entry: MemoryEntry | None = None,
    content: str | None = None,
    category: str | None = None,
    tags: Iterable[str] | str | None = None,
    metadata: dict[str, Any] | None = None,
    id: str | None = None,  # noqa: A002 - the field is called id everywhere
    created_at: datetime | float | None = None,
    subject: str | None = None,
    supersedes: Iterable[str] | str | None = None,
    valid_from: datetime | float | None = None,
    expires_at: datetime | float | None = None,
    ttl: float | None = None,
) -> SavePlan:
    """Check one save's fields (see ``LongTermMemory.save`` for the rules and errors).

    Raises:
        InvalidValue, InvalidCategory, InvalidKey: as ``LongTermMemory.save``.
    """
    if subject is not None:
        check_subject(subject)
    superseded = check_supersedes(supersedes)
    given_valid = check_time(valid_from, "valid_from")
    expiry = expiry_of(expires_at, ttl, now)
    if entry is not None:
        if content is not None or id is not None:
            raise InvalidValue("save(): pass either a MemoryEntry or content=/id=, not both")
        content, category, tags, metadata = entry.content, entry.category, entry.tags, entry.metadata
        id, created_at = entry.id, entry.created_at  # noqa: A001 - see the signature
        given_valid = given_valid or check_time(entry.given_valid_from, "valid_from")
        if expiry is None:
            expiry = expiry_of(entry.expires_at, None, now)
        if subject is None and entry.subject is not None:
            subject = check_subject(entry.subject)
    entry_id = new_id() if id is None else normalise_id(id)
    template = MemoryEntry(
        id=entry_id,
        content=check_content(content),
        category=check_category(category),
        tags=check_tags(tags),
        metadata=check_metadata(metadata),
        subject=subject,
        expires_at=expiry,
    )
    return SavePlan(
        template,
        check_time(created_at, "created_at"),
        given_valid,
        check_supersedes(superseded, entry_id) if superseded else (),
        generated=id is None,
    )


def now_of(engine: Engine) -> datetime:
    """The engine clock's now as a UTC datetime (the times a save stamps)."""
    return datetime.fromtimestamp(engine.clock.now(), UTC)


def guard_version(
    batch: Batch,
    keys: ScopeKeys,
    entry_id: str,
    old_raw: str | None,
    closed: Sequence[tuple[str, str, MemoryEntry]],
) -> None:
    """Queue the guards of one save: the entry and those it supersedes are still as read."""
    batch.require_equal(keys.entry(entry_id), old_raw)
    for closed_id, raw, _ in closed:
        batch.require_equal(keys.entry(closed_id), raw)


def queue_version(
    engine: Engine,
    batch: Batch,
    keys: ScopeKeys,
    scope: str,
    new: MemoryEntry,
    old_raw: str | None,
    old: MemoryEntry | None,
    closed: Sequence[tuple[str, str, MemoryEntry]],
    *,
    actor: str,
    op: str | None,
    at: float,
    related: tuple[str, ...] = (),
) -> bool:
    """Queue writing ``new`` over ``old_raw`` and the ``closed`` versions of the entries it
    supersedes (after their :func:`guard_version`: a batch's guards come before its writes); True
    when the searchable text changed (its vector is then dropped here and must be computed again)."""
    text_changed = old is None or document_text(old) != document_text(new)
    writes.put(
        engine,
        batch,
        keys,
        scope,
        new,
        to_json(new),
        old_raw=old_raw,
        op=op or ("create" if old is None else "update"),
        actor=actor,
        at=at,
        related=related,
    )
    if text_changed:
        batch.hdel(keys.vectors, new.id)
    for _, raw, version in closed:
        writes.put(
            engine,
            batch,
            keys,
            scope,
            version,
            to_json(version),
            old_raw=raw,
            op="supersede",
            actor=actor,
            at=at,
            related=(new.id,),
        )
    return text_changed
