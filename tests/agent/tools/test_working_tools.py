"""Working-memory tools: RockBot's exact texts and failure texts."""

from __future__ import annotations

import json

import pytest

from memstack import ManualClock, Memory
from memstack.ops.memory_tools import MemoryTools


@pytest.fixture
def tools(mem: Memory) -> MemoryTools:
    return MemoryTools(mem, session_id="abc")


def call(tools: MemoryTools, name: str, **args: object) -> str:
    return tools.dispatch(name, json.dumps(args))


def test_save_prefixes_the_own_namespace(tools: MemoryTools) -> None:
    assert call(tools, "save_to_working_memory", key="emails_inbox", data="3 unread") == (
        "Saved to working memory under key 'session/abc/emails_inbox'."
    )
    assert tools.working.get("emails_inbox").value == "3 unread"  # type: ignore[union-attr]  # saved above


def test_save_with_a_full_path_of_the_own_namespace_is_not_doubled(tools: MemoryTools) -> None:
    assert call(tools, "save_to_working_memory", key="session/abc/notes/a", data="x") == (
        "Saved to working memory under key 'session/abc/notes/a'."
    )


def test_save_splits_tags_and_honours_ttl_minutes(tools: MemoryTools, clock: ManualClock) -> None:
    call(tools, "save_to_working_memory", key="k", data="v", ttl_minutes=2, category="email", tags=" a, ,b ")
    entry = tools.working.get("k")
    assert entry is not None
    assert (entry.tags, entry.category) == (("a", "b"), "email")
    clock.advance(120)
    assert tools.working.get("k") is None


def test_blank_tags_mean_none(tools: MemoryTools) -> None:
    call(tools, "save_to_working_memory", key="k", data="v", tags=" , ")
    assert tools.working.get("k").tags == ()  # type: ignore[union-attr]  # saved above


def test_save_into_a_full_namespace_says_so_and_saves_nothing(mem: Memory) -> None:
    tools = MemoryTools(
        mem, session_id="abc", working=mem.working("session/abc", max_entries_per_namespace=1)
    )
    call(tools, "save_to_working_memory", key="one", data="1")
    text = call(tools, "save_to_working_memory", key="two", data="2")
    assert text == (
        "Error: not saved, working memory namespace 'session/abc' is full (1 live entries). "
        "Delete an entry you no longer need or wait for one to expire, then save 'session/abc/two' again."
    )
    assert "Saved" not in text
    assert tools.working.get("two") is None
    assert call(tools, "save_to_working_memory", key="one", data="again").startswith("Saved")


def test_save_into_another_namespace_is_refused(tools: MemoryTools) -> None:
    text = call(tools, "save_to_working_memory", key="patrol/heartbeat/x", data="v")
    assert text.startswith("Error: not saved, working-memory key 'patrol/heartbeat/x': writes go to the own")
    assert tools.working.get("patrol/heartbeat/x") is None


def test_save_with_bad_ttl_or_category_is_an_error(tools: MemoryTools) -> None:
    assert call(tools, "save_to_working_memory", key="k", data="v", ttl_minutes=0).startswith(
        "Error: invalid arguments for 'save_to_working_memory': ttl_minutes:"
    )
    assert call(tools, "save_to_working_memory", key="k", data="v", category="../x").startswith(
        "Error: save_to_working_memory failed: working-memory category '../x'"
    )
    assert tools.working.list() == []


def test_get_plain_and_full_path(mem: Memory, tools: MemoryTools) -> None:
    mem.working("subagent/t1b2c3").set("research_results", "three papers")
    call(tools, "save_to_working_memory", key="notes", data="mine")
    assert call(tools, "get_from_working_memory", key="notes") == "mine"
    assert call(tools, "get_from_working_memory", key="subagent/t1b2c3/research_results") == "three papers"
    assert call(tools, "get_from_working_memory", key="missing") == (
        "Working memory entry 'session/abc/missing' not found or has expired."
    )
    assert call(tools, "get_from_working_memory", key="patrol/x/y") == (
        "Working memory entry 'patrol/x/y' not found or has expired."
    )


