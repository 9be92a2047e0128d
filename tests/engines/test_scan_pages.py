"""Streaming scans: an engine gives its keys page by page, and a tenant view scans and flushes
through those pages, so neither holds a tenant's every key at once, on every engine."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise

import pytest

from memstack import ManualClock
from memstack.engines import Engine
from memstack.engines.base import BatchResult, Op, started
from memstack.engines.forwarding import ForwardingEngine
from memstack.engines.prefixed import PrefixedEngine, tenant_engine
from memstack.foundation.errors import InvalidInput

PAGE = 40
KEYS = 300  # several pages of PAGE
_ODD = "%_\\é😀*?["  # LIKE and glob wildcards, an escape, text beyond ASCII


def _fill(engine: Engine, prefix: str, n: int = KEYS) -> set[str]:
    """``n`` keys under ``prefix`` of several types and hash slots, some with odd characters."""
    keys = {f"{prefix}k{i:04d}{_ODD[i % len(_ODD)]}" for i in range(n)}
    if engine.clustered:  # keys of many slots: one write each
        for key in keys:
            engine.set(key, "v")
    else:
        with engine.batch() as batch:
            for key in keys:
                batch.set(key, "v")
    # Tagged keys (one Redis Cluster slot each) and other types.
    for i in range(0, n, 50):
        tag = engine.tag(f"s{i}")
        engine.hset(f"{prefix}{tag}:h", {"f": "1"})
        engine.zadd(f"{prefix}{tag}:z", {"m": 1.0})
        keys |= {f"{prefix}{tag}:h", f"{prefix}{tag}:z"}
    return keys


def test_scan_pages_give_every_key_in_bounded_pages(engine: Engine) -> None:
    keys = _fill(engine, "p:")
    engine.set("q:outside", "x")
    pages = list(engine.scan_pages("p:", PAGE))
    assert len(pages) > 3
    seen = [key for page in pages for key in page]
    assert set(seen) == keys
    if not engine.scan_repeats:
        assert len(seen) == len(keys)  # disjoint pages
        assert max(len(page) for page in pages) <= PAGE
    assert sorted(engine.scan("p:")) == sorted(keys)  # the plain scan agrees


def test_scan_pages_skip_expired_keys_and_survive_deletes_behind_them(
    engine: Engine, clock: ManualClock
) -> None:
    keys = _fill(engine, "p:")
    engine.set("p:dying", "x", px=1)
    clock.advance(0.01)
    found: set[str] = set()
    for page in engine.scan_pages("p:", PAGE):
        found.update(page)
        for key in page:  # behind the scan, before the next page
            engine.delete(key)
    assert found == keys
    assert list(engine.scan("p:")) == []


def test_a_page_size_must_be_a_positive_integer(engine: Engine) -> None:
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(InvalidInput, match="scan page"):
            engine.scan_pages("p:", bad)  # type: ignore[arg-type]  # wrong on purpose
        with pytest.raises(InvalidInput, match="scan page"):
            PrefixedEngine(engine, "t:x:", page=bad)  # type: ignore[arg-type]


def test_a_tenant_scan_over_many_pages_sees_its_keys_once_and_no_other_tenants(engine: Engine) -> None:
    mine = {k.removeprefix("t:acme:") for k in _fill(engine, "t:acme:")}
    _fill(engine, "t:acme2:", 60)  # a tenant whose name starts like it
    _fill(engine, "t:beta:", 60)
    view = PrefixedEngine(engine, "t:acme:", page=PAGE)
    seen = list(view.scan(""))
    assert len(seen) == len(set(seen)) == len(mine)
    assert set(seen) == mine
    assert sorted(view.scan("k00")) == sorted(k for k in mine if k.startswith("k00"))


class _Recording(ForwardingEngine):
    """A real engine seen through a view that records each page read and each delete, in order."""

    def __init__(self, inner: Engine) -> None:
        super().__init__(inner)
        self.events: list[tuple[str, int]] = []

    def execute_many(self, batches: Sequence[Sequence[Op]]) -> list[BatchResult]:
        for ops in batches:
            if ops and ops[0][0] == "delete":
                self.events.append(("delete", sum(len(args) for _, args in ops)))
        return self.inner.execute_many(batches)

    def scan(self, prefix: str) -> Iterator[str]:
        raise AssertionError("a streaming caller never collects a whole scan")

    def scan_pages(self, prefix: str, page: int = 1000) -> Iterator[list[str]]:
        def pages() -> Iterator[list[str]]:
            for keys in self.inner.scan_pages(prefix, page):
                self.events.append(("page", len(keys)))
                yield keys

        return started(pages())  # as the engines do: the first page at the call


def test_a_tenant_flush_deletes_each_page_before_reading_the_next(engine: Engine) -> None:
    _fill(engine, "t:acme:")
    others = _fill(engine, "t:beta:", 60) | _fill(engine, "t:acme2:", 60)
    engine.set("plain", "kept")
    recording = _Recording(engine)
    PrefixedEngine(recording, "t:acme:", page=PAGE).flush()
    assert list(engine.scan("t:acme:")) == []
    assert set(engine.scan("t:")) == others  # every other tenant's key survives
    assert engine.get("plain") == "kept"
    kinds = [kind for kind, _ in recording.events]
    assert kinds.count("page") > 3
    # Each page's keys are gone before the next page is read: never two reads in a row.
    assert all(not (a == b == "page") for a, b in pairwise(kinds))
    if not engine.scan_repeats:
        assert max(n for kind, n in recording.events if kind == "page") <= PAGE


def test_a_tenant_scan_is_read_as_it_is_iterated(engine: Engine) -> None:
    _fill(engine, "t:acme:")
    recording = _Recording(engine)
    scan = PrefixedEngine(recording, "t:acme:", page=PAGE).scan("")
    assert [kind for kind, _ in recording.events] == ["page"]  # the first page at the call
    next(scan)
    assert len(recording.events) == 1
    rest = list(scan)
    assert len(recording.events) > 3 and rest


def test_a_view_of_the_default_page_scans_and_flushes_as_before(engine: Engine) -> None:
    view = tenant_engine(engine, "acme")
    keys = {k.removeprefix("t:acme:") for k in _fill(engine, "t:acme:")}
    assert set(view.scan("")) == keys
    view.flush()
    assert list(view.scan("")) == []
