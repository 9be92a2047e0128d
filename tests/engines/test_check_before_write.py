"""A batch that fails changes nothing, on every engine, for every command and every failure.

For each command of the table and each error it declares (``Command.failures``), a batch of
writes touching every type is followed by an op that fails that way; the whole keyspace (every
key's type, content and TTL) is snapshotted before and after, and must be identical. Cases that
only the storage can decide (a type clash after an op that may empty a container, an overflow of
a counter the batch already wrote) and guards are covered too.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from memstack.engines import Engine, WrongType
from memstack.engines._checks import MAX_TTL_MS
from memstack.engines.commands import COMMANDS, Command
from memstack.foundation.errors import InvalidInput, InvalidValue, MemstackError, NotANumber

from ._keyspace import key, populate, snapshot

Case = tuple[str, type[MemstackError], list[tuple[str, tuple[Any, ...]]]]


def valid_args(engine: Engine, name: str, target: str) -> tuple[Any, ...]:
    """Arguments that make command ``name`` succeed, with ``target`` as its key (or channel)."""
    other = key(engine, "other")
    extra: dict[str, tuple[Any, ...]] = {
        "pexpire": (1000,),
        "copy_ttl": (other,),
        "set": ("v", None, False, False, False),
        "incr": (1,),
        "hset": ({"f": "v"},),
        "hget": ("f",),
        "hmget": ("f",),
        "hdel": ("f",),
        "hincr": ("f", 1),
        "sadd": ("m",),
        "srem": ("m",),
        "sismember": ("m",),
        "rpush": ("x",),
        "lpush": ("x",),
        "lrange": (0, -1),
        "lindex": (0,),
        "ltrim": (0, -1),
        "zadd": ({"m": 1.0},),
        "zrem": ("m",),
        "zscore": ("m",),
        "zrange": (0, -1, False),
        "zrangebyscore": (0.0, 9.0, False, 0, None),
        "publish": ("message",),
        "require_equal": ("v",),
    }
    return (target, *extra.get(name, ()))


def prefix_writes(engine: Engine) -> list[tuple[str, tuple[Any, ...]]]:
    """Writes of every kind (create, change, shrink, delete, TTL, counter) the failure must undo."""
    k = lambda name: key(engine, name)  # noqa: E731 - a local shorthand reads better here
    return [
        ("set", (k("w"), "new", None, False, False, False)),
        ("hset", (k("h"), {"g": "2", "f": "changed"})),
        ("sadd", (k("st"), "c")),
        ("rpush", (k("l"), "d")),
        ("zadd", (k("z"), {"c": 3.0, "a": 0.5})),
        ("delete", (k("s"),)),
        ("pexpire", (k("n"), 1000)),
        ("incr", (k("n"), 2)),
        ("lpop", (k("l1"),)),
        ("hdel", (k("h"), "txt")),
        ("publish", ("chan", "never delivered")),
    ]


def cases_for(engine: Engine, command: Command) -> list[Case]:
    """Failing ops of ``command``: one per declared failure at least."""
    name = command.name
    k = lambda n: key(engine, n)  # noqa: E731 - a local shorthand reads better here
    good = valid_args(engine, name, k("fresh"))
    out: list[Case] = [
        (f"{name} args not a tuple", InvalidInput, [(name, list(good))]),  # type: ignore[list-item] # raw ops may be malformed
        (f"{name} lone surrogate", InvalidValue, [(name, ("\ud800", *good[1:]))]),
    ]
    if not command.variadic:
        out.append((f"{name} extra argument", InvalidInput, [(name, (*good, "extra"))]))
    if len(command.args) > 1:
        out.append((f"{name} missing arguments", InvalidInput, [(name, ())]))
    if command.family is not None:
        clash = k("xh") if command.family == "string" else k("xs")
        out.append((f"{name} wrong type", WrongType, [(name, valid_args(engine, name, clash))]))
    return out


def special_cases(engine: Engine) -> list[Case]:
    """TTL bounds, NaN, increments, guards, and failures only the storage can decide."""
    k = lambda n: key(engine, n)  # noqa: E731 - a local shorthand reads better here
    hi = str(2**63 - 2)
    incr_st = ("incr", (k("st"), 1))
    return [
        ("set px above 10 years", InvalidValue, [("set", (k("a"), "v", 10**20, False, False, False))]),
        ("set px just above", InvalidValue, [("set", (k("a"), "v", MAX_TTL_MS + 1, False, False, False))]),
        ("set px zero", InvalidValue, [("set", (k("a"), "v", 0, False, False, False))]),
        ("set px not an int", InvalidInput, [("set", (k("a"), "v", 1.5, False, False, False))]),
        ("set flag not a bool", InvalidInput, [("set", (k("a"), "v", None, 1, False, False))]),
        ("set value surrogate", InvalidValue, [("set", (k("a"), "ok\udfff", None, False, False, False))]),
        ("pexpire above 10 years", InvalidValue, [("pexpire", (k("xs"), 10**15))]),
        ("incr not a number", NotANumber, [("incr", (k("txt"), 1))]),
        ("incr overflow", NotANumber, [("incr", (k("big"), 11))]),
        ("incr amount beyond 64 bits", NotANumber, [("incr", (k("n"), 2**64))]),
        ("incr amount inf", InvalidValue, [("incr", (k("n"), math.inf))]),
        ("incr amount NaN", InvalidValue, [("incr", (k("n"), math.nan))]),
        ("incr amount a bool", InvalidValue, [("incr", (k("n"), True))]),
        ("hincr a field the batch set to text", NotANumber, [("hincr", (k("h"), "f", 1))]),
        ("hincr stored text", NotANumber, [("hincr", (k("xh"), "f", 1))]),
        ("hincr overflow", NotANumber, [("hincr", (k("h"), "big", 1))]),
        ("hincr float overflow", NotANumber, [("hincr", (k("h"), "big", 1.7e308))] * 2),
        ("zadd NaN", InvalidValue, [("zadd", (k("z"), {"m": math.nan}))]),
        ("zadd score text", InvalidValue, [("zadd", (k("z"), {"m": "1"}))]),
        ("zrangebyscore NaN", InvalidValue, [("zrangebyscore", (k("z"), math.nan, 1.0, False, 0, None))]),
        ("lrange index beyond 64 bits", InvalidValue, [("lrange", (k("l"), 0, 2**64))]),
        ("ltrim index a float", InvalidInput, [("ltrim", (k("l"), 0, 1.0))]),
        ("hset field surrogate", InvalidValue, [("hset", (k("h"), {"\udc00": "v"}))]),
        ("hset mapping not a dict", InvalidInput, [("hset", (k("h"), [("f", "v")]))]),
        ("publish message surrogate", InvalidValue, [("publish", ("chan", "\ud83d"))]),
        ("unknown command", InvalidInput, [("hsetnx", (k("h"), "f", "v"))]),
        ("op not a pair", InvalidInput, [("get",)]),  # type: ignore[list-item] # raw ops may be malformed
        ("guard after a write", InvalidInput, [("require_exists", (k("xs"),))]),
        # Only the storage can decide these: the key may or may not have been emptied, the
        # counter was written by this batch.
        ("type clash after a shrink", WrongType, [("lpop", (k("l2"),)), ("sadd", (k("l2"), "m"))]),
        ("counter the batch wrote", NotANumber, [("incr", (k("big"), 5)), ("incr", (k("big"), 6))]),
        ("hash counter written", NotANumber, [("hset", (k("h"), {"c": hi})), ("hincr", (k("h"), "c", 2))]),
        ("type clash after set nx", WrongType, [("set", (k("st"), "v", None, True, False, False)), incr_st]),
    ]  # fmt: skip


def _run_case(engine: Engine, label: str, expected: type[MemstackError], failing: list[Any]) -> None:
    engine.flush()
    populate(engine)
    before = snapshot(engine)
    with pytest.raises(MemstackError) as caught:
        engine.execute([*prefix_writes(engine), *failing])
    assert type(caught.value) is expected, f"{label}: {type(caught.value).__name__}: {caught.value}"
    assert snapshot(engine) == before, label


def test_every_declared_failure_of_every_command_applies_nothing(engine: Engine) -> None:
    covered: dict[str, set[type[MemstackError]]] = {name: set() for name in COMMANDS}
    for command in COMMANDS.values():
        for label, expected, failing in cases_for(engine, command):
            _run_case(engine, label, expected, failing)
            covered[command.name].add(expected)
    for label, expected, failing in special_cases(engine):
        _run_case(engine, label, expected, failing)
        name = failing[-1][0]
        if name in covered:
            covered[name].add(expected)
    missing = {n: set(c.failures) - covered[n] for n, c in COMMANDS.items() if set(c.failures) - covered[n]}
    assert not missing  # every failure the table declares has a case


def test_a_failing_guard_applies_nothing_of_the_writes_after_it(engine: Engine) -> None:
    engine.flush()
    populate(engine)
    before = snapshot(engine)
    k = lambda n: key(engine, n)  # noqa: E731 - a local shorthand reads better here
    for guard in (("require_exists", (k("absent"),)), ("require_missing", (k("xs"),))):
        result = engine.execute([("require_equal", (k("xs"), "untouched")), guard, *prefix_writes(engine)])
        assert not result.applied
        assert result.results == [True, False]
    result = engine.execute([("require_equal", (k("xs"), "other")), *prefix_writes(engine)])
    assert not result.applied and result.results == [False]
    assert snapshot(engine) == before


def test_the_issue_case_a_huge_working_memory_ttl_stores_nothing(engine: Engine) -> None:
    from memstack import Memory

    mem = Memory(engine)
    try:
        with pytest.raises(InvalidValue):
            mem.working("session/s9").set("big", 1, ttl=10**20)
        assert mem.working("session/s9").get("big") is None
        mem.working("session/s9").set("ok", 1, ttl=3600)
        assert mem.working("session/s9").get("ok") is not None
    finally:
        mem.close()


def test_valid_args_succeed_on_every_engine(engine: Engine) -> None:
    # The templates above are valid: each failure case differs from a success in one argument.
    engine.flush()
    for name in COMMANDS:
        args = valid_args(engine, name, key(engine, "ok-" + name))
        result = engine.execute([(name, args)])
        assert result.applied or COMMANDS[name].kind == "guard", name
