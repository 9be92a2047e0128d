"""The pipeline node: lanes, no mutation, profiles, lifecycle (spec items 35-40)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memstack import ManualClock
from memstack.compat.rocketride import PROFILES, NodeConfig, PersistentMemoryNode
from memstack.engines import Engine
from memstack.foundation.errors import EngineError, InvalidConfiguration


@dataclass
class Question:
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


class Answer:
    def __init__(self, text: str, metadata: Any = None) -> None:
        self._text = text
        self.metadata = metadata if metadata is not None else {}

    def getText(self) -> str:
        return self._text


class SnakeAnswer(Answer):
    def get_text(self) -> str:
        return "snake:" + self._text


@pytest.fixture
def node(engine: Engine, engine_url_for: str, clock: ManualClock) -> Iterator[PersistentMemoryNode]:
    backend = "redis" if engine.name.startswith("redis") else engine.name
    pipeline_node = PersistentMemoryNode({"backend": backend, "url": engine_url_for}, clock=clock)
    pipeline_node.open()
    yield pipeline_node
    pipeline_node.close()


def test_question_answer_question(node: PersistentMemoryNode) -> None:
    q = Question("hi", {"session_id": "s1"})
    first = node.write_questions(q)
    assert first == Question("hi", {"session_id": "s1"})  # empty session: no memory_context
    assert first is not q
    node.write_answers(Answer("hello", {}))  # falls back to the question's session
    node.write_answers(SnakeAnswer("again", {"session_id": "s1"}))
    node.open_item()
    again = node.write_questions(q)
    assert again.metadata["memory_context"] == {"answer_count": 2, "last_answer": "snake:again"}
    assert q.metadata == {"session_id": "s1"}  # never mutated


def test_dict_items_and_text_fallbacks(node: PersistentMemoryNode) -> None:
    node.write_answers({"text": "t1", "metadata": {"session_id": "d"}})
    ctx = node.write_questions({"metadata": {"session_id": "d"}})["metadata"]["memory_context"]
    assert ctx == {"answer_count": 1, "last_answer": "t1"}
    node.write_answers({"metadata": {"session_id": "d"}, "other": 1})
    ctx = node.write_questions({"metadata": {"session_id": "d"}})["metadata"]["memory_context"]
    assert ctx["last_answer"] == str({"metadata": {"session_id": "d"}, "other": 1})
    assert ctx["answer_count"] == 2


def test_open_item_resets_the_fallback(node: PersistentMemoryNode) -> None:
    node.write_questions(Question("q", {"session_id": "s2"}))
    node.open_item()
    original = Answer("lost", {})
    out = node.write_answers(original)
    assert out.metadata == {}
    assert node.store is not None
    assert node.store.list_sessions() == ["s2"]
    assert node.store.list_keys("s2")["keys"] == []


def test_items_without_session_pass_through(node: PersistentMemoryNode) -> None:
    for item in (Question("x"), Question("x", {"session_id": ""}), {"metadata": "not a dict"}, "plain"):
        out = node.write_questions(item)
        assert out == item
        assert node.write_answers(item) == item
    assert node.store is not None
    assert node.store.list_sessions() == []


def test_malformed_session_id_logged_at_debug(
    node: PersistentMemoryNode, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="memstack.compat.rocketride.node")
    q = Question("x", {"session_id": "bad id\n"})
    out = node.write_questions(q)
    assert out == q
    assert node.write_answers(Answer("a", {"session_id": "../etc"})).metadata == {"session_id": "../etc"}
    assert [r.levelno for r in caplog.records] == [logging.DEBUG, logging.DEBUG]
    assert "Invalid session_id" in caplog.records[0].getMessage()
    assert node.store is not None
    assert node.store.list_sessions() == []


def test_no_mutation_of_nested_metadata(node: PersistentMemoryNode) -> None:
    node.write_answers(Answer("v", {"session_id": "m"}))
    q = {"metadata": {"session_id": "m", "nested": {"a": [1]}}, "text": "t"}
    snapshot = copy.deepcopy(q)
    out = node.write_questions(q)
    out["metadata"]["nested"]["a"].append(2)
    assert q == snapshot


def test_not_opened_forwards_the_same_object() -> None:
    node = PersistentMemoryNode()
    q = Question("x", {"session_id": "s"})
    assert node.write_questions(q) is q
    assert node.write_answers(q) is q


def test_profiles_are_data() -> None:
    assert PersistentMemoryNode().config == NodeConfig()
    assert PersistentMemoryNode(profile="redis").config.session_ttl_hours == 24
    assert PersistentMemoryNode(profile="redis").config.backend == "redis"
    custom = PersistentMemoryNode(profile="custom").config
    assert (custom.backend, custom.redis_host, custom.session_ttl_hours) == ("redis", "", 0)
    assert PersistentMemoryNode(profile="sqlite").config.backend == "sqlite"
    assert set(PROFILES) == {"memory", "redis", "custom", "sqlite"}
    assert PersistentMemoryNode({"redis_password": ""}).config.redis_password is None
    overridden = PersistentMemoryNode({"session_ttl_hours": 2}, profile="redis").config
    assert overridden.session_ttl_hours == 2
    with pytest.raises(InvalidConfiguration, match="unknown profile"):
        PersistentMemoryNode(profile="nope")
    with pytest.raises(InvalidConfiguration, match="unknown node setting"):
        PersistentMemoryNode({"colour": "red"})
    with pytest.raises(InvalidConfiguration, match=r"^Unknown backend"):
        PersistentMemoryNode({"backend": "mongodb"})
    with pytest.raises(InvalidConfiguration, match="redis_host is empty"):
        PersistentMemoryNode(profile="custom").open()


def test_sqlite_profile_with_url(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'node.db'}"
    with PersistentMemoryNode({"url": url}, profile="sqlite") as node:
        node.write_answers(Answer("kept", {"session_id": "p"}))
    with PersistentMemoryNode({"url": url}, profile="sqlite") as node:
        out = node.write_questions(Question("q", {"session_id": "p"}))
    assert out.metadata["memory_context"] == {"answer_count": 1, "last_answer": "kept"}


def test_open_builds_the_store_once() -> None:
    node = PersistentMemoryNode()
    node.open()
    store = node.store
    node.open()
    assert node.store is store
    node.close()
    assert node.store is None
    node.close()


def test_close_drops_the_store_even_if_closing_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    node = PersistentMemoryNode()
    node.open()
    assert node.store is not None
    engine = node.store.backend
    real_close = engine.close

    def failing_close() -> None:
        raise EngineError("close failed")

    monkeypatch.setattr(engine, "close", failing_close)
    with pytest.raises(EngineError, match="close failed"):
        node.close()
    assert node.store is None
    real_close()


def test_hostile_items_pass_unchanged_and_store_nothing(node: PersistentMemoryNode) -> None:
    deep: Any = "bottom"
    for _ in range(5000):
        deep = [deep]
    hostile = [
        {"text": "a\ud800", "metadata": {"session_id": "h"}},
        {"text": 10**5000, "metadata": {"session_id": "h"}},
        {"text": deep, "metadata": {"session_id": "h"}},
    ]
    for item in hostile:
        assert node.write_answers(item) == item
    too_deep = {"metadata": {"session_id": "h"}, "payload": deep}
    assert node.write_questions(too_deep) is too_deep
    assert node.write_answers(too_deep) is too_deep
    assert node.write_questions({"metadata": {"session_id": "h"}})["metadata"].get("memory_context") is None
