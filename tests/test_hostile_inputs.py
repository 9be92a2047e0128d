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
* the engine accepts and refuses exactly what the in-process engine does for the same sequence
  (so all four engines agree with each other).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from _hostile_calls import Call, Tiers, draw_calls, run_call
from memstack import ManualClock, Memory, MemstackError
from memstack.engines import Engine, open_engine
from memstack.errors import WrongType

SEED = 20261123
CALLS = 3000
_TAG = re.compile(r"\{([^}]*)\}")

Outcome = str
"""``"ok"`` or the name of the exception class a call raised."""


class Snapshot:
    """Every key of an engine and its value, read by the key's type (found once, then remembered)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
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

    def take(self) -> dict[str, Any]:
        keys = sorted(self.engine.scan(""))
        groups: dict[str, list[str]] = defaultdict(list)
        for key in keys:
            tag = _TAG.search(key) if self.engine.clustered else None
            groups[tag.group(1) if tag else ("" if not self.engine.clustered else key)].append(key)
        state: dict[str, Any] = {}
        for group in groups.values():
            batch = self.engine.batch()
            for key in group:
                self._read_one(batch, self._kind(key), key)
            state.update(zip(group, batch.execute().results, strict=True))
        return {k: v for k, v in state.items() if v not in (None, {}, [], set())}


def _run(mem: Memory, calls: list[Call]) -> tuple[list[Outcome], list[str], list[str]]:
    """Outcomes of ``calls`` on ``mem``, the calls that raised a foreign exception, and the
    failing calls that changed stored data."""
    tiers = Tiers(mem)
    snapshot = Snapshot(mem.engine)
    outcomes: list[Outcome] = []
    foreign: list[str] = []
    changed: list[str] = []
    before = snapshot.take()
    for index, call in enumerate(calls):
        try:
            run_call(tiers, call)
        except MemstackError as exc:
            outcomes.append(type(exc).__name__)
            after = snapshot.take()
            if after != before:
                diff = sorted(k for k in after.keys() | before.keys() if after.get(k) != before.get(k))
                changed.append(f"#{index} {call.op} {type(exc).__name__}: keys {diff[:5]}")
            before = after
            continue
        except Exception as exc:
            outcomes.append(type(exc).__name__)
            foreign.append(f"#{index} {call.op} {type(exc).__name__}: {str(exc)[:200]}")
            before = snapshot.take()
            continue
        outcomes.append("ok")
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
        f"#{i} {calls[i].op}: {got} here, {want} on memory://"
        for i, (got, want) in enumerate(zip(outcomes, expected, strict=True))
        if got != want
    ]
    assert differ == [], f"{len(differ)} calls differ from memory://:\n" + "\n".join(differ[:20])
    # Both outcomes occur for the hostile calls, and the well-formed ones mostly succeed.
    assert {"ok", "InvalidValue"} <= set(outcomes)
    good = [o for o, c in zip(outcomes, calls, strict=True) if not c.hostile]
    assert good.count("ok") > len(good) // 2
