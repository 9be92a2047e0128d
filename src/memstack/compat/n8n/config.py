"""``SimpleMemoryConfig``: the sliding-window settings of hetumind's SimpleMemory node (seed ``004``).

Defaults are those of ``SimpleMemoryConfig::new()`` (spec 5 item 1), not the broken ``Default``
derive (item 2). :meth:`SimpleMemoryConfig.validate` checks in the seed's order and raises
:class:`~memstack.foundation.errors.InvalidConfiguration` with ``"Invalid SimpleMemory configuration: {msg}"``
and the seed's messages (item 3).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...foundation.errors import InvalidConfiguration
from ...foundation.limits import MAX_COUNT, MAX_TTL_SECONDS, short_repr

__all__ = ["SESSION_ID_TYPES", "SimpleMemoryConfig"]

SESSION_ID_TYPES: Final = ("from_input", "custom_key")


@dataclass(frozen=True, slots=True)
class SimpleMemoryConfig:
    """Settings of one sliding window.

    Attributes:
        session_id_type: ``from_input`` (the input's ``session_id`` field) or ``custom_key``.
        custom_session_key: the session id when ``session_id_type`` is ``custom_key``.
        context_window_length: the window: the last N MESSAGES (hetumind's unit, not pairs).
        input_key, memory_key, output_key: field names of the agent-loop API (LangChain style).
        return_messages: ``load`` returns message dicts (True) or one ``Human:/AI:`` string.
        buffer_expiry_minutes: idle minutes after which a window is dropped (None: never).
        shared_across_nodes: with a node id, use the workflow's shared
            ``{workflow_id}__{session_id}`` buffer as the seed did, instead of the node's own
            buffer (the default: nodes are isolated, n8n's N8N-9916).
    """

    session_id_type: str = "from_input"
    custom_session_key: str | None = None
    context_window_length: int = 5
    input_key: str = "input"
    memory_key: str = "chat_history"
    output_key: str = "output"
    return_messages: bool = True
    buffer_expiry_minutes: float | None = 60
    shared_across_nodes: bool = False

    def validate(self) -> SimpleMemoryConfig:
        """Return self when valid.

        Raises:
            InvalidConfiguration: the first broken rule, in the seed's order.
        """
        problem = self._problem()
        if problem is not None:
            raise InvalidConfiguration(f"Invalid SimpleMemory configuration: {problem}")
        return self

    def _problem(self) -> str | None:
        if self.session_id_type not in SESSION_ID_TYPES:
            return f"session_id_type {self.session_id_type!r} must be one of {', '.join(SESSION_ID_TYPES)}"
        length = self.context_window_length
        if isinstance(length, bool) or not isinstance(length, int) or length <= 0:
            return "context_window_length must be greater than 0"
        if length > MAX_COUNT:
            return f"context_window_length must be at most {MAX_COUNT}"
        for name in ("input_key", "memory_key", "output_key"):
            if not getattr(self, name):
                return f"{name} cannot be empty"
        if self.session_id_type == "custom_key" and not self.custom_session_key:
            return "custom_session_key is required when session_id_type is CustomKey"
        expiry = self.buffer_expiry_minutes
        number = isinstance(expiry, int | float) and not isinstance(expiry, bool)
        if expiry is not None and (not number or not 0 < expiry <= MAX_TTL_SECONDS / 60):
            limit = "must be a positive number (10 years at most) or None"
            return f"buffer_expiry_minutes {short_repr(expiry)} {limit}"
        if not isinstance(self.shared_across_nodes, bool):
            return f"shared_across_nodes {short_repr(self.shared_across_nodes)} must be True or False"
        return None

    @classmethod
    def coerce(cls, value: SimpleMemoryConfig | Mapping[str, Any] | None) -> SimpleMemoryConfig:
        """A validated config from itself, a mapping of its fields, or None (the defaults).

        Raises:
            InvalidConfiguration: unknown fields or a broken rule.
        """
        if value is None:
            return cls()
        if isinstance(value, SimpleMemoryConfig):
            return value.validate()
        if not isinstance(value, Mapping):
            raise InvalidConfiguration(f"SimpleMemory configuration {short_repr(value)}: expected a mapping")
        unknown = set(value) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise InvalidConfiguration(
                f"Invalid SimpleMemory configuration: unknown fields {sorted(unknown)}"
            )
        return cls(**value).validate()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (as the node's output ``config``)."""
        return dataclasses.asdict(self)
