"""Every failure of the CLI as one line on standard error and an exit code; never a traceback.

The rule (documented in README.md):

| exit | meaning |
|---|---|
| 0 | done |
| 1 | the command was valid but failed at run time (also: an import that skipped something) |
| 2 | invalid usage or input (unknown option, bad value, bad URL, missing directory): retrying cannot help |
| 3 | not found: a session, key, entry or id that does not exist |
| 4 | the engine is unavailable: unreachable, out of memory or disk |
| 5 | ``dream run``: a pass was skipped (its model unreachable, its answer unusable); the records say why |

The line reads ``error: <ErrorName>: <message>``; under ``--json`` it is one JSON object
``{"error": ..., "message": ..., "exit_code": ...}`` instead. ``MEMSTACK_DEBUG=1`` lets an
unexpected exception through with its traceback (for bug reports).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, Final, NoReturn

import typer
from typer.core import TyperGroup

from ...foundation.errors import EngineUnavailable, InvalidInput, MemstackError, NotFound
from ...foundation.limits import check_text, one_line
from ...foundation.redact import redact
from ._forgive import hoist_root_options, suggest
from ._help import name_values
from ._state import state

__all__ = ["EXIT", "GuardedGroup", "exit_code", "fail", "report"]

EXIT: Final = {"error": 1, "usage": 2, "not_found": 3, "unavailable": 4, "skipped": 5}

# Most specific first: the first class an error is an instance of decides its exit code.
_CODES: Final[list[tuple[type[BaseException], int]]] = [
    (InvalidInput, EXIT["usage"]),
    (NotFound, EXIT["not_found"]),
    (EngineUnavailable, EXIT["unavailable"]),
    (MemstackError, EXIT["error"]),
]


def exit_code(exc: BaseException) -> int:
    """The exit code of ``exc`` by the table above (1 for anything unlisted)."""
    return next((code for cls, code in _CODES if isinstance(exc, cls)), EXIT["error"])


def report(name: str, message: str, code: int) -> None:
    """Print one error line on standard error (JSON under ``--json``), credentials redacted."""
    text = one_line(redact(message))
    if state.as_json:
        line = json.dumps({"error": name, "message": text, "exit_code": code}, ensure_ascii=False)
    else:
        line = f"error: {name}: {text}"
    # A message may quote what the user typed, lone surrogates included: never fail printing it.
    print(line.encode("utf-8", "backslashreplace").decode("utf-8"), file=sys.stderr, flush=True)


def fail(exc: BaseException) -> NoReturn:
    """Report ``exc`` and leave with its exit code.

    Raises:
        typer.Exit: always, with :func:`exit_code` of ``exc``.
    """
    code = exit_code(exc)
    report(type(exc).__name__, str(exc) or type(exc).__name__, code)
    raise typer.Exit(code)


def _check_strings(label: str, value: object) -> None:
    # File paths are exempt (PurePath, not str): a Linux file name may be any bytes.
    if isinstance(value, str):
        check_text(value, label)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_strings(label, item)


# Click's classes are used by duck typing: typer ships its own copy of click (``typer._click``).
def _label(param: Any) -> str:
    if param.param_type_name == "option":
        return str(max(param.opts, key=len))
    return str(param.name or "argument").upper()


def _guard(callback: Callable[..., Any], params: list[Any]) -> Callable[..., Any]:
    """``callback`` refusing lone surrogates in any text parameter, naming the parameter.

    Command-line bytes that are not UTF-8 reach Python as lone surrogates (``surrogateescape``);
    nothing on the way to the engine could store them.
    """
    labels = {p.name: _label(p) for p in params if p.name}

    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for name, value in kwargs.items():
            _check_strings(labels.get(name, name), value)
        return callback(*args, **kwargs)

    checked.__memstack_guarded__ = True  # type: ignore[attr-defined]  # a marker on the function object
    return checked


def _commands(command: Any) -> Iterator[Any]:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _commands(sub)


class GuardedGroup(TyperGroup):
    """The root command: maps every exception to :func:`report` and an exit code.

    Click's usage errors become the same one line (``error: UsageError: …``) instead of a
    usage block; a help request with no arguments still prints the help.
    """

    def main(  # type: ignore[override]  # same parameters as click's, narrowed return
        self,
        args: list[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> int:
        name_values(self)  # before any help page: what to type, never a type name
        for command in _commands(self):
            if command.callback is not None and not hasattr(command.callback, "__memstack_guarded__"):
                command.callback = _guard(command.callback, command.params)
        argv = hoist_root_options(self, list(sys.argv[1:] if args is None else args))
        # --json decides the error format even when parsing fails before the root callback runs.
        state.reset(as_json="--json" in argv[: argv.index("--") if "--" in argv else len(argv)])
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            code = result if isinstance(result, int) else 0
        except typer.Abort:
            code = EXIT["error"]
            report("Aborted", "interrupted", code)
        except Exception as exc:
            code = _handle(exc)
        if standalone_mode:
            sys.exit(code)
        return code


def _with_suggestion(exc: Any) -> str:
    """Click's message, with "did you mean" in one form for a mistyped option."""
    if type(exc).__name__ == "NoSuchOption" and exc.possibilities:
        return f"No such option: {exc.option_name}.{suggest(exc.option_name, exc.possibilities)}"
    return str(exc.format_message())


def _handle(exc: Exception) -> int:
    """Report ``exc`` and return its exit code (click's usage errors keep theirs, 2)."""
    click_code = getattr(exc, "exit_code", None)
    if isinstance(click_code, int) and hasattr(exc, "format_message"):  # a click exception
        if type(exc).__name__ == "NoArgsIsHelpError":
            exc.show()  # type: ignore[attr-defined]  # click's: prints the help, as asked
        else:
            report(type(exc).__name__, _with_suggestion(exc), click_code)
        return click_code
    if os.environ.get("MEMSTACK_DEBUG") == "1":
        raise exc
    code = exit_code(exc)
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, MemstackError | OSError):  # neither the user's input nor the machine: a bug
        message += " (unexpected: MEMSTACK_DEBUG=1 shows the traceback for a bug report)"
    report(type(exc).__name__, message, code)
    return code
