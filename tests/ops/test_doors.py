"""Every registered operation gives the same JSON on every door, for the same data, on every engine:
the library (the registry's call), the CLI (``python -m memstack … --json`` in a real process),
HTTP (its route, and ``POST /v1/tools/{name}`` for a tool) and MCP (``structuredContent``; the text
for the original systems' tools).

Each door works on its own tenant of the test's engine, filled alike at the same instant of the
manual clock, so a write through one door never shows through another. The CLI runs on the system
clock: for writes, times are compared by presence (the call stamps its own). memory:// lives in
one process, so it has no CLI door.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from fastapi.testclient import TestClient

from memstack import Memory
from memstack.doors.server import create_app
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine
from memstack.ops import OPERATIONS, Op, call, operation

from ._doors import TIME_FIELDS, CliDriver, McpDoor, cli_argv, cli_driver, http_request, masked, tool_call
from ._scenarios import SCENARIOS, Scenario, blank_durations, blank_ids, expand, populate

DOORS = ("library", "cli", "http", "tools", "mcp")


@pytest.fixture(scope="module")
def driver() -> Iterator[CliDriver]:
    with cli_driver() as running:
        yield running


def test_every_operation_has_a_scenario() -> None:
    assert sorted(SCENARIOS) == sorted(OPERATIONS)


def _comparable(op_name: str, scenario: Scenario, result: Any) -> Any:
    if scenario.clocked:
        result = blank_durations(result)
    if isinstance(result, str):
        return blank_ids(result) if scenario.text_ids else result
    keys = set(scenario.volatile)
    if not operation(op_name).reads:
        keys |= TIME_FIELDS  # a write stamps its own times; the CLI's clock is the system's
    return masked(result, keys)


class Doors:
    """The doors of one engine: one app, one MCP session, the CLI process; a tenant per call."""

    def __init__(
        self, engine: Engine, url: str | None, client: TestClient, mcp: McpDoor, driver: CliDriver
    ) -> None:
        self.engine, self.url, self.client, self.mcp, self.driver = engine, url, client, mcp, driver
        self.count = 0

    def views(self, op: Op[Any]) -> dict[str, tuple[str, Memory]]:
        """A fresh tenant for each door ``op`` opens, filled alike."""
        self.count += 1
        wanted = ["library"]
        wanted += ["cli"] if op.cli is not None and self.url is not None else []
        wanted += ["http"] if op.http else []
        wanted += ["tools", "mcp"] if op.tool is not None else []
        return {
            door: (f"{door}{self.count}", Memory(tenant_engine(self.engine, f"{door}{self.count}")))
            for door in wanted
        }

    def run(self, op: Op[Any], scenario: Scenario) -> dict[str, Any]:
        views = self.views(op)
        ids = {door: populate(view) for door, (_, view) in views.items()}
        args = {door: expand(scenario.args, ids[door]) for door in views}
        results: dict[str, Any] = {"library": call(op, views["library"][1], args["library"])}
        if "cli" in views:
            argv = ["--url", str(self.url), "--tenant", views["cli"][0], "--json", *cli_argv(op, args["cli"])]
            code, out, err = self.driver.run(argv)
            assert code == 0, (argv, err)
            results["cli"] = json.loads(out)
        if "http" in views:
            binding, path, query, body = http_request(op, args["http"])
            headers = {"X-Memstack-Tenant": views["http"][0]}
            response = self.client.request(binding.method, path, params=query, json=body, headers=headers)
            assert response.status_code == binding.status, response.text
            results["http"] = response.json()
        if op.tool is not None:
            arguments, context = tool_call(op, args["tools"])
            answer = self.client.post(
                f"/v1/tools/{op.tool.name}",
                json={"arguments": arguments, **context},
                headers={"X-Memstack-Tenant": views["tools"][0]},
            ).json()
            assert "data" in answer, answer
            results["tools"] = answer["data"] if answer["data"] is not None else answer["result"]
            arguments, context = tool_call(op, args["mcp"])
            self.mcp.memory = views["mcp"][1]
            result = self.mcp.call(op.tool.name, {**arguments, **context})
            text = "".join(part.text for part in result.content)
            assert not result.is_error, text
            if answer["data"] is None:  # a text tool of the original systems: its text, structured too
                assert result.structured_content == {"result": text}
                results["mcp"] = text
            else:
                assert json.loads(text) == result.structured_content
                results["mcp"] = result.structured_content
        for _, view in views.values():
            view.close()
        return results


@pytest.fixture
def doors(engine: Engine, engine_kind: str, engine_url_for: str, driver: CliDriver) -> Iterator[Doors]:
    # No keys (loopback): each call names its tenant in X-Memstack-Tenant.
    mcp = McpDoor(None)
    try:
        with TestClient(create_app(engine, mcp=False)) as client:
            yield Doors(engine, None if engine_kind == "memory" else engine_url_for, client, mcp, driver)
    finally:
        mcp.close()


PARTS = 4
"""The operations run in this many tests per engine: one test of them all took 105 s on
PostgreSQL on a loaded machine, against the suite's 120 s limit, and kept one worker busy alone."""


@pytest.mark.parametrize("part", range(PARTS))
def test_every_operation_gives_the_same_json_on_every_door(doors: Doors, part: int) -> None:
    disagreements = []
    for name, op in list(OPERATIONS.items())[part::PARTS]:
        scenario = SCENARIOS[name]
        results = doors.run(op, scenario)
        expected = _comparable(name, scenario, results["library"])
        for door, result in results.items():
            if _comparable(name, scenario, result) != expected:
                disagreements.append(f"{name} via {door}: {result!r}\n  library: {results['library']!r}")
    assert not disagreements, "\n".join(disagreements)
