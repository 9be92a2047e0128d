"""Input checks of the sliding windows and node memory, kept apart so those modules only call them.

Every check follows :mod:`memstack.foundation.limits`: text is valid Unicode (no lone surrogates) and
bounded, JSON parts are JSON within the shared limits, and a refusal is an
:class:`~memstack.foundation.errors.InvalidValue` naming the field, raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...foundation import limits
from ...foundation.errors import InvalidValue

__all__ = ["MAX_ID_BYTES", "check_node_turn", "check_positions", "check_window_messages", "id_text"]

MAX_ID_BYTES: Final = 1024
"""Longest id text (session ids, message ids, workflow run ids) once encoded as UTF-8."""


def id_text(value: object, field: str) -> str:
    """``str(value)`` of a string or number id (as the seeds turn ids into text), checked as text.

    Raises:
        InvalidValue: not a str, int or float, an int of more than about 1000 digits (``str()``
            of a larger one may even fail), a lone surrogate, or over :data:`MAX_ID_BYTES` bytes;
            the message names ``field``.
    """
    if not isinstance(value, str | int | float):
        raise InvalidValue(f"{field}: expected a string or a number, got {type(value).__name__}")
    if isinstance(value, int) and value.bit_length() > 3400:
        raise InvalidValue(f"{field}: {limits.short_repr(value)} is too long for an id")
    text = value if isinstance(value, str) else str(value)
    return limits.check_text(text, field, max_bytes=MAX_ID_BYTES)


def check_window_messages(messages: Sequence[Mapping[str, Any]], field: str = "messages") -> None:
    """Check the messages a window is about to store (``role``, ``content``, ``message_id``,
    ``metadata``).

    Raises:
        InvalidValue: a part that breaks a rule of :mod:`memstack.foundation.limits` (names
            ``messages[i].content`` and so on).
    """
    for i, message in enumerate(messages):
        where = f"{field}[{i}]"
        limits.check_text(message.get("role"), f"{where}.role", max_bytes=256)
        limits.check_text(message.get("content"), f"{where}.content", max_bytes=limits.MAX_VALUE_BYTES)
        if message.get("message_id") is not None:
            id_text(message["message_id"], f"{where}.message_id")
        metadata = message.get("metadata")
        if metadata is not None:
            limits.encode_json(metadata, f"{where}.metadata")


def check_node_turn(workflow_run_id: str, user_content: str, assistant_content: str) -> None:
    """Check the text of one node-memory turn (its files are checked by ``FileRef``).

    Raises:
        InvalidValue: a lone surrogate, a run id over :data:`MAX_ID_BYTES` bytes or content over
            1 MiB; the message names ``workflow_run_id``, ``user_content`` or ``assistant_content``.
    """
    limits.check_text(workflow_run_id, "workflow_run_id", max_bytes=MAX_ID_BYTES)
    limits.check_text(user_content, "user_content", max_bytes=limits.MAX_VALUE_BYTES)
    limits.check_text(assistant_content, "assistant_content", max_bytes=limits.MAX_VALUE_BYTES)


def check_positions(start: object, stop: object) -> None:
    """Check list positions (negative from the end) before they reach an engine.

    Raises:
        InvalidValue: ``start`` or ``stop`` is not an int of magnitude at most 2**53.
    """
    limits.check_int(start, "start", minimum=-limits.MAX_COUNT)
    limits.check_int(stop, "stop", minimum=-limits.MAX_COUNT)
