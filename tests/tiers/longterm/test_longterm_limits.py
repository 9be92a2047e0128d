"""Long-term memory applies the shared rules (``memstack.foundation.limits``), naming the field."""

from __future__ import annotations

import pytest

from memstack import Memory
from memstack.foundation.errors import InvalidCategory, InvalidValue
from memstack.foundation.limits import MAX_VALUE_BYTES


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"content": "a\ud800"}, r"^content: contains a lone surrogate"),
        ({"content": "x" * (MAX_VALUE_BYTES + 1)}, r"^content: 1048577 bytes of text exceed the limit"),
        ({"tags": ["ok", "b\udfff"]}, r"^tags\[1\]: contains a lone surrogate"),
        ({"tags": "ok,\ud800"}, r"^tags\[1\]: contains a lone surrogate"),
        ({"tags": 5}, r"^tags: expected a string or a list of strings, got int"),
        ({"metadata": {"x": "\ud800"}}, r"^metadata\['x'\]: contains a lone surrogate"),
        ({"metadata": {"x": [1, {2: 3}]}}, r"^metadata\['x'\]\[1\]: object key 2 is not a string"),
        ({"created_at": 1e30}, r"^created_at: 1e\+30 epoch seconds are outside the years 1-9999"),
        ({"created_at": 10**5000}, r"^created_at: an integer of about 5001 digits epoch seconds are outside"),
    ],
    ids=[
        "content",
        "huge-content",
        "tag",
        "tag-string",
        "tags-int",
        "metadata",
        "metadata-key",
        "time",
        "huge-time",
    ],
)
def test_refusals_name_the_field_and_write_nothing(
    mem: Memory, fields: dict[str, object], message: str
) -> None:
    lt = mem.long_term("u1")
    with pytest.raises(InvalidValue, match=message):
        lt.save(**{"content": "fine", "id": "e1", **fields})  # type: ignore[arg-type]  # fields under test
    assert lt.get("e1") is None
    assert len(lt) == 0


def test_deep_metadata_is_refused(mem: Memory) -> None:
    deep: object = 1
    for _ in range(5000):
        deep = {"d": deep}
    with pytest.raises(InvalidValue, match="deeper than 100 levels"):
        mem.long_term("u1").save(content="c", metadata={"x": deep})


def test_categories_are_bounded(mem: Memory) -> None:
    lt = mem.long_term("u1")
    assert lt.save(content="c", category="a" * 256).category == "a" * 256
    with pytest.raises(InvalidCategory, match="257 characters, the limit is 256"):
        lt.save(content="c", category="a" * 257)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"query": "cat\ud800"}, r"^query: contains a lone surrogate"),
        ({"query": 5}, r"^query: expected a string, got int"),
        ({"category": "\udfff"}, r"^category: contains a lone surrogate"),
        ({"category": 3}, r"^category: expected a string, got int"),
        ({"tags": ["\ud800"]}, r"^tags\[0\]: contains a lone surrogate"),
    ],
)
def test_search_refuses_what_a_write_refuses(mem: Memory, kwargs: dict[str, object], message: str) -> None:
    lt = mem.long_term("u1")
    lt.save(content="cats purr")
    with pytest.raises(InvalidValue, match=message):
        lt.search(**kwargs)  # type: ignore[arg-type]  # keyword arguments of the parametrisation
    assert [h.entry.content for h in lt.search("cats", max_results=10**30)] == ["cats purr"]
