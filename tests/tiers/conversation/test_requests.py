"""The conversation tier's input rules have one home: its requests (``AppendMessages``,
``ReadHistory``), checked once. A bad value gets the same error class and message from the keyword
methods and from every door (the registry's call, HTTP, the CLI, MCP), on every engine, and a
refused call writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("mcp")

from memstack import Memory
from memstack.foundation.errors import (
    AlreadyExists,
    InvalidKey,
    InvalidSessionId,
    InvalidValue,
)
from memstack.ops import OPERATIONS, call
from memstack.tiers.conversation.requests import RULES, AppendMessages, ReadHistory
from ops._refused import DOORS, TOOL_DOORS, Refusals, driver, refusal, refusals  # noqa: F401 - the doors' fixtures

LONG_ID = "c" * 129

# (case, the keyword method's arguments, the door's request)
APPENDS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("unknown role", {"role": "a-role-of-twenty-char"}, {"role": "a-role-of-twenty-char"}),
    ("long conversation id", {"conversation_id": LONG_ID}, {"conversation_id": LONG_ID}),
    ("bad conversation id", {"conversation_id": "no spaces"}, {"conversation_id": "no spaces"}),
    ("long message id", {"message_id": "m" * 129}, {"message_id": "m" * 129}),
    ("long subject", {"subject": "u" * 257}, {"subject": "u" * 257}),
    ("bad subject", {"subject": "u 1"}, {"subject": "u 1"}),
    ("blank run id", {"workflow_run_id": ""}, {"workflow_run_id": ""}),
]


def _append(mem: Memory, **fields: Any) -> Any:
    given = {"conversation_id": "c1", "role": "user", "content": "hello", **fields}
    return mem.conversations.append(
        given.pop("conversation_id"), given.pop("role"), given.pop("content"), **given
    )


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(("case", "keywords", "request_"), APPENDS, ids=[a[0] for a in APPENDS])
def test_a_bad_append_is_refused_alike_on_every_door(
    mem: Memory,
    refusals: Refusals,  # noqa: F811
    door: str,
    case: str,
    keywords: dict[str, Any],
    request_: dict[str, Any],
) -> None:
    if door in TOOL_DOORS and set(request_) - {"conversation_id", "role", "content"}:
        pytest.skip("the conversation_append tool takes only the conversation, role and content")
    expected = refusal(lambda: _append(mem, **keywords))
    fields = {"conversation_id": "c1", "role": "user", "content": "hello", **request_}
    assert refusals.refuse(door, "conversations.append", fields) == expected
    assert mem.conversations.conversations() == []  # a failing call changes nothing


HISTORIES: list[tuple[str, dict[str, Any]]] = [
    ("negative token limit", {"max_token_limit": -1}),
    ("negative context size", {"context_size": -5}),
    ("negative output tokens", {"context_size": 8000, "max_output_tokens": -1}),
    ("long current message id", {"current_message_id": "m" * 129}),
    ("long conversation id", {"conversation_id": LONG_ID}),
]


def _history(mem: Memory, **fields: Any) -> Any:
    given = {"conversation_id": "c1", **fields}
    budget = {k: given.pop(k) for k in ("context_size", "max_output_tokens", "prompt_tokens") if k in given}
    return mem.conversations.history(given.pop("conversation_id"), token_budget=budget or None, **given)


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(("case", "fields"), HISTORIES, ids=[h[0] for h in HISTORIES])
def test_a_bad_history_read_is_refused_alike_on_every_door(
    mem: Memory,
    refusals: Refusals,  # noqa: F811
    door: str,
    case: str,
    fields: dict[str, Any],
) -> None:
    mem.conversations.append("c1", "user", "hello", message_id="m1")
    expected = refusal(lambda: _history(mem, **fields))
    assert refusals.refuse(door, "conversations.history", {"conversation_id": "c1", **fields}) == expected


def test_the_errors_are_the_tiers_own(mem: Memory) -> None:
    with pytest.raises(InvalidValue, match="role 'robot': must be one of user, assistant, system, tool"):
        _append(mem, role="robot")
    with pytest.raises(InvalidSessionId, match="conversation_id"):
        _append(mem, conversation_id=LONG_ID)
    with pytest.raises(InvalidKey, match="message_id"):
        _append(mem, message_id="m" * 129)
    with pytest.raises(AlreadyExists, match="repeat"):
        AppendMessages.of("c1", [{"role": "user", "content": "a", "message_id": "x"}] * 2)
    assert mem.conversations.conversations() == []


def test_the_longest_values_are_kept_by_the_library_and_the_door(mem: Memory) -> None:
    # The door took at most 128 characters of a run id where the tier takes 1 KiB: one rule now.
    run = "r" * 300
    assert _append(mem, message_id="a" * 128, workflow_run_id=run, subject="u" * 256).workflow_run_id == run
    fields = {"conversation_id": "c2", "role": "user", "content": "hi", "message_id": "b" * 128}
    stored = call(
        OPERATIONS["conversations.append"], mem, {**fields, "workflow_run_id": run, "subject": "u" * 256}
    )
    assert (stored["message_id"], stored["workflow_run_id"]) == ("b" * 128, run)


def test_a_request_is_checked_once_and_applied_as_is(mem: Memory) -> None:
    request = AppendMessages.one("c1", "user", "hello there", message_id="m1", subject="u1")
    assert request.drafts[0]["token_count"] is None  # counted by the store that writes it
    (stored,) = mem.conversations.add(request)
    assert (stored.message_id, stored.parent_message_id) == ("m1", None) and stored.token_count > 0
    answer = AppendMessages.one("c1", "assistant", "hi", message_id="m2")
    assert mem.conversations.add(answer)[0].parent_message_id == "m1"  # absent parent: after the newest
    read = ReadHistory.of("c1", token_budget={"context_size": 4000, "max_output_tokens": 1000})
    assert read.max_token_limit == 3000
    assert [m["content"] for m in mem.conversations.read_history(read)] == ["hello there", "hi"]


def test_the_door_documents_the_tiers_bounds() -> None:
    append = OPERATIONS["conversations.append"].request.model_json_schema()["properties"]
    assert append["role"]["description"] == RULES["role"].doc
    assert "maxLength" not in append["role"]  # the door's own 16 characters are gone: the tier's roles
    assert append["subject"]["maxLength"] == 256
    assert append["workflow_run_id"]["minLength"] == 1
    history = OPERATIONS["conversations.history"].request.model_json_schema()["properties"]
    assert history["max_token_limit"]["minimum"] == 0
    assert history["context_size"]["description"] == RULES["context_size"].doc
