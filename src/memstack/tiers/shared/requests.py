"""Shared memory's requests: one typed object per write and read of a board's keys, owned by the
tier and checked once.

Each field's rule lives here and in :mod:`.serialize` only: :data:`RULES` gives what a door shows
of it (its description and JSON-schema bounds, for the documents), the ``of`` constructors run the
tier's checks (:func:`~.serialize.check_key`, :func:`~.serialize.check_value`, ``check_subject``,
the ``wait`` rule...). The keyword methods (``SharedMemory.set(key, value)``, ``set_if``, ``get``)
and the operations' handlers both build a request with ``of``, so a bad value gets the same error
class and message on every door. A board's name is checked where a board is opened
(:class:`~memstack.tiers.shared.store.SharedMemory`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...foundation.errors import InvalidInput, InvalidKey
from ...foundation.keyspace import check_subject
from ...foundation.limits import MAX_COUNT, MAX_TTL_SECONDS, check_int, check_text, short_repr
from ..working.requests import Rule
from . import reserved as rs
from .serialize import KEY_MAX, check_key, check_value

__all__ = ["RULES", "ReadKeys", "SetIfVersion", "SetKey", "Wait", "check_wait"]

Wait = bool | float | int
"""How long a read waits for missing keys: False not at all, True without limit, else seconds."""

RULES: Final[Mapping[str, Rule]] = {
    "name": Rule("A shared board: 1-128 of A-Z a-z 0-9 _ . -.", {"maxLength": 128}),
    "key": Rule(
        f"A key of the board: 1-{KEY_MAX} characters, no control characters.", {"maxLength": KEY_MAX}
    ),
    "wait": Rule("Seconds to wait for a missing key (long poll).", {"minimum": 0}),
    "version": Rule(
        "Write only if the key is at this version (0: absent).", {"minimum": 0, "maximum": MAX_COUNT}
    ),
    "subject": Rule("The end user this version is about (for forget).", {"maxLength": 256}),
}
"""Field name -> its rule as the doors show it."""


def check_wait(wait: object) -> float | None:
    """The timeout ``wait`` stands for: None (no limit) for True, else its seconds (False: 0).

    Raises:
        InvalidInput: not False, True or a number of seconds from 0 to ten years.
    """
    if wait is True:
        return None
    if wait is False:
        return 0.0
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait <= MAX_TTL_SECONDS:
        raise InvalidInput(
            f"wait {short_repr(wait)}: must be False, True or a number of seconds from 0 to {MAX_TTL_SECONDS}"
        )
    return float(wait)


@dataclass(frozen=True, slots=True)
class ReadKeys:
    """A checked read of keys: ``keys`` without repeats; ``single`` when one key was asked for (its
    value is the answer, else ``{key: value}``); ``wait`` as given, ``timeout`` its seconds."""

    keys: tuple[str, ...]
    single: bool
    wait: Wait = False
    timeout: float | None = 0.0

    @classmethod
    def of(cls, *keys: str, wait: Wait = False) -> ReadKeys:
        """The read, its keys and wait checked.

        Raises:
            InvalidInput: no key, or a bad ``wait`` (not False, True or 0 to ten years of seconds).
            InvalidKey: a bad key. InvalidValue: a key with a lone surrogate.
        """
        if not keys:
            raise InvalidInput("get needs at least one key")
        checked = tuple(dict.fromkeys(check_key(k) for k in keys))
        return cls(checked, len(keys) == 1, wait, check_wait(wait))


@dataclass(frozen=True, slots=True)
class SetKey:
    """A checked write of one key: ``stored`` is what a reserved key keeps of ``value`` (its
    normalised form), ``value`` itself for a custom key."""

    key: str
    value: Any
    stored: Any
    reserved: bool = False
    subject: str | None = None
    correlation_id: str | None = None

    @classmethod
    def of(
        cls, key: str, value: Any, *, subject: str | None = None, correlation_id: str | None = None
    ) -> SetKey:
        """The write, its fields checked.

        Raises:
            InvalidKey: bad key.
            InvalidValue: ``value`` is not JSON within :mod:`memstack.foundation.limits` (or does not
                fit a reserved key), a malformed subject, or a lone surrogate in ``key`` or
                ``correlation_id``.
            InvalidInput: ``key`` is ``cache``.
        """
        key = check_key(key)
        if subject is not None:
            check_subject(subject)
        if key in rs.RESERVED:
            return cls(key, value, rs.normalise(key, value), True, subject)
        check_value(value)
        if correlation_id is not None:
            check_text(correlation_id, "correlation_id", max_bytes=1024)
        return cls(key, value, value, False, subject, correlation_id)


@dataclass(frozen=True, slots=True)
class SetIfVersion:
    """A checked compare-and-set of one custom key: written only if it is at ``version`` (0: only
    if absent)."""

    key: str
    value: Any
    version: int = 0
    subject: str | None = None

    @classmethod
    def of(cls, key: str, value: Any, *, version: int | None, subject: str | None = None) -> SetIfVersion:
        """The compare-and-set, its fields checked (``version`` None: as 0).

        Raises:
            InvalidKey: bad or reserved key.
            InvalidValue: ``value`` is not JSON, ``version`` is not None nor an int from 0 to 2**53,
                a malformed subject.
        """
        if subject is not None:
            check_subject(subject)
        key = check_key(key)
        if key in rs.RESERVED:
            raise InvalidKey(
                f"set_if on reserved key {short_repr(key)}: only custom keys are versioned for CAS"
            )
        check_value(value)
        if version is not None:
            check_int(version, "version")
        return cls(key, value, version or 0, subject)
