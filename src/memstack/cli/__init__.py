"""The ``memstack`` command line: one sub-command group per tier.

Each group lives in its own module exposing ``app`` (a :class:`typer.Typer`) and is listed in
:data:`GROUPS`; ``_common`` holds what every group shares (opening the engine, output, errors).
"""

from __future__ import annotations

import importlib

import typer

from ._common import state

__all__ = ["app", "main"]

# (command name, module under memstack.cli, help) — variation as data: add a tier by adding a row.
GROUPS: list[tuple[str, str, str]] = [
    ("sessions", "sessions", "Session state: sessions, keys, counters, history."),
    ("conversations", "conversations", "Conversations: active thread and token-limited history."),
    ("keys", "keys", "API keys of the HTTP service: create, list, revoke."),
    ("memories", "longterm", "Long-term memories: save, search, export, import."),
    ("working", "working", "Working memory: list, get, search."),
    ("dream", "dream", "Dream passes: consolidation, preferences, dedupe; history, undo."),
]

# (module under memstack.cli, function name): top-level commands such as ``memstack serve``.
COMMANDS: list[tuple[str, str]] = [
    ("service", "serve"),
    ("service", "doctor"),
    ("service", "export"),
    ("service", "import_"),
    ("context", "context"),
]

app = typer.Typer(
    name="memstack", help="memstack: memory for LLM agents and pipelines.", no_args_is_help=True
)


@app.callback()
def _root(
    url: str = typer.Option(
        None, "--url", envvar="MEMSTACK_URL", help="Engine URL (default: embedded SQLite)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable JSON output."),
) -> None:
    state.url = url
    state.as_json = as_json


for _name, _module, _help in GROUPS:
    app.add_typer(importlib.import_module(f"{__name__}.{_module}").app, name=_name, help=_help)
for _module, _function in COMMANDS:
    _fn = getattr(importlib.import_module(f"{__name__}.{_module}"), _function)
    app.command(name=_function.rstrip("_").replace("_", "-"))(_fn)


def main() -> None:
    """Entry point of the ``memstack`` script."""
    app()
