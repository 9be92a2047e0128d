"""Generated ids, keys and values only ever raise the documented errors and never corrupt data."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memstack import Memory
from memstack.foundation.errors import (
    InvalidKey,
    InvalidSessionId,
    InvalidValue,
    NotANumber,
    SessionExists,
    SessionNotFound,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
anything = json_values | st.sets(st.integers(), max_size=2) | st.just(float("nan")) | st.builds(object)
ids = st.text(max_size=140) | st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)
keys = st.text(max_size=260) | st.from_regex(r"[A-Za-z0-9_.-]{1,20}", fullmatch=True)
DOCUMENTED = (InvalidSessionId, InvalidKey, InvalidValue, SessionNotFound, SessionExists, NotANumber)


@settings(max_examples=60)
@given(sid=ids, key=keys, value=anything, amount=st.integers(-5, 5) | st.floats(-5, 5))
def test_generated_input_never_corrupts(mem: Memory, sid: str, key: str, value: Any, amount: Any) -> None:
    s = mem.sessions
    if not s.exists("guard"):
        s.create("guard")
        s.put("guard", "kept", {"v": [1, "x"]})
    before = s.history("guard", 0)
    for call in (
        lambda: s.create(sid),
        lambda: s.put(sid, key, value),
        lambda: s.get(sid, key, None),
        lambda: s.increment(sid, key, amount),
        lambda: s.clear(sid, key),
        lambda: s.put("guard", key, value),
        lambda: s.increment("guard", key, amount),
        lambda: s.delete(sid),
    ):
        with contextlib.suppress(*DOCUMENTED):
            call()
    if key != "kept":
        assert s.get("guard", "kept") == {"v": [1, "x"]}
    for stored in s.keys("guard"):
        s.get("guard", stored)  # every listed key is readable JSON
    assert len(s.history("guard", 0)) >= min(len(before), 1)


@settings(max_examples=60)
@given(value=json_values)
def test_json_values_roundtrip_exactly(mem: Memory, value: Any) -> None:
    s = mem.sessions
    if not s.exists("rt"):
        s.create("rt")
    s.put("rt", "v", value)
    got = s.get("rt", "v")
    assert got == value
    assert type(got) is type(value)
    if isinstance(value, list | dict):
        assert got is not value
