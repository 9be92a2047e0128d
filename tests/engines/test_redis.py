"""What only the Redis engines have: one script call per batch, the clock bias, cluster slots,
outages and recovery, and the pure codec between Python and the script.

Everything runs against real ``redis-server`` processes (the shared fixtures, or a dedicated
server started here when a test stops it).
"""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis as redis_py
from redis.crc import key_slot

from _redis_cluster import own_cluster
from _redis_relay import CountingProxy
from _redis_servers import _start, free_port
from memstack import ManualClock
from memstack.engines import Engine, WrongType, open_engine
from memstack.engines.redis import MANUAL_CLOCK_BIAS_MS, RedisEngine, codec
from memstack.foundation.clock import SystemClock
from memstack.foundation.errors import (
    CrossSlot,
    EngineClosed,
    EngineError,
    EngineUnavailable,
    InvalidUrl,
    NotANumber,
)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``predicate`` (for asynchronous pub/sub delivery and server restarts, never TTLs)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


@pytest.fixture
def urls(redis_urls: tuple[str, str] | None) -> tuple[str, str]:
    if redis_urls is None:
        pytest.skip("no redis-server on this machine")
    return redis_urls


@pytest.fixture(params=["redis", "redis-cluster"])
def rengine(request: pytest.FixtureRequest, urls: tuple[str, str], clock: ManualClock) -> Iterator[Engine]:
    engine = open_engine(urls[0] if request.param == "redis" else urls[1], clock=clock)
    engine.flush()
    yield engine
    engine.close()


def raw_client(engine: Engine) -> redis_py.Redis:
    """A plain redis-py client on the node that holds ``engine``'s key ``{t}`` (tests look behind
    the engine's back)."""
    assert isinstance(engine, RedisEngine)
    if not engine.clustered:
        return redis_py.Redis.from_url(engine.url, decode_responses=True)
    cluster = redis_py.RedisCluster.from_url(engine.url.replace("+cluster", ""), decode_responses=True)
    node = cluster.get_node_from_key("{t}")
    client = redis_py.Redis(host=node.host, port=node.port, decode_responses=True)
    cluster.close()
    return client


# -- the pure codec ----------------------------------------------------------------------------
def test_encode_lists_each_key_once_and_numbers_as_text() -> None:
    ops = [
        ("set", ("a", "1", None, False, False, False)),
        ("delete", ("b", "a", "c")),
        ("copy_ttl", ("e", "d")),
        ("incr", ("n", 2**62)),
        ("hincr", ("h", "f", 0.1)),
        ("zadd", ("z", {"m": math.inf})),
        ("publish", ("chan", "msg")),
        ("mget", ()),
    ]
    keys, argv, plain = codec.encode(ops, ("7", "0", "1"))
    assert not plain  # incr replies are converted to numbers
    assert keys == ["a", "b", "c", "e", "d", "n", "h", "z"]
    assert "chan" not in keys
    assert argv == [
        "7", "0", "1",
        "set", "2", "a", "1",  # a plain set: two arguments
        "delete", "3", "b", "a", "c",
        "copy_ttl", "2", "e", "d",
        "incr", "2", "n", "4611686018427387904",  # exact beyond 2**53: decimal text
        "hincr", "3", "h", "f", "0.1",
        "zadd", "3", "z", "inf", "m",  # ZADD's order: score, member
        "publish", "2", "chan", "msg",
        "mget", "0",
    ]  # fmt: skip


