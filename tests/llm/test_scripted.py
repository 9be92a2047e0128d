"""``ScriptedChatModel``: deterministic replies in the OpenAI response shape, and what it was sent."""

from __future__ import annotations

import json

import pytest

from memstack import ManualClock
from memstack.foundation.errors import InvalidValue
from memstack.llm.scripted import ScriptedChatModel, ScriptExhausted, ToolCall, reply, tool_call


def test_text_reply_in_the_openai_shape() -> None:
    model = ScriptedChatModel(["Hello!"], model="fake-1")
    response = model.complete([{"role": "user", "content": "hi"}])
    assert response == {
        "id": "chatcmpl-scripted-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-1",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}
        ],
        "usage": response["usage"],
    }
    usage = response["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens"] > 0


def test_tool_calls_get_sequential_ids_and_json_arguments() -> None:
    model = ScriptedChatModel(
        [
            tool_call("search_memory", {"query": "jazz"}),
            reply("Two at once", ToolCall("a", {"x": 1}), ToolCall("b", '{"broken', id="mine")),
        ]
    )
    first = model.complete([])["choices"][0]
    assert first["finish_reason"] == "tool_calls"
    assert first["message"] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "search_memory", "arguments": '{"query": "jazz"}'},
            }
        ],
    }
    second = model([])["choices"][0]["message"]
    assert second["content"] == "Two at once"
    assert [(c["id"], c["function"]["arguments"]) for c in second["tool_calls"]] == [
        ("call_2", '{"x": 1}'),
        ("mine", '{"broken'),
    ]


def test_dict_and_callable_items() -> None:
    def echo(messages: list[dict[str, object]], tools: list[dict[str, object]] | None) -> str:
        return f"you said {messages[-1]['content']} with {len(tools or [])} tools"

    model = ScriptedChatModel([{"content": "raw"}, echo])
    assert model.complete([])["choices"][0]["message"] == {"role": "assistant", "content": "raw"}
    text = model.complete([{"role": "user", "content": "ping"}], tools=[{"type": "function"}])
    assert text["choices"][0]["message"]["content"] == "you said ping with 1 tools"


def test_records_deep_copies_of_what_it_was_sent() -> None:
    model = ScriptedChatModel(["a"])
    messages = [{"role": "user", "content": "hi"}]
    model.complete(messages, tools=[{"type": "function"}], temperature=0)
    messages[0]["content"] = "changed"
    assert model.calls == [
        {
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function"}],
            "options": {"temperature": 0},
        }
    ]


def test_exhausted_script_and_bad_items() -> None:
    model = ScriptedChatModel(["only"])
    assert model.remaining == 1
    model.complete([])
    assert model.remaining == 0
    with pytest.raises(ScriptExhausted, match="call 2 but the script has only 1"):
        model.complete([])
    with pytest.raises(InvalidValue):
        ScriptedChatModel([42]).complete([])  # type: ignore[list-item]  # what is tested


def test_created_follows_a_clock() -> None:
    response = ScriptedChatModel(["x"], clock=ManualClock(1234.9)).complete([])
    assert response["created"] == 1234
    assert json.dumps(response)
