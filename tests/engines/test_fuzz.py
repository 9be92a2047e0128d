"""A seeded fuzz over the seam: hostile arguments, random batches, every engine side by side.

Each batch runs on memory, SQLite, Redis, Redis Cluster and PostgreSQL (the same manual clock), through raw
``execute`` or through the ``Commands`` methods. Every failure must be a ``MemstackError``, the
engines must agree on accepting or refusing each batch (and on the error type), on its results,
and, checked every few batches, on the whole keyspace.
"""

from __future__ import annotations

import contextlib
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstack import ManualClock
from memstack.engines import Engine, open_engine
from memstack.engines._checks import MAX_TTL_MS
from memstack.engines.commands import COMMANDS, Command
from memstack.foundation.errors import MemstackError

from ._keyspace import snapshot

SEED = 18
BATCHES = 400
HOSTILE = 0.03

Op = tuple[Any, ...]

_TEXTS = ["", "v", "é€", "1", "-0", "5.0", "9223372036854775807", "1e400", "abc", "a\x00b", "0x10"]
_POOLS: dict[str, tuple[list[Any], list[Any]]] = {
    # kind: (ordinary values, hostile values)
    "text": (_TEXTS, ["x\udfff", "\ud800", 2, None, b"bytes"]),
    "int": ([0, 1, -1, 2, -2, 5, 2**63 - 1, -(2**63)], [2**63, 1.0, True, None, "1"]),
    "bool": ([True, False], [1, None, "yes"]),
    "px?": ([None, None, 1000, 1, 5000, MAX_TTL_MS], [0, -1, MAX_TTL_MS + 1, 10**20, 1.5]),
    "ms": ([1000, 0, -5, 3000, MAX_TTL_MS], [MAX_TTL_MS + 1, 2**64, 1.0, None]),
    "amount": ([1, -1, 2, 0.5, -2.25, 2**62, -(2**62), 2**63 - 1, 1e308], [2**63, math.inf, math.nan, "1"]),
    "score": ([0.0, 1.5, -2.0, math.inf, -math.inf, 3, 0.1], [math.nan, "1", None]),
}  # fmt: skip


_FAMILIES = ["string", "hash", "set", "list", "zset"]  # keys a-b, c-d, e-f, g-h, i-j


class Fuzzer:
    """Random ops and batches from one seeded generator."""

    def __init__(self, seed: int, tag: str) -> None:
        self.rng = random.Random(seed)
        self.keys = [f"t:{tag}:{name}" for name in "abcdefghij"]

    def value(self, kind: str) -> Any:
        rng = self.rng
        if kind == "key":
            return rng.choice(["\ud800", 7, None]) if rng.random() < HOSTILE else rng.choice(self.keys)
        if kind.endswith("?") and kind != "px?":
            return None if rng.random() < 0.4 else self.value(kind[:-1])
        if kind == "fields":
            if rng.random() < HOSTILE:
                return rng.choice([[("f", "v")], {"\udc00": "v"}, {"f": 3}])
            return {self.value("text"): self.value("text") for _ in range(rng.randint(0, 3))}
        if kind == "scores":
            return {self.value("text"): self.value("score") for _ in range(rng.randint(0, 3))}
        ordinary, hostile = _POOLS[kind]
        return rng.choice(hostile if rng.random() < HOSTILE else ordinary)

    def op(self) -> Op:
        rng = self.rng
        if rng.random() < 0.01:
            return rng.choice([("hsetnx", (self.keys[0], "f", "v")), ("get", [self.keys[0]]), ("get",)])
        command: Command = COMMANDS[rng.choice(list(COMMANDS))]
        kinds = [a.removesuffix("*") for a in command.args]
        fixed = kinds[: len(kinds) - command.variadic]
        args = [self.value(kind) for kind in fixed]
        if command.family is not None and args and rng.random() < 0.85:
            # Mostly the keys of the command's type, so most batches get past the type checks.
            args[0] = rng.choice(self.keys[_FAMILIES.index(command.family) * 2 :][:2])
        if command.variadic:
            args += [self.value(kinds[-1]) for _ in range(rng.randint(0, 3))]
        return command.name, tuple(args)

    def batch(self) -> list[Op]:
        ops = [self.op() for _ in range(self.rng.randint(1, 4))]
        # Guards mostly lead, as callers write them (a misplaced one stays possible).
        guards = [op for op in ops if op[0] in ("require_exists", "require_missing", "require_equal")]
        if guards and self.rng.random() < 0.8:
            ops = guards + [op for op in ops if op not in guards]
        return ops


