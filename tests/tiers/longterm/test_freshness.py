"""The in-process index stays fresh from the engine's change log, across engine instances."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstack import ManualClock
from memstack.engines import Engine, open_engine
from memstack.tiers.longterm import LongTermMemory
from memstack.tiers.longterm.index_cache import scope_cache

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def second(engine_kind: str, engine_url_for: str, engine: Engine, clock: ManualClock) -> Iterator[Engine]:
    """A second engine instance on the same data (the memory engine has no such thing)."""
    if engine_kind == "memory":
        pytest.skip("two memory:// engines never share data")
    other = open_engine(engine_url_for, clock=clock)
    yield other
    other.close()


def ids(hits: list[object]) -> list[str]:
    return sorted(h.entry.id for h in hits)  # type: ignore[attr-defined]  # SearchHit


def test_writes_through_another_instance_are_seen(engine: Engine, second: Engine) -> None:
    reader, writer = LongTermMemory(engine, "u1"), LongTermMemory(second, "u1")
    reader.save(content="apples are red", id="a")
    assert ids(reader.search("apples")) == ["a"]
    writer.save(content="apples are green", id="b")
    writer.save(content="bananas", id="a")
    assert ids(reader.search("apples")) == ["b"]
    writer.delete("b")
    assert reader.search("apples") == []
    assert ids(reader.search("bananas")) == ["a"]


def test_write_from_another_process_is_seen(engine_kind: str, engine_url_for: str, engine: Engine) -> None:
    if engine_kind == "memory":
        pytest.skip("a memory:// engine lives in one process")
    lt = LongTermMemory(engine, "proc")
    lt.save(content="local cherries", id="local")
    assert ids(lt.search("cherries")) == ["local"]
    script = (
        "import sys; from memstack.engines import open_engine\n"
        "from memstack.tiers.longterm import LongTermMemory\n"
        "with open_engine(sys.argv[1]) as e:\n"
        "    LongTermMemory(e, 'proc').save(content='remote cherries', id='remote')\n"
    )
    subprocess.run([sys.executable, "-c", script, engine_url_for], check=True, cwd=ROOT, timeout=60)
    assert ids(lt.search("cherries")) == ["local", "remote"]


def test_incremental_apply_reads_only_the_log(engine: Engine) -> None:
    lt = LongTermMemory(engine, "inc")
    for i in range(3):
        lt.save(content=f"pear {i}", id=f"p{i}")
    lt.search("pear")
    cache = scope_cache(engine, "inc")
    index_before = cache.indexes["default"]
    lt.save(content="pear 3", id="p3")
    assert ids(lt.search("pear")) == ["p0", "p1", "p2", "p3"]
    assert cache.indexes["default"] is index_before  # updated in place, not rebuilt


def test_trimmed_log_forces_a_rebuild(engine: Engine, second: Engine) -> None:
    reader, writer = LongTermMemory(engine, "trim"), LongTermMemory(second, "trim")
    reader.save(content="plum one", id="p1")
    reader.search("plum")
    for i in range(2, 5):
        writer.save(content=f"plum {i}", id=f"p{i}")
    second.ltrim(writer.keys.log, -1, -1)  # as if LOG_MAX changes had happened meanwhile
    assert ids(reader.search("plum")) == ["p1", "p2", "p3", "p4"]


def test_flushed_engine_is_never_confused_with_the_cache(engine: Engine) -> None:
    lt = LongTermMemory(engine, "flush")
    lt.save(content="kiwi old", id="old")
    assert ids(lt.search("kiwi")) == ["old"]
    engine.flush()
    lt.save(content="kiwi new", id="new")
    assert ids(lt.search("kiwi")) == ["new"]


def test_fresh_memory_engines_do_not_share_a_cache(clock: ManualClock) -> None:
    with open_engine("memory://", clock=clock) as one:
        LongTermMemory(one, "same").save(content="grape one", id="g1")
        assert ids(LongTermMemory(one, "same").search("grape")) == ["g1"]
    with open_engine("memory://", clock=clock) as two:
        LongTermMemory(two, "same").save(content="grape two", id="g2")
        assert ids(LongTermMemory(two, "same").search("grape")) == ["g2"]


def test_a_corrupt_stored_entry_is_left_out_with_a_warning(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    lt = LongTermMemory(engine, "corrupt")
    lt.save(content="melon fine", id="ok")
    lt.save(content="melon soon broken", id="bad")
    assert ids(lt.search("melon")) == ["bad", "ok"]
    batch = engine.batch()
    batch.set(lt.keys.entry("bad"), "{not json")
    batch.incr(lt.keys.version)
    batch.rpush(lt.keys.log, "put bad")
    batch.execute()
    with caplog.at_level("WARNING", logger="memstack.tiers.longterm"):
        assert ids(lt.search("melon")) == ["ok"]
    assert "'bad'" in caplog.text
