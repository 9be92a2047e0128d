"""``ContextBuilder`` on every engine: order, history window, recall + fallback, delta injection,
inventories per session kind, budget and explain."""

from __future__ import annotations

import pytest

from memstack import ManualClock, Memory
from memstack.agent.context import BuiltContext, ContextBuilder
from memstack.agent.context import format as fmt
from memstack.foundation.errors import InvalidKey, InvalidSessionId, InvalidValue


def contents(ctx: BuiltContext) -> list[str]:
    return [m["content"] for m in ctx.messages]


def test_first_build_of_an_empty_memory_is_just_the_message(mem: Memory) -> None:
    ctx = ContextBuilder(mem).build("s1", "hello")
    assert ctx.messages == [{"role": "user", "content": "hello"}]
    assert (ctx.session_id, ctx.namespace, ctx.tokens) == ("s1", "session/s1", None)


def test_order_system_history_blocks_user(mem: Memory) -> None:
    memory = mem.long_term()
    jazz = memory.save(content="Alice likes jazz", category="music")
    mem.turns.add("s1", "user", "hi")
    mem.turns.add("s1", "assistant", "hello!")
    mem.working("session/s1").set("notes", "n")
    mem.working("patrol/heartbeat").set("alert", "a")
    mem.working("subagent/t1").set("paper-index", "outline")
    ctx = ContextBuilder(mem, system_prompt="Be brief.").build("s1", "which jazz?")
    assert [m["role"] for m in ctx.messages] == [
        "system",
        "user",
        "assistant",
        "system",
        "system",
        "system",
        "system",
        "user",
    ]
    assert contents(ctx) == [
        "Be brief.",
        "hi",
        "hello!",
        f"{fmt.RECALL_HEADER}\n- [{jazz.id}] (music): Alice likes jazz",
        f"{fmt.WORKING_HEADER}\n- session/s1/notes: expires in 5m00s",
        f"{fmt.PATROL_HEADER}\n- patrol/heartbeat/alert: expires in 5m00s",
        f"{fmt.SUBAGENT_HEADER}\n- subagent/t1/paper-index: expires in 5m00s",
        "which jazz?",
    ]


def test_history_window_counts_the_current_message_and_maps_roles(mem: Memory) -> None:
    for i in range(30):
        mem.turns.add("s1", "user" if i % 2 == 0 else "tool", f"t{i}")
    mem.turns.add("s1", "user", "now")
    ctx = ContextBuilder(mem, history_turns=5).build("s1", "now")
    assert contents(ctx) == ["t26", "t27", "t28", "t29", "now"]
    assert [m["role"] for m in ctx.messages] == ["user", "assistant", "user", "assistant", "user"]
    unrecorded = ContextBuilder(mem, history_turns=3).build("s1", "next")
    assert contents(unrecorded) == ["t29", "now", "next"]
    assert contents(ContextBuilder(mem, history_turns=1).build("s1", "x")) == ["x"]


def test_default_window_is_twenty_turns(mem: Memory) -> None:
    for i in range(25):
        mem.turns.add("s1", "user", f"t{i}")
    ctx = ContextBuilder(mem).build("s1", "now")
    assert len(ctx.messages) == 20
    assert contents(ctx)[0] == "t6"


def test_recall_limit_and_line_format(mem: Memory) -> None:
    memory = mem.long_term()
    for i in range(10):
        memory.save(content=f"jazz fact {i}")
    ctx = ContextBuilder(mem).build("s1", "jazz")
    (block,) = [c for c in contents(ctx) if c.startswith(fmt.RECALL_HEADER)]
    assert len(block.splitlines()) == 1 + 8
    assert all(line.startswith("- [") and "(general): jazz fact" in line for line in block.splitlines()[1:])
    assert len(contents(ContextBuilder(mem, recall_limit=2).build("s2", "jazz"))[0].splitlines()) == 3
    assert contents(ContextBuilder(mem, recall_limit=0).build("s3", "jazz")) == ["jazz"]


