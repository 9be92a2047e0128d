"""How each door refuses a request: the error's class name and message, as its user reads them.

The library (the registry's call), HTTP (its route's problem: ``error`` and ``detail``), the CLI
(``--json``: one ``{"error", "message"}`` line on standard error, in a real process) and MCP (the
tool error's ``structuredContent`` and text). The tiers' request tests compare each door's refusal
with the keyword method's: one rule, one check, one message.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from typing import Any

import pytest

from memstack import Memory
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import MemstackError
from memstack.ops import OPERATIONS, call

from ._doors import CliDriver, McpDoor, cli_argv, cli_driver, http_request, tool_call

DOORS = ("library", "http", "cli", "mcp")


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

        return self._stack.enter_context(TestClient(create_app(self.engine, mcp=False)))

    @functools.cached_property
    def mcp(self) -> McpDoor:
        door = McpDoor(None)
        self._stack.callback(door.close)
        return door

    def close(self) -> None:
        self._stack.close()

    def refuse(self, door: str, name: str, args: dict[str, Any]) -> tuple[str, str]:
        """``(error class name, message)`` of ``door`` refusing operation ``name`` with ``args``
        (skips a door the operation or the engine does not have)."""
        op = OPERATIONS[name]
        self.count += 1
        tenant = f"{door}{self.count}"
        view = Memory(tenant_engine(self.engine, tenant))
        try:
            refusal = self._refuse(door, op, view, tenant, args)
            assert not list(view.engine.scan("")), f"{door} wrote before refusing"  # a refusal writes nothing
        finally:
            view.close()
        return refusal

    def _refuse(self, door: str, op: Any, view: Memory, tenant: str, args: dict[str, Any]) -> tuple[str, str]:
        if door == "library":
            with pytest.raises(MemstackError) as refused:
                call(op, view, args)
            return type(refused.value).__name__, str(refused.value)
        if door == "http":
            binding, path, query, body = http_request(op, args)
            answer = self.client.request(
                binding.method, path, params=query, json=body, headers={"X-Memstack-Tenant": tenant}
            )
            assert 400 <= answer.status_code < 500, answer.text
            return str(answer.json()["error"]), str(answer.json()["detail"])
        if door == "cli":
            if op.cli is None or self.url is None:
                pytest.skip("no CLI door (memory:// lives in one process)")
            argv = ["--url", self.url, "--tenant", tenant, "--json", *cli_argv(op, args)]
            code, _, err = self.driver.run(argv)
            assert code != 0, argv
            line = json.loads(err.strip().splitlines()[-1])
            return str(line["error"]), str(line["message"])
        if op.tool is None:
            pytest.skip(f"{op.name} has no tool")
        arguments, context = tool_call(op, args)
        self.mcp.memory = view
        result = self.mcp.call(op.tool.name, {**arguments, **context})
        text = "".join(part.text for part in result.content)
        assert result.is_error, text
        # The tool's text says which tool failed, then the message every door gives.
        message = text.removeprefix("Error: ").removeprefix(f"{op.tool.name} failed: ")
        return str(result.structured_content["error"]), message


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