def test_encode_spells_out_options_and_absent_values() -> None:
    ops = [
        ("set", ("a", "v", 1500, True, False, False)),
        ("set", ("a", "v", None, False, True, True)),
        ("require_equal", ("a", None)),
        ("require_equal", ("a", "v")),
        ("hset", ("h", {"f": "1", "g": "2"})),
        ("zrange", ("z", 0, -1, True)),
        ("zrangebyscore", ("z", 1.0, 2.5, False, -2, None)),
        ("zrangebyscore", ("z", 1.0, 2.5, True, 3, 4)),
        ("pexpire", ("a", 10)),
    ]
    _, argv, plain = codec.encode(ops, ())
    assert not plain
    assert argv == [
        "set", "4", "a", "v", "n", "1500",
        "set", "4", "a", "v", "xk", "",
        "require_equal", "1", "a",  # no value: the key must be missing
        "require_equal", "2", "a", "v",
        "hset", "5", "h", "f", "1", "g", "2",
        "zrange", "4", "z", "0", "-1", "1",
        "zrangebyscore", "6", "z", "1.0", "2.5", "", "0", "-1",  # a negative offset slices later
        "zrangebyscore", "6", "z", "1.0", "2.5", "1", "3", "4",
        "pexpire", "2", "a", "10",
    ]  # fmt: skip


def test_plain_batches_skip_result_conversion() -> None:
    ops = [("require_exists", ("m",)), ("set", ("a", "1", None, False, False, False)), ("rpush", ("l", "x"))]
    _, _, plain = codec.encode(ops, ())
    assert plain
    assert codec.decode(ops, "[true,[true,true,3]]", plain).results == [True, True, 3]
    assert codec.decode(ops, "[false,[false]]", plain) == codec.decode(ops, "[false,[false]]")
    _, _, plain = codec.encode([*ops, ("hgetall", ("h",))], ())
    assert not plain


def test_pack_writes_resp_with_utf8_lengths() -> None:
    assert codec.pack(["SET", "k", "é€", "k"]) == (
        b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\n\xc3\xa9\xe2\x82\xac\r\n$1\r\nk\r\n"
    )
    assert codec.pack(["", "x" * 100]) == b"*2\r\n$0\r\n\r\n$100\r\n" + b"x" * 100 + b"\r\n"
    assert codec.pack(["é€"]) == b"*1\r\n$5\r\n\xc3\xa9\xe2\x82\xac\r\n"  # from the memo this time


def test_encode_refuses_nan_scores() -> None:
    with pytest.raises(ValueError, match="NaN"):
        codec.encode([("zadd", ("z", {"m": math.nan}))], ())


def test_decode_converts_to_the_memory_engine_types() -> None:
    ops = [
        ("hgetall", ("h",)),
        ("hgetall", ("none",)),
        ("smembers", ("s",)),
        ("zrange", ("z", 0, -1, False)),
        ("incr", ("n", 1)),
        ("incr", ("f", 1.5)),
        ("zscore", ("z", "m")),
        ("lrange", ("l", 0, -1)),
        ("zrangebyscore", ("z", 0.0, 9.0, False, -1, None)),
    ]
    reply = '[true,[["f","v"],{},["a","b"],["m","1.5"],"42","1e+16","2.5",{},["a","1","b","2"]]]'
    result = codec.decode(ops, reply)
    assert result.applied
    assert result.results == [
        {"f": "v"},
        {},
        {"a", "b"},
        [("m", 1.5)],
        42,
        1e16,
        2.5,
        [],
        [("b", 2.0)],
    ]
    assert isinstance(result.results[5], float)


def test_script_errors_map_to_memstack_errors() -> None:
    wrong = codec.script_error('MSWRONGTYPE ["k","hash","string"]')
    assert isinstance(wrong, WrongType)
    assert "'k' holds a hash, not a string" in str(wrong)
    nan = codec.script_error('MSNAN ["h","f","stored value x is not a JSON number"]')
    assert isinstance(nan, NotANumber)
    assert "'h.f'" in str(nan)
    assert type(codec.script_error("ERR something else")) is EngineError


def test_glob_escape_matches_literally() -> None:
    assert codec.glob_escape("a*b?[c]\\d") == "a\\*b\\?\\[c\\]\\\\d"


# -- on a real server ---------------------------------------------------------------------------
def test_engine_names_and_urls(urls: tuple[str, str], clock: ManualClock) -> None:
    with open_engine(urls[0], clock=clock) as plain, open_engine(urls[1], clock=clock) as cluster:
        assert (plain.name, plain.clustered, plain.tag("s")) == ("redis", False, "s")
        assert (cluster.name, cluster.clustered, cluster.tag("s")) == ("redis-cluster", True, "{s}")
    with pytest.raises(InvalidUrl):
        RedisEngine("memory://")


