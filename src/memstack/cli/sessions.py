"""``memstack sessions``: the session state tier from the shell.

Human tables by default, JSON with the root ``--json`` option; exit codes from ``_errors``
(2 bad input, 3 not found, 4 engine down). Works on tenant ``--tenant``'s sessions.
"""

from __future__ import annotations

import contextlib
import json

import typer

from ..errors import SessionExists
from ..wire import history_json
from ._common import emit, emit_table, state, tenant_memory
from ._values import JSON_VALUE, TEXT, parse_number, parse_value

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Session state: sessions, keys, counters, history.")


@app.command("list")
def list_sessions() -> None:
    """List the live sessions."""
    with tenant_memory() as mem:
        ids = mem.sessions.list()
        if not ids:
            emit(ids, "no sessions")
        else:
            emit(ids, "\n".join(ids))


@app.command()
def create(
    session_id: str,
    ttl_hours: float = typer.Option(0.0, "--ttl-hours", help="Whole-session TTL in hours (0 = never)."),
    subject: str = typer.Option(None, "--subject", help="The end user this is about (for forget)."),
) -> None:
    """Create an empty session."""
    with tenant_memory() as mem:
        mem.sessions.create(session_id, ttl_hours=ttl_hours, subject=subject)
        emit({"session_id": session_id, "created": True}, f"created session {session_id}")


@app.command()
def show(session_id: str) -> None:
    """Show every key of a session with its value."""
    with tenant_memory() as mem:
        items = mem.sessions.items(session_id)
        if state.as_json or not items:
            emit(items, f"session {session_id} has no keys")
        else:
            rows = [{"key": k, "value": v} for k, v in items.items()]
            emit_table(rows, ["key", "value"], title=f"session {session_id}")


@app.command()
def delete(session_id: str) -> None:
    """Delete a session and all its keys."""
    with tenant_memory() as mem:
        keys = mem.sessions.delete(session_id)
        emit({"session_id": session_id, "cleared": keys}, f"deleted {session_id} ({len(keys)} keys)")


@app.command()
def get(session_id: str, key: str) -> None:
    """Print the value of KEY (JSON under --json)."""
    with tenant_memory() as mem:
        value = mem.sessions.get(session_id, key)
        emit(value, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


@app.command()
def put(
    session_id: str,
    key: str,
    value: str = typer.Argument(..., help='JSON (42, true, {"a": 1}); anything else is stored as text.'),
    create: bool = typer.Option(False, "--create", help="Create the session if it does not exist."),
    as_text: bool = TEXT,
    as_json_value: bool = JSON_VALUE,
    subject: str = typer.Option(
        None, "--subject", help="With --create: the end user the new session is about (for forget)."
    ),
) -> None:
    """Store VALUE under KEY."""
    if subject is not None and not create:
        raise typer.BadParameter(
            "a session's subject is set when it is created: add --create (or use `sessions create`)",
            param_hint="--subject",
        )
    parsed = parse_value(value, as_text=as_text, as_json=as_json_value)
    with tenant_memory() as mem:
        if create and not mem.sessions.exists(session_id):
            with contextlib.suppress(SessionExists):  # created concurrently: fine
                mem.sessions.create(session_id, subject=subject)
        mem.sessions.put(session_id, key, parsed)
        emit({"session_id": session_id, "key": key, "value": parsed}, f"{session_id}.{key} stored")


@app.command()
def incr(session_id: str, key: str, amount: str = typer.Argument("1", help="Int or float.")) -> None:
    """Add AMOUNT (default 1) to the number at KEY; prints the new value."""
    number = parse_number(amount)
    with tenant_memory() as mem:
        value = mem.sessions.increment(session_id, key, number)
        emit({"session_id": session_id, "key": key, "value": value}, str(value))


@app.command()
def clear(session_id: str, key: str = typer.Argument(None, help="Only this key (default: all).")) -> None:
    """Remove KEY, or every key of the session."""
    with tenant_memory() as mem:
        cleared = mem.sessions.clear(session_id, key)
        emit({"session_id": session_id, "cleared": cleared}, f"cleared {', '.join(cleared) or 'nothing'}")


@app.command()
def history(
    session_id: str,
    limit: int = typer.Option(50, "--limit", "-n", help="Newest N entries (0 = all)."),
) -> None:
    """Show the session's history, oldest first."""
    with tenant_memory() as mem:
        entries = mem.sessions.history(session_id, limit)
        rows = [
            {
                "timestamp": e.get("timestamp"),
                "op": e.get("op"),
                "key": e.get("key"),
                "detail": {k: v for k, v in e.items() if k not in ("timestamp", "op", "key")} or None,
            }
            for e in entries
        ]
        if state.as_json:
            emit([history_json(e) for e in entries])
        else:
            columns = ["timestamp", "op", "key", "detail"]
            emit_table(rows, columns, title=f"history of {session_id}", times=["timestamp"])