def test_get_after_expiry(tools: MemoryTools, clock: ManualClock) -> None:
    call(tools, "save_to_working_memory", key="k", data="v")
    clock.advance(300)
    assert call(tools, "get_from_working_memory", key="k") == (
        "Working memory entry 'session/abc/k' not found or has expired."
    )


def test_delete_always_says_deleted(tools: MemoryTools) -> None:
    call(tools, "save_to_working_memory", key="k", data="v")
    assert (
        call(tools, "delete_from_working_memory", key="k") == "Working memory entry 'session/abc/k' deleted."
    )
    assert (
        call(tools, "delete_from_working_memory", key="k") == "Working memory entry 'session/abc/k' deleted."
    )
    assert tools.working.get("k") is None
    assert call(tools, "delete_from_working_memory", key="patrol/a/b").startswith("Error: not deleted,")


def test_list_own_and_other_namespaces(mem: Memory, tools: MemoryTools, clock: ManualClock) -> None:
    assert call(tools, "list_working_memory") == "Working memory is empty."
    assert call(tools, "list_working_memory", namespace="patrol") == "No entries found in namespace 'patrol'."
    call(
        tools, "save_to_working_memory", key="emails_inbox", data="x", category="email", tags="inbox, unread"
    )
    clock.advance(179)
    call(tools, "save_to_working_memory", key="draft_reply", data="y")
    assert call(tools, "list_working_memory") == (
        "Working memory 'session/abc' (2 entries):\n"
        "- session/abc/draft_reply (expires in 5m00s)\n"
        "- session/abc/emails_inbox (expires in 2m01s, category: email, tags: inbox, unread)"
    )
    mem.working("patrol/heartbeat").set("alerts", "disk", ttl=4 * 3600 + 8 * 60, tags=["urgent"])
    assert call(tools, "list_working_memory", namespace=" patrol ") == (
        "Working memory 'patrol' (1 entries):\n- patrol/heartbeat/alerts (expires in 248m00s, tags: urgent)"
    )


def test_search_texts(mem: Memory, tools: MemoryTools) -> None:
    long_value = "alert " + "x" * 200
    mem.working("patrol/heartbeat").set("latest_alert", long_value, category="patrol-finding")
    call(tools, "save_to_working_memory", key="weather", data="sunny tomorrow", tags="forecast")
    assert call(tools, "search_working_memory", query="sunny") == (
        "Working memory search (query='sunny') in 'session/abc' — 1 result(s):\n"
        "- session/abc/weather (expires in 5m00s, tags: forecast): sunny tomorrow"
    )
    assert call(tools, "search_working_memory", query="alert", namespace="patrol/heartbeat") == (
        "Working memory search (query='alert') in 'patrol/heartbeat' — 1 result(s):\n"
        "- patrol/heartbeat/latest_alert (expires in 5m00s, category: patrol-finding): "
        + long_value[:120]
        + "…"
    )
    assert call(tools, "search_working_memory", query="rain", category="weather", tags="a,b") == (
        "No working memory entries matched (query='rain', category='weather', tags='a,b') in namespace "
        "'session/abc'."
    )
    assert call(tools, "search_working_memory", query="  ", namespace="nothing") == (
        "No working memory entries matched (no filters) in namespace 'nothing'."
    )
    assert call(tools, "search_working_memory").startswith(
        "Working memory search (no filters) in 'session/abc' — 1 result(s):"
    )


def test_patrol_session_writes_to_its_own_namespace(mem: Memory) -> None:
    patrol = MemoryTools(mem, session_id="hb-run-1", namespace="patrol/heartbeat")
    assert call(patrol, "save_to_working_memory", key="latest", data="ok") == (
        "Saved to working memory under key 'patrol/heartbeat/latest'."
    )
