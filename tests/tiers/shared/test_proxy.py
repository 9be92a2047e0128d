"""StateProxy over a plain dict (no engine): attribute access, on_change, validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memstack.foundation.errors import InvalidKey, InvalidValue
from memstack.tiers.shared import StateProxy


def _proxy(store: dict[str, Any], on_change: Callable[[str, Any, Any], object] | None = None) -> StateProxy:
    def read() -> dict[str, Any]:
        return dict(store)

    def update(fn: Callable[[dict[str, Any]], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
        old = dict(store)
        new = fn(dict(store))
        store.clear()
        store.update(new)
        return old, new

    return StateProxy(read, update, on_change)


def test_attribute_access_reads_only_existing_keys() -> None:
    proxy = _proxy({"name": "x"})
    assert proxy.name == "x"
    with pytest.raises(AttributeError, match="no key 'other'"):
        _ = proxy.other
    assert "name" in dir(proxy)
    assert "other" not in dir(proxy)
    proxy.other = 2  # attribute writes always create the key
    assert proxy.other == 2
    with pytest.raises(AttributeError):
        del proxy.missing


def test_on_change_only_when_value_changes() -> None:
    calls: list[tuple[str, Any, Any]] = []
    store: dict[str, Any] = {"a": 1}
    proxy = _proxy(store, lambda k, old, new: calls.append((k, old, new)))
    proxy["a"] = 1
    proxy["a"] = 2
    proxy.merge({"a": 2, "b": 3})
    assert calls == [("a", 1, 2), ("b", None, 3)]
    assert store == {"a": 2, "b": 3}


def test_bad_writes_leave_data_untouched() -> None:
    store: dict[str, Any] = {"a": 1}
    proxy = _proxy(store)
    with pytest.raises(InvalidValue):
        proxy["b"] = object()
    with pytest.raises(InvalidKey):
        proxy[""] = 1
    with pytest.raises(InvalidValue):
        proxy.merge({"c": 1, "d": {1}})
    with pytest.raises(AttributeError, match="need proxy"):
        proxy._private = 1
    assert store == {"a": 1}


def test_proxy_is_not_hashable_and_compares_to_dicts() -> None:
    proxy = _proxy({"a": 1})
    assert proxy == {"a": 1}
    assert proxy != {"a": 2}
    with pytest.raises(TypeError):
        hash(proxy)
