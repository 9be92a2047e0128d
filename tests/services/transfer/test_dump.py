"""Export and import of every key round-trips types, values and TTLs, on every engine."""

from __future__ import annotations

import io
import json

import pytest

from memstack.engines import Engine
from memstack.foundation.clock import ManualClock
from memstack.foundation.errors import InvalidValue
from memstack.services.transfer.dump import dump_lines, export_jsonl, import_jsonl
from memstack.tiers.longterm import LongTermMemory


def _fill(engine: Engine) -> None:
    engine.set("s", "text with\nnewline and ünïcode", px=60_000)
    engine.hset("h", {"a": "1", "b": "2"})
    engine.sadd("set", "x", "y")
    engine.rpush("l", "1", "2", "3")
    engine.zadd("z", {"m": 1.5, "n": -2.0})


def test_round_trip(engine: Engine, clock: ManualClock) -> None:
    _fill(engine)
    out = io.StringIO()
    assert export_jsonl(engine, out) == 5
    before = list(dump_lines(engine))
    engine.flush()
    assert list(dump_lines(engine)) == []
    assert import_jsonl(engine, out.getvalue().splitlines()) == 5
    after = list(dump_lines(engine))
    shape = [(r["key"], r["type"], r["value"]) for r in before]
    assert [(r["key"], r["type"], r["value"]) for r in after] == shape
    assert 0 < engine.pttl("s") <= 60_000
    assert engine.pttl("h") == -1
    clock.advance(61)
    assert engine.get("s") is None


def test_prefix_limits_the_export(engine: Engine) -> None:
    _fill(engine)
    engine.set("other:k", "v")
    assert [r["key"] for r in dump_lines(engine, "other:")] == ["other:k"]


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("not json", "line 1: not JSON"),
        ('{"key": "k"}', "line 1: not an export record"),
        ('{"key": "k", "type": "hash", "value": "x", "pttl": null}', "does not match"),
        ('{"key": 5, "type": "string", "value": "x"}', "not an export record"),
    ],
)
def test_bad_lines_name_the_line_and_keep_earlier_ones(engine: Engine, line: str, match: str) -> None:
    good = '{"key": "ok", "type": "string", "value": "v", "pttl": null}'
    with pytest.raises(InvalidValue, match=match.replace("line 1", "line 2")):
        import_jsonl(engine, [good, line])
    assert engine.get("ok") == "v"


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("[" * 5000 + "]" * 5000, "line 2: nested deeper than 100 levels"),
        ('{"key": "k\\ud800", "type": "string", "value": "x"}', "lone surrogate"),
        ('{"key": "k", "type": "string", "value": "x\\udfff"}', "lone surrogate"),
        ('{"key": "k", "type": "hash", "value": {"f\\ud800": "v"}}', "lone surrogate"),
        ('{"key": "k", "type": "set", "value": ["a", 1]}', "list of strings"),
        ('{"key": "k", "type": "list", "value": [["nested"]]}', "list of strings"),
        ('{"key": "k", "type": "hash", "value": {"f": {"x": 1}}}', "list of strings"),
        ('{"key": "k", "type": "zset", "value": [["m", "high"]]}', "not a finite number"),
        ('{"key": "k", "type": "zset", "value": [["m", NaN]]}', "not JSON"),
        ('{"key": "k", "type": "zset", "value": [["m"]]}', r"\[member, score\]"),
        ('{"key": "k", "type": "zset", "value": {"m": 1}}', r"\[member, score\]"),
        ('{"key": "k", "type": "set", "value": []}', "an empty set"),
        ('{"key": "k", "type": "string", "value": "x", "pttl": 0}', "pttl 0"),
        ('{"key": "k", "type": "string", "value": "x", "pttl": true}', "pttl True"),
        ('{"key": "k", "type": "string", "value": "x", "pttl": 1e300}', "pttl"),
        ('{"key": "k", "type": "string", "value": "x", "pttl": 100000000000000000000}', "pttl"),
        ('{"key": "", "type": "string", "value": "x"}', "not an export record"),
        ('["key", "type", "value"]', "not an export record"),
        ("1" * 5000, "more than 4000 digits"),
    ],
)
def test_hostile_lines_are_refused_before_any_write(engine: Engine, line: str, match: str) -> None:
    good = '{"key": "ok", "type": "string", "value": "v", "pttl": null}'
    with pytest.raises(InvalidValue, match=match):
        import_jsonl(engine, [good, line])
    assert sorted(engine.scan("")) == ["ok"]


def test_a_replaced_key_keeps_nothing_of_its_old_value(engine: Engine) -> None:
    engine.hset("k", {"old": "1"})
    import_jsonl(engine, ['{"key": "k", "type": "zset", "value": [["m", 2]], "pttl": 5000}'])
    assert engine.zrange("k", 0, -1) == [("m", 2.0)]
    assert 0 < engine.pttl("k") <= 5000


def test_long_term_snapshots_are_left_out(engine: Engine) -> None:
    lt = LongTermMemory(engine, "big")
    lt.save(id="snap", content="an entry whose id looks like the snapshot key")
    assert lt.snapshot()
    out = io.StringIO()
    export_jsonl(engine, out)
    keys = [json.loads(line)["key"] for line in out.getvalue().splitlines()]
    assert any(key.endswith(":e:snap") for key in keys)  # the entry stays
    entry_keys = (":e:", ":h:")  # the entry and its history
    assert not any(
        key.endswith((":snap", ":snapver")) for key in keys if not any(k in key for k in entry_keys)
    )
