"""The one timestamp format of the CLI: ISO-8601 UTC ending in ``Z`` (``2026-11-23T20:16:47.123Z``)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["iso_utc"]


def iso_utc(value: float | datetime | None, *, digits: int = 3) -> str | None:
    """``value`` (Unix seconds or an aware datetime) as ISO-8601 UTC with ``digits`` fraction digits.

    ``None`` stays ``None`` (no time). A naive datetime is taken as UTC.

    >>> iso_utc(1795465007.1234)
    '2026-11-23T20:16:47.123Z'
    >>> iso_utc(datetime(2026, 11, 23, 21, 16, 47, 123456, tzinfo=UTC), digits=6)
    '2026-11-23T21:16:47.123456Z'
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        when = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    else:
        when = datetime.fromtimestamp(value, UTC)
    timespec = {0: "seconds", 3: "milliseconds", 6: "microseconds"}[digits]
    return when.replace(tzinfo=None).isoformat(timespec=timespec) + "Z"
