"""Supersession and expiry: the rules of the validity fields of a save, as pure functions.

An entry may name the entries it supersedes (``save(…, supersedes=[id])``): each of them gets
``valid_to`` = the new entry's ``valid_from`` and ``superseded_by`` = its id, in the save's own
batch, and stays readable (``get``, ``history``, searches with ``include_history`` or ``as_of``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from ...foundation.errors import Conflict, EntryNotFound, InvalidValue
from ...foundation.limits import MAX_TTL_SECONDS, short_repr
from .entry import MemoryEntry, from_json
from .validate import check_time, normalise_id

__all__ = ["MAX_SUPERSEDES", "check_expiry", "check_supersedes", "expiry_of", "superseded_versions"]

MAX_SUPERSEDES = 100
"""Most entries one save may supersede."""


def check_supersedes(supersedes: Iterable[str] | str | None, own_id: str | None = None) -> tuple[str, ...]:
    """The ids to supersede, lower-cased, without repeats (a single id may be given as a string).

    Raises:
        InvalidKey: a malformed id.
        InvalidValue: not a list of ids, more than :data:`MAX_SUPERSEDES`, or the saved entry's own id.
    """
    if supersedes is None:
        return ()
    if isinstance(supersedes, str):
        supersedes = [supersedes]
    if isinstance(supersedes, bytes | dict) or not isinstance(supersedes, Iterable):
        raise InvalidValue(f"supersedes {short_repr(supersedes)}: must be a list of memory ids")
    ids = tuple(dict.fromkeys(normalise_id(i) for i in supersedes))
    if len(ids) > MAX_SUPERSEDES:
        raise InvalidValue(f"supersedes: {len(ids)} ids, more than the {MAX_SUPERSEDES} one save may name")
    if own_id is not None and own_id in ids:
        raise InvalidValue(f"supersedes {own_id!r}: an entry cannot supersede itself")
    return ids


def check_expiry(expires_at: object, ttl: object) -> tuple[datetime | None, float | None]:
    """The expiry a save asks for, checked: ``(expires_at as UTC, ttl)``, at most one of them.

    Raises:
        InvalidValue: both given, a ``ttl`` that is not a number of seconds > 0 and at most ten
            years, or an ``expires_at`` that is not a time.
    """
    if ttl is not None and expires_at is not None:
        raise InvalidValue("expires_at and ttl: give one of them")
    if ttl is not None:
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= MAX_TTL_SECONDS:
            raise InvalidValue(f"ttl {short_repr(ttl)}: must be a number of seconds > 0, at most ten years")
        return None, float(ttl)
    return check_time(expires_at, "expires_at"), None


def expiry_of(expires_at: object, ttl: object, now: float) -> datetime | None:
    """The expiry a save asks for: ``expires_at`` (a time), or ``ttl`` seconds from ``now``.

    Raises:
        InvalidValue: as :func:`check_expiry`, or an ``expires_at`` that is not after now.
    """
    when, seconds = check_expiry(expires_at, ttl)
    if seconds is not None:
        return datetime.fromtimestamp(now, UTC) + timedelta(seconds=seconds)
    if when is not None and when.timestamp() <= now:
        raise InvalidValue(f"expires_at {when.isoformat()}: must be in the future (use delete to remove now)")
    return when


def superseded_versions(
    new: MemoryEntry, found: Sequence[tuple[str, str | None]], now: datetime, scope: str
) -> list[tuple[str, str, MemoryEntry]]:
    """``(id, stored JSON, new version)`` of each entry ``new`` supersedes, from ``found`` (each
    id with its stored JSON); an entry that already says exactly this is left out (nothing to write).

    Raises:
        EntryNotFound: an id the scope does not hold.
        Conflict: an entry another entry already superseded.
        InvalidValue: ``new`` became valid before an entry it supersedes did.
    """
    out = []
    start = new.valid_from
    for entry_id, raw in found:
        if raw is None:
            raise EntryNotFound(f"supersedes {entry_id!r}: no such memory in scope {scope!r}; nothing saved")
        old = from_json(raw)
        if old.superseded_by is not None and old.superseded_by != new.id:
            raise Conflict(
                f"supersedes {entry_id!r}: already superseded by {old.superseded_by!r}; nothing saved"
            )
        if start < old.valid_from:
            raise InvalidValue(
                f"valid_from {start.isoformat()}: before the valid_from {old.valid_from.isoformat()} "
                f"of the superseded memory {entry_id!r}"
            )
        if old.valid_to == start and old.superseded_by == new.id:
            continue
        out.append((entry_id, raw, replace(old, valid_to=start, superseded_by=new.id, updated_at=now)))
    return out
