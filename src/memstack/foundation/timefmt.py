"""The one timestamp format of every surface: ISO-8601 UTC ending in ``Z``, microseconds
(``2026-11-23T20:16:47.123456Z``). Stored records keep their own formats; this is how they leave."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload

__all__ = ["iso_utc"]


@overload
def iso_utc(value: float | datetime, *, digits: int = 6) -> str: ...
@overload
def iso_utc(value: None, *, digits: int = 6) -> None: ...
def iso_utc(value: float | datetime | None, *, digits: int = 6) -> str | None:
    """``value`` (Unix seconds or a datetime) as ISO-8601 UTC with ``digits`` (0, 3 or 6) fraction
    digits; always that many, so every surface writes the same text for the same instant.

    ``None`` stays ``None`` (no time). A naive datetime is taken as UTC. Human tables use
    ``digits=3``; JSON everywhere uses the default.

    >>> iso_utc(1795465007.123456)
    '2026-11-23T20:16:47.123456Z'
    >>> iso_utc(datetime(2026, 11, 23, 21, 16, 47, 123456, tzinfo=UTC), digits=3)
    '2026-11-23T21:16:47.123Z'
    >>> iso_utc(datetime(2026, 11, 23, 21, 16, 47, tzinfo=UTC))
    '2026-11-23T21:16:47.000000Z'
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        when = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    else:
        when = datetime.fromtimestamp(value, UTC)
    timespec = {0: "seconds", 3: "milliseconds", 6: "microseconds"}[digits]
    return when.replace(tzinfo=None).isoformat(timespec=timespec) + "Z"
