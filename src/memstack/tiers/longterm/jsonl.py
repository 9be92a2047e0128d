"""Memories from JSON Lines: one object per line with the fields of a save (``content``, ``id``,
``tags``, ``metadata``, ``category``, ``supersedes``, ``ttl``...), written with ``save_many``.

Blank lines are skipped. A line that is not a JSON object fails its batch as a bad item does, and
the error names its line number.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ...foundation.errors import InvalidValue, MemstackError
from .bulk import BATCH_ITEMS

if TYPE_CHECKING:
    from .store import LongTermMemory

__all__ = ["import_lines"]


def _items(lines: Iterable[str], numbers: list[int]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InvalidValue(f"line {number}: not JSON ({exc})") from exc
        if not isinstance(item, dict):
            raise InvalidValue(f"line {number}: a JSON object with the fields of a save is expected")
        numbers.append(number)
        yield item


def import_lines(
    memory: LongTermMemory,
    lines: Iterable[str],
    *,
    batch_size: int = BATCH_ITEMS,
    actor: str = "import",
    progress: Callable[[int], None] | None = None,
) -> int:
    """Save every line's memory into ``memory`` in batches; returns how many were saved.

    Raises:
        InvalidValue: a line that is not a JSON object; any error of ``save_many`` (the error's
            note names the line of the failing item). The batches before the failing one stay.
    """
    numbers: list[int] = []
    try:
        return len(
            memory.save_many(_items(lines, numbers), batch_size=batch_size, actor=actor, progress=progress)
        )
    except MemstackError as exc:
        message = str(exc)
        if not message.startswith("items["):
            raise
        line = numbers[int(message[6 : message.index("]")])]
        saved = "".join(f"; {note}" for note in getattr(exc, "__notes__", ()))
        raise type(exc)(f"line {line}: {message}{saved}") from exc