@pytest.mark.parametrize(
    "value",
    [0.1, 1e16, 1e15, 1e-5, 1e-4, 123456789.123456789, 5e-324, 1.7976931348623157e308, -2.5, 1 / 3, 2.0**60],
)
def test_float_increments_store_python_repr(rengine: Engine, value: float) -> None:
    key = rengine.tag("t") + "n"
    assert rengine.incr(key, value) == value
    assert rengine.get(key) == repr(value)


def test_float_increments_store_python_repr_in_bulk(rengine: Engine) -> None:
    import random

    rnd = random.Random(7)
    values = [rnd.uniform(-1e6, 1e6) for _ in range(150)] + [
        math.ldexp(rnd.random(), rnd.randint(-80, 80)) for _ in range(150)
    ]
    tag = rengine.tag("t")
    with rengine.batch() as batch:
        for i, value in enumerate(values):
            batch.incr(f"{tag}n{i}", value)
    assert rengine.mget([f"{tag}n{i}" for i in range(len(values))]) == [repr(v) for v in values]


def test_integer_increments_are_exact_to_64_bits(rengine: Engine) -> None:
    key = rengine.tag("t") + "n"
    rengine.set(key, str(2**63 - 2))
    assert rengine.incr(key) == 2**63 - 1
    with pytest.raises(NotANumber):
        rengine.incr(key)
    assert rengine.get(key) == str(2**63 - 1)
    rengine.set(key, "-0")
    assert rengine.incr(key, 5) == 5
    rengine.set(key, "0x10")
    with pytest.raises(NotANumber):
        rengine.incr(key)


def test_failed_batch_restores_every_key_and_its_ttl(rengine: Engine, clock: ManualClock) -> None:
    tag = rengine.tag("t")
    rengine.hset(tag + "h", {"f": "1"})
    rengine.pexpire(tag + "h", 5000)
    rengine.set(tag + "s", "not a number")
    rengine.rpush(tag + "l", "a", "b")
    batch = rengine.batch()
    batch.hdel(tag + "h", "f")  # the hash vanishes, TTL and all
    batch.lpop(tag + "l")
    batch.set(tag + "new", "x")
    batch.incr(tag + "s")
    with pytest.raises(NotANumber):
        batch.execute()
    assert rengine.hgetall(tag + "h") == {"f": "1"}
    assert rengine.pttl(tag + "h") == 5000
    assert rengine.lrange(tag + "l", 0, -1) == ["a", "b"]
    assert not rengine.exists(tag + "new")
    clock.advance(5)
    assert not rengine.exists(tag + "h")


def test_logical_expiry_follows_the_manual_clock(rengine: Engine, clock: ManualClock) -> None:
    key = rengine.tag("t") + "k"
    raw = raw_client(rengine)
    rengine.set(key, "v", px=1000)
    physical = raw.pttl(key)
    assert physical > MANUAL_CLOCK_BIAS_MS - 10_000  # Redis itself will not expire it for decades
    clock.advance(0.999)
    assert rengine.get(key) == "v"
    assert rengine.pttl(key) == 1
    clock.advance(0.001)
    assert rengine.get(key) is None
    assert raw.exists(key) == 0  # purged on the access that found it dead
    rengine.set(key, "v", px=1000)
    clock.advance(2)
    assert list(rengine.scan(rengine.tag("t"))) == []
    raw.close()


