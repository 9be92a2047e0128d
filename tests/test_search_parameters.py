"""The search-parameter table of docs/search.md holds on every surface: each canonical name is a parameter of
the library's ``search``, an option of ``memstack memories search``, a query parameter of
``GET /v1/memories`` and an argument of the ``search_memory`` tool."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import typer
from fastapi.testclient import TestClient

import memstack
from memstack.agent.tools.schemas import SearchMemoryArgs
from memstack.doors.cli import app as cli_app
from memstack.doors.server import create_app
from memstack.foundation.errors import InvalidValue
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.search_request import SearchRequest, search_request

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


def _library_names() -> set[str]:
    """The library's ``search`` names: its own parameters and, as it forwards ``**options`` to
    ``search_request`` (which refuses an unknown keyword), the fields of ``SearchRequest``."""
    parameters = inspect.signature(LongTermMemory.search).parameters
    names = set(parameters)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        with pytest.raises(InvalidValue, match="unknown"):
            search_request("tea", no_such_parameter=1)
        names |= {f.name for f in fields(SearchRequest) if f.init}
    return names


def test_every_surface_takes_every_name() -> None:
    library = _library_names()
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
    readme = (Path(__file__).parents[1] / "docs" / "search.md").read_text(encoding="utf-8")
    table = readme[readme.index("**Search parameters are the same on every surface**") :]
    table = table[: table.index("\n\n", table.index("| parameter"))]
    for name in CANONICAL:
        assert f"`{name}`" in table, name
