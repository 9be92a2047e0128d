"""A scan whose pages repeat keys gives each key once while remembering at most about ``limit``
keys at a time, on every engine and on pages that repeat keys the way Redis' SCAN may."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
import redis as redis_py

from _redis_servers import _start, free_port
from memstack import ManualClock
from memstack.engines import Engine
from memstack.engines._once import scan_once
from memstack.engines.prefixed import tenant_engine
from memstack.engines.redis import RedisEngine

LIMIT = 50


def _fill(engine: Engine, prefix: str, n: int) -> set[str]:
    keys = {f"{prefix}k{i:04d}" for i in range(n)}
    for key in keys:  # one write each: keys of many Redis Cluster slots
        engine.set(key, "v")
    return keys


class _Repeating:
    """Full scans over ``keys`` in pages of 7 where every page also gives again keys of pages far
    behind it (what SCAN does after its table shrank), counting the passes asked for."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.passes = 0

    def __call__(self) -> Iterator[list[str]]:
        self.passes += 1
        return self._pages()

    def _pages(self) -> Iterator[list[str]]:
        for start in range(0, len(self.keys), 7):
            yield self.keys[start : start + 7] + self.keys[: start : max(1, start // 3)]


def test_a_small_scan_is_one_pass_and_gives_each_key_once() -> None:
    keys = [f"k{i}" for i in range(LIMIT)]
    pages = _Repeating(keys)
    got = list(scan_once(pages, LIMIT))
    assert sorted(got) == sorted(keys)
    assert pages.passes == 1


def test_a_scan_over_more_than_the_limit_gives_each_key_once_by_parts() -> None:
    keys = [f"k{i}" for i in range(500)]
    pages = _Repeating(keys)
    got = list(scan_once(pages, LIMIT))
    assert len(got) == len(set(got)) == len(keys)
    assert set(got) == set(keys)
    assert pages.passes > 3  # the first, the count, and the parts


def test_every_engine_scanned_by_parts_gives_each_key_once(engine: Engine) -> None:
    keys = _fill(engine, "p:", 300)
    engine.set("q:outside", "x")
    got = list(scan_once(partial(engine.scan_pages, "p:", 40), LIMIT))
    assert len(got) == len(set(got)) == len(keys)
    assert set(got) == keys
    assert sorted(engine.scan("p:")) == sorted(keys)  # the engine's own scan agrees


def test_a_tenant_view_scanned_by_parts_gives_its_keys_once(engine: Engine) -> None:
    mine = {key.removeprefix("t:acme:") for key in _fill(engine, "t:acme:", 300)}
    _fill(engine, "t:acme2:", 60)
    view = tenant_engine(engine, "acme")
    got = list(scan_once(partial(view.scan_pages, "", 40), LIMIT))
    assert len(got) == len(set(got)) == len(mine)
    assert set(got) == mine


def test_keys_present_throughout_are_given_once_while_others_come_and_go(engine: Engine) -> None:
    kept = _fill(engine, "p:", 200)
    going = _fill(engine, "p:x", 100)
    scan = scan_once(partial(engine.scan_pages, "p:", 40), LIMIT)
    got = [next(scan) for _ in range(LIMIT + 5)]  # past the first pass, into the parts
    for key in going:
        engine.delete(key)
    _fill(engine, "p:new", 100)
    got += list(scan)
    assert len(got) == len(set(got))
    assert kept <= set(got)
    assert set(got) <= kept | going | {f"p:newk{i:04d}" for i in range(100)}


def _wait(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``condition`` (the server resizes its table on its own timer, ten times a second)."""
    until = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > until:
            return False
        time.sleep(0.01)
    return True


def _table_size(client: redis_py.Redis) -> int:
    stats = str(client.execute_command("DEBUG", "HTSTATS", "0"))
    found = re.search(r"table size: (\d+)", stats)
    return int(found.group(1)) if found else 0


@pytest.fixture
def shrinking(tmp_path: Path) -> Iterator[redis_py.Redis]:
    """A redis-server of this test alone that tells its table size (``DEBUG HTSTATS``)."""
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server on this machine")
    port = free_port()
    proc = _start(port, tmp_path, "--enable-debug-command", "yes")
    try:
        with redis_py.Redis(port=port, decode_responses=True) as client:
            yield client
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize(("limit", "shrink_in"), [(1000, 1), (50, 3)], ids=["one-pass", "by-parts"])
def test_a_real_scan_that_walks_a_shrunk_table_again_gives_each_key_once(
    shrinking: redis_py.Redis, clock: ManualClock, limit: int, shrink_in: int
) -> None:
    """Redis returns keys again when its table shrinks during a SCAN: 40,000 other keys are deleted
    after the 20th page of one pass, and the server's table shrinks from 65,536 buckets; the pass
    walks back over buckets it had read."""
    port = shrinking.connection_pool.connection_kwargs["port"]
    engine = RedisEngine(f"redis://127.0.0.1:{port}/0", clock)
    keys = {f"keep:{i}" for i in range(300)}
    repeated = 0
    try:
        for _ in range(5):  # which keys come again depends on the server's hash seed
            shrinking.flushdb()
            with shrinking.pipeline(transaction=False) as pipe:
                for key in [*keys, *(f"other:{i}" for i in range(40_000))]:
                    pipe.set(key, "v")
                pipe.execute()
            passes = 0

            def pages() -> Iterator[list[str]]:
                nonlocal passes, repeated
                passes += 1
                given: list[str] = []
                for n, page in enumerate(engine.scan_pages("keep:", 5)):
                    given += page
                    if passes == shrink_in and n == 20:
                        shrinking.delete(*(f"other:{i}" for i in range(40_000)))
                        assert _wait(lambda: _table_size(shrinking) <= 512)
                    yield page
                repeated += len(given) - len(set(given))

            got = list(scan_once(pages, limit))
            assert len(got) == len(set(got)) == len(keys)
            assert set(got) == keys
        assert repeated  # the server did give keys again
    finally:
        engine.close()