def call_method(engine: Engine, op: Op) -> Any:
    """``op`` through the ``Commands`` method of its name."""
    name, args = op
    if name == "set":
        key, value, px, nx, xx, keepttl = args
        return engine.set(key, value, px=px, nx=nx, xx=xx, keepttl=keepttl)
    if name == "mget":
        return engine.mget(list(args))
    if name == "hmget":
        return engine.hmget(args[0], list(args[1:]))
    if name == "zrange":
        return engine.zrange(*args[:3], desc=args[3])
    if name == "zrangebyscore":
        key, low, high, desc, offset, count = args
        return engine.zrangebyscore(key, low, high, desc=desc, offset=offset, count=count)
    return getattr(engine, name)(*args)


def outcome(engine: Engine, ops: list[Op], through_methods: bool) -> tuple[Any, ...]:
    """What a caller sees: applied and results (normalised), or the error type."""
    try:
        if through_methods:
            results = [call_method(engine, ops[0])]
            applied = True
        else:
            result = engine.execute(ops)  # type: ignore[arg-type] # raw ops may be malformed
            applied, results = result.applied, result.results
    except MemstackError as exc:
        return ("refused", type(exc).__name__)
    except Exception as exc:
        return ("alien", type(exc).__name__, str(exc)[:200])
    names = [op[0] for op in ops]
    normal = [sorted(r) if n == "hkeys" else r for n, r in zip(names, results, strict=False)]
    return ("ok", applied, normal)


@contextlib.contextmanager
def all_engines(
    tmp_path: Path, redis_urls: tuple[str, str] | None, clock: ManualClock, postgres_url: str | None = None
) -> Iterator[dict[str, Engine]]:
    urls = {"memory": "memory://", "sqlite": f"sqlite:///{tmp_path / 'fuzz.db'}"}
    if redis_urls is not None:
        urls.update({"redis": redis_urls[0], "redis-cluster": redis_urls[1]})
    if postgres_url is not None:
        urls["postgres"] = postgres_url
    engines: dict[str, Engine] = {}
    try:
        for kind, url in urls.items():
            engines[kind] = open_engine(url, clock=clock)
            engines[kind].flush()
        yield engines
    finally:
        for engine in engines.values():
            engine.close()


def test_hostile_batches_raise_only_memstack_errors_and_every_engine_agrees(
    tmp_path: Path, redis_urls: tuple[str, str] | None, postgres_url: str | None, clock: ManualClock
) -> None:
    with all_engines(tmp_path, redis_urls, clock, postgres_url) as engines:
        fuzzer = Fuzzer(SEED, "{fz}")  # one hash tag: every batch is legal on the cluster
        refused = applied = 0
        for number in range(BATCHES):
            ops = fuzzer.batch()
            through_methods = len(ops) == 1 and fuzzer.rng.random() < 0.5 and len(ops[0]) == 2
            if through_methods and (isinstance(ops[0][1], list) or ops[0][0] not in COMMANDS):
                through_methods = False  # a method call needs a method and its arguments
            seen = {kind: outcome(engine, ops, through_methods) for kind, engine in engines.items()}
            aliens = {kind: o for kind, o in seen.items() if o[0] == "alien"}
            assert not aliens, (number, ops, aliens)
            assert all(o == seen["memory"] for o in seen.values()), (number, ops, seen)
            refused += seen["memory"][0] == "refused"
            applied += seen["memory"][0] == "ok"
            if number % 25 == 24:
                snaps = {kind: snapshot(engine) for kind, engine in engines.items()}
                assert all(s == snaps["memory"] for s in snaps.values()), (number, snaps)
            clock.advance(fuzzer.rng.choice([0, 0, 0, 0.5, 2.0]))
        assert refused > 40 and applied > 150, (refused, applied)  # the fuzz exercised both sides


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_op_generation_is_seeded(seed: int) -> None:
    assert Fuzzer(seed, "x").batch() == Fuzzer(seed, "x").batch()
