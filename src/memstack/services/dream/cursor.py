"""The extract pass's cursor: how far one scope has read the turn log.

The turn log is shared by every scope of a tenant and is trimmed at its head (retention, the
preference pass), so a position would not survive; the cursor is the time of the last turn read and
the message ids read at exactly that time. A turn is new when it is later, or at that time and not
among those ids. The cursor moves in the same atomic batch as the pass it belongs to, guarded by
its value as read, so two passes never take the same turns.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...engines import Engine
from ...engines.base import Batch
from .keys import DreamKeys

__all__ = ["Cursor", "advanced", "new_turns", "read"]


@dataclass(frozen=True, slots=True)
class Cursor:
    """The last turn time read (None: nothing read yet) and the message ids read at that time."""

    at: float | None = None
    ids: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps({"at": self.at, "ids": list(self.ids)}, separators=(",", ":"))

    def seen(self, turn: Mapping[str, Any]) -> bool:
        """Whether ``turn`` (a log entry with its ``message_id``) was read already."""
        if self.at is None:
            return False
        stamp = float(turn.get("timestamp", 0))
        return stamp < self.at or (stamp == self.at and turn["message_id"] in self.ids)

    def write(self, batch: Batch, keys: DreamKeys, raw_before: str | None) -> None:
        """Queue moving the cursor here, guarded by the value the pass read."""
        batch.require_equal(keys.cursor, raw_before)
        batch.set(keys.cursor, self.to_json())


def read(engine: Engine, scope: str) -> tuple[Cursor, str | None]:
    """The scope's cursor and its stored text (None when the scope never extracted)."""
    raw = engine.get(DreamKeys.of(engine, scope).cursor)
    if raw is None:
        return Cursor(), None
    data = json.loads(raw)
    at = data.get("at")
    return Cursor(None if at is None else float(at), tuple(str(i) for i in data.get("ids", ()))), raw


def new_turns(turns: Sequence[Mapping[str, Any]], cursor: Cursor) -> list[Mapping[str, Any]]:
    """The turns of ``turns`` (log entries with their ``message_id``) that ``cursor`` has not read,
    in log order."""
    return [turn for turn in turns if not cursor.seen(turn)]


def advanced(cursor: Cursor, taken: Sequence[Mapping[str, Any]]) -> Cursor:
    """The cursor after reading ``taken`` (new turns, in log order)."""
    at, ids = cursor.at, list(cursor.ids)
    for turn in taken:
        stamp = float(turn.get("timestamp", 0))
        if at is None or stamp > at:
            at, ids = stamp, [turn["message_id"]]
        elif stamp == at:
            ids.append(turn["message_id"])
    return Cursor(at, tuple(ids))
