"""The call catalogue of the hostile-input fuzz (``tests/test_hostile_inputs.py``).

A call is drawn once, as plain data (a name and its arguments), from a seeded RNG: the same
sequence then runs on every engine. Arguments come from :mod:`_hostile_values`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from _hostile_values import HOSTILE_KEYS, TEXTS, VALUES, WAITS, Call, Draw
from memstack import Memory
from memstack.agent.context import ContextBuilder
from memstack.tiers.conversation import TurnMemory
from memstack.tiers.conversation.message import LATEST
from memstack.tiers.longterm import InjectionTracker, MemoryEntry
from memstack.tiers.session import SessionStore
from memstack.tiers.shared import SharedMemory


@dataclass
class Tiers:
    """The tier objects of one run, created once per engine."""

    mem: Memory
    cache: dict[str, Any] = field(default_factory=dict)

    def shared(self) -> Any:
        if "shared" not in self.cache:
            self.cache["shared"] = self.mem.shared("net", enable_cache=False)
        return self.cache["shared"]


Op = tuple[Callable[[Draw], tuple[Any, ...]], Callable[[Tiers, tuple[Any, ...]], Any]]


def _sid(d: Draw) -> Any:
    return d.pick("s1", "s2")


def _files(d: Draw) -> Any:
    return d.pick(
        None, [{"type": "image", "transfer_method": "remote_url", "url": d.pick("https://x/y.png")}]
    )


def _window_messages(d: Draw) -> Any:
    return [
        {
            "role": d.pick("user", "assistant"),
            "content": d.pick(*TEXTS),
            "id": d.pick("w1", 42),
            "metadata": d.pick({}, {"m": 1}),
        }
    ]


OPS: dict[str, Op] = {
    # -- sessions ---------------------------------------------------------------------------
    "sessions.create": (
        lambda d: (_sid(d), d.pick(None, 0, 1, 0.5)),
        lambda t, a: t.mem.sessions.create(a[0], ttl_hours=a[1]),
    ),
    "sessions.put": (
        lambda d: (_sid(d), d.pick("k1", "k.2"), d.pick(*VALUES)),
        lambda t, a: t.mem.sessions.put(*a),
    ),
    "sessions.get": (
        lambda d: (_sid(d), d.pick("k1", "k.2")),
        lambda t, a: t.mem.sessions.get(a[0], a[1], None),
    ),
    "sessions.increment": (
        lambda d: (_sid(d), d.pick("n", "k1"), d.pick(1, -2, 0.5)),
        lambda t, a: t.mem.sessions.increment(*a),
    ),
    "sessions.clear": (lambda d: (_sid(d), d.pick(None, "k1")), lambda t, a: t.mem.sessions.clear(*a)),
    "sessions.history": (lambda d: (_sid(d), d.pick(5, 0, 50)), lambda t, a: t.mem.sessions.history(*a)),
    "sessions.delete": (lambda d: (d.pick("s2"),), lambda t, a: t.mem.sessions.delete(*a)),
    "sessions.custom": (
        lambda d: (d.pick(100, 2), d.pick(1024, 1 << 20), d.pick(None, 0, 10), d.pick(0, 1)),
        lambda t, a: SessionStore(
            t.mem.engine, max_history=a[0], max_value_bytes=a[1], max_sessions=a[2], session_ttl_hours=a[3]
        ).put("s1", "k1", "v"),
    ),
    "sessions.summarize": (
        lambda d: (_sid(d), d.pick(None, 2, 10)),
        lambda t, a: t.mem.sessions.summarize_if_needed(*a),
    ),
    "sessions.replace_history": (
        lambda d: (_sid(d), [{"op": "note", "text": d.pick(*TEXTS)}]),
        lambda t, a: t.mem.sessions.replace_history(*a),
    ),
    # -- conversations ----------------------------------------------------------------------
    "conversations.append": (
        lambda d: (
            d.pick("c1", "c2"),
            d.pick("user", "assistant"),
            d.pick(*TEXTS),
            d.pick("m1", "m2", "m3", "m4", "m5", "m6"),
            _files(d),
            d.pick(None, 5),
            d.pick(None, "run1", "run2"),
            d.pick(LATEST, None, "m1"),
        ),
        lambda t, a: t.mem.conversations.append(
            a[0],
            a[1],
            a[2],
            message_id=a[3],
            files=a[4],
            token_count=a[5],
            workflow_run_id=a[6],
            parent_message_id=a[7],
        ),
    ),
    "conversations.history": (
        lambda d: (d.pick("c1", "c2"), d.pick(2000, 10), d.pick(None, 4)),
        lambda t, a: t.mem.conversations.history(a[0], max_token_limit=a[1], message_limit=a[2]),
    ),
    "conversations.thread": (
        lambda d: (d.pick("c1", "c2"), d.pick(None, "m1"), d.pick(None, 3)),
        lambda t, a: t.mem.conversations.thread(a[0], a[1], message_limit=a[2]),
    ),
    "conversations.get": (
        lambda d: (d.pick("c1", "c2"), d.pick("m1", "m2")),
        lambda t, a: t.mem.conversations.get(*a),
    ),
    "conversations.messages": (
        lambda d: (d.pick("c1"), d.pick(0, -2), d.pick(-1, 3)),
        lambda t, a: t.mem.conversations.messages(*a),
    ),
    # -- windows ----------------------------------------------------------------------------
    "windows.save": (
        lambda d: (
            d.pick("wf"),
            {"session_id": d.pick("w1", 7), "input": d.pick(*TEXTS)},
            {"output": d.pick(*TEXTS)},
        ),
        lambda t, a: t.mem.windows.save(*a),
    ),
    "windows.execute": (
        lambda d: (d.pick("wf"), {"session_id": d.pick("w1"), "messages": _window_messages(d)}),
        lambda t, a: t.mem.windows.execute(*a),
    ),
    "windows.messages": (
        lambda d: (d.pick("wf"), d.pick("w1", "7")),
        lambda t, a: t.mem.windows.messages(*a),
    ),
    "windows.load": (
        lambda d: (
            d.pick("wf"),
            {"session_id": d.pick("w1")},
            d.pick(None, {"context_window_length": d.pick(3)}, {"buffer_expiry_minutes": d.pick(30)}),
        ),
        lambda t, a: t.mem.windows.load(*a),
    ),
    # -- node memory ------------------------------------------------------------------------
    "node.add_and_flush": (
        lambda d: (d.pick("app"), d.pick("run1", "run2"), d.pick(*TEXTS), _files(d), d.pick(*TEXTS)),
        lambda t, a: _node_add(t, *a),
    ),
    "node.custom": (
        lambda d: (d.pick("node", "conversation"), d.pick(2000, 10), d.pick(None, "estimate")),
        lambda t, a: t.mem.node_memory(
            "app", "c1", "n2", mode=a[0], max_token_limit=a[1], token_counter=a[2]
        ).get_history_prompt_messages(),
    ),
    "node.history": (
        lambda d: (d.pick(2000, 5), d.pick(None, 3)),
        lambda t, a: t.mem.node_memory("app", "c1", "node").get_history_prompt_messages(a[0], a[1]),
    ),
    # -- turns ------------------------------------------------------------------------------
    "turns.add": (
        lambda d: (d.pick("t1", "t/2"), d.pick("user", "assistant"), d.pick(*TEXTS)),
        lambda t, a: t.mem.turns.add(*a),
    ),
    "turns.custom": (
        lambda d: (d.pick(60, 3600.0, None), d.pick(5, 50)),
        lambda t, a: TurnMemory(t.mem.engine, idle_timeout=a[0], max_turns_per_session=a[1]).add(
            "t3", "user", "x"
        ),
    ),
    "turns.recent": (lambda d: (d.pick("t1"), d.pick(None, 3)), lambda t, a: t.mem.turns.recent(*a)),
    "turns.log_entries": (lambda d: (d.pick(None, 2),), lambda t, a: t.mem.turns.log_entries(*a)),
    # -- long-term --------------------------------------------------------------------------
    "long_term.save": (
        lambda d: (
            d.pick(*TEXTS),
            d.pick(None, "pets/cats", "work"),
            d.pick(None, ["a", "b"], "x,y", [d.pick("t")]),
            d.pick(None, {"x": d.pick(1, "v")}),
            d.pick("e1", "e2", "e3"),
            d.pick(None, 1_700_000_000),
        ),
        lambda t, a: t.mem.long_term("u1").save(
            content=a[0], category=a[1], tags=a[2], metadata=a[3], id=a[4], created_at=a[5]
        ),
    ),
    "long_term.search": (
        lambda d: (
            d.pick(None, "cats", "meeting noon"),
            d.pick(None, "pets"),
            d.pick(None, ["a"]),
            d.pick(None, 0.0),
            d.pick(5, 20),
        ),
        lambda t, a: t.mem.long_term("u1").search(
            a[0], category=a[1], tags=a[2], created_after=a[3], max_results=a[4]
        ),
    ),
    "long_term.custom": (
        lambda d: (
            d.pick("u1", "u.2"),
            d.pick("default", "rockbot"),
            d.pick("default", "rrf"),
            d.pick(None, 0.3),
        ),
        lambda t, a: t.mem.long_term(a[0], profile=a[1], fusion=a[2], min_similarity=a[3]).search("cats"),
    ),
    "long_term.restore": (
        lambda d: (
            d.pick("e4", "E5"),
            d.pick(*TEXTS),
            d.pick(None, "work"),
            d.pick((), ("a",)),
            d.pick(_WHEN),
        ),
        lambda t, a: t.mem.long_term("u1").restore(
            MemoryEntry(id=a[0], content=a[1], category=a[2], tags=a[3], created_at=a[4])
        ),
    ),
    "long_term.mark": (
        lambda d: (_sid(d), [d.pick("e1", "e2"), d.pick("e3")]),
        lambda t, a: InjectionTracker(t.mem.engine).try_mark_many(*a),
    ),
    "long_term.get": (lambda d: (d.pick("e1", "E2"),), lambda t, a: t.mem.long_term("u1").get(*a)),
    "long_term.delete": (lambda d: (d.pick("e3"),), lambda t, a: t.mem.long_term("u1").delete(*a)),
    # -- working ----------------------------------------------------------------------------
    "working.set": (
        lambda d: (
            d.pick("k1", "k2", "session/abc/k3"),
            d.pick(*VALUES),
            d.pick(None, 60, 0.5),
            d.pick(None, "email/inbox"),
            d.pick(None, ["urgent"]),
        ),
        lambda t, a: t.mem.working("session/abc").set(a[0], a[1], ttl=a[2], category=a[3], tags=a[4]),
    ),
    "working.get": (
        lambda d: (d.pick("k1", "session/abc/k3"),),
        lambda t, a: t.mem.working("session/abc").get(*a),
    ),
    "working.list": (
        lambda d: (d.pick(None, "", "session"),),
        lambda t, a: t.mem.working("session/abc").list(*a),
    ),
    "working.search": (
        lambda d: (
            d.pick(None, "hello", "cats"),
            d.pick(None, "email"),
            d.pick(None, ["urgent"]),
            d.pick(None, ""),
            d.pick(5),
        ),
        lambda t, a: t.mem.working("session/abc").search(*a),
    ),
    "working.custom": (
        lambda d: (d.pick(60, 0.5), d.pick(50, 3), d.pick(1024, 1 << 20)),
        lambda t, a: t.mem.working(
            "patrol/p1", default_ttl=a[0], max_entries_per_namespace=a[1], max_value_bytes=a[2]
        ).set("k", "v" * 100),
    ),
    "working.clear": (
        lambda d: (d.pick(None, "k2", "session/abc/k3"),),
        lambda t, a: t.mem.working("session/abc").clear(*a),
    ),
    "working.delete": (lambda d: (d.pick("k2"),), lambda t, a: t.mem.working("session/abc").delete(*a)),
    # -- shared -----------------------------------------------------------------------------
    "shared.set": (
        lambda d: (d.pick("a", "b", "data", "session_id"), d.pick(*VALUES), d.pick(None, "corr-1")),
        lambda t, a: t.shared().set(a[0], a[1], correlation_id=a[2]),
    ),
    "shared.get": (
        lambda d: (d.pick("a", "b", "zzz"), d.pick(False, pool=WAITS)),
        lambda t, a: t.shared().get(a[0], wait=a[1]),
    ),
    "shared.set_if": (
        lambda d: (d.pick("a", "c"), d.pick(*VALUES), d.pick(None, 0, 1, 2, 3)),
        lambda t, a: t.shared().set_if(a[0], a[1], version=a[2]),
    ),
    "shared.merge": (
        lambda d: (
            {
                d.pick("a", "b", pool=HOSTILE_KEYS): d.pick(*VALUES),
                d.pick("results", "c", pool=HOSTILE_KEYS): d.pick([1], ["r"]),
            },
        ),
        lambda t, a: t.shared().merge(*a),
    ),
    "shared.data_set": (
        lambda d: (d.pick("x", "y"), d.pick(*VALUES)),
        lambda t, a: t.shared().data.__setitem__(*a),
    ),
    "shared.append": (
        lambda d: (d.pick({"role": "user", "content": "hi"}, "result-1"),),
        lambda t, a: (t.shared().append_message(a[0]), t.shared().append_result(a[0])),
    ),
    "shared.custom": (
        lambda d: (d.pick("net", "net.2"), d.pick(None, "agent-1"), d.pick(None, "sess")),
        lambda t, a: _shared_custom(t, *a),
    ),
    "shared.from_dict": (
        lambda d: (
            d.pick("net.3"),
            {
                "data": d.pick({"x": 1}),
                "results": d.pick([1]),
                "messages": d.pick([{"role": "user"}]),
                "custom": d.pick({"k": d.pick(*VALUES)}),
            },
        ),
        lambda t, a: SharedMemory.from_dict(t.mem.engine, a[0], a[1], enable_cache=False).close(),
    ),
    "shared.delete": (lambda d: (d.pick("b", "c"),), lambda t, a: t.shared().delete(*a)),
    # -- context builder --------------------------------------------------------------------
    "context.custom": (
        lambda d: (
            d.pick(20, 2),
            d.pick(8, 0),
            d.pick(5, 0),
            d.pick(None, 50),
            d.pick(None, "o200k_base", "estimate"),
        ),
        lambda t, a: ContextBuilder(
            t.mem,
            history_turns=a[0],
            recall_limit=a[1],
            first_turn_fallback=a[2],
            token_budget=a[3],
            token_counter=a[4],
        ).build("s1", "hello"),
    ),
    "context.build": (
        lambda d: (d.pick("s1", "u-2"), d.pick(*TEXTS), d.pick(None, 200), d.pick(None, "You help.")),
        lambda t, a: ContextBuilder(
            t.mem, scope="u1", token_budget=a[2], system_prompt=a[3], token_counter="estimate"
        ).build(a[0], a[1]),
    ),
}


_WHEN = datetime(2026, 1, 2, tzinfo=UTC)


def _shared_custom(tiers: Tiers, name: Any, writer: Any, session_id: Any) -> None:
    shared = SharedMemory(tiers.mem.engine, name, writer=writer, session_id=session_id, enable_cache=False)
    try:
        shared.set("w", 1)
    finally:
        shared.close()


def _node_add(tiers: Tiers, app: Any, run_id: Any, user: Any, files: Any, answer: Any) -> None:
    node = tiers.mem.node_memory(app, "c1", "node")
    node.add_messages(run_id, user, files, answer, None)
    node.flush()


def draw_calls(seed: int, count: int) -> list[Call]:
    """``count`` calls drawn from ``seed``: the same list on every engine."""
    rng = random.Random(seed)
    names = sorted(OPS)
    calls = []
    for _ in range(count):
        name = rng.choice(names)
        draw = Draw(rng)
        args = OPS[name][0](draw)
        calls.append(Call(name, args, draw.hostile))
    return calls


def run_call(tiers: Tiers, call: Call) -> Any:
    """Run ``call`` on ``tiers`` and return what it returns (exceptions propagate)."""
    return OPS[call.op][1](tiers, call.args)
