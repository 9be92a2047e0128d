"""What every CLI group shares: the engine URL, JSON vs table output, errors as exit codes."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from .._memory import Memory
from .._memory import open as open_memory
from ..errors import EngineUnavailable, InvalidInput, MemstackError, NotFound

__all__ = ["EXIT", "emit", "emit_table", "memory", "state"]

# Exit codes a shell user expects: 1 generic failure, 2 bad usage/input, 3 not found, 4 engine down.
EXIT = {"error": 1, "usage": 2, "not_found": 3, "unavailable": 4}


@dataclass
class _State:
    url: str | None = None
    as_json: bool = False


state = _State()
console = Console()
err_console = Console(stderr=True)


@contextlib.contextmanager
def memory() -> Iterator[Memory]:
    """Open the engine named by ``--url`` / ``MEMSTACK_URL`` (default SQLite); errors → exit codes."""
    try:
        with open_memory(state.url) as mem:
            yield mem
    except NotFound as exc:
        _fail(exc, EXIT["not_found"])
    except InvalidInput as exc:
        _fail(exc, EXIT["usage"])
    except EngineUnavailable as exc:
        _fail(exc, EXIT["unavailable"])
    except MemstackError as exc:
        _fail(exc, EXIT["error"])


def _fail(exc: MemstackError, code: int) -> None:
    if state.as_json:
        print(json.dumps({"error": type(exc).__name__, "message": str(exc)}), file=sys.stderr)
    else:
        err_console.print(f"[red]error[/red] ({type(exc).__name__}): {exc}", highlight=False)
    raise typer.Exit(code)


def emit(value: Any, text: str | None = None) -> None:
    """Print ``value`` as JSON under ``--json``, else ``text`` (or the value) for humans."""
    if state.as_json:
        print(json.dumps(value, ensure_ascii=False, default=str))
    else:
        console.print(text if text is not None else value, highlight=False, markup=False)


def emit_table(rows: Sequence[dict[str, Any]], columns: Sequence[str], title: str | None = None) -> None:
    """Rows as a table for humans, as a JSON list under ``--json``."""
    if state.as_json:
        print(json.dumps(list(rows), ensure_ascii=False, default=str))
        return
    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in columns))
    console.print(table)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
