"""What each door answers to a request the tier refuses: the error's name and its message.

A tier's input rules have one home (its requests), so a bad value gets the same error class and
message from the library's keyword methods, the registry's call, the CLI (a real process), HTTP
(the operation's route and ``POST /v1/tools/{name}``) and MCP (the tools say which tool failed
first). :func:`refusals` calls one
operation through every door it has, each on a fresh tenant of the doors' engine filled alike,
and gives ``door -> (error name, message)``; :func:`refusal` is the library's own, to compare.
Messages are compared as the servers show them (:func:`~memstack.doors.server.error_table.scrub`:
one line, no internal key).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from memstack import Memory
from memstack.doors.server.error_table import scrub
from memstack.engines.prefixed import tenant_engine
from memstack.foundation.errors import MemstackError
from memstack.ops import Op, call

from ._doors import cli_argv, http_request, tool_call
from .test_doors import Doors

Refusal = tuple[str, str]


def refusal(action: Callable[[], object]) -> Refusal:
    """The name and message of the error ``action`` raises (it must raise one of the tree)."""
    try:
        action()
    except MemstackError as exc:
        return type(exc).__name__, scrub(str(exc))
    raise AssertionError("the call was not refused")


def _told(op: Op[Any], message: str) -> str:
    """A tool's message without the words tools put before every failure (``'{tool} failed: '``:
    an agent reads which of its calls failed)."""
    assert op.tool is not None
    return message.removeprefix(f"{op.tool.name} failed: ")


def refusals(
    doors: Doors, op: Op[Any], args: dict[str, Any], fill: Callable[[Memory], None]
) -> dict[str, Refusal]:
    """``door -> (error name, message)`` of ``op`` called with ``args`` on each of its doors."""
    doors.count += 1
    tenants = {door: f"r{door}{doors.count}" for door in ("library", "cli", "http", "tools", "mcp")}
    views = {door: Memory(tenant_engine(doors.engine, tenant)) for door, tenant in tenants.items()}
    try:
        for view in views.values():
            fill(view)
        found = {"library": refusal(lambda: call(op, views["library"], args))}
        if op.cli is not None and doors.url is not None:
            argv = ["--url", doors.url, "--tenant", tenants["cli"], "--json", *cli_argv(op, args)]
            code, _, err = doors.driver.run(argv)
            assert code != 0, argv
            answer = json.loads(err.strip().splitlines()[-1])
            found["cli"] = answer["error"], answer["message"]
        if op.http:
            binding, path, query, body = http_request(op, args)
            headers = {"X-Memstack-Tenant": tenants["http"]}
            response = doors.client.request(binding.method, path, params=query, json=body, headers=headers)
            assert response.status_code >= 400, response.text
            found["http"] = response.json()["error"], response.json()["detail"]
        if op.tool is not None:
            arguments, context = tool_call(op, args)
            response = doors.client.post(
                f"/v1/tools/{op.tool.name}",
                json={"arguments": arguments, **context},
                headers={"X-Memstack-Tenant": tenants["tools"]},
            )
            assert response.status_code >= 400, response.text
            found["tools"] = response.json()["error"], _told(op, response.json()["detail"])
            doors.mcp.memory = views["mcp"]
            result = doors.mcp.call(op.tool.name, {**arguments, **context})
            text = "".join(part.text for part in result.content)
            assert result.is_error, text
            found["mcp"] = result.structured_content["error"], _told(op, text.removeprefix("Error: "))
        return found
    finally:
        for view in views.values():
            view.close()
