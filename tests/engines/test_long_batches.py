"""Long batches on every engine: an engine may read a long batch's keys together and queue its list
appends, but every command must still see the effects of the commands before it in the batch."""

from __future__ import annotations

from collections.abc import Callable

from memstack.engines import Engine
from memstack.foundation.clock import ManualClock


def _keys(engine: Engine) -> Callable[[str], str]:
    tag = engine.tag("long")  # one hash slot on a cluster
    return lambda name: f"{tag}:{name}"


def test_a_long_batch_reads_many_keys_of_every_kind_as_they_are(engine: Engine, clock: ManualClock) -> None:
    k = _keys(engine)
    engine.set(k("s"), "text")
    engine.set(k("gone"), "soon", px=1000)
    engine.hset(k("h"), {"f": "v"})
    engine.rpush(k("l"), "a", "b")
    engine.sadd(k("set"), "m")
    clock.advance(2)
    with engine.batch() as batch:
        for n in range(20):
            batch.require_missing(k(f"new{n}"))
        batch.require_equal(k("s"), "text")
        batch.require_missing(k("gone"))
        batch.require_exists(k("h"))
        for n in range(20):
            batch.set(k(f"new{n}"), str(n))
        batch.mget([k(x) for x in ("s", "gone", "h", "l", "new3", "absent")])
        batch.rpush(k("l"), "c")
        batch.sadd(k("set"), "n")
    assert batch.result is not None and batch.result.applied
    assert batch.result.results[-3] == ["text", None, None, None, "3", None]
    assert engine.mget([k(f"new{n}") for n in range(20)] + [k("s"), k("gone"), k("l")]) == [
        *map(str, range(20)),
        "text",
        None,
        None,
    ]
    assert engine.lrange(k("l"), 0, -1) == ["a", "b", "c"]
    assert engine.smembers(k("set")) == {"m", "n"}


def test_appends_are_seen_by_the_commands_after_them_in_one_batch(engine: Engine) -> None:
    k = _keys(engine)
    engine.rpush(k("kept"), "0")
    with engine.batch() as batch:
        for n in range(20):
            batch.rpush(k(f"l{n}"), f"a{n}")
        batch.rpush(k("kept"), "1", "2")
        batch.rpush(k("l1"), "b1")
        batch.delete(k("l1"))  # the appends before it go with the key
        batch.rpush(k("l1"), "c1")
        batch.rpush(k("l2"), "b2")
        batch.set(k("l2"), "now a string")  # a retype drops the elements appended before it
        batch.rpush(k("l4"), "b4", "c4")
        batch.ltrim(k("l4"), 1, -1)
        batch.rpush(k("l5"), "b5")
        batch.lpop(k("l5"))
        batch.rpush(k("l6"), "b6")
        batch.lpush(k("l6"), "z6")
        batch.lrange(k("kept"), 0, -1)
        batch.lindex(k("l3"), 0)
    assert batch.result is not None and batch.result.applied
    assert batch.result.results[-2:] == [["0", "1", "2"], "a3"]
    assert engine.lrange(k("l1"), 0, -1) == ["c1"]
    assert engine.get(k("l2")) == "now a string"
    assert engine.lrange(k("l4"), 0, -1) == ["b4", "c4"]
    assert engine.lrange(k("l5"), 0, -1) == ["b5"]
    assert engine.lrange(k("l6"), 0, -1) == ["z6", "a6", "b6"]
    assert engine.lrange(k("l7"), 0, -1) == ["a7"]
    assert engine.llen(k("kept")) == 3


def test_a_failed_long_batch_appends_nothing(engine: Engine) -> None:
    k = _keys(engine)
    engine.set(k("taken"), "x")
    with engine.batch() as batch:
        for n in range(20):
            batch.require_missing(k(f"l{n}"))
        batch.require_missing(k("taken"))
        for n in range(20):
            batch.rpush(k(f"l{n}"), "a")
    assert batch.result is not None and not batch.result.applied
    assert [engine.exists(k(f"l{n}")) for n in range(20)] == [False] * 20
    engine.rpush(k("l0"), "b")
    assert engine.lrange(k("l0"), 0, -1) == ["b"]
