"""What a door shows of one input rule: its description and JSON-schema bounds.

A tier owns each rule of its inputs: its requests' ``of`` constructors run the check, a
:class:`Rule` says what the doors show of it (help text, schema bounds), so the operations'
request models document the rule without checking it a second time with another message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Rule"]


@dataclass(frozen=True, slots=True)
class Rule:
    """What a door shows of one field's rule: its description and JSON-schema bounds. The check
    itself is the tier's, run by the request's ``of``."""

    doc: str
    json: Mapping[str, Any] = field(default_factory=dict)
