"""The one timestamp format of every surface: ISO-8601 UTC ending in ``Z``, microseconds
(``2026-11-23T20:16:47.123456Z``). Stored records keep their own formats; this is how they leave."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import overload

__all__ = ["iso_utc", "strict_instant"]


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


def strict_instant(value: object) -> datetime | None:
    """``value`` read by the one strict time rule, as an aware UTC datetime, or None when it
    breaks the rule: epoch **seconds** (a number, or a string of digits with an optional
    fraction; never guessed to be milliseconds, however large) or ISO-8601 **with** a zone
    (``Z`` or an offset). A zone-less ISO time is refused (its zone would be a guess), as is
    anything outside the years 1-9999.

    >>> strict_instant("2026-11-23T20:16:47Z").isoformat()
    '2026-11-23T20:16:47+00:00'
    >>> strict_instant("99999999999").year  # seconds: year 5138, not a 1973 read as milliseconds
    5138
    >>> strict_instant("2026-11-23T20:16:47") is None
    True
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.replace(".", "", 1).isdigit():
            value = float(text)
        else:
            try:
                when = datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
            except ValueError:
                return None
            if when.tzinfo is None or when.utcoffset() is None:
                return None
            value = when.astimezone(UTC).timestamp()
    if isinstance(value, int | float):
        try:
            when = datetime.fromtimestamp(value, UTC)
            datetime.fromtimestamp(when.timestamp(), UTC)  # the float must come back (year 9999's end)
        except (OverflowError, OSError, ValueError):
            return None
        return when
    return None
