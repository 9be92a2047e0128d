"""The command table is the vocabulary: every engine, view and codec implements exactly it."""

from __future__ import annotations

import inspect
import re
from importlib import resources
from typing import Any

import pytest

from memstack.engines import Engine, base, prefixed
from memstack.engines._calls import Commands
from memstack.engines.commands import COMMANDS, GUARDS, OPS, READS, WRITES, handler_map
from memstack.engines.memory import ops as _memory_ops
from memstack.engines.redis import codec as _redis_codec
from memstack.engines.redis import lua as _redis_lua
from memstack.engines.sqlite import ops as _sqlite_ops
from memstack.foundation.errors import InvalidInput

from ._keyspace import key
from .test_check_before_write import valid_args


class Recorder(Commands):
    """Commands whose ops are recorded, not run."""

    def __init__(self) -> None:
        self.ops: list[tuple[str, tuple[Any, ...]]] = []

    def _op(self, name: str, *args: Any) -> Any:
        self.ops.append((name, args))
        return None


def test_the_kind_sets_derive_from_the_table_and_stay_importable_from_base() -> None:
    assert READS | WRITES | GUARDS == OPS == set(COMMANDS)
    assert not (READS & WRITES) and not (READS & GUARDS) and not (WRITES & GUARDS)
    assert (base.READS, base.WRITES, base.GUARDS, base.OPS) == (READS, WRITES, GUARDS, OPS)
    assert {n for n, c in COMMANDS.items() if c.kind == "guard"} == GUARDS
    assert len(COMMANDS) == 41


def test_memory_and_sqlite_handle_exactly_the_table() -> None:
    assert list(_memory_ops.OPS) == list(COMMANDS)
    assert list(_sqlite_ops.OPS) == list(COMMANDS)


def test_a_handler_map_refuses_a_missing_or_an_unknown_handler() -> None:
    handlers: dict[str, Any] = {f"op_{n}": print for n in COMMANDS}
    assert set(handler_map(handlers, "op_", "test")) == set(COMMANDS)
    with pytest.raises(AssertionError, match=r"missing for \['get'\]"):
        handler_map({k: v for k, v in handlers.items() if k != "op_get"}, "op_", "test")
    with pytest.raises(AssertionError, match=r"unknown handlers \['hsetnx'\]"):
        handler_map({**handlers, "op_hsetnx": print}, "op_", "test")


def test_the_command_methods_are_exactly_the_table_and_build_their_own_op() -> None:
    methods = {
        name for name, member in inspect.getmembers(Commands, inspect.isfunction) if not name.startswith("_")
    }
    assert methods == set(COMMANDS)
    recorder = Recorder()
    samples: dict[str, tuple[Any, ...]] = {
        "hset": ("k", {"f": "v"}),
        "zadd": ("k", {"m": 1}),
        "mget": (["a", "b"],),
        "hmget": ("k", ["f"]),
        "set": ("k", "v"),
        "pexpire": ("k", 1),
        "incr": ("k",),
        "hincr": ("k", "f"),
        "lrange": ("k", 0, -1),
        "ltrim": ("k", 0, -1),
        "lindex": ("k", 0),
        "zrange": ("k", 0, -1),
        "zrangebyscore": ("k", 0, 1),
        "publish": ("c", "m"),
        "require_equal": ("k", "v"),
        "hget": ("k", "f"),
        "sismember": ("k", "m"),
        "zscore": ("k", "m"),
    }
    for name in COMMANDS:
        getattr(recorder, name)(*samples.get(name, ("k",)))
        built, args = recorder.ops[-1]
        assert built == name
        assert len(args) >= len(COMMANDS[name].args) - COMMANDS[name].variadic, name


def test_the_tenant_view_rewrites_every_command_by_its_key_positions() -> None:
    assert set(prefixed._KEY_ARGS) == set(COMMANDS)
    assert prefixed._KEY_ARGS["copy_ttl"] is None and prefixed._KEY_ARGS["publish"] == (0,)
    assert prefixed._KEY_ARGS["hset"] == (0,)


def test_the_codec_encodes_and_decodes_by_the_table() -> None:
    assert set(_redis_codec._ENCODERS) == {n for n, c in COMMANDS.items() if c.encoder is not None}
    assert set(_redis_codec._DECODERS) == {n for n, c in COMMANDS.items() if c.reply is not None}
    assert {"delete", "mget", "copy_ttl"} == _redis_codec._ALL_KEYS
    assert {"publish"} == _redis_codec._NO_KEYS


def test_the_lua_interpreter_runs_exactly_the_table() -> None:
    source = resources.files("memstack.engines.redis").joinpath("batch.lua").read_text("utf-8")
    pass2 = source[source.index("local results, published") :]
    judge = source[source.index("local function guard(") : source.index("-- Pass 1")]
    handled = set(re.findall(r"name == '(\w+)'", pass2)) - {"noop"}
    judged = set(re.findall(r"name == '(\w+)'", judge)) | {"require_equal"}  # its fall-through
    assert handled | judged == set(COMMANDS)
    assert judged == GUARDS
    prelude = _redis_lua.facts_prelude()
    assert _redis_lua.SCRIPT.startswith(prelude)
    for name, command in COMMANDS.items():
        family = "nil" if command.family is None else f"'{command.family}'"
        code = _redis_lua.code_of(command)
        assert f"if name == '{name}' then return {family}, '{code}' end" in prelude
    assert {_redis_lua.code_of(c) for c in COMMANDS.values()} == set(_redis_lua.CODES)
    assert _redis_lua.code_of(COMMANDS["hset"]) == "n" and _redis_lua.code_of(COMMANDS["rpush"]) == "c"
    assert _redis_lua.code_of(COMMANDS["publish"]) == "p" and _redis_lua.code_of(COMMANDS["ltrim"]) == "s"


def test_the_lua_resources_stay_small() -> None:
    for name in _redis_lua.RESOURCES:
        text = resources.files("memstack.engines.redis").joinpath(name).read_text("utf-8")
        assert len(text.splitlines()) < 400, name


@pytest.mark.parametrize("view", ["plain", "tenant"])
def test_every_engine_runs_every_command_of_the_table_and_no_other(engine: Engine, view: str) -> None:
    target = engine if view == "plain" else prefixed.tenant_engine(engine, "acme")
    for name in COMMANDS:
        result = target.execute([(name, valid_args(target, name, key(target, "c-" + name)))])
        assert len(result.results) == 1, name
    for bogus in ("hsetnx", "flushall", "op_get", "_op_get", "GET", "noop", ""):
        with pytest.raises(InvalidInput, match="not in the seam's command table"):
            target.execute([(bogus, (key(target, "x"),))])
