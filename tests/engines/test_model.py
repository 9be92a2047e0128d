"""Model-based test: random command sequences on each engine against a plain-dict model.

The model is written from the rules of ``engines/base.py`` (types, empty containers vanish,
TTLs on a manual clock, atomic batches); after every step each key's type, content and TTL must
match. Each state-machine run gets a fresh engine (a new SQLite file; a flushed Redis).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from memstack import ManualClock
from memstack.engines import Engine, WrongType, open_engine
from memstack.engines import _semantics as sem
from memstack.foundation.errors import NotANumber

from .test_conformance import k

Entry = list[Any]  # [kind, value, expire-at or None]


class Model:
    """What every engine must do, as dict operations; methods raise what the engine raises."""

    def __init__(self) -> None:
        self.data: dict[str, Entry] = {}

    def live(self, key: str, now: int) -> Entry | None:
        entry = self.data.get(key)
        if entry is not None and entry[2] is not None and entry[2] <= now:
            del self.data[key]
            return None
        return entry

    def typed(self, key: str, kind: str, now: int) -> Entry | None:
        entry = self.live(key, now)
        if entry is not None and entry[0] != kind:
            raise WrongType(key)
        return entry

    def container(self, key: str, kind: str, now: int, empty: Any) -> Entry:
        entry = self.typed(key, kind, now)
        if entry is None:
            entry = self.data[key] = [kind, empty, None]
        return entry

    def vanish_if_empty(self, key: str, entry: Entry) -> None:
        if not entry[1]:
            del self.data[key]

    # Commands, with the public signatures of ``Commands`` after ``now``.
    def set(self, now: int, key: str, value: str, px: int | None = None) -> bool:
        self.data[key] = ["string", value, None if px is None else now + px]
        return True

    def get(self, now: int, key: str) -> str | None:
        entry = self.typed(key, "string", now)
        return None if entry is None else str(entry[1])

    def delete(self, now: int, *keys: str) -> int:
        count = 0
        for key in dict.fromkeys(keys):
            if self.live(key, now) is not None:
                del self.data[key]
                count += 1
        return count

    def incr(self, now: int, key: str, amount: int) -> int | float:
        entry = self.typed(key, "string", now)
        total = sem.add_numbers(sem.parse_number(None if entry is None else entry[1], key), amount, key)
        self.data[key] = ["string", sem.format_number(total), None if entry is None else entry[2]]
        return total

    def pexpire(self, now: int, key: str, ms: int) -> bool:
        entry = self.live(key, now)
        if entry is None:
            return False
        if ms <= 0:
            del self.data[key]
        else:
            entry[2] = now + ms
        return True

    def pttl(self, now: int, key: str) -> int:
        entry = self.live(key, now)
        if entry is None:
            return -2
        return -1 if entry[2] is None else int(entry[2]) - now

    def hset(self, now: int, key: str, mapping: dict[str, str]) -> int:
        if not mapping:
            return 0
        fields: dict[str, str] = self.container(key, "hash", now, {})[1]
        new = sum(f not in fields for f in mapping)
        fields.update(mapping)
        return new

    def hget(self, now: int, key: str, field: str) -> str | None:
        entry = self.typed(key, "hash", now)
        return None if entry is None else entry[1].get(field)

    def hdel(self, now: int, key: str, *fields: str) -> int:
        entry = self.typed(key, "hash", now)
        if entry is None:
            return 0
        count = sum(entry[1].pop(f, None) is not None for f in dict.fromkeys(fields))
        self.vanish_if_empty(key, entry)
        return count

    def sadd(self, now: int, key: str, *members: str) -> int:
        if not members:
            return 0
        values: set[str] = self.container(key, "set", now, set())[1]
        new = len(set(members) - values)
        values.update(members)
        return new

    def srem(self, now: int, key: str, *members: str) -> int:
        entry = self.typed(key, "set", now)
        if entry is None:
            return 0
        count = len(set(members) & entry[1])
        entry[1].difference_update(members)
        self.vanish_if_empty(key, entry)
        return count

    def smembers(self, now: int, key: str) -> set[str]:
        entry = self.typed(key, "set", now)
        return set() if entry is None else set(entry[1])

    def rpush(self, now: int, key: str, *values: str) -> int:
        items: list[str] = self.container(key, "list", now, [])[1]
        items.extend(values)
        return len(items)

    def lpush(self, now: int, key: str, *values: str) -> int:
        items: list[str] = self.container(key, "list", now, [])[1]
        for value in values:
            items.insert(0, value)
        return len(items)

    def lrange(self, now: int, key: str, start: int, stop: int) -> list[str]:
        entry = self.typed(key, "list", now)
        items: list[str] = [] if entry is None else entry[1]
        n = len(items)
        lo = max(start + n if start < 0 else start, 0)
        hi = min(stop + n if stop < 0 else stop, n - 1)
        return items[lo : hi + 1] if lo <= hi else []

    def ltrim(self, now: int, key: str, start: int, stop: int) -> None:
        entry = self.typed(key, "list", now)
        if entry is not None:
            entry[1] = self.lrange(now, key, start, stop)
            self.vanish_if_empty(key, entry)

    def zadd(self, now: int, key: str, mapping: dict[str, float]) -> int:
        if not mapping:
            return 0
        scores: dict[str, float] = self.container(key, "zset", now, {})[1]
        new = sum(m not in scores for m in mapping)
        scores.update(mapping)
        return new

    def zrem(self, now: int, key: str, *members: str) -> int:
        entry = self.typed(key, "zset", now)
        if entry is None:
            return 0
        count = sum(entry[1].pop(m, None) is not None for m in dict.fromkeys(members))
        self.vanish_if_empty(key, entry)
        return count

    def zrange(
        self, now: int, key: str, start: int, stop: int, desc: bool = False
    ) -> list[tuple[str, float]]:
        entry = self.typed(key, "zset", now)
        scores: dict[str, float] = {} if entry is None else entry[1]
        order = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=desc)
        n = len(order)
        lo = max(start + n if start < 0 else start, 0)
        hi = min(stop + n if stop < 0 else stop, n - 1)
        return order[lo : hi + 1] if lo <= hi else []


# Key 0 is shared by every type (type clashes); each type also has two keys of its own, so
# sequences build real containers instead of mostly meeting WrongType.
KEY_COUNT = 11
ANY = st.integers(0, KEY_COUNT - 1)
STR = st.sampled_from([0, 1, 2])
HASH = st.sampled_from([0, 3, 4])
SET = st.sampled_from([0, 5, 6])
LIST = st.sampled_from([0, 7, 8])
ZSET = st.sampled_from([0, 9, 10])
VALUES = st.sampled_from(["", "a", "1", "-2", "2.5", "x\ny", "é", str(2**63 - 1)])
FIELDS = st.sampled_from(["f", "g", "h"])
MEMBERS = st.sampled_from(["a", "b", "c", "d"])
SCORES = st.sampled_from([0.0, 1.0, -2.5, 3.0])
INDEXES = st.integers(-6, 6)
AMOUNTS = st.integers(-3, 3)
PX = st.none() | st.integers(1, 3000)


def _write_ops() -> st.SearchStrategy[tuple[str, tuple[Any, ...]]]:
    """One write command as (name, public-signature args with key indexes)."""
    return st.one_of(
        st.tuples(st.just("set"), st.tuples(STR, VALUES)),
        st.tuples(st.just("incr"), st.tuples(STR, AMOUNTS)),
        st.tuples(st.just("hset"), st.tuples(HASH, st.dictionaries(FIELDS, VALUES, max_size=2))),
        st.tuples(st.just("hdel"), st.tuples(HASH, FIELDS)),
        st.tuples(st.just("sadd"), st.tuples(SET, MEMBERS, MEMBERS)),
        st.tuples(st.just("srem"), st.tuples(SET, MEMBERS)),
        st.tuples(st.just("rpush"), st.tuples(LIST, VALUES)),
        st.tuples(st.just("lpush"), st.tuples(LIST, VALUES, VALUES)),
        st.tuples(st.just("ltrim"), st.tuples(LIST, INDEXES, INDEXES)),
        st.tuples(st.just("zadd"), st.tuples(ZSET, st.dictionaries(MEMBERS, SCORES, max_size=2))),
        st.tuples(st.just("zrem"), st.tuples(ZSET, MEMBERS)),
        st.tuples(st.just("delete"), st.tuples(ANY)),
        st.tuples(st.just("pexpire"), st.tuples(ANY, st.integers(-5, 3000))),
    )


class EngineMachine(RuleBasedStateMachine):
    """Drives one engine and the model with the same commands; subclassed per engine."""

    make_engine: Callable[[ManualClock], Engine]

    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock(start=1_700_000_000.0)
        self.engine = type(self).make_engine(self.clock)
        self.model = Model()
        self.keys = [k(self.engine, f"m{i}") for i in range(KEY_COUNT)]

    def teardown(self) -> None:
        self.engine.close()

    def both(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Run one command on both sides: same result, or the same error."""
        now = self.engine.now_ms()
        try:
            expected = getattr(self.model, name)(now, *args, **kwargs)
        except (WrongType, NotANumber) as exc:
            with pytest.raises(type(exc)):
                getattr(self.engine, name)(*args, **kwargs)
            return
        assert getattr(self.engine, name)(*args, **kwargs) == expected, name

    def resolve(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        return (self.keys[args[0]], *args[1:])

    @initialize(
        lists=st.lists(st.lists(VALUES, min_size=1, max_size=5), min_size=2, max_size=2),
        hashes=st.lists(st.dictionaries(FIELDS, VALUES, min_size=1), min_size=2, max_size=2),
        sets=st.lists(st.lists(MEMBERS, min_size=1, max_size=4), min_size=2, max_size=2),
        zsets=st.lists(st.dictionaries(MEMBERS, SCORES, min_size=1), min_size=2, max_size=2),
    )
    def fill(
        self,
        lists: list[list[str]],
        hashes: list[dict[str, str]],
        sets: list[list[str]],
        zsets: list[dict[str, float]],
    ) -> None:
        """Start from populated containers, so trims, pops and ranges meet real content."""
        for i in range(2):
            self.both("rpush", self.keys[7 + i], *lists[i])
            self.both("hset", self.keys[3 + i], hashes[i])
            self.both("sadd", self.keys[5 + i], *sets[i])
            self.both("zadd", self.keys[9 + i], zsets[i])

    @rule(key=STR, value=VALUES, px=PX)
    def set(self, key: int, value: str, px: int | None) -> None:
        self.both("set", self.keys[key], value, px=px)

    @rule(key=ANY)
    def get(self, key: int) -> None:
        self.both("get", self.keys[key])

    @rule(key=STR, amount=AMOUNTS)
    def incr(self, key: int, amount: int) -> None:
        self.both("incr", self.keys[key], amount)

    @rule(key=HASH, mapping=st.dictionaries(FIELDS, VALUES, max_size=3))
    def hset(self, key: int, mapping: dict[str, str]) -> None:
        self.both("hset", self.keys[key], mapping)

    @rule(key=HASH, field=FIELDS)
    def hget(self, key: int, field: str) -> None:
        self.both("hget", self.keys[key], field)

    @rule(key=HASH, fields=st.lists(FIELDS, min_size=1, max_size=2))
    def hdel(self, key: int, fields: list[str]) -> None:
        self.both("hdel", self.keys[key], *fields)

    @rule(key=SET, members=st.lists(MEMBERS, min_size=1, max_size=3))
    def sadd(self, key: int, members: list[str]) -> None:
        self.both("sadd", self.keys[key], *members)

    @rule(key=SET, members=st.lists(MEMBERS, min_size=1, max_size=2))
    def srem(self, key: int, members: list[str]) -> None:
        self.both("srem", self.keys[key], *members)

    @rule(key=ANY)
    def smembers(self, key: int) -> None:
        self.both("smembers", self.keys[key])

    @rule(key=LIST, values=st.lists(VALUES, min_size=1, max_size=3), left=st.booleans())
    def push(self, key: int, values: list[str], left: bool) -> None:
        self.both("lpush" if left else "rpush", self.keys[key], *values)

    @rule(key=ANY, start=INDEXES, stop=INDEXES)
    def lrange(self, key: int, start: int, stop: int) -> None:
        self.both("lrange", self.keys[key], start, stop)

    @rule(key=LIST, start=INDEXES, stop=INDEXES)
    def ltrim(self, key: int, start: int, stop: int) -> None:
        self.both("ltrim", self.keys[key], start, stop)

    @rule(key=ZSET, mapping=st.dictionaries(MEMBERS, SCORES, max_size=3))
    def zadd(self, key: int, mapping: dict[str, float]) -> None:
        self.both("zadd", self.keys[key], mapping)

    @rule(key=ZSET, members=st.lists(MEMBERS, min_size=1, max_size=2))
    def zrem(self, key: int, members: list[str]) -> None:
        self.both("zrem", self.keys[key], *members)

    @rule(key=ZSET, start=INDEXES, stop=INDEXES, desc=st.booleans())
    def zrange(self, key: int, start: int, stop: int, desc: bool) -> None:
        self.both("zrange", self.keys[key], start, stop, desc=desc)

    @rule(keys=st.lists(ANY, min_size=1, max_size=3))
    def delete(self, keys: list[int]) -> None:
        self.both("delete", *(self.keys[i] for i in keys))

    @rule(key=ANY, ms=st.integers(-5, 3000))
    def pexpire(self, key: int, ms: int) -> None:
        self.both("pexpire", self.keys[key], ms)

    @rule(ms=st.integers(0, 2000))
    def advance(self, ms: int) -> None:
        self.clock.advance(ms / 1000)

    @rule(
        guard=st.none() | st.tuples(st.sampled_from(["require_exists", "require_missing"]), ANY),
        ops=st.lists(_write_ops(), min_size=1, max_size=4),
    )
    def batch(self, guard: tuple[str, int] | None, ops: list[tuple[str, tuple[Any, ...]]]) -> None:
        now = self.engine.now_ms()
        trial = copy.deepcopy(self.model)
        batch = self.engine.batch()
        if guard is not None:
            getattr(batch, guard[0])(self.keys[guard[1]])
            live = trial.live(self.keys[guard[1]], now) is not None
            if live != (guard[0] == "require_exists"):
                assert not batch.execute().applied
                return
        expected: list[Any] = [True] if guard is not None else []
        error: type[Exception] | None = None
        for name, args in ops:
            resolved = self.resolve(args)
            getattr(batch, name)(*resolved)
            if error is None:
                try:
                    expected.append(getattr(trial, name)(now, *resolved))
                except (WrongType, NotANumber) as exc:
                    error = type(exc)
        if error is not None:
            with pytest.raises(error):
                batch.execute()
            return  # nothing applied: the model stays as it was
        result = batch.execute()
        assert result.applied
        assert result.results == expected
        self.model = trial

    @invariant()
    def same_state(self) -> None:
        """Every key's TTL, type and content, read in one batch (one round trip on Redis)."""
        now = self.engine.now_ms()
        batch = self.engine.batch()
        expected: list[Any] = []
        for key in self.keys:
            entry = self.model.live(key, now)
            batch.pttl(key)
            expected.append(self.model.pttl(now, key))
            kind, value = ("absent", None) if entry is None else (entry[0], entry[1])
            if kind == "absent":
                batch.exists(key)
                expected.append(False)
            elif kind == "string":
                batch.get(key)
                expected.append(value)
            elif kind == "hash":
                batch.hgetall(key)
                expected.append(value)
            elif kind == "set":
                batch.smembers(key)
                expected.append(value)
            elif kind == "list":
                batch.lrange(key, 0, -1)
                expected.append(value)
            else:
                batch.zrange(key, 0, -1)
                expected.append(self.model.zrange(now, key, 0, -1))
        assert batch.execute().results == expected


def test_engine_matches_model(engine_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    counter = itertools.count()
    redis_urls: tuple[str, str] | None = None
    postgres_url: str | None = None
    if engine_kind.startswith("redis"):  # only Redis runs need the servers
        redis_urls = request.getfixturevalue("redis_urls")
        if redis_urls is None:
            pytest.skip("no redis-server on this machine")
    if engine_kind == "postgres":
        postgres_url = request.getfixturevalue("postgres_url")
        if postgres_url is None:
            pytest.skip("no PostgreSQL on this machine")

    def make_engine(clock: ManualClock) -> Engine:
        if engine_kind == "memory":
            return open_engine("memory://", clock=clock)
        if engine_kind == "sqlite":
            return open_engine(f"sqlite:///{tmp_path / f'model-{next(counter)}.db'}", clock=clock)
        if engine_kind == "postgres":
            assert postgres_url is not None
            engine = open_engine(postgres_url, clock=clock)
            engine.flush()
            return engine
        assert redis_urls is not None
        engine = open_engine(redis_urls[0] if engine_kind == "redis" else redis_urls[1], clock=clock)
        engine.flush()
        return engine

    machine = type(
        f"{engine_kind.title()}Machine", (EngineMachine,), {"make_engine": staticmethod(make_engine)}
    )
    run_state_machine_as_test(machine, settings=settings(settings.default, stateful_step_count=40))
