"""Every command of the seam, on every engine: the rules of ``engines/base.py`` pinned down.

Each test runs on memory, SQLite, Redis and Redis Cluster through the ``engine`` fixture. Keys
of one batch share a hash tag (``engine.tag``) so batches are legal on the cluster too.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import pytest

from memstack import ManualClock
from memstack.engines import Engine, WrongType, open_engine
from memstack.foundation.errors import EngineClosed, InvalidValue, NotANumber

INF = math.inf


def k(engine: Engine, name: str) -> str:
    """A key in the shared test slot, so any set of them may share one batch."""
    return f"t:{engine.tag('s')}:{name}"


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until true (for asynchronous message delivery, never for TTLs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def settle(engine: Engine) -> None:
    """Give message delivery a chance to run (used before asserting that nothing arrived)."""
    marker: list[str] = []
    with engine.subscribe("settle", marker.append):
        engine.publish("settle", "x")
        assert wait_for(lambda: marker == ["x"])


# -- keys ------------------------------------------------------------------------------------
def test_exists_delete_counts_only_live_keys(engine: Engine) -> None:
    a, b, c = k(engine, "a"), k(engine, "b"), k(engine, "c")
    engine.set(a, "1")
    engine.hset(b, {"f": "v"})
    assert engine.exists(a) and engine.exists(b) and not engine.exists(c)
    assert engine.delete(a, b, c, a) == 2
    assert not engine.exists(a) and not engine.exists(b)
    assert engine.hgetall(b) == {}
    assert engine.delete(a) == 0


def test_pttl_reports_missing_persistent_and_remaining(engine: Engine, clock: ManualClock) -> None:
    key = k(engine, "p")
    assert engine.pttl(key) == -2
    engine.set(key, "v")
    assert engine.pttl(key) == -1
    assert engine.pexpire(key, 5000)
    assert engine.pttl(key) == 5000
    clock.advance(1.5)
    assert engine.pttl(key) == 3500
    assert engine.persist(key)
    assert engine.pttl(key) == -1
    assert not engine.persist(key)
    assert not engine.persist(k(engine, "absent"))


def test_batch_sees_its_own_ttl_and_existence_changes(engine: Engine, clock: ManualClock) -> None:
    a, b, c, gone = k(engine, "a"), k(engine, "b"), k(engine, "c"), k(engine, "gone")
    engine.set(gone, "old", px=100)
    clock.advance(0.2)  # logically expired, still stored until something touches it
    batch = engine.batch()
    batch.exists(gone)
    batch.copy_ttl(gone, a)
    batch.set(a, "1", px=1000)
    batch.pttl(a)
    batch.copy_ttl(a, b)  # b is missing
    batch.set(b, "2")
    batch.copy_ttl(a, b)
    batch.pttl(b)
    batch.persist(a)
    batch.pttl(a)
    batch.copy_ttl(a, b)  # a has no TTL left: b keeps its own
    batch.pttl(b)
    batch.pexpire(a, 500)
    batch.set(a, "3", keepttl=True)
    batch.pttl(a)
    batch.set(a, "4")
    batch.pttl(a)
    batch.set(gone, "new", keepttl=True)  # the expired TTL must not come back
    batch.pttl(gone)
    batch.sadd(c, "m")
    batch.exists(c)
    batch.copy_ttl(b, c)
    batch.pttl(c)
    batch.delete(a, c)
    batch.exists(a)
    batch.pttl(c)
    batch.pexpire(b, 0)
    batch.exists(b)
    batch.pexpire(b, 10)
    batch.copy_ttl(b, b)
    result = batch.execute()
    assert result.applied
    assert result.results == [
        False, 0, True, 1000, 0, True, 1, 1000, True, -1, 0, 1000, True, True, 500,
        True, -1, True, -1, 1, True, 1, 1000, 2, False, -2, True, False, False, 0,
    ]  # fmt: skip
    assert engine.get(gone) == "new" and engine.pttl(gone) == -1
    assert engine.mget([a, b, c]) == [None, None, None]


def test_pexpire_zero_or_negative_deletes(engine: Engine) -> None:
    a, b = k(engine, "a"), k(engine, "b")
    engine.set(a, "v")
    engine.rpush(b, "x")
    assert engine.pexpire(a, 0)
    assert engine.pexpire(b, -10)
    assert not engine.exists(a) and not engine.exists(b)
    assert engine.lrange(b, 0, -1) == []
    assert not engine.pexpire(a, 100)
    assert not engine.pexpire(a, 0)


def test_pexpire_works_on_every_type_and_writes_keep_it(engine: Engine, clock: ManualClock) -> None:
    keys = {t: k(engine, t) for t in ("string", "hash", "set", "list", "zset")}
    engine.set(keys["string"], "v")
    engine.hset(keys["hash"], {"f": "v"})
    engine.sadd(keys["set"], "m")
    engine.rpush(keys["list"], "x")
    engine.zadd(keys["zset"], {"m": 1})
    for key in keys.values():
        assert engine.pexpire(key, 1000)
    engine.incr(keys["string"] + "n")  # unrelated key: no effect
    engine.hset(keys["hash"], {"g": "w"})
    engine.sadd(keys["set"], "n")
    engine.rpush(keys["list"], "y")
    engine.zadd(keys["zset"], {"n": 2})
    for key in list(keys.values())[1:]:
        assert engine.pttl(key) == 1000
    clock.advance(1.0)
    for key in keys.values():
        assert not engine.exists(key)


def test_copy_ttl(engine: Engine, clock: ManualClock) -> None:
    src, dst, plain, absent = k(engine, "src"), k(engine, "dst"), k(engine, "plain"), k(engine, "none")
    other = k(engine, "other")
    engine.set(src, "s", px=2000)
    engine.rpush(dst, "x")
    engine.hset(other, {"f": "v"})
    engine.set(plain, "p")
    assert engine.copy_ttl(src, dst) == 1
    assert engine.pttl(dst) == 2000
    assert engine.copy_ttl(plain, dst) == 0  # source without TTL: nothing changes
    assert engine.pttl(dst) == 2000
    assert engine.copy_ttl(src, absent) == 0
    assert not engine.exists(absent)
    assert engine.copy_ttl(absent, dst) == 0
    clock.advance(0.5)
    engine.pexpire(src, 3000)
    assert engine.copy_ttl(src, dst, absent, other, plain) == 3  # every live destination
    assert [engine.pttl(key) for key in (dst, other, plain, absent)] == [3000, 3000, 3000, -2]
    assert engine.copy_ttl(src) == 0
    clock.advance(3.0)
    assert not engine.exists(dst) and not engine.exists(other) and not engine.exists(plain)


def test_copy_ttl_reads_what_its_batch_wrote(engine: Engine) -> None:
    src, dst = k(engine, "src"), k(engine, "dst")
    engine.set(src, "s", px=2000)
    engine.set(dst, "d")
    batch = engine.batch()
    batch.pexpire(src, 5000)
    batch.copy_ttl(src, dst)
    batch.persist(src)
    batch.copy_ttl(src, dst)  # no TTL any more: nothing changes
    assert batch.execute().results == [True, 1, True, 0]
    assert engine.pttl(dst) == 5000 and engine.pttl(src) == -1


# -- strings ---------------------------------------------------------------------------------
def test_get_set_mget(engine: Engine) -> None:
    a, b, h = k(engine, "a"), k(engine, "b"), k(engine, "h")
    assert engine.get(a) is None
    assert engine.set(a, "1")
    engine.hset(h, {"f": "v"})
    assert engine.get(a) == "1"
    assert engine.mget([a, b, h, a]) == ["1", None, None, "1"]
    assert engine.mget([]) == []


def test_set_replaces_any_type(engine: Engine) -> None:
    key = k(engine, "x")
    engine.hset(key, {"f": "v"})
    assert engine.set(key, "now a string")
    assert engine.get(key) == "now a string"
    engine.delete(key)
    assert engine.hset(key, {"g": "w"}) == 1
    assert engine.hgetall(key) == {"g": "w"}  # no leftover field of the old hash


def test_set_nx_xx(engine: Engine) -> None:
    key = k(engine, "x")
    assert not engine.set(key, "1", xx=True)
    assert engine.get(key) is None
    assert engine.set(key, "1", nx=True)
    assert not engine.set(key, "2", nx=True)
    assert engine.get(key) == "1"
    assert engine.set(key, "3", xx=True)
    assert engine.get(key) == "3"
    assert not engine.set(key, "4", nx=True, xx=True)
    assert engine.get(key) == "3"


def test_set_nx_treats_expired_key_as_absent(engine: Engine, clock: ManualClock) -> None:
    key = k(engine, "x")
    engine.set(key, "old", px=10)
    clock.advance(0.01)
    assert not engine.set(key, "new", xx=True)
    assert engine.set(key, "new", nx=True)
    assert engine.get(key) == "new"
    assert engine.pttl(key) == -1


def test_set_ttl_rules(engine: Engine, clock: ManualClock) -> None:
    key = k(engine, "x")
    engine.set(key, "1", px=1000)
    assert engine.pttl(key) == 1000
    engine.set(key, "2")  # a plain set clears the TTL
    assert engine.pttl(key) == -1
    engine.set(key, "3", px=500)
    clock.advance(0.1)
    engine.set(key, "4", keepttl=True)
    assert engine.pttl(key) == 400
    assert engine.get(key) == "4"
    engine.set(key, "5", px=2000, keepttl=True)  # an explicit px wins
    assert engine.pttl(key) == 2000
    absent = k(engine, "absent")
    engine.set(absent, "v", keepttl=True)
    assert engine.pttl(absent) == -1
    assert engine.set(key, "6", xx=True, keepttl=True)
    assert engine.pttl(key) == 2000


def test_incr_integers_and_floats(engine: Engine) -> None:
    key = k(engine, "n")
    assert engine.incr(key) == 1
    assert engine.incr(key, 41) == 42
    result = engine.incr(key, -50)
    assert result == -8 and isinstance(result, int)
    assert engine.get(key) == "-8"
    result = engine.incr(key, 0.5)
    assert result == -7.5 and isinstance(result, float)
    assert engine.get(key) == "-7.5"
    engine.set(key, "2.5")
    assert engine.incr(key, 2) == 4.5
    assert engine.get(key) == "4.5"
    engine.set(key, "1e2")
    result = engine.incr(key)
    assert result == 101.0 and isinstance(result, float)
    assert engine.get(key) == "101.0"
    engine.set(key, "0.1")
    assert engine.incr(key, 0.2) == 0.1 + 0.2
    assert engine.get(key) == repr(0.1 + 0.2)


@pytest.mark.parametrize(
    "stored", ["abc", "", " 5", "5 ", "0x10", "+1", "01", "1.", ".5", "NaN", "1e999", "[1]"]
)
def test_incr_refuses_non_numbers_and_changes_nothing(engine: Engine, stored: str) -> None:
    key = k(engine, "n")
    engine.set(key, stored, px=10_000)
    with pytest.raises(NotANumber):
        engine.incr(key)
    assert engine.get(key) == stored
    assert engine.pttl(key) == 10_000


def test_incr_64_bit_bounds(engine: Engine) -> None:
    key = k(engine, "n")
    engine.set(key, str(2**63 - 2))
    assert engine.incr(key) == 2**63 - 1
    with pytest.raises(NotANumber):
        engine.incr(key)
    assert engine.get(key) == str(2**63 - 1)
    engine.set(key, str(2**63))
    with pytest.raises(NotANumber):
        engine.incr(key)
    engine.set(key, str(-(2**63)))
    with pytest.raises(NotANumber):
        engine.incr(key, -1)


def test_incr_around_18_digits(engine: Engine) -> None:
    # PostgreSQL adds integers of up to 18 digits in place, longer ones on its general path.
    key = k(engine, "n")
    engine.set(key, "9" * 18)
    assert engine.incr(key, 10**18 - 1) == 2 * (10**18 - 1)
    assert engine.get(key) == str(2 * (10**18 - 1))
    assert engine.incr(key, 10**18) == 3 * 10**18 - 2
    assert engine.incr(key, -(3 * 10**18 - 2)) == 0
    engine.set(key, "-0")
    assert engine.incr(key, -(10**17)) == -(10**17)
    assert engine.get(key) == str(-(10**17))


def test_incr_keeps_ttl_and_refuses_other_types(engine: Engine) -> None:
    key, h = k(engine, "n"), k(engine, "h")
    engine.set(key, "1", px=3000)
    engine.incr(key)
    assert engine.pttl(key) == 3000
    engine.hset(h, {"f": "v"})
    with pytest.raises(WrongType):
        engine.incr(h)
    with pytest.raises(InvalidValue, match="finite"):
        engine.incr(key, math.inf)
    with pytest.raises(InvalidValue, match="finite int or float"):
        engine.incr(key, True)


def test_values_round_trip_exactly(engine: Engine) -> None:
    samples = ["", "\n", "a\nb\r\n", "naïve ☃ 日本語 🧠", "\x00inside", '{"json": [1, "2"]}', "123", " 0 "]
    samples.append("x" * 100_000)
    h, s, lst, z = k(engine, "h"), k(engine, "s"), k(engine, "l"), k(engine, "z")
    for i, value in enumerate(samples):
        key = k(engine, f"v{i}")
        engine.set(key, value)
        assert engine.get(key) == value
        engine.hset(h, {value: value})
        engine.sadd(s, value)
        engine.rpush(lst, value)
        engine.zadd(z, {value: float(i)})
    assert engine.hgetall(h) == {v: v for v in samples}
    assert engine.smembers(s) == set(samples)
    assert engine.lrange(lst, 0, -1) == samples
    assert [m for m, _ in engine.zrange(z, 0, -1)] == samples
    # A big value read through a write batch (the SQLite row cache keeps only short values).
    key = k(engine, "big")
    engine.set(key, "y" * 5000)
    with engine.batch() as batch:
        batch.require_equal(key, "y" * 5000)
        batch.get(key)
        batch.set(k(engine, "other"), "z")
    assert batch.result is not None and batch.result.applied and batch.result[1] == "y" * 5000


def test_long_values_survive_ttl_changes(engine: Engine, clock: ManualClock) -> None:
    a, b = k(engine, "long-a"), k(engine, "long-b")
    long_a, long_b = "a" * 3000 + "\n", "ü" * 2000
    engine.set(a, long_a)
    engine.set(b, long_b, px=5000)
    with engine.batch() as batch:
        batch.pexpire(a, 1000)
        batch.copy_ttl(a, b)
        batch.get(a)
    assert batch.result is not None and batch.result[2] == long_a
    assert engine.pttl(b) == 1000
    assert engine.persist(a)
    assert engine.set(a, "x" * 4000, keepttl=True)
    assert engine.mget([a, b]) == ["x" * 4000, long_b]
    clock.advance(1.0)
    assert engine.mget([a, b]) == ["x" * 4000, None]


# -- hashes ----------------------------------------------------------------------------------
def test_hash_commands(engine: Engine) -> None:
    key = k(engine, "h")
    assert engine.hset(key, {"a": "1", "b": "2"}) == 2
    assert engine.hset(key, {"b": "3", "c": "4"}) == 1
    assert engine.hset(key, {}) == 0
    assert engine.hget(key, "b") == "3"
    assert engine.hget(key, "zz") is None
    assert engine.hmget(key, ["a", "zz", "c"]) == ["1", None, "4"]
    assert engine.hgetall(key) == {"a": "1", "b": "3", "c": "4"}
    assert sorted(engine.hkeys(key)) == ["a", "b", "c"]
    assert engine.hlen(key) == 3
    assert engine.hdel(key, "a", "zz", "a") == 1
    assert engine.hlen(key) == 2
    absent = k(engine, "absent")
    assert engine.hgetall(absent) == {} and engine.hkeys(absent) == [] and engine.hlen(absent) == 0
    assert engine.hmget(absent, ["x"]) == [None]
    assert engine.hdel(absent, "x") == 0


def test_hincr(engine: Engine) -> None:
    key = k(engine, "h")
    assert engine.hincr(key, "n") == 1
    assert engine.hincr(key, "n", 2.5) == 3.5
    assert engine.hget(key, "n") == "3.5"
    engine.hset(key, {"s": "text"})
    with pytest.raises(NotANumber):
        engine.hincr(key, "s")
    assert engine.hget(key, "s") == "text"
    engine.hset(key, {"big": str(2**63 - 1)})
    with pytest.raises(NotANumber):
        engine.hincr(key, "big")
    assert engine.hlen(key) == 3


# -- sets ------------------------------------------------------------------------------------
def test_set_commands(engine: Engine) -> None:
    key = k(engine, "s")
    assert engine.sadd(key, "a", "b", "a") == 2
    assert engine.sadd(key, "b", "c") == 1
    assert engine.sadd(key) == 0
    assert engine.smembers(key) == {"a", "b", "c"}
    assert engine.sismember(key, "a") and not engine.sismember(key, "z")
    assert engine.scard(key) == 3
    assert engine.srem(key, "a", "z", "a") == 1
    assert engine.scard(key) == 2
    absent = k(engine, "absent")
    assert engine.smembers(absent) == set() and engine.scard(absent) == 0
    assert not engine.sismember(absent, "a") and engine.srem(absent, "a") == 0


# -- lists -----------------------------------------------------------------------------------
def test_push_order_and_lengths(engine: Engine) -> None:
    key = k(engine, "l")
    assert engine.rpush(key, "a", "b") == 2
    assert engine.lpush(key, "x", "y") == 4
    assert engine.lrange(key, 0, -1) == ["y", "x", "a", "b"]
    assert engine.llen(key) == 4
    assert engine.llen(k(engine, "absent")) == 0


@pytest.mark.parametrize(
    ("start", "stop"),
    [
        (0, -1),
        (0, 0),
        (1, 2),
        (-2, -1),
        (-100, 100),
        (3, 1),
        (5, 10),
        (-1, -2),
        (0, -6),
        (-6, 0),
        (2, -3),
        (4, 4),
        (-5, -5),
    ],
)
def test_lrange_matches_python_slicing_rules(engine: Engine, start: int, stop: int) -> None:
    key = k(engine, "l")
    items = ["a", "b", "c", "d", "e"]
    engine.rpush(key, *items)
    n = len(items)
    lo = max(start + n if start < 0 else start, 0)
    hi = min(stop + n if stop < 0 else stop, n - 1)
    expected = items[lo : hi + 1] if lo <= hi else []
    assert engine.lrange(key, start, stop) == expected


def test_lindex(engine: Engine) -> None:
    key = k(engine, "l")
    engine.rpush(key, "a", "b", "c")
    engine.lpush(key, "z")
    expected = [None, "z", "a", "b", "c", "z", "a", "b", "c", None]
    assert [engine.lindex(key, i) for i in range(-5, 5)] == expected
    assert engine.lindex(k(engine, "absent"), 0) is None


@pytest.mark.parametrize(
    ("start", "stop", "expected"),
    [
        (1, -2, ["b", "c", "d"]),
        (0, 1, ["a", "b"]),
        (-2, -1, ["d", "e"]),
        (0, 100, ["a", "b", "c", "d", "e"]),
        (-100, 0, ["a"]),
        (4, 4, ["e"]),
    ],
)
def test_ltrim(engine: Engine, start: int, stop: int, expected: list[str]) -> None:
    key = k(engine, "l")
    engine.rpush(key, "a", "b", "c", "d", "e")
    engine.ltrim(key, start, stop)
    assert engine.lrange(key, 0, -1) == expected
    assert engine.llen(key) == len(expected)
    engine.rpush(key, "f")
    engine.lpush(key, "0")
    assert engine.lrange(key, 0, -1) == ["0", *expected, "f"]


@pytest.mark.parametrize(("start", "stop"), [(3, 1), (5, 9), (-1, -2), (0, -6)])
def test_ltrim_to_nothing_removes_the_list(engine: Engine, start: int, stop: int) -> None:
    key = k(engine, "l")
    engine.rpush(key, "a", "b", "c", "d", "e")
    engine.ltrim(key, start, stop)
    assert not engine.exists(key)
    assert engine.llen(key) == 0


def test_pops(engine: Engine) -> None:
    key = k(engine, "l")
    engine.rpush(key, "a", "b", "c")
    assert engine.lpop(key) == "a"
    assert engine.rpop(key) == "c"
    assert engine.lrange(key, 0, -1) == ["b"]
    assert engine.lpop(k(engine, "absent")) is None and engine.rpop(k(engine, "absent")) is None


def test_long_list_tail_reads(engine: Engine) -> None:
    key = k(engine, "l")
    values = [str(i) for i in range(3000)]
    for start in range(0, 3000, 500):
        engine.rpush(key, *values[start : start + 500])
    assert engine.lrange(key, -20, -1) == values[-20:]
    assert engine.lindex(key, -1) == "2999"
    engine.ltrim(key, -100, -1)
    assert engine.lrange(key, 0, 2) == ["2900", "2901", "2902"]
    assert engine.llen(key) == 100


# -- sorted sets -----------------------------------------------------------------------------
def test_zset_commands(engine: Engine) -> None:
    key = k(engine, "z")
    assert engine.zadd(key, {"a": 3, "b": 1, "c": 2}) == 3
    assert engine.zadd(key, {"a": 0.5, "d": 4}) == 1
    assert engine.zadd(key, {}) == 0
    assert engine.zscore(key, "a") == 0.5 and engine.zscore(key, "zz") is None
    assert engine.zcard(key) == 4
    assert engine.zrange(key, 0, -1) == [("a", 0.5), ("b", 1.0), ("c", 2.0), ("d", 4.0)]
    assert engine.zrem(key, "a", "zz", "a") == 1
    assert engine.zcard(key) == 3
    absent = k(engine, "absent")
    assert engine.zrange(absent, 0, -1) == [] and engine.zcard(absent) == 0
    assert engine.zscore(absent, "a") is None and engine.zrem(absent, "a") == 0
    assert engine.zrangebyscore(absent, -INF, INF) == []


def test_zset_ties_order_by_member_and_desc_reverses(engine: Engine) -> None:
    key = k(engine, "z")
    engine.zadd(key, {"b": 1, "a": 1, "c": 1, "z": 0, "é": 1, "B": 1})
    ascending = [("z", 0.0), ("B", 1.0), ("a", 1.0), ("b", 1.0), ("c", 1.0), ("é", 1.0)]
    assert engine.zrange(key, 0, -1) == ascending
    assert engine.zrange(key, 0, -1, desc=True) == ascending[::-1]
    assert engine.zrange(key, 0, 1, desc=True) == [("é", 1.0), ("c", 1.0)]
    assert engine.zrange(key, -2, -1, desc=True) == [("B", 1.0), ("z", 0.0)]
    assert engine.zrange(key, -1, -1) == [("é", 1.0)]
    assert engine.zrange(key, 4, 100) == ascending[4:]
    assert engine.zrange(key, 3, 2) == []
    assert engine.zrange(key, -100, 0) == ascending[:1]


def test_zrange_large_negative_window(engine: Engine) -> None:
    key = k(engine, "z")
    engine.zadd(key, {f"m{i:04d}": float(i) for i in range(1000)})
    assert engine.zrange(key, -3, -1) == [("m0997", 997.0), ("m0998", 998.0), ("m0999", 999.0)]
    assert engine.zrange(key, -3, -1, desc=True) == [("m0002", 2.0), ("m0001", 1.0), ("m0000", 0.0)]
    assert engine.zrange(key, 990, 991, desc=True) == [("m0009", 9.0), ("m0008", 8.0)]


def test_zrangebyscore(engine: Engine) -> None:
    key = k(engine, "z")
    engine.zadd(key, {"a": 1, "b": 2, "c": 2, "d": 3, "lo": -INF, "hi": INF})
    assert engine.zrangebyscore(key, 2, 3) == [("b", 2.0), ("c", 2.0), ("d", 3.0)]
    assert engine.zrangebyscore(key, -INF, 1) == [("lo", -INF), ("a", 1.0)]
    assert engine.zrangebyscore(key, 3, INF) == [("d", 3.0), ("hi", INF)]
    assert [m for m, _ in engine.zrangebyscore(key, -INF, INF)] == ["lo", "a", "b", "c", "d", "hi"]
    assert engine.zrangebyscore(key, 2, 2, desc=True) == [("c", 2.0), ("b", 2.0)]
    assert engine.zrangebyscore(key, 1, 3, offset=1, count=2) == [("b", 2.0), ("c", 2.0)]
    assert engine.zrangebyscore(key, 1, 3, desc=True, offset=1, count=2) == [("c", 2.0), ("b", 2.0)]
    assert engine.zrangebyscore(key, 1, 3, offset=3) == [("d", 3.0)]
    assert engine.zrangebyscore(key, 1, 3, offset=10) == []
    assert engine.zrangebyscore(key, 1, 3, offset=0, count=0) == []
    assert engine.zrangebyscore(key, 1, 3, offset=2, count=-1) == [("c", 2.0), ("d", 3.0)]
    # A negative offset counts from the end of the matching range, like a Python slice.
    assert engine.zrangebyscore(key, 1, 3, offset=-2) == [("c", 2.0), ("d", 3.0)]
    assert engine.zrangebyscore(key, 1, 3, offset=-3, count=1) == [("b", 2.0)]
    assert engine.zrangebyscore(key, 1, 3, desc=True, offset=-1) == [("a", 1.0)]
    assert engine.zrangebyscore(key, 3, 1) == []
    assert engine.zrangebyscore(key, 1.5, 2.5) == [("b", 2.0), ("c", 2.0)]


# -- types -----------------------------------------------------------------------------------
WRONG_TYPE_CALLS: dict[str, list[Callable[[Engine, str], object]]] = {
    "string": [
        lambda e, key: e.get(key),
        lambda e, key: e.incr(key),
    ],
    "hash": [
        lambda e, key: e.hset(key, {"f": "v"}),
        lambda e, key: e.hget(key, "f"),
        lambda e, key: e.hmget(key, ["f"]),
        lambda e, key: e.hgetall(key),
        lambda e, key: e.hkeys(key),
        lambda e, key: e.hlen(key),
        lambda e, key: e.hdel(key, "f"),
        lambda e, key: e.hincr(key, "f"),
    ],
    "set": [
        lambda e, key: e.sadd(key, "m"),
        lambda e, key: e.srem(key, "m"),
        lambda e, key: e.smembers(key),
        lambda e, key: e.sismember(key, "m"),
        lambda e, key: e.scard(key),
    ],
    "list": [
        lambda e, key: e.rpush(key, "x"),
        lambda e, key: e.lpush(key, "x"),
        lambda e, key: e.lrange(key, 0, -1),
        lambda e, key: e.llen(key),
        lambda e, key: e.lindex(key, 0),
        lambda e, key: e.ltrim(key, 0, 1),
        lambda e, key: e.lpop(key),
        lambda e, key: e.rpop(key),
    ],
    "zset": [
        lambda e, key: e.zadd(key, {"m": 1}),
        lambda e, key: e.zrem(key, "m"),
        lambda e, key: e.zscore(key, "m"),
        lambda e, key: e.zcard(key),
        lambda e, key: e.zrange(key, 0, -1),
        lambda e, key: e.zrangebyscore(key, -INF, INF),
    ],
}

MAKERS: dict[str, Callable[[Engine, str], object]] = {
    "string": lambda e, key: e.set(key, "v"),
    "hash": lambda e, key: e.hset(key, {"other": "v"}),
    "set": lambda e, key: e.sadd(key, "other"),
    "list": lambda e, key: e.rpush(key, "other"),
    "zset": lambda e, key: e.zadd(key, {"other": 5}),
}


@pytest.mark.parametrize("holder", list(MAKERS))
def test_wrong_type_everywhere(engine: Engine, holder: str) -> None:
    key = k(engine, "x")
    MAKERS[holder](engine, key)
    for family, calls in WRONG_TYPE_CALLS.items():
        if family == holder:
            continue
        for call in calls:
            with pytest.raises(WrongType):
                call(engine, key)
    assert engine.exists(key)
    assert engine.mget([key]) == (["v"] if holder == "string" else [None])


@pytest.mark.parametrize(
    ("make", "empty"),
    [
        (lambda e, key: e.hset(key, {"f": "v"}), lambda e, key: e.hdel(key, "f")),
        (lambda e, key: e.sadd(key, "m"), lambda e, key: e.srem(key, "m")),
        (lambda e, key: e.rpush(key, "x"), lambda e, key: e.lpop(key)),
        (lambda e, key: e.rpush(key, "x"), lambda e, key: e.rpop(key)),
        (lambda e, key: e.rpush(key, "x", "y"), lambda e, key: e.ltrim(key, 5, 10)),
        (lambda e, key: e.rpush(key, "x", "y"), lambda e, key: e.ltrim(key, 1, 0)),
        (lambda e, key: e.zadd(key, {"m": 1}), lambda e, key: e.zrem(key, "m")),
    ],
)
def test_empty_containers_vanish(
    engine: Engine, make: Callable[[Engine, str], object], empty: Callable[[Engine, str], object]
) -> None:
    key = k(engine, "c")
    make(engine, key)
    engine.pexpire(key, 10_000)
    empty(engine, key)
    assert not engine.exists(key)
    assert engine.pttl(key) == -2
    assert list(engine.scan(k(engine, "c"))) == []
    assert engine.set(key, "fresh")  # the name is free for any type
    assert engine.pttl(key) == -1


def test_container_created_and_removed_in_one_batch_leaves_no_elements(engine: Engine) -> None:
    lst, h, z, s = k(engine, "l"), k(engine, "h"), k(engine, "z"), k(engine, "s")
    with engine.batch() as batch:
        batch.rpush(lst, "a", "b")
        batch.delete(lst)
        batch.hset(h, {"f": "v"})
        batch.set(h, "now a string")
        batch.zadd(z, {"m": 1})
        batch.pexpire(z, 0)
        batch.sadd(s, "m")
        batch.rpush(lst + "2", "a")
        batch.ltrim(lst + "2", 1, 0)
    assert engine.get(h) == "now a string"
    engine.delete(h)
    assert engine.rpush(lst, "c") == 1
    assert engine.rpush(lst + "2", "d") == 1
    assert engine.hset(h, {"g": "w"}) == 1
    assert engine.zadd(z, {"n": 2}) == 1
    assert engine.lrange(lst, 0, -1) == ["c"]
    assert engine.lrange(lst + "2", 0, -1) == ["d"]
    assert engine.hgetall(h) == {"g": "w"}
    assert engine.zrange(z, 0, -1) == [("n", 2.0)]


def test_pushing_nothing_creates_nothing(engine: Engine) -> None:
    key = k(engine, "l")
    assert engine.sadd(key) == 0
    assert engine.hset(key, {}) == 0
    assert engine.zadd(key, {}) == 0
    assert not engine.exists(key)


# -- expiry ----------------------------------------------------------------------------------
def test_expiry_boundary_is_exact(engine: Engine, clock: ManualClock) -> None:
    key = k(engine, "x")
    engine.set(key, "v", px=1000)
    clock.advance(0.999)
    assert engine.get(key) == "v"
    assert engine.pttl(key) == 1
    clock.advance(0.001)
    assert engine.get(key) is None
    assert engine.pttl(key) == -2


EXPIRED_ABSENT: list[tuple[str, Callable[[Engine, str], object], object]] = [
    ("exists", lambda e, key: e.exists(key), False),
    ("pttl", lambda e, key: e.pttl(key), -2),
    ("get", lambda e, key: e.get(key), None),
    ("mget", lambda e, key: e.mget([key]), [None]),
    ("hget", lambda e, key: e.hget(key, "f"), None),
    ("hgetall", lambda e, key: e.hgetall(key), {}),
    ("hlen", lambda e, key: e.hlen(key), 0),
    ("smembers", lambda e, key: e.smembers(key), set()),
    ("scard", lambda e, key: e.scard(key), 0),
    ("llen", lambda e, key: e.llen(key), 0),
    ("lrange", lambda e, key: e.lrange(key, 0, -1), []),
    ("zcard", lambda e, key: e.zcard(key), 0),
    ("zrange", lambda e, key: e.zrange(key, 0, -1), []),
    ("delete", lambda e, key: e.delete(key), 0),
    ("pexpire", lambda e, key: e.pexpire(key, 1000), False),
    ("persist", lambda e, key: e.persist(key), False),
    ("set xx", lambda e, key: e.set(key, "v", xx=True), False),
    ("incr", lambda e, key: e.incr(key), 1),
    ("hset", lambda e, key: e.hset(key, {"f": "v"}), 1),
    ("sadd", lambda e, key: e.sadd(key, "m", "other"), 2),
    ("rpush", lambda e, key: e.rpush(key, "x"), 1),
    ("zadd", lambda e, key: e.zadd(key, {"m": 1, "other": 2}), 2),
]


@pytest.mark.parametrize("holder", ["string", "hash", "set", "list", "zset"])
def test_expired_keys_are_absent_for_every_command(engine: Engine, clock: ManualClock, holder: str) -> None:
    """A key that expired behaves as missing, whatever type it held; writes start it afresh."""
    for i in range(len(EXPIRED_ABSENT)):
        key = k(engine, f"e{i}")
        if holder == "string":
            engine.set(key, "5", px=100)
        elif holder == "hash":
            engine.hset(key, {"f": "old", "g": "old"})
        elif holder == "set":
            engine.sadd(key, "other", "x")
        elif holder == "list":
            engine.rpush(key, "old", "older")
        else:
            engine.zadd(key, {"other": 9})
        if holder != "string":
            engine.pexpire(key, 100)
    clock.advance(0.1)
    assert list(engine.scan(k(engine, "e"))) == []
    for i, (name, call, expected) in enumerate(EXPIRED_ABSENT):
        key = k(engine, f"e{i}")
        assert call(engine, key) == expected, name
        if name in ("incr", "hset", "rpush"):
            assert engine.pttl(key) == -1, name  # a fresh key without the old TTL
    assert engine.lrange(k(engine, "e20"), 0, -1) == ["x"]
    assert engine.hgetall(k(engine, "e18")) == {"f": "v"}


def test_expired_key_fails_guards(engine: Engine, clock: ManualClock) -> None:
    key, other = k(engine, "x"), k(engine, "y")
    engine.set(key, "v", px=50)
    clock.advance(0.05)
    set_other = ("set", (other, "1", None, False, False, False))
    assert not engine.execute([("require_exists", (key,)), set_other]).applied
    result = engine.execute([("require_missing", (key,)), ("require_equal", (key, None))])
    assert result.applied and result.results == [True, True]


# -- scan and flush --------------------------------------------------------------------------
def test_scan_by_prefix(engine: Engine) -> None:
    names = ["a", "ab", "abc", "b", "a\U0010ffff", "a\uffff", "aé"]
    for name in names:
        engine.set(f"scan:{name}", "v")
    engine.set("scan;", "v")  # the character after ':' must not leak into a 'scan:' prefix scan
    assert sorted(engine.scan("scan:a")) == sorted(f"scan:{n}" for n in names if n.startswith("a"))
    assert sorted(engine.scan("scan:ab")) == ["scan:ab", "scan:abc"]
    assert sorted(engine.scan("scan:a\U0010ffff")) == ["scan:a\U0010ffff"]
    assert list(engine.scan("scan:zz")) == []
    assert sorted(engine.scan("scan:")) == sorted(f"scan:{n}" for n in names)
    assert set(engine.scan("")) >= {f"scan:{n}" for n in names} | {"scan;"}


def test_scan_of_many_pages_lists_each_live_key_once(engine: Engine, clock: ManualClock) -> None:
    # More keys than a Redis SCAN page (1,000): each page's expiries are read on their own.
    prefix = engine.tag("many") + ":"  # one batch: one cluster slot
    with engine.batch() as batch:
        for n in range(2_500):
            batch.set(f"{prefix}{n:04d}", "v", px=1_000 if n % 3 == 0 else None)
    clock.advance(1.0)  # a third of them expire
    found = list(engine.scan(prefix))
    assert len(found) == len(set(found))
    assert sorted(found) == [f"{prefix}{n:04d}" for n in range(2_500) if n % 3]


def test_flush_removes_everything(engine: Engine) -> None:
    engine.set("f:a", "1")
    engine.hset("f:h", {"f": "v"})
    engine.rpush("f:l", "x")
    engine.flush()
    assert list(engine.scan("f:")) == []
    assert engine.hgetall("f:h") == {} and engine.lrange("f:l", 0, -1) == []
    engine.rpush("f:l", "y")
    assert engine.lrange("f:l", 0, -1) == ["y"]


# -- batches and guards ----------------------------------------------------------------------
def test_batch_results_in_order(engine: Engine) -> None:
    a, h = k(engine, "a"), k(engine, "h")
    batch = engine.batch()
    assert batch.set(a, "1") is None  # placeholders until executed
    batch.incr(a, 2)
    batch.hset(h, {"f": "v"})
    batch.get(a)
    batch.hgetall(h)
    result = batch.execute()
    assert result.applied
    assert result.results == [True, 3, 1, "3", {"f": "v"}]
    assert result[1] == 3
    assert batch.execute() is result  # executes once


def test_empty_batch(engine: Engine) -> None:
    result = engine.execute([])
    assert result.applied and result.results == []
    assert engine.batch().execute().applied


def test_batch_context_manager(engine: Engine) -> None:
    a = k(engine, "a")
    with engine.batch() as batch:
        batch.set(a, "1")
    assert batch.result is not None and batch.result.applied
    assert engine.get(a) == "1"
    failed = engine.batch()

    def abandon() -> None:
        with failed:
            failed.set(a, "2")
            raise RuntimeError("abandon")

    with pytest.raises(RuntimeError):
        abandon()
    assert failed.result is None
    assert engine.get(a) == "1"


def test_guards(engine: Engine) -> None:
    a, b, h = k(engine, "a"), k(engine, "b"), k(engine, "h")
    engine.set(a, "1")
    engine.hset(h, {"f": "v"})
    ok = engine.execute([("require_exists", (a,)), ("require_missing", (b,)), ("require_equal", (a, "1"))])
    assert ok.applied and ok.results == [True, True, True]
    assert engine.require_equal(b, None)
    assert not engine.require_equal(a, None)
    assert not engine.require_equal(a, "2")
    assert not engine.require_equal(h, "v")  # a hash never equals a string
    assert not engine.require_equal(b, "1")
    batch = engine.batch()
    batch.set(a, "x")
    with pytest.raises(ValueError, match="guard"):
        batch.require_exists(a)


@pytest.mark.parametrize("failing", ["require_exists", "require_missing", "require_equal"])
def test_failed_guard_applies_nothing(engine: Engine, failing: str) -> None:
    a, b, ch = k(engine, "a"), k(engine, "b"), "ch:guard"
    engine.set(a, "1")
    got: list[str] = []
    engine.subscribe(ch, got.append)
    guard_args = {"require_exists": (b,), "require_missing": (a,), "require_equal": (a, "2")}[failing]
    batch = engine.batch()
    batch.require_exists(a)
    getattr(batch, failing)(*guard_args)
    batch.set(a, "changed")
    batch.rpush(b, "x")
    batch.publish(ch, "must not arrive")
    result = batch.execute()
    assert not result.applied
    assert result.results == [True, False]
    assert engine.get(a) == "1" and not engine.exists(b)
    settle(engine)
    assert got == []


@pytest.mark.parametrize("error", [WrongType, NotANumber])
def test_batch_failing_midway_leaves_nothing(engine: Engine, error: type[Exception]) -> None:
    a, h, lst, z, s, n, ch = (k(engine, x) for x in ("a", "h", "l", "z", "s", "n", "ch"))
    engine.set(a, "orig", px=5000)
    engine.hset(h, {"f": "1"})
    engine.rpush(lst, "keep")
    engine.set(n, "not a number")
    got: list[str] = []
    engine.subscribe(ch, got.append)
    batch = engine.batch()
    batch.set(a, "new")
    batch.hset(h, {"f": "2", "g": "3"})
    batch.hdel(h, "f")
    batch.rpush(lst, "x")
    batch.lpop(lst)
    batch.zadd(z, {"m": 1})
    batch.sadd(s, "m")
    batch.delete(a)
    batch.publish(ch, "must not arrive")
    if error is WrongType:
        batch.lpush(h, "boom")
    else:
        batch.incr(n)
    with pytest.raises(error):
        batch.execute()
    assert engine.get(a) == "orig" and engine.pttl(a) == 5000
    assert engine.hgetall(h) == {"f": "1"}
    assert engine.lrange(lst, 0, -1) == ["keep"]
    assert not engine.exists(z) and not engine.exists(s)
    assert engine.get(n) == "not a number"
    # The engine stays usable and consistent after the rollback.
    engine.hset(h, {"g": "9"})
    assert engine.hgetall(h) == {"f": "1", "g": "9"}
    assert engine.rpush(lst, "y") == 2
    settle(engine)
    assert got == []


def test_closed_engine_refuses_commands(engine_kind: str, engine_url_for: str, clock: ManualClock) -> None:
    other = open_engine(engine_url_for, clock=clock)
    other.close()
    other.close()  # idempotent
    with pytest.raises(EngineClosed):
        other.get("x")
    with pytest.raises(EngineClosed):
        other.execute([("set", ("x", "v", None, False, False, False))])


# -- notifications ---------------------------------------------------------------------------
def test_publish_subscribe_in_order(engine: Engine) -> None:
    got: list[str] = []
    other: list[str] = []
    sub = engine.subscribe("ch:a", got.append)
    engine.subscribe("ch:b", other.append)
    messages = [f"m{i}" for i in range(50)] + ["", "ünï\ncode"]
    for message in messages:
        engine.publish("ch:a", message)
    engine.publish("ch:b", "b")
    assert wait_for(lambda: len(got) == len(messages) and other == ["b"])
    assert got == messages
    sub.close()
    assert sub.closed
    engine.publish("ch:a", "after close")
    settle(engine)
    assert got == messages


def test_subscriber_sees_only_later_messages(engine: Engine) -> None:
    early: list[str] = []
    engine.subscribe("ch", early.append)
    engine.publish("ch", "before")
    late: list[str] = []
    engine.subscribe("ch", late.append)
    engine.publish("ch", "after")
    assert wait_for(lambda: early == ["before", "after"] and late == ["after"])
    settle(engine)
    assert late == ["after"]


def test_message_arrives_after_commit(engine: Engine) -> None:
    key = k(engine, "x")
    seen: list[str | None] = []
    engine.subscribe("ch:commit", lambda message: seen.append(engine.get(key)))
    with engine.batch() as batch:
        batch.publish("ch:commit", "go")
        batch.set(key, "written")
    assert wait_for(lambda: len(seen) == 1)
    assert seen == ["written"]


def test_callback_exception_never_reaches_publisher(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    got: list[str] = []

    def boom(message: str) -> None:
        raise RuntimeError(f"callback failed on {message}")

    engine.subscribe("ch:err", boom)
    engine.subscribe("ch:err", got.append)
    engine.publish("ch:err", "one")
    engine.publish("ch:err", "two")
    assert wait_for(lambda: got == ["one", "two"])
    assert any("ch:err" in r.getMessage() for r in caplog.records)


def test_second_handle_sees_writes_and_messages(
    engine_kind: str, engine: Engine, engine_url_for: str
) -> None:
    if engine_kind == "memory":
        pytest.skip("memory:// is private to one engine object")
    other = open_engine(engine_url_for, clock=engine.clock)
    try:
        key = k(engine, "shared")
        engine.set(key, "from first")
        assert other.get(key) == "from first"
        other.rpush(key + "l", "a", "b")
        assert engine.lrange(key + "l", 0, -1) == ["a", "b"]
        got: list[str] = []
        engine.subscribe("ch:x", got.append)
        other.publish("ch:x", "hello")
        with other.batch() as batch:
            batch.set(key, "from second")
            batch.publish("ch:x", "again")
        assert wait_for(lambda: got == ["hello", "again"])
        assert engine.get(key) == "from second"
        assert engine.incr(key + "n") == 1
        assert other.incr(key + "n") == 2
        assert engine.incr(key + "n") == 3
    finally:
        other.close()


# -- concurrency -----------------------------------------------------------------------------
def test_concurrent_increments_are_atomic(engine: Engine) -> None:
    key = k(engine, "counter")
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(250):
                engine.incr(key)
        except BaseException as exc:  # collected and re-raised by the test
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert engine.get(key) == "4000"


def test_bad_command_input_is_refused_alike_before_any_engine_sees_it(engine: Engine) -> None:
    from memstack.foundation.errors import InvalidInput

    key = k(engine, "z")
    with pytest.raises(InvalidValue, match="positive number of milliseconds"):
        engine.set(key, "v", px=0)
    with pytest.raises(InvalidValue, match="NaN"):
        engine.zadd(key, {"m": float("nan")})
    batch = engine.batch()
    batch.set(key, "v")
    with pytest.raises(InvalidInput, match="guards must come first"):
        batch.require_missing(key)
    assert not engine.exists(key)


def test_an_overflowing_increment_undoes_the_whole_batch(engine: Engine) -> None:
    # Found by the model test on Redis: the overflow was detected, but an earlier delete stayed.
    a, big, h = k(engine, "a"), k(engine, "big"), k(engine, "h")
    engine.set(a, "keep")
    engine.set(big, "9223372036854775807")
    engine.hset(h, {"f": "9223372036854775800"})
    batch = engine.batch()
    batch.delete(a)
    batch.incr(big, 3)
    with pytest.raises(NotANumber, match="64-bit"):
        batch.execute()
    batch = engine.batch()
    batch.delete(a)
    batch.hincr(h, "f", 100)
    with pytest.raises(NotANumber, match="64-bit"):
        batch.execute()
    assert engine.get(a) == "keep"
    assert engine.get(big) == "9223372036854775807"
    assert engine.incr(big, -7) == 9223372036854775800  # large but fitting sums still work
