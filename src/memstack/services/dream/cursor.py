"""The cursors of the extract and preferences passes: how far one scope has read its user's turns.

The turns come from several conversations and the turn log (trimmed at its head by retention), so
a position would not survive; the cursor is the time of the last turn read and the message ids
read at exactly that time, plus the message ids to read again (``again``: the turns of an undone
extract record). A turn is new when it is later, or at that time and not among those ids, or
among those to read again. The cursor moves in the same atomic batch as the pass it belongs to, guarded by
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

__all__ = ["Cursor", "advanced", "new_turns", "parse", "read"]


@dataclass(frozen=True, slots=True)
class Cursor:
    """The last turn time read (None: nothing read yet) and the message ids read at that time."""

    at: float | None = None
    ids: tuple[str, ...] = ()
    again: tuple[str, ...] = ()

    def to_json(self) -> str:
        data: dict[str, Any] = {"at": self.at, "ids": list(self.ids)}
        if self.again:
            data["again"] = list(self.again)
        return json.dumps(data, separators=(",", ":"))

    def seen(self, turn: Mapping[str, Any]) -> bool:
        """Whether ``turn`` (a log entry with its ``message_id``) was read already."""
        if self.at is None or turn["message_id"] in self.again:
            return False
        stamp = float(turn.get("timestamp", 0))
        return stamp < self.at or (stamp == self.at and turn["message_id"] in self.ids)

    def write(self, batch: Batch, keys: DreamKeys, raw_before: str | None, *, key: str | None = None) -> None:
        """Queue moving the cursor here, guarded by the value the pass read (``key``: another
        cursor of the scope than the extract pass's)."""
        where = keys.cursor if key is None else key
        batch.require_equal(where, raw_before)
        batch.set(where, self.to_json())


def parse(raw: str | None) -> Cursor:
    """A cursor from its stored text (None: nothing read yet)."""
    if raw is None:
        return Cursor()
    data = json.loads(raw)
    at = data.get("at")
    return Cursor(
        None if at is None else float(at),
        tuple(str(i) for i in data.get("ids", ())),
        tuple(str(i) for i in data.get("again", ())),
    )


def read(engine: Engine, scope: str, *, key: str | None = None) -> tuple[Cursor, str | None]:
    """The scope's cursor (``key``: another one than the extract pass's) and its stored text
    (None when the scope never read)."""
    raw = engine.get(DreamKeys.of(engine, scope).cursor if key is None else key)
    return parse(raw), raw


def new_turns(turns: Sequence[Mapping[str, Any]], cursor: Cursor) -> list[Mapping[str, Any]]:
    """The turns of ``turns`` (log entries with their ``message_id``) that ``cursor`` has not read,
    in log order."""
    return [turn for turn in turns if not cursor.seen(turn)]


def advanced(cursor: Cursor, taken: Sequence[Mapping[str, Any]]) -> Cursor:
    """The cursor after reading ``taken`` (new turns, in log order)."""
    at, ids = cursor.at, list(cursor.ids)
    read_now = {turn["message_id"] for turn in taken}
    for turn in taken:
        stamp = float(turn.get("timestamp", 0))
        if at is None or stamp > at:
            at, ids = stamp, [turn["message_id"]]
        elif stamp == at:
            ids.append(turn["message_id"])
    return Cursor(at, tuple(ids), tuple(i for i in cursor.again if i not in read_now))
