"""Settings of the semantic cache and their checks (RubyLLM's validation, spec 4 item 40)."""

from __future__ import annotations

from enum import Enum
from typing import Final, Literal

from ...foundation.errors import InvalidConfiguration
from ...foundation.limits import MAX_TTL_SECONDS, short_repr

__all__ = ["KEEP", "Keep", "MaxMessages", "check_max_messages", "check_threshold", "ttl_ms"]

MaxMessages = int | Literal["unlimited"] | None


class Keep(Enum):
    """The type of :data:`KEEP`: "leave this setting as it is"."""

    KEEP = 0


KEEP: Final = Keep.KEEP


def check_threshold(threshold: object) -> float:
    """``threshold`` as a float.

    Raises:
        InvalidConfiguration: not a number in [0, 1].
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
        raise InvalidConfiguration(f"threshold {short_repr(threshold)}: must be a number in [0, 1]")
    return float(threshold)


def ttl_ms(ttl: object) -> int | None:
    """``ttl`` seconds as milliseconds (None: forever).

    Raises:
        InvalidConfiguration: not a number > 0 and at most ten years, or None.
    """
    if ttl is None:
        return None
    # A range check, not a sign check: 1e308 seconds (or inf) has no millisecond integer.
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= MAX_TTL_SECONDS:
        raise InvalidConfiguration(
            f"ttl {short_repr(ttl)}: must be a number of seconds > 0 and at most {MAX_TTL_SECONDS}, or None"
        )
    return max(1, int(ttl * 1000))


def check_max_messages(value: object) -> int | None:
    """``max_messages`` as an int >= 1, or None for no limit (``"unlimited"``, None or False).

    Raises:
        InvalidConfiguration: anything else.
    """
    if value is None or value is False or value == "unlimited":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidConfiguration(
            f"max_messages {short_repr(value)}: must be an int >= 1, 'unlimited' or None"
        )
    return value
