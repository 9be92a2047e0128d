"""What a generated command prints for people (``--json`` prints the operation's JSON as it is).

One function per operation whose result reads better as a line or a table than as JSON; any
other operation prints its JSON, indented. A function returns the text to print, or a
:class:`Rows` table; :data:`EXIT_CODES` gives the exit code of a result that did not do it all.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

__all__ = ["EXIT_CODES", "TEXT", "Rows", "render"]


@dataclass(frozen=True, slots=True)
class Rows:
    """A table for people: its rows, columns, title and which columns are times."""

    rows: list[dict[str, Any]]
    columns: tuple[str, ...]
    title: str | None = None
    times: tuple[str, ...] = field(default=())


Renderer = Callable[[Any], "str | Rows"]


def _value(value: Any) -> str:
    """A stored value as it is when it is text (it may be piped into another program), else JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _lines(empty: str) -> Renderer:
    def render(result: Mapping[str, Any]) -> str:
        return "\n".join(result["items"]) or empty

    return render


def _expires_in(entry: Mapping[str, Any]) -> str:
    from ...agent.context.format import format_remaining  # the tiers load with the command that uses them

    left = datetime.fromisoformat(entry["expires_at"]).timestamp() - time.time()
    return format_remaining(max(0.0, left))


def _working(with_value: bool) -> Renderer:
    def render(result: Mapping[str, Any]) -> Rows:
        columns = ("key", "expires_in", "expires_at", "category", "tags", *(("value",) if with_value else ()))
        rows = [{**entry, "expires_in": _expires_in(entry)} for entry in result["items"]]
        return Rows(rows, columns, times=("expires_at",))

    return render


def _history(result: Mapping[str, Any]) -> Rows:
    rows = [
        {
            "timestamp": e.get("timestamp"),
            "op": e.get("op"),
            "key": e.get("key"),
            "detail": {k: v for k, v in e.items() if k not in ("timestamp", "op", "key")} or None,
        }
        for e in result["entries"]
    ]
    return Rows(
        rows, ("timestamp", "op", "key", "detail"), f"history of {result['session_id']}", ("timestamp",)
    )


def _history_text(messages: list[dict[str, Any]]) -> str:
    from ...tiers.conversation.prompt import history_text

    return history_text(messages) or "(empty history)"


def _show(result: Mapping[str, Any]) -> str | Rows:
    if not result["values"]:
        return f"session {result['session_id']} has no keys"
    rows = [{"key": k, "value": v} for k, v in result["values"].items()]
    return Rows(rows, ("key", "value"), f"session {result['session_id']}")


def _thread(result: Mapping[str, Any]) -> str | Rows:
    if not result["items"]:
        return f"conversation {result['conversation_id']} has no messages"
    columns = ("message_id", "parent_message_id", "role", "created_at", "content", "token_count")
    return Rows(result["items"], columns, f"messages of {result['conversation_id']}", ("created_at",))


def _hits(result: Mapping[str, Any]) -> str | Rows:
    if not result["items"]:
        return "no memories found"
    rows = [
        {
            "id": hit["entry"]["id"],
            "score": round(hit["score"], 4),
            "sources": ", ".join(hit["sources"]),
            "category": hit["entry"]["category"],
            "tags": ", ".join(hit["entry"]["tags"]),
            "created_at": hit["entry"]["created_at"],
            "content": hit["entry"]["content"],
        }
        for hit in result["items"]
    ]
    return Rows(
        rows, ("id", "score", "sources", "category", "tags", "created_at", "content"), times=("created_at",)
    )


def _records(result: Mapping[str, Any]) -> str:
    lines = [
        f"{r['kind']}: {r['status']} {r['id']} (retired {len(r['retired'])}, created {len(r['created'])})"
        + (f": {r['reason']}" if r["reason"] else "")
        for r in result["items"]
    ]
    return "\n".join(lines) or "nothing to do"


