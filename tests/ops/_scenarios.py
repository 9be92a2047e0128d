"""One request per registered operation, on data every door's tenant is filled with alike.

Every operation must have a scenario (tests/ops/test_doors.py fails otherwise): adding an
operation means saying here what a call of it looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from memstack import Memory
from memstack.doors.integrations.langgraph import MemstackStore
from memstack.services.dream import Dreamer
from memstack.tiers.shared.cache import SemanticCache, default_embedder
from memstack.tiers.shared.documents import DocumentStore


@dataclass(frozen=True)
class Scenario:
    """A call of one operation.

    Attributes:
        args: the request (``{record}`` in a text stands for the filled-in dream record's id).
        volatile: result fields each call makes anew (generated ids), compared by presence only.
        text_ids: a text result holds generated ids (``'3f2a…'``), compared with ids blanked.
        clocked: texts say how long until an entry expires, which moves with the clock of the
            process (the CLI's is the system's): compared with the durations blanked.
    """

    args: dict[str, Any]
    volatile: frozenset[str] = field(default_factory=frozenset)
    text_ids: bool = False
    clocked: bool = False


def populate(mem: Memory) -> dict[str, str]:
    """The data every door starts from; the ids it could not choose."""
    mem.sessions.create("s1")
    mem.sessions.put("s1", "k", {"v": 1})
    mem.sessions.increment("s1", "n", 2)
    mem.sessions.create("s2", subject="u1")
    mem.conversations.append("c1", "user", "What is a good tea?", message_id="m1")
    mem.conversations.append("c1", "assistant", "Sencha, a green tea.", message_id="m2")
    alice = mem.long_term("alice")
    alice.save(id="a1", content="Alice plays the violin", tags=["music"], category="hobby", metadata={"v": 1})
    alice.save(id="a2", content="Alice lives in Chicago", category="home", subject="u1")
    alice.save(id="a3", content="Alice lives in Boston", category="home", supersedes=["a2"])
    for scope in ("dup", "dup2"):
        memories = mem.long_term(scope)
        memories.save(id="d1", content="Dan likes the colour blue a lot")
        memories.save(id="d2", content="dan likes the colour blue a lot!")
        memories.save(id="d3", content="Dan owns two cats")
    (record,) = Dreamer(mem.long_term("dup")).run(["dedupe"])
    mem.working("session/s1").set("draft", {"to": "bob"}, ttl=300, tags=["mail"])
    mem.working("patrol/hb").set("alert", "disk full", ttl=300)
    with mem.shared("team") as board:
        board["plan"] = ["research"]
    SemanticCache(mem.engine, "team", embedder=default_embedder()).store("Who wrote Dune?", "Frank Herbert")
    DocumentStore(mem.engine, "kb").store("readme", "Set REDIS_URL to connect to Redis.", {"v": 1})
    mem.turns.add("s1", "user", "where does alice play")
    store = MemstackStore(mem)
    store.put(("docs", "alice"), "report", {"title": "Q3 report", "pages": 12})
    store.put(("docs", "bob"), "memo", {"title": "Lunch memo", "pages": 1})
    return {"record": record.id}


def expand(args: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    """``args`` with ``{record}`` replaced by the filled-in id."""
    return {k: v.format(**ids) if isinstance(v, str) and "{" in v else v for k, v in args.items()}


def blank_ids(text: str) -> str:
    return re.sub(r"'[0-9a-f]{12,32}'", "'<id>'", text)


def blank_durations(value: Any) -> Any:
    """``value`` with every ``expires in 4m31s`` of its texts blanked."""
    if isinstance(value, str):
        return re.sub(r"expires in [0-9hms]+", "expires in <duration>", value)
    if isinstance(value, dict):
        return {k: blank_durations(v) for k, v in value.items()}
    if isinstance(value, list):
        return [blank_durations(v) for v in value]
    return value


ID = frozenset({"id"})
SCENARIOS: dict[str, Scenario] = {
    "sessions.list": Scenario({"limit": 1}),
    "sessions.create": Scenario({"session_id": "s3", "ttl_hours": 2.5, "subject": "u2"}),
    "sessions.show": Scenario({"session_id": "s1"}),
    "sessions.delete": Scenario({"session_id": "s1"}),
    "sessions.keys": Scenario({"session_id": "s1"}),
    "sessions.clear": Scenario({"session_id": "s1", "key": "k"}),
    "sessions.get": Scenario({"session_id": "s1", "key": "k"}),
    "sessions.put": Scenario({"session_id": "s1", "key": "k", "value": {"w": [1, 2.5]}}),
    "sessions.increment": Scenario({"session_id": "s1", "key": "n", "amount": 3}),
    "sessions.history": Scenario({"session_id": "s1", "limit": 10}),
    "conversations.list": Scenario({}),
    "conversations.append": Scenario(
        {"conversation_id": "c1", "role": "user", "content": "And how hot?"}, frozenset({"message_id"})
    ),
    "conversations.messages": Scenario({"conversation_id": "c1", "start": 1, "limit": 5}),
    "conversations.message": Scenario({"conversation_id": "c1", "message_id": "m2"}),
    "conversations.thread": Scenario({"conversation_id": "c1", "current_message_id": "m2"}),
    "conversations.history": Scenario({"conversation_id": "c1", "max_token_limit": 1000}),
    "conversations.delete": Scenario({"conversation_id": "c1"}),
    "memories.scopes": Scenario({"limit": 2}),
    "memories.save": Scenario(
        {
            "scope": "alice",
            "content": "Alice lives in Denver",
            "tags": ["tea", "drinks"],
            "metadata": {"k": 1},
            "supersedes": ["a3"],
            "expires_at": "2099-01-01T00:00:00Z",
        },
        ID,
    ),
    "memories.save_many": Scenario(
        {
            "scope": "alice",
            "items": [
                {"id": "b1", "content": "Alice bakes bread", "tags": "food, home"},
                {"id": "a1", "content": "Alice plays the viola", "metadata": {"k": 2}},
                {"id": "b2", "content": "Alice lives in Denver", "supersedes": ["a3"], "ttl": 3600},
            ],
        }
    ),
    "memories.search": Scenario(
        {"scope": "alice", "query": "alice lives", "limit": 5, "include_history": True}
    ),
    "memories.history": Scenario({"scope": "alice", "id": "a2"}),
    "memories.get": Scenario({"scope": "alice", "id": "a1"}),
    "memories.delete": Scenario({"scope": "alice", "id": "a1"}),
    "memories.categories": Scenario({"scope": "alice"}),
    "memories.tags": Scenario({"scope": "alice"}),
    "memories.count": Scenario({"scope": "alice"}),
    "working.namespaces": Scenario({}),
    "working.list": Scenario({"prefix": "session"}),
    "working.search": Scenario({"query": "bob", "namespace": "session/s1"}),
    "working.clear": Scenario({"namespace": "session/s1"}),
    "working.set": Scenario(
        {"key": "notes", "value": "hello there", "namespace": "session/s1", "ttl": 60, "tags": ["a"]}
    ),
    "working.get": Scenario({"key": "session/s1/draft"}),
    "working.delete": Scenario({"key": "draft", "namespace": "session/s1"}),
    "shared.list": Scenario({}),
    "shared.show": Scenario({"name": "team"}),
    "shared.get": Scenario({"name": "team", "key": "plan"}),
    "shared.put": Scenario({"name": "team", "key": "plan", "value": ["research", "write"], "version": 1}),
    "shared.delete": Scenario({"name": "team", "key": "plan"}),
    "cache.lookup": Scenario({"name": "team", "query": "who wrote dune"}, ID),
    "cache.store": Scenario({"name": "team", "query": "Capital of France?", "response": "Paris"}, ID),
    "cache.search": Scenario({"name": "team", "query": "dune", "limit": 3}, ID),
    "cache.invalidate": Scenario({"name": "team", "query": "who wrote dune", "threshold": 0.5}),
    "cache.stats": Scenario({"name": "team"}),
    "cache.clear": Scenario({"name": "team"}),
    "documents.keys": Scenario({"name": "kb"}),
    "documents.search": Scenario({"name": "kb", "query": "redis"}),
    "documents.put": Scenario(
        {"name": "kb", "key": "intro", "content": "Welcome aboard", "metadata": {"a": 1}}
    ),
    "documents.get": Scenario({"name": "kb", "key": "readme"}),
    "documents.delete": Scenario({"name": "kb", "key": "readme"}),
    "store.put": Scenario(
        {"namespace": ["docs", "carol"], "key": "plan", "value": {"title": "Plan"}, "ttl": 60}
    ),
    "store.get": Scenario({"namespace": ["docs", "alice"], "key": "report", "refresh_ttl": False}),
    "store.search": Scenario(
        {"namespace_prefix": ["docs"], "query": "report", "filter": {"pages": {"$gt": 5}}}
    ),
    "store.namespaces": Scenario({"prefix": ["docs"], "max_depth": 2, "limit": 10}),
    "store.delete": Scenario({"namespace": ["docs", "bob"], "key": "memo"}),
    "dream.run": Scenario({"scope": "dup2", "passes": ["dedupe"], "dry_run": True}, ID),
    "dream.history": Scenario({"scope": "dup", "limit": 5}, ID),
    "dream.show": Scenario({"scope": "dup", "record_id": "{record}"}, ID),
    "dream.undo": Scenario({"scope": "dup", "record_id": "{record}"}, frozenset({"record_id", "removed"})),
    "dream.feedback": Scenario({"scope": "alice", "kind": "correction", "text": "Tea, not coffee"}),
    "context.build": Scenario(
        {"session_id": "s1", "message": "violin?", "scope": "alice", "dry_run": True}, clocked=True
    ),
    "forget": Scenario({"subject": "u1"}),
    "loop.remember": Scenario(
        {"user": "u1", "content": "I keep bees in Porto"},
        frozenset({"message_id", "parent_message_id", "id", "metadata"}),
    ),
    "loop.recall": Scenario({"query": "violin", "user": "alice"}),
    "turns.migrate": Scenario({}),
    "agent.save_memory": Scenario(
        {"content": "Alice lives in Denver", "tags": "home", "supersedes": "a3", "scope": "alice"},
        text_ids=True,
    ),
    "agent.update_memory": Scenario(
        {"id": "a1", "content": "Alice plays the cello", "tags": "music", "scope": "alice"}
    ),
    "agent.search_memory": Scenario({"query": "violin", "scope": "alice"}),
    "agent.delete_memory": Scenario({"id": "a1", "scope": "alice"}),
    "agent.list_memory_categories": Scenario({"scope": "alice"}),
    "agent.save_to_working_memory": Scenario({"key": "k", "data": "v", "session_id": "s1"}),
    "agent.get_from_working_memory": Scenario({"key": "draft", "session_id": "s1"}),
    "agent.delete_from_working_memory": Scenario({"key": "draft", "session_id": "s1"}),
    "agent.list_working_memory": Scenario({"session_id": "s1"}),
    "agent.search_working_memory": Scenario({"query": "bob", "session_id": "s1"}),
    "tools.list": Scenario({}),
    "tools.call": Scenario({"name": "search_memory", "arguments": {"query": "violin"}, "scope": "alice"}),
}
