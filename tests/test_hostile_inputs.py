"""A seeded fuzz of hostile inputs over the public library API, on every engine.

About 3,000 calls per engine over sessions, conversations, windows, node memory, turns,
long-term, working and shared memory and the context builder (catalogue:
``tests/_hostile_calls.py``). Each call's arguments are usually well formed and sometimes
hostile: lone surrogates, NaN, infinities, 10**30 and 10**5000, TTLs of 10**30 / -1 / NaN, nesting
5,000 deep, text past the limits, non-JSON objects, wrong types. Asserted:

* every exception is a :class:`~memstack.MemstackError` (no ``UnicodeEncodeError``,
  ``OverflowError``, ``RecursionError``, ``TypeError``...);
* a call that fails changes nothing: every key of the engine, read by its type, is the same
  before and after it;
* the engine accepts and refuses exactly what the in-process engine does for the same sequence,
  and what it accepts it returns alike (the repr of every result, random uuids and the engine's
  own name aside), so all four engines agree with each other.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from _hostile_calls import Call, Tiers, draw_calls, run_call
from memstack import ManualClock, Memory, MemstackError
from memstack.agent.context import ContextBuilder
from memstack.engines import Engine, open_engine
from memstack.foundation.errors import InvalidConfiguration, InvalidValue, WrongType

SEED = 20261123
CALLS = 3000
_TAG = re.compile(r"\{([^}]*)\}")

Outcome = str
"""``"ok: {repr of the result}"`` or the name of the exception class a call raised."""
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ENGINE = re.compile(r" on <[A-Za-z]+Engine [^>]*>")
_TURN_ID = re.compile(r"'message_id': '[0-9a-f]{12}'")  # a turn's generated id (uuid4's first 12)


def _ok(result: Any) -> Outcome:
    """The outcome of a call that returned ``result``: its repr without what differs by design
    between engines and runs (random uuids and turn ids, the engine's name and URL)."""
    text = _TURN_ID.sub("'message_id': '<id>'", _UUID.sub("<uuid>", repr(result)))
    return "ok: " + _ENGINE.sub("", text)


class Snapshot:
    """Every key of an engine and its value, read by the key's type (found once, then remembered)."""

    def __init__(self, engine: Engine, pool: ThreadPoolExecutor) -> None:
        self.engine = engine
        self.pool = pool
        self.kinds: dict[str, str] = {}

    def _kind(self, key: str) -> str:
        if key not in self.kinds:
            for kind in ("string", "hash", "list", "set", "zset"):
                try:
                    self._read_one(self.engine, kind, key)
                except WrongType:
                    continue
                self.kinds[key] = kind
                break
        return self.kinds[key]

    @staticmethod
    def _read_one(target: Any, kind: str, key: str) -> Any:
        if kind == "string":
            return target.get(key)
        if kind == "hash":
            return target.hgetall(key)
        if kind == "list":
            return target.lrange(key, 0, -1)
        if kind == "set":
            return target.smembers(key)
        return target.zrange(key, 0, -1)

    def _read_group(self, group: list[str]) -> list[Any]:
        batch = self.engine.batch()
        for key in group:
            self._read_one(batch, self.kinds[key], key)
        return batch.execute().results

    def take(self) -> dict[str, Any]:
        keys = sorted(self.engine.scan(""))
        groups: dict[str, list[str]] = defaultdict(list)
        for key in keys:
            tag = _TAG.search(key) if self.engine.clustered else None
            groups[tag.group(1) if tag else ("" if not self.engine.clustered else key)].append(key)
        for key in keys:
            self._kind(key)
        state: dict[str, Any] = {}
        # On a cluster every slot is its own round trip: read the groups side by side.
        for group, values in zip(
            groups.values(), self.pool.map(self._read_group, groups.values()), strict=True
        ):
            state.update(zip(group, values, strict=True))
        return {k: v for k, v in state.items() if v not in (None, {}, [], set())}


def _run(mem: Memory, calls: list[Call]) -> tuple[list[Outcome], list[str], list[str]]:
    """Outcomes of ``calls`` on ``mem``, the calls that raised a foreign exception, and the
    failing calls that changed stored data."""
    with ThreadPoolExecutor(max_workers=8 if mem.engine.clustered else 1) as pool:
        return _run_on(Tiers(mem), Snapshot(mem.engine, pool), calls)


def _run_on(
    tiers: Tiers, snapshot: Snapshot, calls: list[Call]
) -> tuple[list[Outcome], list[str], list[str]]:
    outcomes: list[Outcome] = []
    foreign: list[str] = []
    changed: list[str] = []
    before = snapshot.take()
    for index, call in enumerate(calls):
        try:
            result = run_call(tiers, call)
        except MemstackError as exc:
            outcomes.append(type(exc).__name__)
            after = snapshot.take()
            if after != before:
                diff = sorted(k for k in after.keys() | before.keys() if after.get(k) != before.get(k))
                changed.append(f"#{index} {call.op} {type(exc).__name__}: keys {diff[:5]}")
            before = after
            continue
        except Exception as exc:  # what this test hunts for: reported below, never re-raised
            outcomes.append(type(exc).__name__)
            foreign.append(f"#{index} {call.op} {type(exc).__name__}: {str(exc)[:200]}")
            before = snapshot.take()
            continue
        outcomes.append(_ok(result))
        before = snapshot.take()
    return outcomes, foreign, changed


def test_hostile_calls_are_refused_cleanly_and_alike(mem: Memory, clock: ManualClock) -> None:
    calls = draw_calls(SEED, CALLS)
    assert sum(c.hostile for c in calls) > CALLS // 2  # the fuzz is mostly hostile
    outcomes, foreign, changed = _run(mem, calls)
    assert foreign == [], f"{len(foreign)} exceptions outside MemstackError:\n" + "\n".join(foreign[:20])
    assert changed == [], f"{len(changed)} failing calls changed data:\n" + "\n".join(changed[:20])
    with Memory(open_engine("memory://", clock=ManualClock(clock.now()))) as reference:
        expected, _, _ = _run(reference, calls)
    differ = [
        f"#{i} {calls[i].op}: {got[:300]} here, {want[:300]} on memory://"
        for i, (got, want) in enumerate(zip(outcomes, expected, strict=True))
        if got != want
    ]
    assert differ == [], f"{len(differ)} calls differ from memory://:\n" + "\n".join(differ[:20])
    # Both outcomes occur for the hostile calls, and the well-formed ones mostly succeed.
    assert "InvalidValue" in outcomes
    good = [o for o, c in zip(outcomes, calls, strict=True) if not c.hostile]
    assert sum(o.startswith("ok: ") for o in good) > len(good) // 2


# -- the conversation tier and the context builder name the field they refuse ----------------------
def test_conversation_refusals_name_the_field(mem: Memory) -> None:
    store = mem.conversations
    store.append("c1", "user", "hello", message_id="m1")
    refusals = [
        (lambda: store.append("c1", "user", "a\ud800"), r"^message\.content: contains a lone surrogate"),
        (lambda: store.append("c1", "user", "x", token_count=10**30), r"^message\.token_count: "),
        (lambda: store.append("c1", "user", "x", workflow_run_id="r\udfff"), r"^message\.workflow_run_id: "),
        (
            lambda: store.append(
                "c1", "user", "x", files=[{"type": "image", "transfer_method": "remote_url", "url": "\ud800"}]
            ),
            r"^file url: contains a lone surrogate",
        ),
        (lambda: store.append("c1", "user", "x", files=5), r"^files 5: expected a sequence"),  # type: ignore[arg-type]
        (lambda: store.history("c1", max_token_limit="2000"), r"^max_token_limit: '2000' is not an int"),  # type: ignore[arg-type]
        (lambda: store.history("c1", message_limit=10**30), r"^message_limit: "),
        (lambda: store.thread("c1", message_limit=[3]), r"^message_limit: "),  # type: ignore[arg-type]
        (lambda: store.messages("c1", 10**30), r"^start: "),
    ]
    for call, message in refusals:
        with pytest.raises(InvalidValue, match=message):
            call()
    assert [m.content for m in store.messages("c1")] == ["hello"]


def test_window_node_and_turn_refusals_name_the_field(mem: Memory) -> None:
    windows, node, turns = mem.windows, mem.node_memory("app", "c1", "node"), mem.turns
    refusals = [
        (
            lambda: windows.save("wf", {"session_id": "w", "input": "\ud800"}, {"output": "ok"}),
            r"^messages\[0\]\.content: ",
        ),
        (
            lambda: windows.execute(
                "wf",
                {
                    "session_id": "w",
                    "messages": [{"role": "user", "content": "x", "metadata": {"m": "\udfff"}}],
                },
            ),
            r"^messages\[0\]\.metadata\['m'\]: contains a lone surrogate",
        ),
        (
            lambda: windows.execute(
                "wf", {"session_id": "w", "messages": [{"role": "user", "content": "x", "id": [1]}]}
            ),
            r"^messages\.id: ",
        ),
        (
            lambda: windows.load("wf", {"session_id": 10**5000}),
            r"^session_id: an integer of about 5001 digits",
        ),
        (
            lambda: node.add_messages("run\ud800", "q", None, "a", None),
            r"^workflow_run_id: contains a lone surrogate",
        ),
        (
            lambda: node.add_messages("run", "q", None, "a\ud800", None),
            r"^assistant_content: contains a lone surrogate",
        ),
        (
            lambda: node.get_history_prompt_messages(max_token_limit=math.nan),
            r"^max_token_limit: nan is not an int",
        ),  # type: ignore[arg-type]
        (lambda: turns.add("t1", "user", "hi\ud800"), r"^content: contains a lone surrogate"),
        (lambda: turns.recent("t1", 10**30), r"^n .*: must be an int >= 1"),
        (lambda: turns.log_entries(10**30), r"^limit: "),
    ]
    for call, message in refusals:
        with pytest.raises(InvalidValue, match=message):
            call()
    with pytest.raises(InvalidConfiguration, match="buffer_expiry_minutes nan"):
        windows.load("wf", {"session_id": "w"}, {"buffer_expiry_minutes": math.nan})
    node.flush()
    assert windows.messages("wf", "w") == []
    assert node.document() == {"version": 1, "turns": {}}
    assert turns.log_entries() == []


def test_context_builder_refuses_text_with_lone_surrogates(mem: Memory) -> None:
    builder = ContextBuilder(mem, token_budget=100, token_counter="estimate")
    with pytest.raises(InvalidValue, match=r"^user_message: contains a lone surrogate"):
        builder.build("s1", "what about \ud800?")
    with pytest.raises(InvalidValue, match=r"^system_prompt: contains a lone surrogate"):
        ContextBuilder(mem, system_prompt="be \udfff")
    with pytest.raises(InvalidValue, match=r"^history_turns 10"):
        ContextBuilder(mem, history_turns=10**30)
    assert builder.build("s1", "hello").messages[-1] == {"role": "user", "content": "hello"}
