"""Relative dates in a conversation turn, resolved against the time of its session.

"I went to a support group yesterday", said on 8 May 2023, is about 7 May 2023; a question asking
what happened "on 7 May" or "in May 2023" shares no word with the turn. :func:`resolved_dates` finds
the relative expressions rules can read ("yesterday", "last Saturday", "last week", "two weeks ago",
"last month", "next month", "last year", ...) and names the dates they point at, in the words the
context field already uses for the session date (``7 May 2023``; a week as the day it starts, a month
as ``May 2023``, a year as ``2022``). No language model runs.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Final

__all__ = ["resolved_dates"]

_DAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS: Final = {
    "a": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "couple of": 2,
    "few": 3,
}
_UNIT = r"(day|week|month|year)s?"
_AGO = re.compile(rf"\b(\d+|a|one|two|three|four|five|six|couple of|few)\s+{_UNIT}\s+ago\b", re.IGNORECASE)
_SHIFTED = re.compile(
    rf"\b(last|next|this past|this coming)\s+(weekend|{_UNIT}|{'|'.join(_DAYS)})\b", re.IGNORECASE
)
_SINGLE = re.compile(r"\b(yesterday|tomorrow|today|tonight|the other day)\b", re.IGNORECASE)


def _day(when: datetime) -> str:
    return f"{when.day} {when:%B} {when.year}"


def _month(when: datetime, months: int) -> str:
    total = when.year * 12 + when.month - 1 + months
    return f"{datetime(total // 12, total % 12 + 1, 1):%B} {total // 12}"


def _shift(when: datetime, unit: str, amount: int) -> str:
    """The date ``amount`` units from ``when`` (negative: before), in words."""
    unit = unit.lower().rstrip("s")
    if unit == "day":
        return _day(when + timedelta(days=amount))
    if unit in ("week", "weekend"):
        return _day(when + timedelta(weeks=amount))
    if unit == "month":
        return _month(when, amount)
    return str(when.year + amount)


def _weekday(when: datetime, name: str, forward: bool) -> str:
    """The last (or next) ``name`` day strictly before (after) ``when``."""
    target = _DAYS.index(name.lower())
    delta = (when.weekday() - target) % 7 or 7
    return _day(when + timedelta(days=delta if forward else -delta))


def resolved_dates(text: str, when: datetime) -> list[str]:
    """The dates the relative expressions of ``text`` point at, said at ``when``, in words."""
    out: list[str] = []
    for match in _SINGLE.finditer(text):
        word = match.group(1).lower()
        out.append(_day(when + timedelta(days={"yesterday": -1, "tomorrow": 1}.get(word, 0))))
    for match in _AGO.finditer(text):
        count = match.group(1).lower()
        amount = int(count) if count.isdigit() else _NUMBERS[count]
        out.append(_shift(when, match.group(2), -min(amount, 100)))
    for match in _SHIFTED.finditer(text):
        forward = match.group(1).lower() in ("next", "this coming")
        what = match.group(2).lower()
        if what in _DAYS:
            out.append(_weekday(when, what, forward))
        else:
            out.append(_shift(when, what, 1 if forward else -1))
    return out
