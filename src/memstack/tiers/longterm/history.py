"""The history of a long-term entry: every change, with the old and the new version and who made it.

Each entry keeps a list ``lt:{scope}:h:{id}`` (family ``long_term.history``), appended in the same
atomic batch as the change it records, so the history never misses a change nor holds one that
did not happen. One item per change, oldest first, the last :data:`HISTORY_MAX` kept::

    {"at": 1795465007.12, "op": "update", "actor": "api",
     "old": "<the stored JSON of the version before>", "new": "<the stored JSON after>",
     "related": ["ids of entries the change links to"], "subject": "<label of the writer>"}

| op | what happened | ``old`` | ``new`` |
|---|---|---|---|
| ``create`` | the entry was written for the first time | null | the entry |
| ``update`` | it was saved again (content, tags, expiry...) | before | after |
| ``supersede`` | another entry replaced it (``valid_to``, ``superseded_by`` set) | before | after |
| ``retire`` | a dream pass moved it to the pass's archive | the entry | null |
| ``restore`` | an undo (or an import) put a version back | before or null | the version restored |

Actors: ``api`` (the library, HTTP, CLI), ``tool`` (an agent tool), ``import``, ``dream:{record
id}`` (a pass) and ``undo:{record id}``. ``related`` names the entries a change links: the ones a
new entry supersedes, the one that superseded this entry, a pass's sources.

Deleting an entry (``delete``, ``forget``, the expiry sweep) deletes its history with it; a retired
entry's history lives as long as the pass's archive (its TTL). Each item is labelled with the
subject of the version it writes (the old version's when it writes none), so ``forget(subject=…)``
removes the items that subject wrote and every copy of their versions in the others
(:func:`without_subject`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from ...engines.base import Batch
from ...foundation.errors import InvalidValue
from ...foundation.keyspace import label_of, labelled
from ...foundation.limits import short_repr
from ...foundation.timefmt import iso_utc
from .entry import MemoryEntry, entry_json, from_json

__all__ = [
    "ACTOR_RULE",
    "HISTORY_MAX",
    "OPS",
    "HistoryEvent",
    "append",
    "check_actor",
    "decode",
    "event_json",
    "holds",
    "without_subject",
]

HISTORY_MAX: Final = 1000
"""Changes kept per entry (the oldest go first)."""
OPS: Final = ("create", "update", "supersede", "retire", "restore")
"""What a history item records (module table)."""
ACTOR_RULE: Final = re.compile(r"[A-Za-z0-9_.:@/-]{1,128}")
"""An actor: 1-128 of letters, digits, ``_ . : @ / -`` (``api``, ``tool``, ``dream:d3f…``)."""


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One change of an entry.

    Attributes:
        at: when (timezone-aware UTC).
        op: one of :data:`OPS`.
        actor: who: ``api``, ``tool``, ``import``, ``dream:{record id}``, ``undo:{record id}``.
        old: the version before (None for a create, or when it was forgotten).
        new: the version after (None for a retire, or when it was forgotten).
        related_ids: entries the change links (superseded ones, the superseding one, sources).
    """

    at: datetime
    op: str
    actor: str
    old: MemoryEntry | None
    new: MemoryEntry | None
    related_ids: tuple[str, ...] = ()


def check_actor(actor: object) -> str:
    """``actor`` if it follows :data:`ACTOR_RULE`.

    Raises:
        InvalidValue: anything else (names the value and the rule).
    """
    if not isinstance(actor, str) or ACTOR_RULE.fullmatch(actor) is None:
        raise InvalidValue(f"actor {short_repr(actor)}: must be 1-128 characters of [A-Za-z0-9_.:@/-]")
    return actor


_COMPACT: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_READ: Final = object()  # the writer's label is read from the stored version


def _item(
    at: float, op: str, actor: str, old: str | None, new: str | None, related: Sequence[str], writer: object
) -> str:
    if writer is _READ:
        writer = label_of(json.loads(new)) if new is not None else None
        if writer is None and new is None and old is not None:
            writer = label_of(json.loads(old))
    data: dict[str, Any] = {"at": at, "op": op, "actor": actor, "old": old, "new": new}
    if related:
        data["related"] = list(related)
    return _COMPACT.encode(labelled(data, writer if isinstance(writer, str) else None))


def append(
    batch: Batch,
    key: str,
    *,
    at: float,
    op: str,
    actor: str,
    old: str | None,
    new: str | None,
    related: Sequence[str] = (),
    keep_ms: int | None = None,
    fresh: bool = False,
    writer: str | object | None = _READ,
) -> None:
    """Queue one item on ``batch`` (the batch of the change itself). ``keep_ms``: the history
    then expires with a retired entry's archive; without it, it is kept as long as the entry.
    ``fresh``: the entry's id was generated just now, so it has no history yet (nothing to trim,
    no expiry to lift): one command instead of three. ``writer``: the subject label of ``new``
    when the caller knows it (else it is read from ``new``, or ``old`` for a retire)."""
    batch.rpush(key, _item(at, op, actor, old, new, related, writer))
    if fresh and keep_ms is None:
        return
    batch.ltrim(key, -HISTORY_MAX, -1)
    if keep_ms is None:
        batch.persist(key)
    else:
        batch.pexpire(key, max(1, keep_ms))


def decode(raw: str) -> HistoryEvent:
    """One stored item as a :class:`HistoryEvent`.

    Raises:
        InvalidValue: not an item this module wrote.
    """
    try:
        data = json.loads(raw)
        old, new = data.get("old"), data.get("new")
        return HistoryEvent(
            at=datetime.fromtimestamp(float(data["at"]), UTC),
            op=str(data["op"]),
            actor=str(data["actor"]),
            old=None if old is None else from_json(old),
            new=None if new is None else from_json(new),
            related_ids=tuple(str(i) for i in data.get("related", ())),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidValue(f"history item {short_repr(raw)}: unreadable ({exc})") from None


def event_json(event: HistoryEvent) -> dict[str, Any]:
    """The one JSON shape of a history item on every surface (entries as
    :func:`~memstack.tiers.longterm.entry.entry_json`, the time ISO-8601 UTC)."""
    return {
        "at": iso_utc(event.at),
        "op": event.op,
        "actor": event.actor,
        "old": None if event.old is None else entry_json(event.old),
        "new": None if event.new is None else entry_json(event.new),
        "related_ids": list(event.related_ids),
    }


def _theirs(raw: str | None, subject: str) -> bool:
    return raw is not None and label_of(json.loads(raw)) == subject


def holds(raws: Sequence[str], subject: str) -> bool:
    """Whether stored items ``raws`` hold anything of ``subject`` (an item they wrote, or a copy
    of one of their versions)."""
    for raw in raws:
        data = json.loads(raw)
        if (
            label_of(data) == subject
            or _theirs(data.get("old"), subject)
            or _theirs(data.get("new"), subject)
        ):
            return True
    return False


def without_subject(raws: Sequence[str], subject: str) -> list[str]:
    """``raws`` without what ``subject`` wrote: their items go, and the copies of their versions
    in the other items (an item left with neither version goes too)."""
    kept: list[str] = []
    for raw in raws:
        data = json.loads(raw)
        if label_of(data) == subject:
            continue
        for side in ("old", "new"):
            if _theirs(data.get(side), subject):
                data[side] = None
        if data.get("old") is None and data.get("new") is None:
            continue
        kept.append(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return kept
