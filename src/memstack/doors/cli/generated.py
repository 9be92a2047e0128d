"""Every operation's command, generated from the registry (:mod:`memstack.ops`).

A command's parameters are its operation's request fields: the ones its :class:`~memstack.ops.Cli`
face lists as ``args`` are positional, the others are options named after the field
(``--ttl-hours``) unless the face names them. Every value is read from its text by the field's
type, the rule the query string of a URL follows (:func:`memstack.ops.from_text`), except a
VALUE of any JSON (``sessions put``, ``working set``): JSON when it parses as JSON, else the
text itself (``--text`` / ``--json-value`` decide, see :mod:`._values`). A bad value is a usage
error (exit 2) naming the option, before the engine is opened.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import re
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import typer
from pydantic.fields import FieldInfo

from ...foundation.errors import InvalidRequest
from ...ops import OPERATIONS, Op, field_kind, from_text, parse, run
from ._common import emit, emit_table, state, tenant_memory
from ._values import parse_value
from .render import EXIT_CODES, Rows, render

__all__ = ["commands"]

_AS_TEXT = "as_text"
_AS_JSON = "as_json_value"


def _is_any(info: FieldInfo) -> bool:
    return info.annotation is Any or (
        typing.get_origin(info.annotation) is typing.Annotated and typing.get_args(info.annotation)[0] is Any
    )


def _label(op: Op[Any], field: str) -> str:
    """How the command line names ``field``: its option or its argument."""
    assert op.cli is not None
    names = op.cli.names.get(field)
    if field in op.cli.args:
        return names[0] if names else field.upper()
    return names[0].split("/")[0] if names else "--" + field.replace("_", "-")


def _help(info: FieldInfo) -> str:
    return (info.description or "").rstrip(".") + "."


def _parameter(op: Op[Any], field: str) -> inspect.Parameter:
    assert op.cli is not None
    info = op.request.model_fields[field]
    kind = field_kind(info)
    default = op.cli.defaults.get(field, info.get_default(call_default_factory=True))
    required = info.is_required() and field not in op.cli.defaults
    names = op.cli.names.get(field, ())
    annotation: Any = list[str] | None if kind == "texts" else str | None
    if kind == "bool":
        annotation = bool
        decl: Any = typer.Option(
            bool(default), *(names or ("--" + field.replace("_", "-"),)), help=_help(info)
        )
    elif field in op.cli.args:
        decl = typer.Argument(
            ... if required else None,
            metavar=names[0] if names else None,
            help=_help(info),
            show_default=False,
        )
    else:
        shown = None if required or default in (None, [], {}) else str(default)
        help_text = _help(info) + (f" Default: {shown}." if shown is not None else "")
        flags = names or ("--" + field.replace("_", "-"),)
        decl = typer.Option(... if required else None, *flags, help=help_text, show_default=False)
    return inspect.Parameter(field, inspect.Parameter.KEYWORD_ONLY, default=decl, annotation=annotation)


def _value_flags(op: Op[Any]) -> list[inspect.Parameter]:
    values = [_label(op, f) for f in op.fields if _is_any(op.request.model_fields[f])]
    if not values:
        return []
    flags = (
        (_AS_TEXT, "--text", f"Store {values[0]} as text, even when it looks like JSON."),
        (_AS_JSON, "--json-value", f"{values[0]} must be JSON (an error otherwise)."),
    )
    return [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(False, flag, help=text),
            annotation=bool,
        )
        for name, flag, text in flags
    ]


def _env_flags(op: Op[Any]) -> list[inspect.Parameter]:
    assert op.cli is not None
    return [
        inspect.Parameter(
            "env_" + variable.lower(),
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(None, flag, help=text, show_default=False),
            annotation=str | None,
        )
        for flag, (variable, text) in op.cli.env.items()
    ]


@contextlib.contextmanager
def _environment(settings: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` with ``settings`` for the run, as it was afterwards (a command may run
    in-process, under a test runner)."""
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _request(op: Op[Any], given: dict[str, Any]) -> Any:
    """The request of ``op`` from the command line's values.

    Raises:
        InvalidRequest: a value that is not of its field's type, or a request that does not
            validate (the message names the options).
    """
    assert op.cli is not None
    as_text, as_json = bool(given.pop(_AS_TEXT, False)), bool(given.pop(_AS_JSON, False))
    data: dict[str, Any] = dict(op.cli.defaults)
    issues: list[tuple[str, str]] = []
    for field, value in given.items():
        info = op.request.model_fields[field]
        if value is None or (isinstance(value, list) and not value):
            continue
        try:
            if isinstance(value, bool):
                data[field] = value
            elif field in op.cli.blank_is_null and value == "":
                data[field] = None
            elif _is_any(info):
                data[field] = parse_value(value, _label(op, field), as_text=as_text, as_json=as_json)
            else:
                data[field] = from_text(info, _label(op, field), value)
        except InvalidRequest as exc:
            issues += [(_label(op, field), problem) for _, problem in exc.issues]
    if not issues:
        try:
            return parse(op.request, data, operation=op.cli.words)
        except InvalidRequest as exc:
            for where, what in exc.issues:
                root = re.split(r"[.\[]", where, maxsplit=1)[0]
                issues.append((_label(op, root) + where[len(root) :] if root in op.fields else where, what))
    text = "; ".join(f"{where}: {what}" for where, what in issues)
    raise InvalidRequest(f"{op.cli.words}: {text}", tuple(issues))


def _emit(op: Op[Any], result: Any) -> None:
    if state.as_json:
        emit(result)
    else:
        shown = render(op.name, result)
        if isinstance(shown, Rows):
            emit_table(shown.rows, shown.columns, shown.title, shown.times)
        else:
            emit(result, shown)
    cursor = result.get("next_cursor") if isinstance(result, dict) else None
    if cursor is not None and not state.as_json:
        typer.echo(f"(more: --cursor {cursor})", err=True)
    code = EXIT_CODES.get(op.name, lambda _: 0)(result)
    if code:
        raise typer.Exit(code)


def _command(op: Op[Any]) -> Callable[..., None]:
    assert op.cli is not None
    ordered = [f for f in op.cli.args if f in op.fields] + [f for f in op.fields if f not in op.cli.args]
    parameters = [_parameter(op, f) for f in ordered] + _value_flags(op) + _env_flags(op)
    variables = {"env_" + variable.lower(): variable for variable, _ in op.cli.env.values()}

    def command(**given: Any) -> None:
        settings = {variable: value for name, variable in variables.items() if (value := given.pop(name))}
        request = _request(op, given)
        with _environment(settings), tenant_memory() as mem:
            result = run(op, mem, request)
        _emit(op, result)

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]  # typer reads the signature
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__ = op.cli.command.replace("-", "_")
    command.__doc__ = op.summary
    return command


def commands(group: str | None) -> list[tuple[str | None, str, Callable[..., None]]]:
    """``(group, name, function)`` of the commands of ``group`` (None: the top-level ones), in
    registry order."""
    return [
        (op.cli.group, op.cli.command, _command(op))
        for op in OPERATIONS.values()
        if op.cli is not None and op.cli.group == group
    ]