def test_first_turn_falls_back_to_the_five_most_recent(mem: Memory, clock: ManualClock) -> None:
    memory = mem.long_term()
    ids = []
    for i in range(7):
        ids.append(memory.save(content=f"fact number {i}", category="facts").id)
        clock.advance(1)
    ctx = ContextBuilder(mem).build("s1", "hello there")
    assert contents(ctx)[0] == fmt.RECALL_HEADER + "\n" + "\n".join(
        f"- [{ids[i]}] (facts): fact number {i}" for i in (6, 5, 4, 3, 2)
    )
    assert "first turn, nothing matched" in ctx.explain[0].reason


def test_no_fallback_after_the_first_turn(mem: Memory) -> None:
    mem.long_term().save(content="fact")
    mem.turns.add("s1", "user", "earlier")
    mem.turns.add("s1", "assistant", "reply")
    assert contents(ContextBuilder(mem).build("s1", "hello there")) == ["earlier", "reply", "hello there"]
    mem.turns.add("s2", "user", "hello there")
    assert contents(ContextBuilder(mem, first_turn_fallback=0).build("s3", "hello there")) == ["hello there"]
    assert len(ContextBuilder(mem).build("s2", "hello there").messages) == 2  # recorded first turn: fallback
    assert contents(ContextBuilder(mem, history_turns=1).build("s1", "hello there")) == ["hello there"]


def test_delta_injection_once_per_session(mem: Memory) -> None:
    memory = mem.long_term()
    jazz = memory.save(content="Alice likes jazz")
    builder = ContextBuilder(mem)
    assert len(builder.build("s1", "jazz").messages) == 2
    second = builder.build("s1", "jazz")
    assert contents(second) == ["jazz"]
    assert [(i.kind, i.ident, i.included, i.reason) for i in second.explain] == [
        ("user", "message", True, "the current message (never dropped)"),
        ("recall", jazz.id, False, "already injected earlier in this session"),
    ]
    assert len(builder.build("s2", "jazz").messages) == 2
    builder.tracker.clear("s1")
    assert len(builder.build("s1", "jazz").messages) == 2


def test_patrol_session_sees_only_its_own_namespace(mem: Memory) -> None:
    mem.working("patrol/heartbeat").set("latest", "ok", category="patrol-finding")
    mem.working("patrol/news").set("other", "x")
    mem.working("subagent/t1").set("a-index", "outline")
    ctx = ContextBuilder(mem).build("hb-1", "run", namespace="patrol/heartbeat")
    assert contents(ctx) == [
        f"{fmt.WORKING_HEADER}\n- patrol/heartbeat/latest: expires in 5m00s, category: patrol-finding",
        "run",
    ]
    assert ctx.namespace == "patrol/heartbeat"


def test_user_session_inventories(mem: Memory, clock: ManualClock) -> None:
    mem.working("session/s1").set(
        "emails_inbox", "secret value", ttl=272, category="email", tags=["inbox", "unread"]
    )
    mem.working("session/s10").set("other", "not mine")
    mem.working("patrol/heartbeat").set("alerts", "v", ttl=4 * 3600 + 8 * 60 + 5, tags=["urgent"])
    mem.working("subagent/t1").set("report-index", "outline")
    mem.working("subagent/t1").set("report-chunk-1", "chunk")
    clock.advance(0.5)
    ctx = ContextBuilder(mem).build("s1", "hi")
    assert contents(ctx) == [
        f"{fmt.WORKING_HEADER}\n"
        "- session/s1/emails_inbox: expires in 4m31s, category: email, tags: inbox, unread",
        f"{fmt.PATROL_HEADER}\n- patrol/heartbeat/alerts: expires in 248m04s, tags: urgent",
        f"{fmt.SUBAGENT_HEADER}\n- subagent/t1/report-index: expires in 4m59s",
        "hi",
    ]
    assert "secret value" not in "".join(contents(ctx))


