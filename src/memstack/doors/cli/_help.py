"""What the help pages call each value: one rule for every command, never a type name.

Typer writes a parameter's Python type as its metavar (``--limit <int range>``, ``query <str>``,
``--pass <list[str]>``); help should say what to type instead. The rule, applied to the whole
command tree by :func:`name_values` before any help is printed:

* flags show no metavar (typer already prints none);
* an option named in :data:`OPTION_METAVARS` shows that name (``--limit N``, ``--ttl SECONDS``);
* a time shows ``TIME``;
* anything else shows its own name upper-cased (``--scope SCOPE``, ``SESSION_ID``).

Click's classes are used by duck typing, as in ``_errors``: typer ships its own copy of click.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from typer.core import TyperArgument

__all__ = ["OPTION_METAVARS", "metavar_for", "name_values"]

# Keyed by the option's longest flag without dashes: the same flag means the same thing everywhere.
OPTION_METAVARS: Final[dict[str, str]] = {
    "limit": "N",
    "max-results": "N",
    "recall-limit": "N",
    "history-turns": "N",
    "message-limit": "N",
    "budget": "TOKENS",
    "max-tokens": "TOKENS",
    "max-body-bytes": "BYTES",
    "ttl": "SECONDS",
    "dream-interval": "SECONDS",
    "retention-interval": "SECONDS",
    "ttl-hours": "HOURS",
    "min-score": "SCORE",
    "created-after": "TIME",
    "created-before": "TIME",
    "category": "PATH",
    "metadata": "JSON",
    "tags": "TAGS",
    "pass": "PASS",
}


class _NamedArgument(TyperArgument):
    """An argument whose help line shows its metavar alone (typer appends the type name)."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None


def metavar_for(param: Any) -> str | None:
    """The help name of ``param`` by the module's rule; None for a flag (nothing to type)."""
    if getattr(param, "is_flag", False):
        return None
    if param.param_type_name == "argument":
        return str(param.name).upper()
    flag = str(max(param.opts, key=len)).lstrip("-")
    if flag in OPTION_METAVARS:
        return OPTION_METAVARS[flag]
    if getattr(getattr(param, "type_descriptor", None), "is_datetime", False):
        return "TIME"
    return flag.upper().replace("-", "_")


def name_values(command: Any) -> None:
    """Give every parameter of ``command`` and its sub-commands its help name (idempotent)."""
    for each in _commands(command):
        for param in each.params:
            if param.metavar is None:  # a name chosen by the command itself wins
                param.metavar = metavar_for(param)
            if isinstance(param, TyperArgument) and param.metavar is not None:
                param.__class__ = _NamedArgument


def _commands(command: Any) -> Iterator[Any]:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _commands(sub)
