"""The README's search-parameter table holds on every surface: each canonical name is a parameter of
the library's ``search``, an option of ``memstack memories search``, a query parameter of
``GET /v1/memories`` and an argument of the ``search_memory`` tool."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import typer
from fastapi.testclient import TestClient

import memstack
from memstack.agent.tools.schemas import SearchMemoryArgs
from memstack.doors.cli import app as cli_app
from memstack.doors.server import create_app
from memstack.tiers.longterm import LongTermMemory

CANONICAL = (
    "query",
    "mode",
    "category",
    "tags",
    "created_after",
    "created_before",
    "metadata",
    "limit",
    "min_score",
    "filter",
    "offset",
    "include_history",
    "include_expired",
    "as_of",
)


def test_every_surface_takes_every_name() -> None:
    library = set(inspect.signature(LongTermMemory.search).parameters)
    root: Any = typer.main.get_command(cli_app)
    ctx = root.context_class(root)
    memories = root.get_command(ctx, "memories")
    command = memories.get_command(ctx, "search")
    cli = {p.name for p in command.params}
    with memstack.open("memory://", tenant=None) as mem, TestClient(create_app(mem.engine)) as client:
        spec = client.get("/openapi.json").json()
    http = {p["name"] for p in spec["paths"]["/v1/memories"]["get"]["parameters"]}
    tool = set(SearchMemoryArgs.model_fields)
    for name in CANONICAL:
        assert name in library, name
        assert name in cli, name
        assert name in http, name
        assert name in tool, name


def test_the_readme_table_names_every_parameter() -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("**Search parameters are the same on every surface**") :]
    table = table[: table.index("\n\n", table.index("| parameter"))]
    for name in CANONICAL:
        assert f"`{name}`" in table, name
