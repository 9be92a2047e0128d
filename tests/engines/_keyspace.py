"""Test helpers: a populated keyspace of every type, and a snapshot of a whole keyspace.

A snapshot reads every live key through the seam (type, content, TTL), so two snapshots compare
what any caller could observe, on any engine.
"""

from __future__ import annotations

from typing import Any

from memstack.engines import Engine, WrongType

INT64_MAX = 2**63 - 1

Snapshot = dict[str, tuple[str, Any, int]]


def key(engine: Engine, name: str) -> str:
    """A key in the shared test slot, so any set of them may share one batch."""
    return f"t:{engine.tag('s')}:{name}"


def populate(engine: Engine) -> None:
    """One key of each type (some with TTLs), numbers near the 64-bit edge, text that is no number."""
    k = lambda name: key(engine, name)  # noqa: E731 - a local shorthand reads better here
    with engine.batch() as b:
        b.set(k("s"), "v")
        b.set(k("n"), "5", px=60_000)
        b.set(k("big"), str(INT64_MAX - 10))
        b.set(k("txt"), "abc")
        b.set(k("xs"), "untouched")
        b.hset(k("h"), {"f": "1", "big": str(INT64_MAX), "txt": "x"})
        b.hset(k("xh"), {"f": "untouched"})
        b.sadd(k("st"), "a", "b")
        b.rpush(k("l"), "a", "b", "c")
        b.rpush(k("l1"), "only")
        b.rpush(k("l2"), "a", "b")
        b.zadd(k("z"), {"a": 1.0, "b": 2.0})
        b.pexpire(k("z"), 90_000)


def value_of(engine: Engine, name: str) -> tuple[str, Any]:
    """The type and content of live key ``name`` (each read of another type raises WrongType)."""
    readers: list[tuple[str, Any]] = [
        ("string", lambda: engine.get(name)),
        ("hash", lambda: engine.hgetall(name)),
        ("set", lambda: engine.smembers(name)),
        ("list", lambda: engine.lrange(name, 0, -1)),
        ("zset", lambda: engine.zrange(name, 0, -1)),
    ]
    for kind, read in readers:
        try:
            value = read()
        except WrongType:
            continue
        if kind == "string" and value is None:
            continue  # absent (or not a string: the next readers say)
        return kind, value
    return "none", None


def snapshot(engine: Engine) -> Snapshot:
    """Every live key of ``engine``: its type, its content, its remaining TTL."""
    out: Snapshot = {}
    for name in sorted(engine.scan("")):
        kind, value = value_of(engine, name)
        out[name] = (kind, value, engine.pttl(name))
    return out
