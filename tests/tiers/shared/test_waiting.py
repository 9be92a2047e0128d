"""Blocking reads: present keys, typed timeouts, one deadline for several keys, race-freedom,
the async twin (spec section 4 items 13-14, DESIGN decision on multi-key deadlines)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from memstack import Memory
from memstack.engines import Engine
from memstack.foundation.errors import EngineClosed, InvalidInput, WaitTimeout
from memstack.tiers.shared import SharedMemory


def _later(delay: float, fn: object, *args: object) -> threading.Thread:
    thread = threading.Timer(delay, fn, args)  # type: ignore[arg-type]  # fn is a callable
    thread.start()
    return thread


def test_present_key_returns_at_once_even_holding_none(shared: SharedMemory) -> None:
    shared["k"] = None
    assert shared.get("k", wait=True) is None
    assert shared.get("k", wait=0) is None


def test_missing_key_without_wait_is_none(shared: SharedMemory) -> None:
    assert shared.get("k") is None
    assert shared.get("a", "b") == {}


def test_timeout_is_typed_and_names_key_and_time(shared: SharedMemory) -> None:
    with pytest.raises(WaitTimeout, match=r"^Timeout waiting for 'k' after 0.05 seconds$"):
        shared.get("k", wait=0.05)
    with pytest.raises(TimeoutError):
        shared.get("k", wait=0)


def test_bad_wait_refused(shared: SharedMemory) -> None:
    with pytest.raises(InvalidInput, match="wait"):
        shared.get("k", wait=-1)
    with pytest.raises(InvalidInput, match="wait"):
        shared.get("k", wait="soon")  # type: ignore[arg-type]  # the point of the test


def test_wait_is_woken_by_a_write(shared: SharedMemory) -> None:
    timer = _later(0.05, shared.set, "k", {"score": 0.8})
    assert shared.get("k", wait=10) == {"score": 0.8}
    timer.join()


def test_wait_is_woken_by_a_write_of_none(shared: SharedMemory) -> None:
    timer = _later(0.05, shared.set, "k", None)
    assert shared.get("k", wait=True) is None
    timer.join()


def test_write_from_another_instance_wakes(engine: Engine, shared: SharedMemory) -> None:
    other = SharedMemory(engine, "t", enable_cache=False)
    timer = _later(0.05, other.set, "k", 1)
    assert shared.get("k", wait=10) == 1
    timer.join()
    other.close()


def test_multi_key_returns_dict_in_request_order(shared: SharedMemory) -> None:
    shared["b"] = 2
    shared["n"] = None
    assert shared.get("a", "b", "n") == {"b": 2, "n": None}
    timer = _later(0.05, shared.merge, {"a": 1})
    assert list(shared.get("a", "b", wait=10).items()) == [("a", 1), ("b", 2)]
    timer.join()


def test_multi_key_shares_one_deadline(shared: SharedMemory) -> None:
    start = time.monotonic()
    with pytest.raises(WaitTimeout, match=r"^Timeout waiting for 'x', 'y', 'z' after 0.2 seconds$"):
        shared.get("x", "y", "z", wait=0.2)
    assert time.monotonic() - start < 0.55  # per-key deadlines would take 0.6 s


def test_multi_key_timeout_names_only_missing(shared: SharedMemory) -> None:
    shared["x"] = 1
    with pytest.raises(WaitTimeout, match=r"^Timeout waiting for 'y' after 0.05 seconds$"):
        shared.get("x", "y", wait=0.05)


def test_reserved_keys_never_wait(shared: SharedMemory) -> None:
    assert shared.get("results", "session_id", wait=True) == {"results": [], "session_id": None}


def test_race_free_write_just_before_wait(engine: Engine, shared: SharedMemory) -> None:
    writer = SharedMemory(engine, "t", enable_cache=False)
    for i in range(200):
        key = f"race{i}"
        ready = threading.Event()

        def write(key: str = key, ready: threading.Event = ready, value: int = i) -> None:
            ready.wait()
            writer.set(key, value)

        thread = threading.Thread(target=write)
        thread.start()
        ready.set()  # the write lands around the registration/check of the wait below
        assert shared.get(key, wait=10) == i
        thread.join()
    writer.close()


def test_waiters_get_their_own_copies(shared: SharedMemory) -> None:
    results: list[object] = []

    def reader() -> None:
        value = shared.get("k", wait=10)
        results.append(value)
        value.append("mine")

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.05)  # let the readers block (not a TTL wait)
    shared["k"] = [1]
    for t in threads:
        t.join()
    assert len(results) == 3
    assert len({id(r) for r in results}) == 3
    assert shared["k"] == [1]


def test_close_wakes_waiters(engine: Engine) -> None:
    memory = SharedMemory(engine, "c", enable_cache=False)
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            memory.get("k", wait=True)
        except EngineClosed as exc:
            errors.append(exc)

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.05)
    memory.close()
    thread.join(5)
    assert not thread.is_alive()
    assert len(errors) == 1


def test_async_twin(shared: SharedMemory) -> None:
    async def main() -> tuple[object, object, object]:
        shared["present"] = "p"
        present = await shared.aget("present")
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, lambda: threading.Thread(target=shared.set, args=("k", 42)).start())
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(ticker())
        woken = await shared.aget("k", wait=10)
        task.cancel()
        assert ticks > 1  # the loop kept running while aget waited
        both = await shared.aget("k", "present", wait=1)
        return present, woken, both

    assert asyncio.run(main()) == ("p", 42, {"k": 42, "present": "p"})


def test_async_timeout(shared: SharedMemory) -> None:
    with pytest.raises(WaitTimeout, match=r"^Timeout waiting for 'k' after 0.05 seconds$"):
        asyncio.run(shared.aget("k", wait=0.05))


def test_cancelled_async_wait_then_write_still_works(shared: SharedMemory) -> None:
    async def main() -> object:
        task = asyncio.create_task(shared.aget("k", wait=True))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        shared["k"] = "after"
        return await shared.aget("k", wait=1)

    assert asyncio.run(main()) == "after"


def test_memory_facade_accessor(mem: Memory) -> None:
    shared = mem.shared("facade", enable_cache=False)
    timer = _later(0.05, mem.shared("facade", enable_cache=False).set, "k", 1)
    assert shared.get("k", wait=10) == 1
    timer.join()


def test_tenant_views_are_isolated_and_still_wake(engine: Engine) -> None:
    from memstack.engines.prefixed import tenant_engine

    alice = SharedMemory(tenant_engine(engine, "alice"), "t", enable_cache=False)
    bob = SharedMemory(tenant_engine(engine, "bob"), "t", enable_cache=False)
    timer = _later(0.05, SharedMemory(tenant_engine(engine, "alice"), "t", enable_cache=False).set, "k", 1)
    assert alice.get("k", wait=10) == 1
    timer.join()
    assert bob.get("k") is None
    with pytest.raises(WaitTimeout):
        bob.get("k", wait=0.05)
    alice.close()
    bob.close()
