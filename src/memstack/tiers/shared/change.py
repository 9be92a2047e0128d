"""``MemoryChange``: what a subscriber receives for one write to a shared memory."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ...foundation.clock import Clock, SystemClock
from ...foundation.errors import InvalidValue
from ...foundation.limits import short_repr
from ...foundation.timefmt import iso_utc

__all__ = ["MemoryChange"]

_FIELDS = ("key", "value", "previous", "writer", "network_name", "timestamp", "correlation_id")


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """One write: ``key`` went from ``previous`` to ``value``.

    ``previous`` is None when the key was created; ``writer`` is the writing memory's
    ``current_writer``; ``timestamp`` is the write time on the engine clock (UTC).
    """

    key: str
    value: Any
    previous: Any
    writer: str | None
    network_name: str | None
    timestamp: datetime
    correlation_id: str | None = None

    @property
    def created(self) -> bool:
        """True when there was no previous value and there is a value now."""
        return self.previous is None and self.value is not None

    @property
    def updated(self) -> bool:
        """True when both the previous and the new value are non-None."""
        return self.previous is not None and self.value is not None

    @property
    def deleted(self) -> bool:
        """True when a non-None value became None."""
        return self.value is None and self.previous is not None

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict, timestamp as ISO 8601, None entries left out."""
        out = {
            "key": self.key,
            "value": self.value,
            "previous": self.previous,
            "writer": self.writer,
            "network_name": self.network_name,
            "timestamp": iso_utc(self.timestamp),
            "correlation_id": self.correlation_id,
        }
        return {k: v for k, v in out.items() if v is not None}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, clock: Clock | None = None) -> MemoryChange:
        """Rebuild a change from :meth:`to_dict` output; a missing timestamp means now.

        Raises:
            InvalidValue: ``key`` is missing, or ``timestamp`` is not ISO 8601.
        """
        if "key" not in data:
            raise InvalidValue(f"MemoryChange.from_dict: 'key' is required, got fields {sorted(data)}")
        stamp = data.get("timestamp")
        if stamp is None:
            when = datetime.fromtimestamp((clock or SystemClock()).now(), UTC)
        elif isinstance(stamp, datetime):
            when = stamp
        else:
            try:
                when = datetime.fromisoformat(str(stamp))
            except ValueError:
                raise InvalidValue(
                    f"MemoryChange.from_dict: timestamp {short_repr(stamp)} is not ISO 8601"
                ) from None
        return cls(
            key=str(data["key"]),
            value=data.get("value"),
            previous=data.get("previous"),
            writer=data.get("writer"),
            network_name=data.get("network_name"),
            timestamp=when,
            correlation_id=data.get("correlation_id"),
        )
