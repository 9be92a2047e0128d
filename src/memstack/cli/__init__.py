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


def main() -> None:
    """Entry point of the ``memstack`` script."""
    app()