def test_system_clock_sets_real_expiry(urls: tuple[str, str]) -> None:
    with open_engine(urls[0], clock=SystemClock()) as engine:
        engine.flush()
        before = engine.now_ms()
        engine.set("k", "v", px=60_000)
        after = engine.now_ms()
        raw = raw_client(engine)
        # Redis keeps a key alive at now == at, the seam does not: physical = logical - 1 ms.
        assert before + 60_000 - 1 <= raw.pexpiretime("k") <= after + 60_000 - 1
        assert 0 < engine.pttl("k") <= 60_000
        engine.set("gone", "v", px=1)
        assert engine.pexpire("k", 1)
        raw.close()
    time.sleep(0.01)  # the system clock is the subject here: Redis itself expires both keys
    with open_engine(urls[0], clock=SystemClock()) as engine:
        assert engine.get("gone") is None
        assert not engine.exists("k")
        assert engine.pttl("k") == -2


def test_scan_escapes_glob_characters(rengine: Engine) -> None:
    tag = rengine.tag("t")
    for suffix in ("a*", "a*b", "ab", "a?", "[a]"):
        rengine.set(tag + suffix, "1")
    assert sorted(rengine.scan(tag + "a*")) == sorted([tag + "a*", tag + "a*b"])
    assert list(rengine.scan(tag + "[a")) == [tag + "[a]"]


def test_script_is_reloaded_after_script_flush(rengine: Engine) -> None:
    raw = raw_client(rengine)
    raw.script_flush()
    assert rengine.set(rengine.tag("t") + "k", "v")
    assert rengine.get(rengine.tag("t") + "k") == "v"
    raw.close()


def test_cluster_refuses_cross_slot_batches(urls: tuple[str, str], clock: ManualClock) -> None:
    with open_engine(urls[1], clock=clock) as engine:
        engine.flush()
        batch = engine.batch()
        batch.set("a", "1")
        batch.set("b", "1")
        with pytest.raises(CrossSlot, match=r"'a'.*'b'"):
            batch.execute()
        assert engine.mget([engine.tag("x") + "a", engine.tag("x") + "b"]) == [None, None]
        assert not engine.exists("a")
        with engine.batch() as same_slot:
            same_slot.set(engine.tag("x") + "a", "1")
            same_slot.set(engine.tag("x") + "b", "1")
        assert engine.mget([engine.tag("x") + "a", engine.tag("x") + "b"]) == ["1", "1"]
        engine.publish("only-a-channel", "fine")  # no key: any node


def test_close_is_idempotent(urls: tuple[str, str], clock: ManualClock) -> None:
    engine = open_engine(urls[0], clock=clock)
    engine.subscribe("ch", lambda message: None)
    engine.close()
    engine.close()
    with pytest.raises(EngineClosed):
        engine.get("k")


# -- round trips -------------------------------------------------------------------------------
def test_one_round_trip_per_execute(urls: tuple[str, str], clock: ManualClock) -> None:
    port = int(urls[0].rsplit(":", 1)[1].split("/")[0])
    proxy = CountingProxy(port)
    try:
        with open_engine(f"redis://127.0.0.1:{proxy.port}/0", clock=clock) as engine:
            engine.flush()
            engine.get("warm-up")
            before = proxy.commands
            for i in range(5):
                with engine.batch() as batch:
                    batch.require_missing(f"guard{i}")
                    batch.hset("h", {"f": str(i)})
                    batch.sadd("s", str(i))
                    batch.rpush("l", str(i))
                    batch.ltrim("l", -3, -1)
                    batch.hincr("h", "n")
                    batch.pexpire("h", 10_000)
                    batch.publish("ch", str(i))
            engine.zrange("z", 0, -1)
            assert proxy.commands - before == 6
            assert engine.hget("h", "n") == "5"
    finally:
        proxy.close()


# -- outages -----------------------------------------------------------------------------------
@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[tuple[int, list[subprocess.Popen[bytes]]]]:
    """A redis-server of this test only (the test stops and restarts it)."""
    port = free_port()
    procs = [_start(port, tmp_path)]
    yield port, procs
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=10)


