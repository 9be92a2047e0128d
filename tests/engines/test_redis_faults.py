"""The Redis engines under faults: killed connections, lost replies, a full server, replicas.

Real servers only: the shared ones, servers of one test, and a TCP relay that loses replies on
purpose (the server runs the request, the client never hears back).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis as redis_py

from _redis_relay import ReplyCutter
from _redis_servers import _start, free_port
from memstack import ManualClock
from memstack.engines import Engine, open_engine
from memstack.engines.redis import RedisEngine
from memstack.engines.redis.dedupe import PREFIX
from memstack.foundation.errors import EngineFull, EngineUnavailable, InvalidUrl, NotReplicated


@pytest.fixture(autouse=True)
def urls(redis_urls: tuple[str, str] | None) -> tuple[str, str]:
    """The shared servers' URLs; every test here needs a redis-server."""
    if redis_urls is None:
        pytest.skip("no redis-server on this machine")
    return redis_urls


@pytest.fixture(params=[0, 1], ids=["redis", "redis-cluster"])
def rengine(
    request: pytest.FixtureRequest, urls: tuple[str, str], clock: ManualClock
) -> Iterator[RedisEngine]:
    """An engine on the shared standalone server or cluster, emptied first."""
    with RedisEngine(urls[request.param], clock) as engine:
        engine.flush()
        yield engine


def node_clients(engine: RedisEngine) -> list[redis_py.Redis]:
    """Plain clients on every primary behind ``engine``."""
    if not engine.clustered:
        return [redis_py.Redis.from_url(engine.url, decode_responses=True)]
    admin = redis_py.RedisCluster.from_url(engine.url.replace("+cluster", ""), decode_responses=True)
    nodes = [redis_py.Redis(host=n.host, port=n.port, decode_responses=True) for n in admin.get_primaries()]
    admin.close()
    return nodes


