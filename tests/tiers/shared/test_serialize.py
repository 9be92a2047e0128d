"""Rules for keys, names and values; MemoryChange flags and (de)serialisation."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memstack import ManualClock
from memstack.foundation.errors import InvalidKey, InvalidValue
from memstack.tiers.shared import MemoryChange
from memstack.tiers.shared.serialize import check_key, check_name, check_value


@pytest.mark.parametrize("key", ["k", "analysis:sentiment", "a b", "ключ", "x" * 256, "{tag}"])
def test_valid_keys(key: str) -> None:
    assert check_key(key) == key


@pytest.mark.parametrize("key", ["", "x" * 257, "a\nb", "tab\t", 3, None, b"k"])
def test_invalid_keys_name_the_value(key: object) -> None:
    with pytest.raises(InvalidKey, match="shared memory key"):
        check_key(key)


@pytest.mark.parametrize("name", ["", "a:b", "{x}", "a b", "x" * 129, "k\n"])
def test_invalid_names(name: str) -> None:
    with pytest.raises(InvalidKey, match="must be 1-128 characters"):
        check_name(name)


@pytest.mark.parametrize(
    "value",
    [(1, 2), {1: "a"}, float("nan"), float("inf"), {"a": {2, 3}}, object(), [b"x"], {"a": [1, (2,)]}],
)
def test_non_json_values_refused(value: object) -> None:
    with pytest.raises(InvalidValue, match="value"):
        check_value(value)


def test_json_values_accepted() -> None:
    value = {"a": [1, 2.5, "123", None, True, {"b": []}]}
    assert check_value(value) is value


def _change(value: object, previous: object) -> MemoryChange:
    return MemoryChange("k", value, previous, "w", None, datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))


def test_change_flags() -> None:
    assert _change(1, None).created
    assert not _change(1, None).updated
    assert not _change(1, None).deleted
    assert _change(2, 1).updated
    assert not _change(2, 1).created
    assert _change(None, 1).deleted
    assert not _change(None, 1).updated
    neither = _change(None, None)
    assert not (neither.created)
    assert not (neither.updated)
    assert not (neither.deleted)


def test_change_to_dict_drops_none_and_round_trips() -> None:
    change = _change(1, None)
    assert change.to_dict() == {
        "key": "k",
        "value": 1,
        "writer": "w",
        "timestamp": "2026-01-02T03:04:05.000000Z",
    }
    assert MemoryChange.from_dict(change.to_dict()) == change
    assert json.loads(change.to_json()) == change.to_dict()


def test_change_from_dict_missing_timestamp_is_now() -> None:
    clock = ManualClock(1_700_000_000.0)
    change = MemoryChange.from_dict({"key": "k", "value": 1}, clock=clock)
    assert change.timestamp == datetime.fromtimestamp(1_700_000_000.0, UTC)
    assert change.previous is None
    assert change.writer is None


def test_change_from_dict_errors() -> None:
    with pytest.raises(InvalidValue, match="'key' is required"):
        MemoryChange.from_dict({"value": 1})
    with pytest.raises(InvalidValue, match="not ISO 8601"):
        MemoryChange.from_dict({"key": "k", "timestamp": "yesterday"})
