"""The tool door of the registry: typed errors, one-line messages, the full tool list, idempotent
session creation under concurrency (every engine)."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from memstack import Memory
from memstack.agent.tools.schemas import TOOLS
from memstack.foundation.errors import EntryNotFound, InvalidValue, NamespaceFull, UnknownTool
from memstack.ops import OPERATIONS
from memstack.ops.memory_tools import MemoryTools
from memstack.ops.tools import TOOL_NAMES, call_tool, run_tool, tool_specs


def test_the_tool_list_is_one_table() -> None:
    assert len(set(TOOL_NAMES)) == len(TOOL_NAMES) == sum(op.tool is not None for op in OPERATIONS.values())
    assert {"save_memory", "session_put", "dream_dry_run"} <= set(TOOL_NAMES)
    assert [spec["function"]["name"] for spec in tool_specs()] == list(TOOL_NAMES)
    assert TOOL_NAMES[: len(TOOLS)] == tuple(spec.name for spec in TOOLS)


def test_unknown_tool_lists_every_tool(mem: Memory) -> None:
    with pytest.raises(UnknownTool) as caught:
        call_tool(mem, "launch_rockets", {})
    assert str(caught.value) == f"unknown tool 'launch_rockets'. Available tools: {', '.join(TOOL_NAMES)}."
    assert (
        run_tool(mem, "nope", None)
        == f"Error: unknown tool 'nope'. Available tools: {', '.join(TOOL_NAMES)}."
    )


BAD_ARGUMENTS: list[tuple[str, object, str]] = [
    ("session_put", {"value": 1}, "key: required."),
    ("session_get", {"key": 5}, "key: input should be a valid string."),
    ("session_history", {"limit": 1.5}, "limit: input should be a valid integer."),
    (
        "conversation_append",
        {"conversation_id": "c", "role": "user", "content": "x", "extra": 1},
        "extra: not an argument of this tool.",
    ),
    ("save_memory", {"content": "a\udc00"}, "content: contains a lone surrogate '\\udc00' at index 1; "
     "text must be valid Unicode."),
    ("session_put", {"key": "k", "value": float("nan")}, "value: nan is not a finite number (JSON has no "
     "NaN or inf)."),
    ("save_memory", '{"content": ' + "[" * 150 + "]" * 150 + "}",
     "content" + "[0]" * 100 + ": nested deeper than 100 levels."),
]  # fmt: skip
UNPARSED: list[tuple[str, str, str]] = [
    ("conversation_history", "[1]", "the arguments of 'conversation_history' must be a JSON object, "
     "got list."),
    ("save_memory", "[" * 5000 + "]" * 5000, "the arguments of 'save_memory' are nested deeper than "
     "100 levels."),
    ("save_memory", '{"content": ' + "9" * 5000 + "}", "the arguments of 'save_memory' hold an integer "
     "of more than 4000 digits."),
]  # fmt: skip
CASES = [(n, a, f"invalid arguments for '{n}': {m}") for n, a, m in BAD_ARGUMENTS] + UNPARSED


@pytest.mark.parametrize(("name", "arguments", "message"), CASES)
def test_bad_arguments_are_one_line_naming_the_argument(
    mem: Memory, name: str, arguments: object, message: str
) -> None:
    with pytest.raises(InvalidValue) as caught:
        call_tool(mem, name, arguments)  # type: ignore[arg-type]  # hostile argument shapes on purpose
    assert str(caught.value) == message
    assert "\n" not in message and "pydantic" not in message and "http" not in message


def test_delete_memory_of_an_unknown_id_is_an_error(mem: Memory) -> None:
    with pytest.raises(EntryNotFound, match="No memory entry found with id 'nope'"):
        call_tool(mem, "delete_memory", {"id": "nope"})
    assert run_tool(mem, "delete_memory", {"id": "nope"}).startswith("Error: No memory entry found")


def test_a_full_namespace_keeps_its_type(mem: Memory) -> None:
    tools = MemoryTools(mem, session_id="s1")
    tools.working.max_entries = 1
    tools.run("save_to_working_memory", {"key": "a", "data": "x"})
    with pytest.raises(NamespaceFull, match=r"^not saved, working memory namespace 'session/s1' is full"):
        tools.run("save_to_working_memory", {"key": "b", "data": "y"})


def test_concurrent_first_writes_to_a_session_all_succeed(mem: Memory) -> None:
    for round_ in range(3):
        sid = f"race{round_}"
        barrier = threading.Barrier(6)
        results: list[str] = []
        failures: list[BaseException] = []

        def write(
            i: int, sid: str, barrier: threading.Barrier, results: list[str], failures: list[BaseException]
        ) -> None:
            barrier.wait()
            try:
                results.append(
                    call_tool(mem, "session_put", {"key": f"k{i}", "value": i}, session_id=sid).text
                )
            except BaseException as exc:  # collected: the assertion below shows what failed
                failures.append(exc)

        threads = [
            threading.Thread(target=write, args=(i, sid, barrier, results, failures)) for i in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert len(results) == 6
        assert mem.sessions.items(sid) == {f"k{i}": i for i in range(6)}


def test_tool_failures_over_http_have_their_status(mem: Memory) -> None:
    from memstack.doors.server import create_app

    with TestClient(create_app(mem.engine)) as client:
        unknown = client.post("/v1/tools/nope", json={})
        assert unknown.status_code == 404 and unknown.json()["error"] == "UnknownTool"
        # The detail is cut at 500 characters: the original systems' tools come first.
        assert unknown.json()["detail"].startswith(f"unknown tool 'nope'. Available tools: {TOOL_NAMES[0]}, ")
        assert all(spec.name in unknown.json()["detail"] for spec in TOOLS)
        missing = client.post("/v1/tools/delete_memory", json={"arguments": {"id": "nope"}})
        assert missing.status_code == 404 and missing.json()["error"] == "EntryNotFound"
        bad = client.post("/v1/tools/session_put", json={"arguments": {"value": 1}})
        assert (
            bad.status_code == 422
            and bad.json()["detail"] == "invalid arguments for 'session_put': key: required."
        )
        bad_session = client.post(
            "/v1/tools/session_put", json={"session_id": "a b", "arguments": {"key": "k"}}
        )
        assert bad_session.status_code in (400, 422)
