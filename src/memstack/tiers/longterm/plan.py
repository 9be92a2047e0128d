"""The small core every save shares (``save`` and ``save_many``): a checked request
(:class:`~.requests.SaveMemory`) becomes a :class:`SavePlan`, a plan and the stored version become
the new version, and the new version with the entries it supersedes is queued on a batch.

Keeping these three steps in one place means a single save and a bulk save validate the same
fields with the same messages, and write the same keys, history items and change-log lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Unpack

from ...engines import Engine
from ...engines.base import Batch
from . import writes
from .entry import MemoryEntry, to_json
from .layout import ScopeKeys
from .query import document_text
from .requests import SaveMemory, SaveOptions
from .supersede import expiry_of

__all__ = ["SavePlan", "guard_version", "now_of", "plan_of", "plan_save", "queue_version"]


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


def plan_of(request: SaveMemory, now: float) -> SavePlan:
    """The plan of a checked save at ``now``: its expiry settled (``ttl`` from now; an
    ``expires_at`` must be after now).

    Raises:
        InvalidValue: an ``expires_at`` that is not after ``now``.
    """
    template = MemoryEntry(
        id=request.id,
        content=request.content,
        category=request.category,
        tags=request.tags,
        metadata=request.metadata,
        subject=request.subject,
        expires_at=expiry_of(request.expires_at, request.ttl, now),
    )
    return SavePlan(
        template, request.created_at, request.valid_from, request.supersedes, generated=request.generated
    )


def plan_save(*, now: float, entry: MemoryEntry | None = None, **fields: Unpack[SaveOptions]) -> SavePlan:
    """Check one save's fields (the tier's one :class:`~.requests.SaveMemory`) and plan it at ``now``.

    Raises:
        InvalidValue, InvalidCategory, InvalidKey: as ``LongTermMemory.save``.
    """
    return plan_of(SaveMemory.of(entry, **fields), now)


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