def kill_connections(clients: list[redis_py.Redis]) -> int:
    """``CLIENT KILL`` every normal connection but the killer's own, on every node; how many."""
    return sum(int(c.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")) for c in clients)


def test_calls_right_after_client_kill_succeed_and_apply_once(rengine: RedisEngine) -> None:
    tag = rengine.tag("t")
    clients = node_clients(rengine)
    try:
        rengine.set(tag + "k", "v")
        for i in range(1, 11):
            assert kill_connections(clients) >= 1  # the engine's idle connection, at least
            assert rengine.get(tag + "k") == "v"
            assert kill_connections(clients) >= 1
            assert rengine.incr(tag + "n") == i  # never applied twice
            assert kill_connections(clients) >= 1
            assert rengine.set(tag + "k", "v")
        assert rengine.get(tag + "n") == "10"
    finally:
        for client in clients:
            client.close()


def test_scan_never_lists_batch_ids(rengine: RedisEngine) -> None:
    tag = rengine.tag("t")
    rengine.set(tag + "a", "1")
    rengine.incr(tag + "b")
    clients = node_clients(rengine)
    try:
        ids = [k for c in clients for k in c.scan_iter(match=PREFIX + "*")]
        assert len(ids) == 2  # one per write batch, remembered for a while
        assert sorted(rengine.scan("")) == [tag + "a", tag + "b"]
        assert list(rengine.scan("ms:")) == []
    finally:
        for client in clients:
            client.close()


@pytest.fixture
def cutter(urls: tuple[str, str]) -> Iterator[ReplyCutter]:
    proxy = ReplyCutter(int(urls[0].rsplit(":", 1)[1].split("/")[0]))
    yield proxy
    proxy.close()


def test_a_write_whose_reply_was_lost_is_retried_without_applying_twice(
    cutter: ReplyCutter, urls: tuple[str, str], clock: ManualClock
) -> None:
    raw = redis_py.Redis.from_url(urls[0], decode_responses=True)
    with RedisEngine(f"redis://127.0.0.1:{cutter.port}/0", clock) as engine:
        engine.flush()
        engine.set("n", "0")
        cutter.cut(1)
        assert engine.incr("n") == 1  # the retry got the first run's reply back
        assert raw.get("n") == "1"
        with engine.batch() as batch:  # a batch of several writes, too
            batch.incr("n")
            batch.rpush("l", "x")
            cutter.cut(1)
        assert (raw.get("n"), raw.lrange("l", 0, -1)) == ("2", ["x"])
        cutter.cut(1)
        assert engine.get("n") == "2"  # a read is simply read again
        cutter.cut(2)
        with pytest.raises(EngineUnavailable, match="may have been applied"):
            engine.incr("n")
        assert raw.get("n") == "3"  # it was: once
        assert engine.incr("n") == 4
    raw.close()


def test_out_of_memory_is_engine_full_and_applies_nothing(tmp_path: Path, clock: ManualClock) -> None:
    port = free_port()
    server = _start(port, tmp_path)  # its own: maxmemory changes below
    try:
        raw = redis_py.Redis(port=port, decode_responses=True)
        with RedisEngine(f"redis://127.0.0.1:{port}/0", clock) as engine:
            engine.set("kept", "1")
            raw.config_set("maxmemory", 1)  # below what the server already uses; noeviction
            try:
                with pytest.raises(EngineFull, match="out of memory"):
                    engine.set("big", "x" * 10_000)
                batch = engine.batch()
                batch.incr("kept")
                batch.set("other", "y")
                with pytest.raises(EngineFull):
                    batch.execute()
            finally:
                raw.config_set("maxmemory", 0)
            assert engine.get("big") is None
            assert engine.mget(["kept", "other"]) == ["1", None]
        raw.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def replicated(tmp_path: Path) -> Iterator[tuple[int, redis_py.Redis]]:
    """A primary with one replica (started here, in sync): the primary's port and a replica client."""
    primary_port, replica_port = free_port(), free_port()
    (tmp_path / "p").mkdir()
    (tmp_path / "r").mkdir()
    # Sync at once: by default a primary waits 5 s for more replicas to share one diskless sync.
    procs = [_start(primary_port, tmp_path / "p", "--repl-diskless-sync-delay", "0")]
    procs.append(_start(replica_port, tmp_path / "r", "--replicaof", "127.0.0.1", str(primary_port)))
    replica = redis_py.Redis(port=replica_port, decode_responses=True)
    try:
        deadline = time.monotonic() + 30
        while replica.info("replication").get("master_link_status") != "up":
            assert time.monotonic() < deadline, "the replica did not sync"
            time.sleep(0.02)
        yield primary_port, replica
    finally:
        replica.close()
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


def test_wait_replicas_acknowledges_each_write_batch(
    replicated: tuple[int, redis_py.Redis], clock: ManualClock
) -> None:
    port, replica = replicated
    with RedisEngine(f"redis://127.0.0.1:{port}/0?wait_replicas=1&wait_ms=1500", clock) as engine:
        for i in range(20):
            assert engine.set(f"k{i}", "v")
            assert replica.get(f"k{i}") == "v"  # WAIT returned: the replica has it already
        assert engine.incr("n") == 1
        assert replica.get("n") == "1"


def test_too_few_replicas_raise_not_replicated_after_applying(
    replicated: tuple[int, redis_py.Redis], clock: ManualClock
) -> None:
    port, _ = replicated
    with RedisEngine(f"redis://127.0.0.1:{port}/0?wait_replicas=2&wait_ms=50", clock) as engine:
        with pytest.raises(NotReplicated, match="of wait_replicas=2 replicas"):  # 1, or 0 if slow
            engine.set("k", "v")
        assert engine.get("k") == "v"  # applied on the primary; reads never wait
        batch = engine.batch()
        batch.require_missing("k")  # not applied: nothing to acknowledge
        batch.set("k", "w")
        assert not batch.execute().applied


def test_wait_ms_must_stay_below_the_socket_timeout(urls: tuple[str, str]) -> None:
    with pytest.raises(InvalidUrl, match="below the socket timeout"):
        RedisEngine(urls[0] + "?wait_replicas=1&wait_ms=5000", socket_timeout=2.0)


def test_a_cluster_opens_from_any_seed_that_answers(urls: tuple[str, str], clock: ManualClock) -> None:
    dead = free_port()
    live = urls[1].removeprefix("redis+cluster://")
    engine: Engine
    with open_engine(f"redis+cluster://127.0.0.1:{dead},{live}", clock=clock) as engine:
        key = engine.tag("seeds") + "k"
        assert engine.set(key, "v")
        assert engine.get(key) == "v"


def test_a_unix_socket_url(tmp_path: Path, clock: ManualClock) -> None:
    sock = tmp_path / "redis.sock"
    proc = _start(free_port(), tmp_path, "--unixsocket", str(sock))
    try:
        with RedisEngine(f"unix://{sock}?db=1", clock) as engine:
            assert engine.set("k", "v")
            assert engine.incr("n") == 1
            assert sorted(engine.scan("")) == ["k", "n"]
        with redis_py.Redis(unix_socket_path=str(sock), db=1, decode_responses=True) as raw:
            assert raw.get("k") == "v"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
