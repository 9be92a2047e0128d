"""What every CLI group shares: opening the engine (whole, or one tenant's view), output, errors.

Tier commands (``sessions``, ``conversations``, ``memories``, ``working``, ``context``) work on
:func:`tenant_memory`: the view of tenant ``--tenant`` (default ``default``), exactly the data the
keyless HTTP server, the MCP server and ``memstack.open(url)`` show, searched with the embedder the
root ``--embedder`` names (resolved as every door resolves it). Engine-wide commands (``serve``,
``keys``, ``doctor``, ``export``, ``import``, ``tenants``) use :func:`memory`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.console import Console
from rich.table import Table

from ...engines import default_url
from ...engines.prefixed import tenant_engine
from ...engines.sqlite import sqlite_path
from ...foundation.errors import InvalidUrl, MemstackError
from ...foundation.timefmt import iso_utc
from ...search.embedders.setting import resolve_embedder
from ...services.memory import Memory
from ...services.memory import open as open_memory
from ._errors import EXIT, fail
from ._state import state

__all__ = [
    "EXIT",
    "EmbedderOption",
    "console",
    "emit",
    "emit_table",
    "err_console",
    "iso_utc",
    "memory",
    "resolve_url",
    "state",
    "tenant_memory",
]

EmbedderOption = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        help="The retrieval setting: local, minilm, e5-small, openai:BASE_URL[#MODEL] or none (key from "
        "MEMSTACK_EMBEDDER_API_KEY or OPENAI_API_KEY). Default: $MEMSTACK_EMBEDDER, else local when "
        "installed (hybrid search), else none (BM25); the same rule as memstack.open.",
    ),
]
"""``--embedder``: the root option (the memories commands) and ``serve``'s and ``doctor``'s own
(a command's wins, else the root's applies): one setting, resolved by
:func:`memstack.search.embedders.setting.resolve_embedder`."""

console = Console()
_PIPED_WIDTH = 200
err_console = Console(stderr=True)


def resolve_url() -> str:
    """The engine URL of this run: ``--url`` / ``MEMSTACK_URL``, else the default SQLite file.

    A SQLite file the user named must be in an existing directory unless ``--create`` was given
    (a typo would otherwise create an empty database and answer "nothing there"); the default
    file's directory is memstack's own and is created when missing.

    Raises:
        InvalidUrl: a named SQLite file whose directory does not exist (without ``--create``).
    """
    if state.url is None:
        return default_url()
    url = state.url
    if urlsplit(url).scheme.lower() == "sqlite" and not state.create:
        directory = Path(sqlite_path(url)).parent
        if not directory.is_dir():
            problem = "is not a directory" if directory.exists() else "does not exist"
            raise InvalidUrl(
                f"engine URL {url!r}: directory {str(directory)!r} {problem}; "
                "create it, or pass the root option --create before the command "
                "(memstack --create --url URL COMMAND)"
            )
    return url


@contextlib.contextmanager
def memory() -> Iterator[Memory]:
    """The whole engine named by the root options; errors → one line and an exit code.

    Raises:
        typer.Exit: on any :class:`~memstack.foundation.errors.MemstackError` (see ``_errors``).
    """
    try:
        with open_memory(resolve_url(), tenant=None, embedder="none") as mem:
            yield mem
    except MemstackError as exc:
        fail(exc)


@contextlib.contextmanager
def tenant_memory() -> Iterator[Memory]:
    """Tenant ``--tenant``'s view of the engine (as the HTTP server stores it), with the embedder
    of ``--embedder`` (closing it finishes the vectors of what the command saved).

    Raises:
        typer.Exit: on any :class:`~memstack.foundation.errors.MemstackError`, an invalid tenant name or
            embedder setting included.
    """
    with memory() as whole:
        view = Memory(tenant_engine(whole.engine, state.tenant), embedder=resolve_embedder(state.embedder))
        try:
            yield view
        finally:
            view.close()  # the tiers' background work; the engine itself is the outer memory's


def counted(n: int, one: str, many: str) -> str:
    """``1 memory``, ``2 memories``: a count with its noun in the right number."""
    return f"{n} {one if n == 1 else many}"


def emit(value: Any, text: str | None = None) -> None:
    """Print ``value`` as JSON under ``--json``, else ``text`` (or the value) for humans.

    Text goes out as it is, never re-wrapped: it may be a stored value piped into another program.
    """
    if state.as_json:
        print(_json(value))
    else:
        print(_printable(text if text is not None else _cell(value)))


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8: \udcXX escapes keep it exact
        return json.dumps(value, ensure_ascii=True, default=str)
    return text


def _printable(text: str) -> str:
    """``text`` with lone surrogates (file names that are not UTF-8) as visible escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def emit_table(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    title: str | None = None,
    times: Sequence[str] = (),
) -> None:
    """Rows as a table for humans (columns in ``times`` as ISO-8601 UTC), a JSON list under ``--json``."""
    if state.as_json:
        print(_json(list(rows)))
        return
    table = Table(title=title)
    for index, column in enumerate(columns):
        # ids (the first column) and times must stay whole to be copied; other columns wrap.
        table.add_column(column, no_wrap=index == 0 or column in times)
    for row in rows:
        table.add_row(*(_cell(_short_time(row.get(c)) if c in times else row.get(c)) for c in columns))
    # Piped output has no terminal width to fit: a wide page keeps ids and times on one line.
    (console if console.is_terminal else Console(width=_PIPED_WIDTH)).print(table)


def _short_time(value: Any) -> str | None:
    """A time for a table cell, to the millisecond: wire dicts carry ISO text, some rows epoch seconds."""
    if isinstance(value, str):
        return iso_utc(datetime.fromisoformat(value), digits=3)
    if value is None or isinstance(value, datetime):
        return iso_utc(value, digits=3)
    return iso_utc(float(value), digits=3)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
