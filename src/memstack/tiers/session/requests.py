"""The session tier's requests: one typed object per operation that takes more than a session id
and a key, owned by the tier and checked once.

Each field's rule lives here and in :mod:`.validate` only: :data:`RULES` gives what a door shows
of it (its description and JSON-schema bounds, for the documents), the ``of`` constructors run the
tier's checks (:func:`~.validate.check_session_id`, :func:`~.validate.check_key`,
:func:`check_hours`, ``check_amount``, ``check_subject``...). The keyword methods
(``SessionStore.put(session_id, key, value)``) and the operations' handlers both build a request
with ``of``, so a bad value gets the same error class and message on every door.

A value is checked where it is encoded (the store's write): its size limit is the store's
``max_value_bytes`` setting, so no request can check it alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...foundation import limits
from ...foundation.errors import InvalidValue
from ...foundation.keyspace import check_subject
from ...foundation.limits import MAX_AMOUNT, MAX_COUNT, MAX_TTL_SECONDS
from ..working.requests import Rule
from .validate import check_amount, check_key, check_session_id

__all__ = [
    "MAX_TTL_HOURS",
    "RULES",
    "CreateSession",
    "Increment",
    "PutValue",
    "ReadHistory",
    "check_hours",
]

MAX_TTL_HOURS: Final = MAX_TTL_SECONDS // 3600
"""The longest whole-session TTL, in hours: ten years."""

RULES: Final[Mapping[str, Rule]] = {
    "session_id": Rule("A session id: 1-128 of A-Z a-z 0-9 _ -.", {"maxLength": 128}),
    "key": Rule("A key of the session: 1-256 of A-Z a-z 0-9 _ - .", {"maxLength": 256}),
    "clear_key": Rule("Only this key (default: every key).", {"maxLength": 256}),
    "ttl_hours": Rule(
        "Whole-session TTL in hours (0: never expires; default: the store's).",
        {"minimum": 0, "maximum": MAX_TTL_HOURS},
    ),
    "subject": Rule("The end user the session is about (for forget).", {"maxLength": 256}),
    "amount": Rule("An int or a float to add (default 1).", {"minimum": -MAX_AMOUNT, "maximum": MAX_AMOUNT}),
    "limit": Rule("The newest N entries (0 or less: all).", {"minimum": -MAX_COUNT, "maximum": MAX_COUNT}),
}
"""Field name -> its rule as the doors show it."""


def check_hours(hours: object) -> float:
    """``hours`` of a session TTL, checked here so the message speaks of hours as given.

    Raises:
        InvalidValue: not a number from 0 to :data:`MAX_TTL_HOURS` (bool excluded).
    """
    if isinstance(hours, bool) or not isinstance(hours, int | float) or not 0 <= hours <= MAX_TTL_HOURS:
        raise InvalidValue(
            f"session TTL (ttl_hours): {limits.short_repr(hours)} "
            f"is not a number of hours from 0 to {MAX_TTL_HOURS} (10 years)"
        )
    return hours


@dataclass(frozen=True, slots=True)
class CreateSession:
    """A checked create: ``ttl_hours`` None for the store's default TTL."""

    session_id: str
    ttl_hours: float | None = None
    subject: str | None = None

    @classmethod
    def of(
        cls, session_id: str, *, ttl_hours: float | None = None, subject: str | None = None
    ) -> CreateSession:
        """The create, its fields checked.

        Raises:
            InvalidSessionId: a malformed id.
            InvalidValue: a TTL that is not a number of hours from 0 to ten years, a malformed subject.
        """
        return cls(
            check_session_id(session_id),
            None if ttl_hours is None else check_hours(ttl_hours),
            None if subject is None else check_subject(subject),
        )


@dataclass(frozen=True, slots=True)
class PutValue:
    """A checked write of one key (the value is checked where it is encoded: see the module)."""

    session_id: str
    key: str
    value: Any

    @classmethod
    def of(cls, session_id: str, key: str, value: Any) -> PutValue:
        """The write, its id and key checked.

        Raises:
            InvalidSessionId, InvalidKey: a malformed id or key (or a reserved key).
        """
        return cls(check_session_id(session_id), check_key(key), value)


@dataclass(frozen=True, slots=True)
class Increment:
    """A checked increment of the number at one key."""

    session_id: str
    key: str
    amount: int | float = 1

    @classmethod
    def of(cls, session_id: str, key: str, amount: int | float = 1) -> Increment:
        """The increment, its fields checked.

        Raises:
            InvalidSessionId, InvalidKey: a malformed id or key.
            InvalidValue: ``amount`` is not a finite int or float of magnitude at most 2**63-1.
        """
        return cls(check_session_id(session_id), check_key(key), check_amount(amount))


@dataclass(frozen=True, slots=True)
class ReadHistory:
    """A checked read of a session's newest history entries (``limit <= 0``: all of them)."""

    session_id: str
    limit: int = 50

    @classmethod
    def of(cls, session_id: str, limit: int = 50) -> ReadHistory:
        """The read, its fields checked.

        Raises:
            InvalidSessionId: a malformed id.
            InvalidValue: ``limit`` is not an int of magnitude at most 2**53.
        """
        return cls(check_session_id(session_id), limits.check_int(limit, "limit", minimum=-MAX_COUNT))
