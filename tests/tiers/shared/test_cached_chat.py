"""``SemanticCache.wrap`` around a chat call, and ``configure`` / ``stats`` / ``clear`` (spec 4
items 40-42) on every engine, with the scripted chat model and the fake embedder."""

from __future__ import annotations

from typing import Any

import pytest

from memstack.engines import Engine
from memstack.foundation.errors import InvalidConfiguration, InvalidInput, InvalidValue
from memstack.llm.scripted import ScriptedChatModel, tool_call
from memstack.search.embedders import FakeEmbedder
from memstack.tiers.shared import CachedChat, SemanticCache, SharedMemory
from memstack.tiers.shared.cached_chat import cache_key


@pytest.fixture
def cache(engine: Engine) -> SemanticCache:
    return SemanticCache(engine, "chat", embedder=FakeEmbedder(dim=64))


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def answer(response: dict[str, Any]) -> str:
    return str(response["choices"][0]["message"]["content"])


def test_wrapped_chat_hits_on_a_similar_first_question(cache: SemanticCache) -> None:
    model = ScriptedChatModel(["Paris.", "Tides come from the moon."], model="gpt-x")
    chat = cache.wrap(model)
    assert isinstance(chat, CachedChat)
    assert answer(chat(user("What is the capital of France?"))) == "Paris."
    assert answer(chat(user("what is the capital of france"))) == "Paris."  # a hit: no call
    assert answer(chat(user("Why are there tides?"))) == "Tides come from the moon."
    assert len(model.calls) == 2
    assert cache.stats() == {"hits": 1, "misses": 2, "hit_rate": 1 / 3, "entries": 2}
    [entry] = cache.search(cache_key("gpt-x", [], "What is the capital of France?"), limit=1)
    assert entry["metadata"] == {"model": "gpt-x"}
    assert chat.remaining == 0  # other attributes are the wrapped chat's


def test_model_and_system_prompt_are_part_of_the_key(cache: SemanticCache) -> None:
    model = ScriptedChatModel(["one", "two", "three"])
    chat = cache.wrap(model)
    terse = [{"role": "system", "content": "Be terse."}, *user("Name a colour")]
    chat(terse)
    chat([{"role": "system", "content": "Answer in French only."}, *user("Name a colour")])
    chat(terse, model="other-model")
    assert len(model.calls) == 3  # three keys, three misses
    assert answer(chat(terse)) == "one"


def test_only_first_questions_are_cached_by_default(cache: SemanticCache) -> None:
    model = ScriptedChatModel(["a1", "a2", "a3", "a4", "a5"])
    history = [*user("hi"), {"role": "assistant", "content": "hello"}, *user("What is jazz?")]
    cached = cache.wrap(model)
    cached(history)
    cached(history)
    assert len(model.calls) == 2 and cache.stats()["hits"] + cache.stats()["misses"] == 0  # skipped
    two = cache.wrap(model, max_messages=2)
    two(history)
    assert answer(two(history)) == "a4"  # 2 earlier non-system messages: too long for 2 as well
    unlimited = cache.wrap(model, max_messages="unlimited")
    unlimited(history)
    assert answer(unlimited(history)) == "a5" and len(model.calls) == 5  # the 2nd call hit
    assert cache.wrap(model, max_messages=3)(history)["choices"][0]["message"]["content"] == "a5"


def test_tools_streams_and_attachments_skip_the_cache(cache: SemanticCache) -> None:
    model = ScriptedChatModel([tool_call("search", {"q": "x"}), "b", "c", "d", "e"])
    chat = cache.wrap(model)
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    chat(user("What is jazz?"), tools)
    chat(user("What is jazz?"), stream=True)
    chat([{"role": "user", "content": [{"type": "text", "text": "What is jazz?"}]}])
    chat([{"role": "assistant", "content": "Anything else?"}])
    assert model.calls[0]["tools"] is not None and model.calls[1]["options"] == {"stream": True}
    assert cache.stats() == {"hits": 0, "misses": 0, "hit_rate": 0.0, "entries": 0}
    chat(user("What is jazz?"))
    assert answer(chat(user("what is JAZZ?"))) == "e" and len(model.calls) == 5


