"""``ChatClient`` against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import pytest

from memstack.foundation.errors import ChatError, InvalidConfiguration
from memstack.llm.chat import ChatClient, ChatModel, message_text
from memstack.llm.scripted import ScriptedChatModel
from services.dream._openai_server import Step, fake_openai


def test_sends_model_messages_and_json_mode_and_returns_the_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test")
    with fake_openai(['{"ok": true}']) as server:
        client = ChatClient(server.url, "m-1", api_key_env="MY_KEY", json_mode=True)
        reply = client.complete([{"role": "user", "content": "hi"}], max_tokens=5)
    assert message_text(reply) == '{"ok": true}'
    body = server.requests[0]
    assert body["model"] == "m-1"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 5
    assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_no_key_in_the_environment_sends_no_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMSTACK_CHAT_API_KEY", raising=False)
    with fake_openai(["x"]) as server:
        ChatClient(server.url, "m").complete([])
    assert "authorization" not in server.headers[0]
    assert "response_format" not in server.requests[0]


def test_retries_5xx_and_429_then_succeeds() -> None:
    script: list[str | Step] = [Step(status=503, body=b"{}"), Step(status=429, body=b"{}"), "fine"]
    with fake_openai(script) as server:
        reply = ChatClient(server.url, "m", retries=2, backoff=0.0).complete([])
    assert message_text(reply) == "fine"
    assert len(server.requests) == 3


def test_gives_up_after_the_retries() -> None:
    with (
        fake_openai([Step(status=500, body=b"{}")] * 3) as server,
        pytest.raises(ChatError, match="after 2 attempt"),
    ):
        ChatClient(server.url, "m", retries=1, backoff=0.0).complete([])
    assert len(server.requests) == 2


def test_a_4xx_is_not_retried() -> None:
    with (
        fake_openai([Step(status=401, body=b'{"error": "bad key"}'), "never"]) as server,
        pytest.raises(ChatError, match="refused the request: HTTP 401"),
    ):
        ChatClient(server.url, "m", retries=3, backoff=0.0).complete([])
    assert len(server.requests) == 1


def test_a_timeout_is_a_chat_error() -> None:
    with (
        fake_openai([Step(delay=1.0, content="late")]) as server,
        pytest.raises(ChatError, match="failed after 1 attempt"),
    ):
        ChatClient(server.url, "m", timeout=0.2, retries=0).complete([])


@pytest.mark.parametrize(
    "body", [b"not json", b'{"choices": []}', b'{"choices": [{"message": {"content": 5}}]}', b"[1]"]
)
def test_bad_replies_are_chat_errors(body: bytes) -> None:
    with fake_openai([Step(body=body)]) as server, pytest.raises(ChatError):
        ChatClient(server.url, "m", retries=0).complete([])


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"base_url": "ftp://x", "model": "m"}, "base_url"),
        ({"base_url": "http://x", "model": ""}, "model"),
        ({"base_url": "http://x", "model": "m", "timeout": 0}, "timeout"),
        ({"base_url": "http://x", "model": "m", "retries": -1}, "retries"),
        ({"base_url": "http://x", "model": "m", "backoff": -1}, "backoff"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object], rule: str) -> None:
    with pytest.raises(InvalidConfiguration, match=rule):
        ChatClient(**kwargs)  # type: ignore[arg-type]  # the point is the bad values


def test_both_clients_are_chat_models() -> None:
    assert isinstance(ChatClient("http://127.0.0.1:1/v1", "m"), ChatModel)
    assert isinstance(ScriptedChatModel([]), ChatModel)
    assert message_text({"choices": [{"message": {"content": None}}]}) == ""
