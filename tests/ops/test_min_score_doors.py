"""``min_score`` reaches every door of the long-term search (library, CLI, HTTP, agent tools, MCP)
and every door honours it alike, on every engine."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from memstack.ops import operation

from ._scenarios import Scenario
from .test_doors import Doors, doors, driver  # noqa: F401 - the doors of test_doors, reused


def _contents(result: Any) -> list[str]:
    """The hits' contents: from the JSON items, or the lines of a tool's text answer."""
    if isinstance(result, str):
        return sorted(text for text in ("Alice plays the violin", "Alice lives in Boston") if text in result)
    items = result["items"] if isinstance(result, dict) else result
    return [item["entry"]["content"] if "entry" in item else item["content"] for item in items]


@pytest.mark.parametrize("name", ["memories.search", "agent.search_memory"])
def test_min_score_is_honoured_on_every_door(doors: Doors, name: str) -> None:  # noqa: F811
    op = operation(name)
    query = {"scope": "alice", "query": "alice violin"}
    plain = doors.run(operation("memories.search"), Scenario(query))["library"]["items"]
    scores = [item["score"] for item in plain]
    assert len(scores) == 2 and scores[0] > scores[1]
    cut = (scores[0] + scores[1]) / 2
    everything = doors.run(op, Scenario(query))
    results = doors.run(op, Scenario({**query, "min_score": cut}))
    assert len(results) >= 2  # the library and HTTP at least (CLI and MCP where the engine has them)
    for door, result in results.items():
        assert len(_contents(everything[door])) == 2, door
        assert _contents(result) == ["Alice plays the violin"], door
