"""Dify's history token budget (spec 3 item 11): the pure rule, then as the token limit of
``history`` on every engine, over HTTP and through the ``conversation_history`` tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memstack import Memory
from memstack.compat.dify import NodeMemory
from memstack.engines import Engine
from memstack.foundation.errors import InvalidInput
from memstack.llm.tokens import count_messages, estimate_tokens
from memstack.tiers.conversation import ConversationStore, TokenBudget, history_token_budget


@pytest.mark.parametrize(
    ("context_size", "max_output", "prompt", "expected"),
    [
        (8192, 1024, 500, 6668),
        (8192, None, 500, 7692),  # no max_tokens parameter: 0 reserved
        (8192, 0, 0, 8192),
        (4096, 4000, 500, 0),  # floored at 0, never negative
        (4096, 4096, 0, 0),
        (None, 1024, 500, 2000),  # unknown context size: Dify's fixed 2000
        (0, 1024, 500, 2000),  # 0 is "unknown" too (a falsy context size)
        (None, None, 0, 2000),
    ],
)
def test_budget_rule(context_size: int | None, max_output: int | None, prompt: int, expected: int) -> None:
    assert history_token_budget(context_size, max_output, prompt) == expected
    assert TokenBudget(context_size, max_output, prompt).tokens == expected


def test_prompt_messages_are_counted_like_a_history() -> None:
    prompt = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hello there"}]
    used = count_messages(prompt, estimate_tokens)
    assert history_token_budget(1000, 100, prompt, counter="estimate") == 900 - used


@pytest.mark.parametrize(
    "args",
    [(-1, 0, 0), (100, -5, 0), (100, 0, -1), (True, 0, 0), (100, 1.5, 0), ("4096", 0, 0), (100, 0, ["x"])],
)
def test_bad_figures_are_refused_naming_the_field(args: tuple[Any, Any, Any]) -> None:
    with pytest.raises(InvalidInput, match=r"context_size|max_output_tokens|prompt_tokens"):
        history_token_budget(*args)


def test_coerce() -> None:
    assert TokenBudget.coerce(4096) == TokenBudget(4096)
    assert TokenBudget.coerce({"context_size": 10, "prompt_tokens": 3}).tokens == 7
    with pytest.raises(InvalidInput, match="unknown fields"):
        TokenBudget.coerce({"context_window": 10})
    with pytest.raises(InvalidInput, match="token_budget"):
        TokenBudget.coerce("4096")  # type: ignore[arg-type]  # the bad value is the point


@pytest.fixture
def store(engine: Engine) -> ConversationStore:
    s = ConversationStore(engine, counter="estimate")
    for i in range(6):  # 6 turns of 2 messages; each message costs 3 + 25 tokens
        s.append("c1", "user", "q" * 100, message_id=f"q{i}", workflow_run_id=f"r{i}")
        s.append("c1", "assistant", "a" * 100, message_id=f"a{i}", workflow_run_id=f"r{i}")
    return s


def test_history_takes_the_budget_as_its_token_limit(store: ConversationStore) -> None:
    budget = TokenBudget(context_size=1000, max_output_tokens=700, prompt_tokens=130)  # 170 left
    limited = store.history("c1", token_budget=budget)
    assert len(limited) == 6  # three whole turns of 56 tokens fit in 170, four do not
    assert limited == store.history("c1", max_token_limit=170)
    assert (
        store.history(
            "c1", token_budget={"context_size": 1000, "max_output_tokens": 700, "prompt_tokens": 130}
        )
        == limited
    )
    assert store.history_text("c1", token_budget=budget) == store.history_text("c1", max_token_limit=170)
    assert len(store.history("c1", token_budget=None)) == 12  # default 2000 holds everything


def test_an_exhausted_budget_still_gives_one_message(store: ConversationStore) -> None:
    assert [m["content"] for m in store.history("c1", token_budget=TokenBudget(100, 100, 50))] == ["a" * 100]


def test_limit_and_budget_together_are_refused(store: ConversationStore) -> None:
    with pytest.raises(InvalidInput, match="not both"):
        store.history("c1", None, 500, token_budget=TokenBudget(1000))


def test_node_memory_takes_the_budget(store: ConversationStore) -> None:
    node = NodeMemory(store, "app", "c1", "llm", token_counter="estimate")
    for i in range(6):
        node.add_messages(f"r{i}", "u" * 100, None, "v" * 100, None)
    node.flush()
    everything = node.get_history_prompt_messages()
    assert len(everything) == 12
    budget = TokenBudget(1000, 700, 130)
    assert node.get_history_prompt_messages(token_budget=budget) == node.get_history_prompt_messages(170)
    assert len(node.get_history_prompt_messages(token_budget=budget)) == 6
    assert node.get_history_prompt_text(token_budget=budget).count("Human:") == 3


def test_http_history_takes_context_size(engine: Engine) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from memstack.doors.server import create_app

    ConversationStore(engine)  # the app's own store appends; the counter only sets token_count
    with TestClient(create_app(engine)) as client:
        for _ in range(4):
            for role in ("user", "assistant"):
                body = {"role": role, "content": "word " * 40}
                assert client.post("/v1/conversations/c1/messages", json=body).status_code == 201
        full = client.get("/v1/conversations/c1/history").json()["messages"]
        budget = client.get(
            "/v1/conversations/c1/history",
            params={"context_size": 200, "max_output_tokens": 50, "prompt_tokens": 50},
        ).json()["messages"]
        same = client.get("/v1/conversations/c1/history", params={"max_token_limit": 100}).json()["messages"]
        assert len(full) == 8 and budget == same and 0 < len(budget) < 8
        both = client.get(
            "/v1/conversations/c1/history", params={"max_token_limit": 100, "context_size": 200}
        )
        assert both.status_code == 400 and "not both" in both.text


def test_tool_history_takes_context_size(mem: Memory) -> None:
    from memstack.ops.tools import run_tool

    for _ in range(4):
        mem.conversations.append("c1", "user", "word " * 40)
        mem.conversations.append("c1", "assistant", "word " * 40)
    args = {"conversation_id": "c1", "context_size": 200, "max_output_tokens": 50, "prompt_tokens": 50}
    budget = json.loads(run_tool(mem, "conversation_history", args))["messages"]
    assert budget == mem.conversations.history("c1", max_token_limit=100)
    assert 0 < len(budget) < 8
    both = run_tool(
        mem, "conversation_history", {"conversation_id": "c1", "max_token_limit": 9, "context_size": 9}
    )
    assert both.startswith("Error:") and "not both" in both