def _record(r: Mapping[str, Any]) -> str:
    lines = [f"{r['kind']} {r['status']} at {r['at']} model={r['model'] or '-'}"]
    lines += [f"- retired [{e['id']}] {e['content']}" for e in r["retired"]]
    lines += [f"+ created [{e['id']}] {e['content']} <- {', '.join(e['source_ids'])}" for e in r["created"]]
    return "\n".join(lines)


def _undone(r: Mapping[str, Any]) -> str:
    kept = f" (changed since: {', '.join(r['kept'])})" if r["kept"] else ""
    return f"restored {len(r['restored'])}, removed {len(r['removed'])}, kept {len(r['kept'])}{kept}"


def _context(built: Mapping[str, Any]) -> str:
    parts = [f"[{m['role']}]\n{m['content']}\n" for m in built["messages"]]
    explain = [
        f"{'+' if e['included'] else '-'} {e['kind']} {e['id']}: {e['reason']}" for e in built["explain"]
    ]
    return "\n".join(parts) + "\n" + "\n".join(explain)


def _report(data: Mapping[str, Any]) -> str:
    ((kind, value),) = data["selector"].items()
    lines = [f"forgot {kind} {value}: {data['total']} removed, {data['remaining']} remaining"]
    lines += [f"  {tier}: {count}" for tier, count in data["deleted"].items() if count]
    return "\n".join(lines)


TEXT: Final[dict[str, Renderer]] = {
    "sessions.list": _lines("no sessions"),
    "sessions.create": lambda r: f"created session {r['session_id']}",
    "sessions.show": _show,
    "sessions.delete": lambda r: f"deleted {r['session_id']} ({len(r['cleared'])} keys)",
    "sessions.keys": lambda r: "\n".join(r["keys"]) or f"session {r['session_id']} has no keys",
    "sessions.clear": lambda r: f"cleared {', '.join(r['cleared']) or 'nothing'}",
    "sessions.get": lambda r: _value(r["value"]),
    "sessions.put": lambda r: f"{r['session_id']}.{r['key']} stored",
    "sessions.increment": lambda r: str(r["value"]),
    "sessions.history": _history,
    "conversations.list": _lines("no conversations"),
    "conversations.append": lambda r: r["message_id"],
    "conversations.messages": _thread,
    "conversations.thread": _thread,
    "conversations.history": lambda r: _history_text(r["messages"]),
    "conversations.delete": lambda r: f"deleted conversation {r['conversation_id']}",
    "memories.scopes": _lines("no scopes"),
    "memories.save": lambda r: f"saved {r['id']}",
    "memories.search": _hits,
    "memories.delete": lambda r: f"deleted {r['id']}",
    "memories.categories": _lines("no categories yet"),
    "memories.tags": _lines("no tags yet"),
    "working.namespaces": _lines("no namespaces"),
    "working.list": _working(with_value=False),
    "working.search": _working(with_value=True),
    "working.clear": lambda r: f"cleared {r['cleared']} entries",
    "working.set": lambda r: f"saved {r['key']}",
    "working.get": lambda r: _value(r["value"]),
    "working.delete": lambda r: f"deleted {r['key']}",
    "shared.list": _lines("no boards"),
    "shared.get": lambda r: _value(r["value"]),
    "shared.put": lambda r: f"{r['name']}.{r['key']} stored (version {r['version']})",
    "dream.run": _records,
    "dream.history": lambda r: Rows(
        r["items"],
        ("id", "kind", "status", "at", "model", "retired_count", "created_count", "reason"),
        "dream records",
        ("at",),
    ),
    "dream.show": _record,
    "dream.undo": _undone,
    "dream.feedback": lambda r: f"recorded {r['kind']} feedback",
    "context.build": _context,
    "forget": _report,
}
"""The text of each operation's result, where it is not JSON."""

EXIT_CODES: Final[dict[str, Callable[[Any], int]]] = {
    # The verification scan still found something: run it again to finish.
    "forget": lambda r: 1 if r["remaining"] else 0,
}


def render(name: str, result: Any) -> str | Rows:
    """The human form of operation ``name``'s ``result``."""
    text = TEXT.get(name)
    if text is not None:
        return text(result)
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, indent=2)
