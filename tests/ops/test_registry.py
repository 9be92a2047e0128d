"""The registry is the one source of the doors: every route, command and tool comes from it (or
is on the short, commented list of process and admin doors below), no two operations collide,
and every operation that reads writes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

import typer
from pydantic import BaseModel
from starlette.routing import Mount, Route

from memstack import Memory
from memstack.doors.cli import GROUPS, HAND_WRITTEN, HAND_WRITTEN_GROUPS
from memstack.doors.cli import app as cli_app
from memstack.doors.server import ServerSettings, create_app
from memstack.doors.server.keys import ApiKeyStore
from memstack.doors.server.mcp import build_server
from memstack.engines import Engine
from memstack.ops import OPERATIONS, Cli, Http, Op, Request, Tool, call
from memstack.ops.registry import check
from memstack.ops.tools import TOOL_NAMES, tool_specs
from memstack.services.transfer.dump import dump_lines

from ._scenarios import SCENARIOS, expand, populate

# The hand-written /v1 routes, each with what keeps it out of the registry: a stream (an operation
# answers one JSON value), a key-management rule (an admin key, never a tenant's), or a door over
# the registry itself (its input is another operation's name and arguments).
HAND_WRITTEN_V1 = {
    ("GET", "/v1/shared/{name}/events"): "a stream: a board's server-sent events (routes/watch.py)",
    ("GET", "/v1/keys"): "key management: an admin key lists the keys of every tenant",
    ("POST", "/v1/keys"): "key management: an admin key mints a key, whose token is shown once",
    ("DELETE", "/v1/keys/{key_id}"): "key management: an admin key revokes a key",
    ("POST", "/v1/admin/tenants/{tenant}/purge"): "key management: an admin key purges a tenant",
    ("GET", "/v1/info"): "the server process's state (version, engine, vector backfill), no tenant's",
}

# The other doors outside the registry: the operators' endpoints, the API documents, the inspector
# and the MCP endpoint.
NOT_OPERATIONS = {
    *HAND_WRITTEN_V1,
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
    ("GET", "/ui"),
    ("GET", "/ui/"),
    ("GET", "/ui/api/shared/{name}/events"),
    ("GET", "/ui/api/whoami"),  # who the inspector tab is: the server's mode, not a tenant's data
    ("GET", "/mcp"),
    ("POST", "/mcp"),
    ("DELETE", "/mcp"),
}


def _walk(routes: list[Any]) -> set[tuple[str, str]]:
    found = set()
    for route in routes:
        if isinstance(route, Mount):
            continue  # static files (the inspector's, the API documents' assets)
        if hasattr(route, "original_router"):  # a router included in the app (no prefix given)
            found |= _walk(route.original_router.routes)
            continue
        assert isinstance(route, Route), route
        found |= {(method, route.path) for method in route.methods or () if method != "HEAD"}
    return found


def _routes(engine: Engine) -> set[tuple[str, str]]:
    ApiKeyStore(engine).create(["acme"])  # keys mode: the key routes exist too
    return _walk(create_app(engine, ServerSettings(require_auth=True)).router.routes)


def test_every_route_comes_from_the_registry(engine: Engine) -> None:
    generated = {(h.method, h.path.replace(":path", "")) for op in OPERATIONS.values() for h in op.http}
    routes = {(m, p.replace(":path", "")) for m, p in _routes(engine)}
    assert routes - generated <= NOT_OPERATIONS, sorted(routes - generated - NOT_OPERATIONS)
    assert generated <= routes  # and every operation's route is served
    assert len(generated) >= 55
    hand_written_v1 = {route for route in routes - generated if route[1].startswith("/v1/")}
    assert hand_written_v1 == set(HAND_WRITTEN_V1), "a hand-written /v1 route needs its reason here"


def _commands(command: Any, path: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    if not hasattr(command, "list_commands"):
        return {path}
    ctx = command.context_class(command)
    return {
        p
        for name in command.list_commands(ctx)
        for p in _commands(command.get_command(ctx, name), (*path, name))
    }


def test_every_command_comes_from_the_registry() -> None:
    commands = _commands(typer.main.get_command(cli_app))
    generated = {
        (op.cli.command,) if op.cli.group is None else (op.cli.group, op.cli.command)
        for op in OPERATIONS.values()
        if op.cli is not None
    }
    hand_written = {(c,) if g is None else (g, c) for g, c, _, _ in HAND_WRITTEN}
    whole_groups = {path for path in commands if path[0] in HAND_WRITTEN_GROUPS}
    assert commands == generated | hand_written | whole_groups
    assert not generated & hand_written
    assert set(GROUPS) == {path[0] for path in commands if len(path) == 2}


def test_every_tool_comes_from_the_registry() -> None:
    registered = [op.tool.name for op in OPERATIONS.values() if op.tool is not None]
    assert sorted(TOOL_NAMES) == sorted(registered)
    assert [spec["function"]["name"] for spec in tool_specs()] == list(TOOL_NAMES)

    async def listed() -> list[str]:
        from mcp import Client

        async with Client(build_server(lambda ctx: None)) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert asyncio.run(listed()) == list(TOOL_NAMES)


class _Named(Request):
    name: str


def _handler(mem: Memory, request: Any) -> dict[str, Any]:
    return {}


def _op(name: str, **doors: Any) -> Op[Any]:
    return Op(name, "A test operation.", _Named, _handler, dict, "", **doors)


@pytest.mark.parametrize(
    ("ops", "message"),
    [
        ([_op("a.x"), _op("a.x")], "a.x and a.x share the name a.x"),
        ([_op("a.x", tool=Tool("t")), _op("a.y", tool=Tool("t"))], "share the tool t"),
        ([_op("a.x", cli=Cli("sessions c")), _op("a.y", cli=Cli("sessions c"))], "share the command"),
        (
            [_op("a.x", http=(Http("GET /v1/x/{name}"),)), _op("a.y", http=(Http("GET /v1/x/{id}"),))],
            "route",
        ),
        ([_op("a.x", http=(Http("GET /v1/x/{id}"),))], "lacks: ['id']"),
        ([_op("a.x", cli=Cli("nope c NAME"))], "group 'nope'"),
    ],
)
def test_collisions_are_refused(ops: list[Op[Any]], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check(ops)


def test_request_models_are_strict() -> None:
    for op in OPERATIONS.values():
        config = op.request.model_config
        assert config.get("extra") == "forbid" and config.get("strict") is True, op.name
        assert issubclass(op.request, BaseModel)


def keyspace(mem: Memory) -> list[tuple[str, str, str, bool]]:
    return [
        (line["key"], line["type"], repr(line["value"]), line["pttl"] is not None)
        for line in dump_lines(mem.engine)
    ]


def test_an_operation_that_reads_never_writes(mem: Memory) -> None:
    readers = [op for op in OPERATIONS.values() if op.reads]
    assert len(readers) >= 25
    ids = populate(mem)
    before = keyspace(mem)
    for op in readers:
        call(op, mem, expand(SCENARIOS[op.name].args, ids))
        assert keyspace(mem) == before, op.name
