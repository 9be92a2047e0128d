"""How each door refuses a request: the error's class name and message, as its user reads them.

A tier's input rules have one home (its requests), so a bad value gets the same error class and
message from the library's keyword methods and from every door: the registry's call, HTTP (the
operation's route: ``error`` and ``detail``), the agent tools' route (``POST /v1/tools/{name}``),
the CLI (``--json``: one ``{"error", "message"}`` line on standard error, in a real process) and
MCP (the tool error's ``structuredContent`` and text). The tools say which tool failed before the
message (``'{tool} failed: '``: an agent reads which of its calls failed); that prefix is taken off.
Messages are compared as the servers show them (:func:`~memstack.doors.server.error_table.scrub`:
one line, no internal key); :func:`refusal` gives the library's own, to compare.

Each refusal runs on a fresh tenant of the doors' engine, filled by the test's function when it
gives one, and that tenant must hold after the refusal exactly what it held before: a refusal
writes nothing. :meth:`Refusals.refuse` asks one door (skipping, with the reason, a door the
operation or the engine does not have); :meth:`Refusals.every` asks every door the operation has.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memstack import Memory
from memstack.doors.server.error_table import scrub
from memstack.engines import Engine
from memstack.engines.prefixed import PrefixedEngine, tenant_engine
from memstack.foundation.errors import MemstackError
from memstack.ops import OPERATIONS, Op, call

from ._doors import CliDriver, McpDoor, cli_argv, cli_driver, http_request, tool_call

Refusal = tuple[str, str]
Fill = Callable[[Memory], None]

DOORS = ("library", "http", "tools", "cli", "mcp")
TOOL_DOORS = ("tools", "mcp")
"""The doors that call an operation through its tool (the agent tools' route and MCP)."""


def refusal(action: Callable[[], object]) -> Refusal:
    """The name and message of the error ``action`` raises (it must raise one of the tree)."""
    try:
        action()
    except MemstackError as exc:
        return type(exc).__name__, scrub(str(exc))
    raise AssertionError("the call was not refused")


def _told(op: Op[Any], message: str) -> str:
    """A tool's message without the words the tools put before every failure."""
    assert op.tool is not None
    return message.removeprefix(f"{op.tool.name} failed: ")


def _held(view: Memory) -> tuple[list[str], list[tuple[str, str]]]:
    """What a tenant holds: its live keys and its records, whole."""
    engine = view.engine
    assert isinstance(engine, PrefixedEngine)
    records = sorted(item for item in engine.raw_items() if item[0].startswith(engine.prefix))
    return sorted(engine.scan("")), records


class Refusals:
    """The doors of one engine; each refusal on a fresh tenant, checked to have written nothing.
    The app and the MCP session start when a door first needs them."""

    def __init__(self, engine: Engine, url: str | None, driver: CliDriver) -> None:
        self.engine, self.url, self.driver = engine, url, driver
        self.count = 0
        self._stack = contextlib.ExitStack()

    @functools.cached_property
    def client(self) -> Any:
        from fastapi.testclient import TestClient

        from memstack.doors.server import create_app

        # No keys (loopback): each call names its tenant in X-Memstack-Tenant.
        return self._stack.enter_context(TestClient(create_app(self.engine, mcp=False)))

    @functools.cached_property
    def mcp(self) -> McpDoor:
        door = McpDoor(None)
        self._stack.callback(door.close)
        return door

    def close(self) -> None:
        self._stack.close()

    def lacks(self, door: str, op: Op[Any]) -> str | None:
        """Why ``op`` cannot be called through ``door`` here (None: it can)."""
        if door == "cli" and op.cli is None:
            return f"{op.name} has no CLI command"
        if door == "cli" and self.url is None:
            return "no CLI door (memory:// lives in one process)"
        if door == "http" and not op.http:
            return f"{op.name} has no HTTP route"
        if door in TOOL_DOORS and op.tool is None:
            return f"{op.name} has no tool"
        return None

    def refuse(self, door: str, name: str, args: dict[str, Any], fill: Fill | None = None) -> Refusal:
        """``(error class name, message)`` of ``door`` refusing operation ``name`` with ``args``,
        on a fresh tenant ``fill`` wrote to first (skips a door the operation or the engine does
        not have)."""
        op = OPERATIONS[name]
        reason = self.lacks(door, op)
        if reason is not None:
            pytest.skip(reason)
        self.count += 1
        tenant = f"{door}{self.count}"
        view = Memory(tenant_engine(self.engine, tenant))
        try:
            if fill is not None:
                fill(view)
            before = _held(view)
            assert fill is not None or before == ([], [])
            found = getattr(self, f"_{door}")(op, view, tenant, args)
            # A refusal writes nothing: with no fill, the tenant stays empty.
            assert _held(view) == before, f"{door} wrote before refusing"
        finally:
            view.close()
        return found

    def every(self, name: str, args: dict[str, Any], fill: Fill | None = None) -> dict[str, Refusal]:
        """``door -> (error class name, message)`` of operation ``name`` refusing ``args`` on each
        door it has, each on a fresh tenant ``fill`` wrote to first."""
        op = OPERATIONS[name]
        return {door: self.refuse(door, name, args, fill) for door in DOORS if self.lacks(door, op) is None}

    def _library(self, op: Op[Any], view: Memory, tenant: str, args: dict[str, Any]) -> Refusal:
        return refusal(lambda: call(op, view, args))

    def _http(self, op: Op[Any], view: Memory, tenant: str, args: dict[str, Any]) -> Refusal:
        binding, path, query, body = http_request(op, args)
        answer = self.client.request(
            binding.method, path, params=query, json=body, headers={"X-Memstack-Tenant": tenant}
        )
        assert 400 <= answer.status_code < 500, answer.text
        return str(answer.json()["error"]), str(answer.json()["detail"])

    def _tools(self, op: Op[Any], view: Memory, tenant: str, args: dict[str, Any]) -> Refusal:
        assert op.tool is not None
        arguments, context = tool_call(op, args)
        answer = self.client.post(
            f"/v1/tools/{op.tool.name}",
            json={"arguments": arguments, **context},
            headers={"X-Memstack-Tenant": tenant},
        )
        assert 400 <= answer.status_code < 500, answer.text
        return str(answer.json()["error"]), _told(op, str(answer.json()["detail"]))

    def _cli(self, op: Op[Any], view: Memory, tenant: str, args: dict[str, Any]) -> Refusal:
        argv = ["--url", str(self.url), "--tenant", tenant, "--json", *cli_argv(op, args)]
        code, _, err = self.driver.run(argv)
        assert code != 0, argv
        line = json.loads(err.strip().splitlines()[-1])
        return str(line["error"]), str(line["message"])

    def _mcp(self, op: Op[Any], view: Memory, tenant: str, args: dict[str, Any]) -> Refusal:
        assert op.tool is not None
        arguments, context = tool_call(op, args)
        self.mcp.memory = view
        result = self.mcp.call(op.tool.name, {**arguments, **context})
        text = "".join(part.text for part in result.content)
        assert result.is_error, text
        return str(result.structured_content["error"]), _told(op, text.removeprefix("Error: "))


@pytest.fixture(scope="module")
def driver() -> Iterator[CliDriver]:
    with cli_driver() as running:
        yield running


@pytest.fixture
def refusals(engine: Engine, engine_kind: str, engine_url_for: str, driver: CliDriver) -> Iterator[Refusals]:
    doors = Refusals(engine, None if engine_kind == "memory" else engine_url_for, driver)
    try:
        yield doors
    finally:
        doors.close()
