"""The pure steps: answer parsing, plans, guard rails (no engine)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstack.foundation.errors import DreamRefused, InvalidValue
from memstack.services.dream.parse import (
    outermost,
    parse_consolidation,
    parse_expansion,
    parse_preferences,
    strip_think,
)
from memstack.services.dream.plan import (
    GUARD_RAILS,
    NewEntry,
    Plan,
    check_plan,
    consolidation_plan,
    dedupe_plan,
)
from memstack.services.dream.prompt import entry_lines
from memstack.tiers.longterm import MemoryEntry

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_think_blocks_are_stripped_even_unclosed() -> None:
    assert strip_think("a<think>x{}</think>b<THINK>y</THINK>c") == "abc"
    assert strip_think("ok <think> never closed {") == "ok "


def test_outermost_span_from_first_open_to_last_close() -> None:
    with pytest.raises(InvalidValue, match="not JSON"):  # the LAST closing brace ends the span
        outermost('prose {"a": {"b": 1}} more }', "{", "}")
    assert outermost('x {"a": {"b": 1}} y', "{", "}") == {"a": {"b": 1}}
    assert outermost("here: [1, [2]] ok", "[", "]") == [1, [2]]
    with pytest.raises(InvalidValue, match="no"):
        outermost("nothing here", "{", "}")
    with pytest.raises(InvalidValue, match="not JSON"):
        outermost("{a} and {b}", "{", "}")


def test_a_hostile_answer_is_refused_as_a_value_never_a_recursion_error() -> None:
    deep = '{"toSave": ' + "[" * 50_000 + "]" * 50_000 + "}"
    with pytest.raises(InvalidValue, match="nested deeper than"):
        parse_consolidation(deep)
    with pytest.raises(InvalidValue, match="NaN"):
        outermost('{"a": NaN}', "{", "}")
    with pytest.raises(InvalidValue, match="digits"):
        outermost('{"a": ' + "9" * 5000 + "}", "{", "}")


def test_keys_are_case_insensitive_and_shapes_checked() -> None:
    to_delete, to_save = parse_consolidation(
        '{"TODELETE": ["A"], "ToSave": [{"Content": "c", "SOURCEIDS": ["x"]}]}'
    )
    assert to_delete == ("A",) and to_save[0].content == "c" and to_save[0].source_ids == ("x",)
    assert parse_preferences('{"toSave": [{"content": "p", "metadata": {"k": "v"}}]}')[0].metadata == {
        "k": "v"
    }
    assert parse_expansion("[]") == []
    for bad in ('{"toSave": {}}', '{"toDelete": [1]}', '{"toSave": ["x"]}', '{"other": 1}', "[1]"):
        with pytest.raises(InvalidValue):
            parse_consolidation(bad)
    with pytest.raises(InvalidValue, match="metadata"):
        parse_preferences('{"toSave": [{"content": "p", "metadata": [1]}]}')


def test_entry_lines_format() -> None:
    lines = entry_lines([MemoryEntry("ab", "x\ny", "c/d", ("t1", "t2")), MemoryEntry("cd", "z")])
    assert lines == [
        "1. [ID:ab] category=c/d tags=[t1, t2]",
        "   x",
        "   y",
        "2. [ID:cd] category=uncategorized tags=[(none)]",
        "   z",
    ]


def test_consolidation_plan_takes_the_oldest_known_source_time() -> None:
    inputs = [MemoryEntry("a", "1", created_at=T0 + timedelta(days=2)), MemoryEntry("b", "2", created_at=T0)]
    ids = iter(["n1", "n2"])
    _, items = parse_consolidation('{"toSave": [{"content": "m", "sourceIds": ["A", "B", "zz"]}]}')
    plan = consolidation_plan(inputs, (), items, T0 + timedelta(days=9), make_id=lambda: next(ids))
    assert plan.retire == () and plan.superseded == ("a", "b") and plan.unknown == ("zz",)
    assert plan.create[0].entry.created_at == T0 and plan.create[0].entry.id == "n1"
    assert plan.create[0].entry.valid_from == T0 + timedelta(days=9)  # the replaced ones held until now
    assert plan.removed == 2 and {e.id for e in plan.basis} == {"a", "b"}
    ids = iter(["n1"])
    rewrite = consolidation_plan(inputs, (), items, T0, make_id=lambda: next(ids), supersede=False)
    assert (
        rewrite.retire == ("a", "b")
        and rewrite.superseded == ()
        and rewrite.create[0].entry.given_valid_from is None
    )


def test_each_entry_is_superseded_by_the_first_item_naming_it() -> None:
    inputs = [MemoryEntry("a", "1", created_at=T0), MemoryEntry("b", "2", created_at=T0)]
    ids = iter(["n1", "n2"])
    _, items = parse_consolidation(
        '{"toDelete": ["a", "b"], "toSave": [{"content": "m", "sourceIds": ["a"]},'
        ' {"content": "k", "sourceIds": ["a", "b"]}]}'
    )
    plan = consolidation_plan(inputs, ("a", "b"), items, T0, make_id=lambda: next(ids))
    assert [n.supersedes for n in plan.create] == [("a",), ("b",)] and plan.retire == ()


def test_guard_rails_are_data() -> None:
    assert GUARD_RAILS == {"max_retired_share": 0.5, "refuse_only_unknown": True}
    half = Plan("consolidate", ("a", "b"))
    check_plan(half, 4)  # exactly half is allowed
    with pytest.raises(DreamRefused):
        check_plan(Plan("consolidate", ("a", "b", "c")), 4)
    check_plan(Plan("consolidate", ("a", "b", "c")), 4, force=True)
    rewrite = Plan(
        "dedupe", ("a", "b", "c"), (NewEntry(MemoryEntry("a", "x")), NewEntry(MemoryEntry("b", "y")))
    )
    assert rewrite.removed == 1
    check_plan(rewrite, 4)  # entries rewritten in place are not removed


def test_dedupe_plan_merges_tags_case_insensitively_into_the_oldest() -> None:
    group = [
        MemoryEntry("a", "x", tags=("Music", "a"), created_at=T0),
        MemoryEntry("b", "x", tags=("music", "b"), created_at=T0),
    ]
    plan = dedupe_plan([group], T0 + timedelta(hours=1))
    (new,) = plan.create
    assert new.entry.id == "a" and new.entry.tags == ("Music", "a", "b") and new.source_ids == ("a", "b")
    assert new.entry.updated_at == T0 + timedelta(hours=1)
