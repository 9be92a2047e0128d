"""The index kit's mirror on every engine: catching up from the change log, rebuilding on a new
epoch or a log that no longer reaches back, never writing, and starting over after a failure."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memstack.engines import Engine
from memstack.foundation.errors import EngineError
from memstack.index import changelog
from memstack.index.changelog import SetKeys
from memstack.index.mirror import Mirror, Row, decoded

KEYS = SetKeys("t:{m}:")


class Texts(Mirror):
    """The simplest client: every entry's text; counts what it was given."""

    vector_hash = "vectors"

    def __init__(self) -> None:
        super().__init__()
        self.texts: dict[str, str] = {}
        self.vectors: dict[str, str] = {}
        self.taken = 0
        self.resets = 0

    def reset(self) -> None:
        self.texts, self.vectors = {}, {}
        self.resets += 1

    def take(self, rows: Sequence[Row]) -> None:
        for key, raw, payload in rows:
            self.taken += 1
            if raw is None:
                self.texts.pop(key, None)
            else:
                self.texts[key] = raw
            if payload is None:
                self.vectors.pop(key, None)
            else:
                self.vectors[key] = payload
        self.size = len(self.texts)


def _write(engine: Engine, op: str, **entries: str) -> None:
    batch = engine.batch()
    for key, text in entries.items():
        if op == "put":
            batch.set(KEYS.entry(key), text)
            batch.hset(KEYS.vectors, {key: f"v-{text}"})
        else:
            batch.delete(KEYS.entry(key))
            batch.hdel(KEYS.vectors, key)
    KEYS.record(batch, op, list(entries))
    batch.execute()


def test_a_mirror_catches_up_with_what_changed(engine: Engine) -> None:
    mirror = Texts()
    mirror.refresh(engine, KEYS)
    assert mirror.texts == {} and mirror.fresh and mirror.epoch is None  # never written
    _write(engine, "put", a="apple", b="banana")
    mirror.refresh(engine, KEYS)  # a new epoch: rebuilt from the ids set
    assert mirror.texts == {"a": "apple", "b": "banana"} and mirror.vectors["a"] == "v-apple"
    taken = mirror.taken
    _write(engine, "put", b="blueberry")
    _write(engine, "del", a="")
    mirror.refresh(engine, KEYS)
    assert mirror.texts == {"b": "blueberry"} and mirror.taken == taken + 2  # only what the log names
    mirror.refresh(engine, KEYS)
    assert mirror.taken == taken + 2  # nothing changed: nothing read
    assert mirror.approx_bytes() > 0


def test_a_log_that_no_longer_reaches_back_rebuilds(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    mirror = Texts()
    _write(engine, "put", a="1")
    mirror.refresh(engine, KEYS)
    monkeypatch.setattr(changelog, "LOG_MAX", 2)
    _write(engine, "put", b="2", c="3", d="4")
    resets = mirror.resets
    mirror.refresh(engine, KEYS)
    assert mirror.resets == resets + 1 and mirror.texts == {"a": "1", "b": "2", "c": "3", "d": "4"}


def test_a_flush_or_a_restart_starts_over(engine: Engine) -> None:
    mirror = Texts()
    _write(engine, "put", a="1", b="2")
    mirror.refresh(engine, KEYS)
    engine.flush()
    _write(engine, "put", c="3")  # version 1 again: only the epoch tells
    mirror.refresh(engine, KEYS)
    assert mirror.texts == {"c": "3"}
    batch = engine.batch()
    KEYS.restart(batch)
    batch.execute()
    mirror.refresh(engine, KEYS)
    assert mirror.texts == {}


def test_a_refresh_never_writes(engine: Engine) -> None:
    mirror = Texts()
    mirror.refresh(engine, KEYS)
    assert sorted(engine.scan("")) == []  # not even the epoch: the first write creates it
    _write(engine, "put", a="1")
    before = sorted(engine.scan(""))
    state = engine.mget([KEYS.version, KEYS.epoch, KEYS.entry("a")])
    Texts().refresh(engine, KEYS)
    assert sorted(engine.scan("")) == before
    assert engine.mget([KEYS.version, KEYS.epoch, KEYS.entry("a")]) == state


def test_a_failed_refresh_leaves_the_mirror_to_rebuild(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = Texts()
    _write(engine, "put", a="1")
    mirror.refresh(engine, KEYS)
    _write(engine, "put", b="2")

    def broken(*args: object) -> object:
        raise EngineError("down")

    monkeypatch.setattr(engine, "mget", broken)
    with pytest.raises(EngineError):
        mirror.refresh(engine, KEYS)
    assert not mirror.fresh
    monkeypatch.undo()
    mirror.refresh(engine, KEYS)
    assert mirror.fresh and mirror.texts == {"a": "1", "b": "2"}


def test_decoded_leaves_out_what_is_not_an_entry() -> None:
    def number(raw: str) -> int:
        if not raw.isdigit():
            from memstack.foundation.errors import InvalidValue

            raise InvalidValue(raw)
        return int(raw)

    assert decoded(number, "12") == 12 and decoded(number, None) is None
    assert decoded(number, "x", "entry 'k'") is None
