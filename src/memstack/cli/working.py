"""``memstack working``: working memory from the shell (list, get, search, set, delete).

Reads cross namespaces: a full key (``patrol/heartbeat/alerts``) works anywhere; a plain key
needs ``--namespace``. Writes need ``--namespace`` (the namespace written to). Human output by
default, JSON with the root ``--json`` option. Works on tenant ``--tenant``'s working memory.
"""

from __future__ import annotations

import json
from typing import Any

import typer

from .._memory import Memory
from ..context.format import format_remaining
from ..errors import EntryNotFound, InvalidKey
from ..wire import working_json
from ..working import WorkingEntry, WorkingMemory
from ._common import emit, emit_table, state, tenant_memory
from ._values import JSON_VALUE, TEXT, parse_value, split_tags

__all__ = ["app"]

app = typer.Typer(no_args_is_help=True, help="Working memory: list, get, search, set, delete.")

NAMESPACE = typer.Option(
    None, "--namespace", "-n", help="The namespace plain keys belong to, e.g. session/abc."
)
# Reads bind to a namespace too; without --namespace, one no writer uses (only full keys make sense).
_READ_ONLY_NAMESPACE = "cli/read-only"


def _bind(mem: Memory, namespace: str | None, *, for_write: bool = False) -> WorkingMemory:
    if namespace is None and for_write:
        raise InvalidKey("writing needs --namespace (e.g. session/abc): writes go to one namespace only")
    return mem.working(namespace or _READ_ONLY_NAMESPACE)


def _plain_needs_namespace(key: str, namespace: str | None) -> None:
    if namespace is None and "/" not in key:
        raise InvalidKey(f"key {key!r} is plain: give its full path or --namespace")


def _row(entry: WorkingEntry, now: float, with_value: bool) -> dict[str, Any]:
    row = working_json(entry)
    if not with_value:
        del row["value"]
    row["expires_in"] = format_remaining(entry.remaining(now))  # the CLI's one extra: for humans
    return row


@app.command("list")
def list_(
    prefix: str = typer.Argument(None, help="Whole-segment prefix (patrol, session/abc); default: all."),
    namespace: str = NAMESPACE,
) -> None:
    """List live keys with their expiry, category and tags (never values)."""
    with tenant_memory() as mem:
        wm = _bind(mem, namespace)
        target = prefix if prefix is not None else (namespace or "")
        entries = wm.list(target, with_values=False)
        now = mem.engine.now_ms() / 1000
        columns = ["key", "expires_in", "expires_at", "category", "tags"]
        emit_table([_row(e, now, False) for e in entries], columns, times=["expires_at"])


@app.command()
def get(key: str, namespace: str = NAMESPACE) -> None:
    """Print the value at KEY (exit code 3 when missing or expired)."""
    with tenant_memory() as mem:
        _plain_needs_namespace(key, namespace)
        wm = _bind(mem, namespace)
        entry = wm.get(key)
        if entry is None:
            raise EntryNotFound(f"working-memory entry {key!r} not found or has expired")
        if state.as_json:
            emit(_row(entry, mem.engine.now_ms() / 1000, True))
        else:  # the raw value, unwrapped: it may be piped into another program
            typer.echo(
                entry.value if isinstance(entry.value, str) else json.dumps(entry.value, ensure_ascii=False)
            )


@app.command()
def search(
    query: str = typer.Argument(None, help="Words to search for; omit for the newest entries."),
    category: str = typer.Option(None, "--category", help="Category or one of its sub-categories."),
    tags: str = typer.Option(None, "--tags", help="Comma-separated tags that must all be present."),
    prefix: str = typer.Option(
        None, "--prefix", help="Whole-segment prefix; default: --namespace, else all."
    ),
    max_results: int = typer.Option(20, "--max-results", min=1),
    namespace: str = NAMESPACE,
) -> None:
    """Search entries by BM25 over key, value, tags and category."""
    with tenant_memory() as mem:
        wm = _bind(mem, namespace)
        target = prefix if prefix is not None else (namespace or "")
        entries = wm.search(
            query, category=category, tags=split_tags(tags), prefix=target, max_results=max_results
        )
        now = mem.engine.now_ms() / 1000
        columns = ["key", "expires_in", "expires_at", "category", "tags", "value"]
        emit_table([_row(e, now, True) for e in entries], columns, times=["expires_at"])


@app.command("set")
def set_(
    key: str,
    value: str,
    namespace: str = NAMESPACE,
    ttl: float = typer.Option(None, "--ttl", help="Seconds to live (default 300)."),
    category: str = typer.Option(None, "--category"),
    tags: str = typer.Option(None, "--tags", help="Comma-separated tags."),
    subject: str = typer.Option(None, "--subject", help="The end user this is about (for forget)."),
    as_text: bool = TEXT,
    as_json_value: bool = JSON_VALUE,
) -> None:
    """Store VALUE under KEY in --namespace (JSON when it parses as JSON, else text)."""
    stored = parse_value(value, as_text=as_text, as_json=as_json_value)
    with tenant_memory() as mem:
        wm = _bind(mem, namespace, for_write=True)
        entry = wm.set(key, stored, ttl=ttl, category=category, tags=split_tags(tags), subject=subject)
        emit(_row(entry, mem.engine.now_ms() / 1000, True), f"saved {entry.key}")


@app.command()
def delete(key: str, namespace: str = NAMESPACE) -> None:
    """Delete KEY from --namespace (exit code 3 when it was not there)."""
    with tenant_memory() as mem:
        wm = _bind(mem, namespace, for_write=True)
        if not wm.delete(key):
            raise EntryNotFound(f"working-memory entry {key!r} not found or has expired")
        emit({"deleted": key}, f"deleted {key}")