def test_budget_drops_history_first_then_recall_beyond_three(mem: Memory, clock: ManualClock) -> None:
    memory = mem.long_term()
    ids = []
    for i in range(5):
        ids.append(memory.save(content=f"jazz fact {i}").id)
    for i in range(4):
        mem.turns.add("s1", "user" if i % 2 == 0 else "assistant", "word " * 50)
    mem.working("patrol/heartbeat").set("alert", "v")

    def count(text: str) -> int:
        return len(text.split())

    # costs (3 per message + words): system 4, user 4, patrol 21, recall 11 + 6 per line, turns 53 each
    builder = ContextBuilder(mem, token_budget=60, token_counter=count, system_prompt="sys")
    ctx = builder.build("s1", "jazz")
    assert (ctx.tokens, ctx.over_budget) == (58, False)
    assert [m["role"] for m in ctx.messages] == ["system", "system", "system", "user"]
    recalled = [line[3:15] for line in contents(ctx)[1].splitlines()[1:]]
    assert len(recalled) == 3
    assert [(i.kind, i.included) for i in ctx.explain if not i.included] == [
        ("history", False), ("history", False), ("history", False), ("history", False),
        ("recall", False), ("recall", False),
    ]  # fmt: skip
    assert ctx.explain[-1].reason == "token budget: lowest-ranked recalled memories are dropped"
    # only what was shown is marked injected: the two dropped memories come on the next turn
    again = builder.build("s1", "jazz")
    assert again.tokens == 52
    later = [line[3:15] for line in contents(again)[1].splitlines()[1:]]
    assert sorted(recalled + later) == sorted(ids)


def test_over_budget_never_drops_system_or_message(mem: Memory) -> None:
    ctx = ContextBuilder(mem, token_budget=1, token_counter="estimate", system_prompt="long " * 20).build(
        "s1", "hi"
    )
    assert [m["role"] for m in ctx.messages] == ["system", "user"]
    assert ctx.over_budget


def test_explain_text(mem: Memory) -> None:
    mem.working("session/s1").set("k", "v")
    ctx = ContextBuilder(mem, system_prompt="S").build("s1", "hi")
    assert ctx.explain_text() == (
        "+ system prompt: system prompt (never dropped)\n"
        "+ working session/s1/k: own namespace session/s1\n"
        "+ user message: the current message (never dropped)"
    )


def test_validation(mem: Memory) -> None:
    builder = ContextBuilder(mem)
    with pytest.raises(InvalidSessionId):
        builder.build("bad id", "x")
    with pytest.raises(InvalidKey):
        builder.build("s1", "x", namespace="session")
    with pytest.raises(InvalidValue):
        builder.build("s1", None)  # type: ignore[arg-type]  # what is tested
    for bad in ({"history_turns": 0}, {"recall_limit": -1}, {"token_budget": 0}, {"system_prompt": 5}):
        with pytest.raises(InvalidValue):
            ContextBuilder(mem, **bad)  # type: ignore[arg-type]  # what is tested


def test_accepts_an_engine(mem: Memory) -> None:
    assert ContextBuilder(mem.engine).build("s1", "x").messages == [{"role": "user", "content": "x"}]


@pytest.mark.parametrize("budget", [None, 1000])
def test_dry_run_marks_nothing(mem: Memory, budget: int | None) -> None:
    mem.long_term().save(content="Alice likes jazz")
    builder = ContextBuilder(mem, token_budget=budget, token_counter="estimate")
    assert len(builder.build("s1", "jazz", dry_run=True).messages) == 2
    assert len(builder.build("s1", "jazz").messages) == 2
    assert len(builder.build("s1", "jazz").messages) == 1


def test_builder_marks_recall_in_one_batch_with_try_mark_many(mem: Memory) -> None:
    builder = ContextBuilder(mem)
    assert builder.tracker.try_mark_many("s1", ["a", "B", "a"]) == [True, True, False]
    assert builder.tracker.try_mark_many("s1", ["b", "c"]) == [False, True]
    assert builder.tracker.try_mark_many("s1", []) == []
