"""Pure parts of the Redis engines: URL parsing, the retry rules, batch ids and their slots."""

from __future__ import annotations

import re

import pytest
from redis.connection import SSLConnection, UnixDomainSocketConnection
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError

from _forked import held_by_a_thread, in_child
from memstack.engines import open_engine
from memstack.engines.redis.dedupe import dedupe_key, is_dedupe_key, slot_tag
from memstack.engines.redis.transport import ReplyLost, Unsent, may_retry
from memstack.engines.redis.url import parse
from memstack.foundation.errors import InvalidUrl
from memstack.foundation.keyspace.pattern import hash_tag


def test_a_cluster_url_takes_several_nodes() -> None:
    url = parse("redis+cluster://127.0.0.1:30006,127.0.0.1:30001,[::1]:7000,other")
    assert url.clustered
    assert url.startup_nodes == (("127.0.0.1", 30006), ("127.0.0.1", 30001), ("::1", 7000), ("other", 6379))
    assert url.node_options(("h", 1)) == {"host": "h", "port": 1}
    assert (url.wait_replicas, url.wait_ms) == (0, 0)


def test_standalone_urls_keep_auth_database_and_tls() -> None:
    url = parse("rediss://user:p%40ss@example.org:6380/3?ssl_cert_reqs=none")
    assert not url.clustered
    assert url.startup_nodes == (("example.org", 6380),)
    options = url.node_options(url.startup_nodes[0])
    assert options["connection_class"] is SSLConnection
    assert (options["username"], options["password"], options["db"]) == ("user", "p@ss", 3)
    assert options["ssl_cert_reqs"] == "none"
    unix = parse("unix:///tmp/redis.sock?db=2")
    assert unix.node_options(unix.startup_nodes[0])["connection_class"] is UnixDomainSocketConnection
    assert unix.node_options(unix.startup_nodes[0])["path"] == "/tmp/redis.sock"
    assert unix.node_options(unix.startup_nodes[0])["db"] == 2


def test_durability_parameters() -> None:
    url = parse("redis+cluster://h:1?wait_replicas=1&wait_ms=250")
    assert (url.wait_replicas, url.wait_ms) == (1, 250)
    assert parse("redis://h:1/0?wait_replicas=2").wait_ms == 100  # a default timeout, never 0


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("redis://a:1,b:2/0", "several hosts need a redis+cluster"),
        ("redis+cluster://a:1,,b:2", "host is missing"),
        ("redis+cluster://a:x", "port 'x'"),
        ("redis+cluster://a:70000", "not in 1..65535"),
        ("redis+cluster://[::1", "malformed host"),
        ("redis+cluster://a:1/2", "only database 0"),
        ("redis://a:1/0?socket_timeout=1", "unknown parameter 'socket_timeout'"),
        ("redis+cluster://a:1?db=1", "unknown parameter 'db'"),
        ("redis://a:1/0?wait_ms=1&wait_ms=2", "given 2 times"),
        ("redis://a:1/0?wait_replicas=-1", "whole number"),
        ("redis://a:1/0?wait_replicas=1&wait_ms=0", "at least 1"),
        ("redis://a:1/0?ssl_cert_reqs=none", "unknown parameter 'ssl_cert_reqs'"),
        ("http://a:1", "not a Redis URL"),
    ],
)
def test_malformed_urls_raise_invalid_url(url: str, rule: str) -> None:
    with pytest.raises(InvalidUrl, match=re.escape(rule)) as caught:
        parse(url)
    assert url in str(caught.value)


def test_open_engine_refuses_a_malformed_cluster_url_before_connecting() -> None:
    with pytest.raises(InvalidUrl, match="port"):
        open_engine("redis+cluster://127.0.0.1:30006,127.0.0.1:notaport")


def test_retry_rules() -> None:
    cause = RedisConnectionError("reset")
    unsent, lost = Unsent(("h", 1), cause), ReplyLost(("h", 1), cause)
    assert may_retry(unsent, idempotent=False)  # the server never had the whole request
    assert may_retry(unsent, idempotent=True)
    assert may_retry(lost, idempotent=True)  # a read, or a write the script recognises again
    assert not may_retry(lost, idempotent=False)  # it may have run: never twice


def test_hash_tags_as_redis_reads_them() -> None:
    assert hash_tag("rr:memory:{s1}:k") == "s1"
    assert hash_tag("a{}b{c}") is None  # an empty first tag: the whole key is hashed
    assert hash_tag("a{b") is None
    assert hash_tag("{x}{y}") == "x"


def test_every_slot_has_a_tag_that_hashes_to_it() -> None:
    for slot in range(16384):
        assert key_slot(slot_tag(slot).encode()) == slot


def test_dedupe_keys_land_in_the_batch_slot_and_never_name_a_scope() -> None:
    tagged = dedupe_key(key_slot(b"rr:memory:{s1}:k"))
    assert key_slot(tagged.encode()) == key_slot(b"s1")
    assert "s1" not in tagged  # a forgotten session's id is in no key name, not even this one
    untagged = dedupe_key(key_slot(b"plain-key"))
    assert key_slot(untagged.encode()) == key_slot(b"plain-key")
    assert dedupe_key(None).count(":") == 2  # standalone: no tag needed
    assert dedupe_key(None) != dedupe_key(None)  # a fresh id per batch
    for key in (tagged, untagged, dedupe_key(7)):
        assert is_dedupe_key(key)
    assert not is_dedupe_key("ms:batch:{s1}:not-an-id")
    assert not is_dedupe_key("user:ms:batch:0123456789abcdef")


def test_open_engine_turns_urllib_refusals_into_invalid_url() -> None:
    with pytest.raises(InvalidUrl, match="malformed"):
        open_engine("redis+cluster://[::1")


def test_batch_ids_differ_across_threads_and_forks() -> None:
    import os
    import threading
    import warnings

    seen: list[str] = []

    def draw() -> None:
        seen.extend(dedupe_key(None) for _ in range(2000))

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(seen)) == len(seen) == 8000
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # forking with threads alive
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.write(write, dedupe_key(None).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 100).decode()
    os.close(read)
    os.close(write)
    parent = dedupe_key(None)
    assert is_dedupe_key(child) and child[:-6] != parent[:-6]  # the child drew its own prefix


def test_a_forked_child_builds_the_slot_tags_a_parent_thread_was_building() -> None:
    from memstack.engines.redis import dedupe

    built = [dedupe.slot_tag(slot) for slot in range(16384)]

    def child() -> bool:
        return all(key_slot(dedupe.slot_tag(slot).encode()) == slot for slot in (0, 5000, 16383))

    try:
        with held_by_a_thread(dedupe._slot_tags_lock):
            dedupe._slot_tags.clear()  # not built yet: the child must take the lock to build it
            assert in_child(child, deadline=30)
            dedupe._slot_tags[:] = built[:100]  # caught half way
            assert in_child(child, deadline=30)
    finally:
        dedupe._slot_tags[:] = built
