"""The batch script itself, called through a raw redis-py client: dedupe keys and check-before-write.

Dedupe (``ARGV[4]`` = TTL in ms, last ``KEYS`` element = the dedupe key): a batch replayed with
the same dedupe key returns the reply of its first run and applies nothing twice.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis as redis_py

from memstack.engines.redis import MANUAL_CLOCK_BIAS_MS, codec
from memstack.engines.redis.dedupe import WITHDRAWN
from memstack.engines.redis.lua import SCRIPT
from memstack.foundation.errors import EngineUnavailable

Ops = list[tuple[str, tuple[Any, ...]]]


@pytest.fixture
def client(redis_urls: tuple[str, str] | None) -> Iterator[redis_py.Redis]:
    if redis_urls is None:
        pytest.skip("no redis-server on this machine")
    raw = redis_py.Redis.from_url(redis_urls[0], decode_responses=True)
    raw.flushdb()
    yield raw
    raw.flushdb()
    raw.close()


def run(
    client: redis_py.Redis, ops: Ops, dedupe: str | None, ttl_ms: int = 60_000, *, manual: bool = False
) -> Any:
    """One script call as the engine makes it (system clock, or a manual clock with its bias)."""
    now = int(time.time() * 1000)
    head = (str(now), str(MANUAL_CLOCK_BIAS_MS) if manual else "-1", "1" if manual else "", "")
    if dedupe is not None:
        head = (*head[:3], str(ttl_ms))
    keys, argv, _ = codec.encode(ops, head)
    extra = [] if dedupe is None else [dedupe]
    return client.eval(SCRIPT, len(keys) + len(extra), *keys, *extra, *argv)


def writes() -> Ops:
    return [
        ("incr", ("n", 1)),
        ("rpush", ("l", "x")),
        ("set", ("s", "v", 5000, False, False, False)),
        ("get", ("n",)),
    ]


def test_a_replayed_batch_returns_its_first_reply_and_applies_nothing_twice(client: redis_py.Redis) -> None:
    first = run(client, writes(), "dd:1")
    assert json.loads(first) == [True, ["1", 1, True, "1"]]  # incr replies as text (the codec converts)
    stored, touched = client.get("dd:1").split("\n")
    assert stored == first and json.loads(touched) == ["n", "l", "s"]  # a forget finds it by its keys
    assert 0 < client.pttl("dd:1") <= 60_000
    again = run(client, writes(), "dd:1")
    assert again == first
    assert client.get("n") == "1" and client.lrange("l", 0, -1) == ["x"]
    other = run(client, writes(), "dd:2")  # another dedupe key: a new batch
    assert json.loads(other) == [True, ["2", 2, True, "2"]]


def test_a_withdrawn_reply_refuses_the_replay_and_applies_nothing(client: redis_py.Redis) -> None:
    run(client, writes(), "dd:w")
    ttl = client.pttl("dd:w")
    assert client.set("dd:w", WITHDRAWN, xx=True, keepttl=True)  # what a forget leaves
    again = run(client, writes(), "dd:w")
    assert again == WITHDRAWN and 0 < client.pttl("dd:w") <= ttl
    with pytest.raises(EngineUnavailable, match="withdrew"):
        codec.decode(writes(), again)
    assert client.get("n") == "1" and client.lrange("l", 0, -1) == ["x"]  # never applied twice


def test_the_dedupe_key_is_no_key_of_the_batch(client: redis_py.Redis) -> None:
    # Under a manual clock every key is probed and purged when logically expired; the dedupe key
    # carries a real TTL, so probing it would drop it and run the batch again.
    first = run(client, writes(), "dd:m", manual=True)
    assert run(client, writes(), "dd:m", manual=True) == first
    assert client.get("n") == "1"
    reply = run(client, [("exists", ("dd:m",))], None)
    assert json.loads(reply) == [True, [True]]  # without ARGV[4] the last key is an ordinary one


def test_only_applied_batches_with_writes_are_remembered(client: redis_py.Redis) -> None:
    assert json.loads(run(client, [("get", ("n",)), ("exists", ("l",))], "dd:r")) == [True, [None, False]]
    assert client.exists("dd:r") == 0  # reads only
    guarded: Ops = [("require_exists", ("meta",)), ("incr", ("n", 1))]
    assert json.loads(run(client, guarded, "dd:g")) == [False, [False]]
    assert client.exists("dd:g") == 0 and client.get("n") is None
    client.hset("h", "f", "v")
    with pytest.raises(redis_py.ResponseError, match="MSWRONGTYPE"):
        run(client, [("incr", ("n", 1)), ("incr", ("h", 1))], "dd:e")
    assert client.exists("dd:e") == 0 and client.get("n") is None
    assert json.loads(run(client, [("publish", ("c", "m"))], "dd:p")) == [True, [None]]
    assert client.exists("dd:p") == 1  # publish is a write


def _dumps(client: redis_py.Redis) -> int:
    stats = client.info("commandstats")
    return int(stats.get("cmdstat_dump", {}).get("calls", 0))


def test_a_failure_known_from_storage_returns_before_any_write(client: redis_py.Redis) -> None:
    client.hset("h", "f", "v")
    client.set("big", str(2**63 - 1))
    client.set("s", "keep")
    client.config_resetstat()
    before: Ops = [("set", ("s", "changed", None, False, False, False)), ("rpush", ("l", "x"))]
    for failing in [("incr", ("h", 1)), ("incr", ("big", 1)), ("hincr", ("h", "f", 1)), ("sadd", ("s", "m"))]:
        with pytest.raises(redis_py.ResponseError, match=r"^(MSWRONGTYPE|MSNAN) "):
            run(client, [*before, failing], None)
    assert _dumps(client) == 0  # nothing needed undoing: no write ran
    assert client.get("s") == "keep" and client.hgetall("h") == {"f": "v"} and client.exists("l") == 0


def test_a_guard_after_a_write_is_refused_before_any_write(client: redis_py.Redis) -> None:
    with pytest.raises(redis_py.ResponseError, match="MSGUARD require_missing"):
        run(client, [("set", ("s", "v", None, False, False, False)), ("require_missing", ("x",))], None)
    assert client.exists("s") == 0
    assert isinstance(codec.script_error("MSGUARD require_missing"), ValueError)
