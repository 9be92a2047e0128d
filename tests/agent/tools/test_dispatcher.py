"""The one dispatcher: malformed calls become tool error texts, never exceptions."""

from __future__ import annotations

import pytest

from memstack import Memory
from memstack.agent.tools import tool_schemas
from memstack.agent.tools.schemas import TOOLS
from memstack.engines import Engine
from memstack.foundation.errors import EngineClosed
from memstack.ops.memory_tools import MemoryTools, dispatch


@pytest.fixture
def tools(mem: Memory) -> MemoryTools:
    return MemoryTools(mem, session_id="abc")


def test_unknown_tool(tools: MemoryTools) -> None:
    assert dispatch(tools, "launch_rockets", "{}") == (
        "Error: unknown tool 'launch_rockets'. Available tools: save_memory, update_memory, search_memory, "
        "delete_memory, "
        "list_memory_categories, save_to_working_memory, get_from_working_memory, "
        "delete_from_working_memory, list_working_memory, search_working_memory."
    )


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        (
            '{"key": ',
            "Error: the arguments of 'get_from_working_memory' are not valid JSON "
            "(Expecting value at position 8).",
        ),
        ("[1, 2]", "Error: the arguments of 'get_from_working_memory' must be a JSON object, got list."),
        ("{}", "Error: invalid arguments for 'get_from_working_memory': key: required."),
        (
            '{"key": 5}',
            "Error: invalid arguments for 'get_from_working_memory': key: input should be a valid string.",
        ),
        (
            '{"key": "k", "extra": 1}',
            "Error: invalid arguments for 'get_from_working_memory': extra: not an argument of this tool.",
        ),
    ],
)
def test_bad_arguments(tools: MemoryTools, arguments: str, text: str) -> None:
    assert tools.dispatch("get_from_working_memory", arguments) == text


def test_empty_arguments_mean_no_arguments(tools: MemoryTools) -> None:
    assert tools.dispatch("list_working_memory", "") == "Working memory is empty."
    assert tools.dispatch("list_working_memory", None) == "Working memory is empty."
    assert tools.dispatch("list_memory_categories", "{}").startswith("No categories yet.")


def test_engine_errors_become_text(engine: Engine) -> None:
    tools = MemoryTools(engine, session_id="abc")
    engine.close()
    text = tools.dispatch("save_to_working_memory", '{"key": "k", "data": "v"}')
    assert text.startswith("Error: save_to_working_memory failed:")
    assert "Saved" not in text
    with pytest.raises(EngineClosed):
        engine.get("k")


def test_call_answers_an_openai_tool_call(tools: MemoryTools) -> None:
    message = tools.call(
        {
            "id": "call_7",
            "type": "function",
            "function": {"name": "save_to_working_memory", "arguments": '{"key": "a", "data": "b"}'},
        }
    )
    assert message == {
        "role": "tool",
        "tool_call_id": "call_7",
        "content": "Saved to working memory under key 'session/abc/a'.",
    }
    assert tools.call({"id": "x"})["content"].startswith("Error: unknown tool ''")


def test_schemas_are_openai_tools_generated_from_the_models() -> None:
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == [t.name for t in TOOLS]
    assert len(schemas) == 10
    save = schemas[5]
    assert save == {
        "type": "function",
        "function": {
            "name": "save_to_working_memory",
            "description": save["function"]["description"],
            "parameters": {
                "type": "object",
                "properties": {
                    "key": {
                        "type": "string",
                        "description": save["function"]["parameters"]["properties"]["key"]["description"],
                    },
                    "data": {"type": "string", "description": "The text to store."},
                    "ttl_minutes": {
                        "type": "number",
                        "description": "Minutes to keep it (default 5).",
                        "exclusiveMinimum": 0,
                    },
                    "category": {
                        "type": "string",
                        "description": "Optional category path, e.g. 'user-preferences/music'.",
                    },
                    "tags": {
                        "type": "string",
                        "description": "Optional comma-separated tags, e.g. 'inbox, urgent'.",
                    },
                },
                "required": ["key", "data"],
                "additionalProperties": False,
            },
        },
    }
    assert tool_schemas(["delete_memory"])[0]["function"]["parameters"]["required"] == ["id"]
    assert MemoryTools.schemas() == schemas


def test_unknown_schema_name_is_refused() -> None:
    from memstack.foundation.errors import InvalidValue

    with pytest.raises(InvalidValue, match="nope"):
        tool_schemas(["nope"])
