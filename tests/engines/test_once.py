"""A scan whose pages repeat keys gives each key once while remembering at most about ``limit``
keys at a time, on every engine and on pages that repeat keys the way Redis' SCAN may."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from memstack.engines import Engine
from memstack.engines._once import scan_once
from memstack.engines.prefixed import tenant_engine

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