def test_on_cache_hit_threshold_and_ttl(cache: SemanticCache, engine: Engine) -> None:
    seen: list[tuple[Any, str, Any]] = []
    model = ScriptedChatModel(["r1", "r2", "r3"])
    chat = cache.wrap(model, on_cache_hit=lambda c, m, r: seen.append((c, m, answer(r))), ttl=5)
    chat(user("capital of Peru"))
    chat(user("Capital of Peru?"))
    assert seen == [(model, "Capital of Peru?", "r1")]
    strict = cache.wrap(model, threshold=1.0)
    assert answer(strict(user("capital city of Peru"))) == "r2"  # similar, but not identical
    engine.clock.advance(6)  # type: ignore[attr-defined]  # the fixture's ManualClock
    assert answer(chat(user("capital of Peru"))) == "r3"  # the ttl=5 entry expired


def test_a_response_that_is_not_json_is_returned_not_stored(cache: SemanticCache) -> None:
    marker = object()
    chat = cache.wrap(lambda messages, **options: marker)
    assert chat(user("anything")) is marker
    assert cache.stats()["entries"] == 0 and cache.stats()["misses"] == 1


def test_configure_and_config(cache: SemanticCache) -> None:
    assert cache.config == {
        "namespace": "chat", "similarity_threshold": 0.92, "ttl": None, "max_messages": 1,
        "embedding_model": "fake:64", "embedding_dimensions": 64,
    }  # fmt: skip
    config = cache.configure(threshold=0.5, ttl=60, max_messages="unlimited")
    assert (config["similarity_threshold"], config["ttl"], config["max_messages"]) == (0.5, 60, None)
    with pytest.raises(InvalidConfiguration, match="threshold"):
        cache.configure(threshold=2, ttl=5)
    assert cache.config["ttl"] == 60  # nothing changed: everything is checked first
    for bad in ({"max_messages": 0}, {"max_messages": "all"}, {"ttl": -1}, {"threshold": True}):
        with pytest.raises(InvalidConfiguration):
            cache.configure(**bad)


def test_configure_a_new_embedder_keeps_entries_of_each_model_apart(cache: SemanticCache) -> None:
    cache.store("hello world", "hi")
    cache.configure(embedder=FakeEmbedder(dim=32))
    assert cache.search("hello world") == []
    cache.configure(embedder=FakeEmbedder(dim=64))
    assert [e["response"] for e in cache.search("hello world")] == ["hi"]


def test_clear_deletes_entries_and_resets_counters(cache: SemanticCache) -> None:
    cache.fetch("a question", lambda: "x")
    cache.fetch("a question", lambda: "y")
    assert cache.stats()["hits"] == 1
    cache.clear()
    assert cache.stats() == {"hits": 0, "misses": 0, "hit_rate": 0.0, "entries": 0}
    assert cache.fetch("a question", lambda: "z") == "z"


def test_fetch_needs_a_callable(cache: SemanticCache) -> None:
    with pytest.raises(InvalidInput, match="Block required"):
        cache.fetch("q", None)  # type: ignore[arg-type]  # the missing block is the point
    with pytest.raises(InvalidInput, match="not callable"):
        cache.wrap(42)


def test_memory_cache_wraps(engine: Engine) -> None:
    with SharedMemory(engine, "robots", embedder=FakeEmbedder(dim=64)) as memory:
        assert memory.cache is not None
        chat = memory.cache.wrap(ScriptedChatModel(["Ruby is a language."]))
        chat(user("What is Ruby?"))
        assert answer(chat(user("what is ruby"))) == "Ruby is a language."


class CountingEmbedder(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=64)
        self.texts: list[str] = []

    def embed(self, texts: Any) -> Any:
        self.texts.extend(texts)
        return super().embed(texts)


def test_the_same_prompt_is_embedded_once(engine: Engine) -> None:
    embedder = CountingEmbedder()
    cache = SemanticCache(engine, "memo", embedder=embedder)
    chat = cache.wrap(ScriptedChatModel(["x"]))
    for _ in range(3):
        chat(user("Same question"))
    assert len(embedder.texts) == 1 and cache.stats()["hits"] == 2
    cache.configure(embedder=embedder)  # a new embedder: remembered vectors are dropped
    chat(user("Same question"))
    assert len(embedder.texts) == 2


def test_a_failed_call_or_bad_response_still_counts_a_miss(cache: SemanticCache) -> None:
    def boom() -> str:
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError):
        cache.fetch("q1", boom)
    with pytest.raises(InvalidValue):
        cache.fetch("q2", lambda: {1, 2})
    with pytest.raises(RuntimeError):
        cache.wrap(lambda messages, **options: boom())(user("q3"))
    assert cache.stats() == {"hits": 0, "misses": 3, "hit_rate": 0.0, "entries": 0}