def test_outage_raises_then_recovers(
    own_server: tuple[int, list[subprocess.Popen[bytes]]], tmp_path: Path, clock: ManualClock
) -> None:
    port, procs = own_server
    engine = RedisEngine(f"redis://127.0.0.1:{port}/0", clock, socket_timeout=1.0, connect_timeout=1.0)
    got: list[str] = []
    try:
        engine.subscribe("ch", got.append)
        engine.set("k", "before")
        engine.publish("ch", "one")
        assert wait_for(lambda: got == ["one"])

        procs[0].terminate()
        procs[0].wait(timeout=10)
        started = time.monotonic()
        with pytest.raises(EngineUnavailable, match=str(port)):
            engine.get("k")
        with pytest.raises(EngineUnavailable):
            engine.set("k", "during")
        assert time.monotonic() - started < 10  # bounded: no hanging on a dead server

        procs.append(_start(port, tmp_path))
        assert engine.set("k", "after")  # the same engine object, not reopened
        assert engine.get("k") == "after"

        def delivered() -> bool:
            engine.publish("ch", "two")
            return wait_for(lambda: "two" in got, timeout=0.2)

        assert wait_for(delivered)  # the listener subscribed again by itself
    finally:
        engine.close()


def test_unreachable_server_fails_fast() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(EngineUnavailable, match=str(port)):
        RedisEngine(f"redis://127.0.0.1:{port}/0", connect_timeout=0.5)
    with pytest.raises(EngineUnavailable, match=str(port)):
        RedisEngine(f"redis+cluster://127.0.0.1:{port}", connect_timeout=0.5)
    assert time.monotonic() - started < 10


def test_wrong_type_inside_a_cluster_batch_applies_nothing(rengine: Engine) -> None:
    tag = rengine.tag("t")
    rengine.set(tag + "s", "x")
    batch = rengine.batch()
    batch.set(tag + "a", "1")
    batch.sadd(tag + "s", "m")
    with pytest.raises(WrongType):
        batch.execute()
    assert rengine.get(tag + "a") is None
    assert rengine.get(tag + "s") == "x"


def test_cluster_outage_raises_then_recovers(tmp_path: Path, clock: ManualClock) -> None:
    with own_cluster(tmp_path) as cluster:
        engine = RedisEngine(
            f"redis+cluster://127.0.0.1:{cluster.ports[0]}", clock, socket_timeout=1.0, connect_timeout=1.0
        )
        got: list[str] = []
        try:
            engine.subscribe("ch", got.append)
            engine.set(engine.tag("a") + "k", "before")
            cluster.stop()
            started = time.monotonic()
            with pytest.raises(EngineUnavailable):
                engine.get(engine.tag("a") + "k")
            assert time.monotonic() - started < 15

            cluster.start()  # the same nodes come back with their saved cluster configuration

            def works() -> bool:
                try:
                    return engine.set(engine.tag("a") + "k", "after")
                except EngineUnavailable:
                    return False

            assert wait_for(works, timeout=30)
            assert engine.get(engine.tag("a") + "k") == "after"

            def delivered() -> bool:
                engine.publish("ch", "again")
                return wait_for(lambda: "again" in got, timeout=0.2)

            assert wait_for(delivered)
        finally:
            engine.close()


def test_cluster_batches_follow_a_moved_slot(tmp_path: Path, clock: ManualClock) -> None:
    """Batches go straight to the slot's node; when the slot moves, the node answers MOVED
    (nothing ran there) and the batch follows the cluster client to the new owner."""
    with own_cluster(tmp_path) as cluster:
        ports = cluster.ports
        engine = RedisEngine(f"redis+cluster://127.0.0.1:{ports[0]}", clock)
        try:
            key = engine.tag("moving") + "k"
            slot = key_slot(key.encode())
            # Only a read before the move: an empty slot moves without migrating keys, and a write
            # would leave its batch id in the slot.
            assert engine.get(key) is None

            owner, target = cluster.move_empty_slot(slot)
            clients = {port: cluster.client(port) for port in ports}

            assert engine.set(key, "2")  # the old owner answers MOVED; the batch follows
            assert clients[target].get(key) == "2"
            assert clients[owner].execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
            assert engine.incr(key) == 3  # and from now on goes to the new owner directly
            assert clients[target].get(key) == "3"
            for client in clients.values():
                client.close()
        finally:
            engine.close()
