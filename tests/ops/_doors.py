"""Calling one operation through each door with the same request: the library, the CLI (a real
process), HTTP and MCP. Each door's call is built from the operation's declaration alone, as a
user of that door would write it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memstack import Memory
from memstack.ops import CONTEXT, Http, Op, field_kind

TIME_FIELDS = {
    "created_at",
    "updated_at",
    "stored_at",
    "expires_at",
    "timestamp",
    "at",
    "undone_at",
    "valid_from",
    "valid_to",
}


class CliDriver:
    """One ``_cli_driver.py`` process running ``python -m memstack`` commands on demand."""

    def __init__(self) -> None:
        script = Path(__file__).with_name("_cli_driver.py")
        self.proc = subprocess.Popen(
            [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return int(answer["code"]), answer["stdout"], answer["stderr"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def cli_argv(op: Op[Any], args: dict[str, Any]) -> list[str]:
    """``GROUP COMMAND ARGS OPTIONS`` of ``op`` with ``args``, as a user types them."""
    assert op.cli is not None
    cli = op.cli
    words = [cli.command] if cli.group is None else [cli.group, cli.command]
    positional = [_text(args[f]) for f in cli.args if f in args]
    options: list[str] = []
    for field, value in args.items():
        if field in cli.args:
            continue
        info = op.request.model_fields[field]
        names = cli.names.get(field, ("--" + field.replace("_", "-"),))
        kind = field_kind(info)
        if kind == "bool":
            default = cli.defaults.get(field, info.get_default(call_default_factory=True))
            if value != default:
                positive, _, negative = names[0].partition("/")
                options.append(positive if value else negative)
        elif kind == "texts":
            for item in value:
                options += [names[0], item]
        elif kind == "tags":
            options += [names[0], ",".join(value)]
        else:
            options += [names[0], _text(value)]
    return [*words, *positional, *options]


def http_request(op: Op[Any], args: dict[str, Any]) -> tuple[Http, str, list[tuple[str, str]], Any]:
    """``(method, path, query, body)`` of the first route of ``op`` that takes every field of ``args``."""
    binding = next(
        b
        for b in op.http
        if set(args) <= {*b.path_fields, *b.query_fields(op.fields), *b.body_fields(op.fields)}
        and set(b.path_fields) <= set(args)
    )
    path = binding.path
    for field in binding.path_fields:
        safe = "/" if "{" + field + ":path}" in path else ""
        path = path.replace("{" + field + ":path}", "{" + field + "}")
        path = path.replace("{" + field + "}", quote(str(args[field]), safe=safe))
    query: list[tuple[str, str]] = []
    for field in binding.query_fields(op.fields):
        if field not in args:
            continue
        value = args[field]
        kind = field_kind(op.request.model_fields[field])
        if kind in ("texts", "tags"):
            query += [(field, item) for item in value]
        elif kind == "bool":
            query.append((field, "true" if value else "false"))
        else:
            query.append((field, _text(value)))
    body_fields = binding.body_fields(op.fields)
    body = {k: v for k, v in args.items() if k in body_fields} if binding.has_body else None
    return binding, path, query, body


def tool_call(op: Op[Any], args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(arguments, context)`` of ``op``'s tool with ``args``: the context fields apart, the fields
    the tool fixes left out (a scenario gives them the fixed value)."""
    assert op.tool is not None
    for field, value in op.tool.fixed.items():
        assert args.get(field, value) == value, f"{op.name}: the tool fixes {field}={value!r}"
    context = {k: v for k, v in args.items() if k in CONTEXT}
    arguments = {k: v for k, v in args.items() if k not in CONTEXT and k not in op.tool.fixed}
    return arguments, context


class McpDoor:
    """An in-process MCP client session on a server whose tools run on :attr:`memory`."""

    def __init__(self, memory: Memory | None) -> None:
        from anyio.from_thread import start_blocking_portal
        from mcp import Client

        from memstack.doors.server.mcp import build_server

        self.memory = memory
        self._stack = contextlib.ExitStack()
        portal = self._stack.enter_context(start_blocking_portal())
        server = build_server(lambda ctx: self.memory)
        self.client = self._stack.enter_context(portal.wrap_async_context_manager(Client(server)))
        self.portal = portal

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return self.portal.call(self.client.call_tool, name, arguments)

    def close(self) -> None:
        self._stack.close()


def masked(value: Any, keys: set[str]) -> Any:
    """``value`` with the values under ``keys`` replaced by a marker (generated ids, times)."""
    if isinstance(value, dict):
        return {k: ("<masked>" if k in keys and v is not None else masked(v, keys)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, keys) for v in value]
    return value


@contextlib.contextmanager
def cli_driver() -> Iterator[CliDriver]:
    driver = CliDriver()
    try:
        yield driver
    finally:
        driver.close()
