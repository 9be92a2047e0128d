"""Long-term memory tools: RockBot's exact texts and failure texts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memstack import ManualClock, Memory
from memstack.agent.tools.longterm_tools import age_text
from memstack.ops.memory_tools import MemoryTools
from memstack.tiers.longterm import MemoryEntry


@pytest.fixture
def tools(mem: Memory) -> MemoryTools:
    return MemoryTools(mem, session_id="abc", scope="alice")


def call(tools: MemoryTools, name: str, **args: object) -> str:
    return tools.dispatch(name, json.dumps(args))


def saved_id(text: str) -> str:
    assert text.startswith("Memory saved with id '")
    return text.split("'")[1]


def test_save_stores_the_raw_content_at_once(tools: MemoryTools) -> None:
    text = call(tools, "save_memory", content="Alice likes jazz", category=" music ", tags="jazz, , live")
    entry = tools.long_term.get(saved_id(text))
    assert entry is not None
    assert (entry.content, entry.category, entry.tags) == ("Alice likes jazz", "music", ("jazz", "live"))
    assert text == f"Memory saved with id '{entry.id}'."


def test_save_hook_gets_the_entry_and_cannot_undo_the_save(mem: Memory) -> None:
    seen: list[MemoryEntry] = []

    def hook(entry: MemoryEntry) -> None:
        seen.append(entry)
        raise RuntimeError("expansion backend down")

    tools = MemoryTools(mem, session_id="abc", save_hook=hook)
    text = call(tools, "save_memory", content="Prefers tea")
    assert [e.content for e in seen] == ["Prefers tea"]
    assert tools.long_term.get(saved_id(text)) is not None


def test_save_failures_are_reported_never_saved(tools: MemoryTools) -> None:
    assert call(tools, "save_memory", content="   ").startswith("Error: save_memory failed:")
    assert call(tools, "save_memory", content="x", category="../etc").startswith("Error: save_memory failed:")
    assert call(tools, "save_memory").startswith("Error: invalid arguments for 'save_memory': content:")
    assert tools.long_term.search() == []


def test_search_texts_and_ages(tools: MemoryTools, clock: ManualClock) -> None:
    assert call(tools, "search_memory", query="jazz") == "No memories found matching the search criteria."
    first = saved_id(
        call(tools, "save_memory", content="Alice likes jazz", category="music", tags="jazz, live")
    )
    clock.advance(86400)
    second = saved_id(call(tools, "save_memory", content="Alice plays jazz piano"))
    assert call(tools, "search_memory", query="jazz piano") == (
        "Found 2 memory entries:\n\n"
        f"- [{second}] (uncategorized, remembered today): Alice plays jazz piano\n"
        f"- [{first}] (music, remembered 1 day ago): Alice likes jazz\n"
        "  Tags: jazz, live"
    )
    clock.advance(2 * 86400)
    assert call(tools, "search_memory", query=" ", category="music") == (
        f"Found 1 memory entry:\n\n- [{first}] (music, remembered 3 days ago): Alice likes jazz\n"
        "  Tags: jazz, live"
    )


def test_age_text() -> None:
    created = datetime(2026, 1, 1, tzinfo=UTC)
    base = created.timestamp()
    assert age_text(created, base + 86399) == "today"
    assert age_text(created, base + 86400) == "1 day ago"
    assert age_text(created, base + 10 * 86400 + 5) == "10 days ago"
    assert age_text(created, base - 50) == "today"


def test_delete_texts(tools: MemoryTools) -> None:
    entry_id = saved_id(call(tools, "save_memory", content='Says "hi"'))
    assert (
        call(tools, "delete_memory", id=entry_id.upper())
        == f'Deleted memory entry \'{entry_id}\': "Says "hi""'
    )
    assert call(tools, "delete_memory", id=entry_id) == (
        f"Error: No memory entry found with id '{entry_id}'. Use SearchMemory to find the correct ID."
    )
    assert call(tools, "delete_memory", id="no such id!") == (
        "Error: No memory entry found with id 'no such id!'. Use SearchMemory to find the correct ID."
    )


def test_list_categories_texts(tools: MemoryTools) -> None:
    assert (
        call(tools, "list_memory_categories")
        == "No categories yet. Save a memory with a category to create one."
    )
    call(tools, "save_memory", content="a", category="user-preferences/music")
    call(tools, "save_memory", content="b", category="project-context")
    assert call(tools, "list_memory_categories") == (
        "Memory categories:\n- project-context\n- user-preferences/music"
    )
