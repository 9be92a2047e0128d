"""Summarisation as a pure function, with the spec's traces adjusted for cumulative summaries."""

from __future__ import annotations

from typing import Any

from memstack.tiers.session.summary import apply_plan, fold, plan_summary


def _auto(max_history: int, puts: int) -> list[dict[str, Any]]:
    """The seed's loop: put key0..keyN-1, summarising after each put."""
    history: list[dict[str, Any]] = []
    for i in range(puts):
        history.append({"op": "put", "key": f"key{i}", "timestamp": float(i)})
        plan = plan_summary(history, max_history, 1000.0 + i)
        if plan is not None:
            history = apply_plan(history, plan)
    return history


def _keys(n: int) -> list[str]:
    return sorted(f"key{i}" for i in range(n))


def test_no_plan_at_or_below_the_limit() -> None:
    entries = [{"op": "put", "key": "a"}] * 5
    assert plan_summary(entries, 5, 0.0) is None
    assert plan_summary([], 1, 0.0) is None


def test_trace_max5_ten_puts() -> None:
    history = _auto(5, 10)
    assert [e.get("key") for e in history[1:]] == ["key7", "key8", "key9"]
    summary = history[0]
    assert summary["op"] == "summary"
    # seed: {4, {summary:1, put:3}, [key4..key6]}; cumulative: the first summary's 4 puts add up.
    assert summary["summarized_count"] == 7
    assert summary["op_counts"] == {"put": 7}
    assert summary["keys_touched"] == _keys(7)


def test_trace_max10_eleven_puts() -> None:
    history = _auto(10, 11)
    assert len(history) == 6
    assert history[0]["summarized_count"] == 6
    assert history[0]["op_counts"] == {"put": 6}
    assert history[0]["keys_touched"] == _keys(6)
    assert [e["key"] for e in history[1:]] == [f"key{i}" for i in range(6, 11)]


def test_trace_max4_eight_puts() -> None:
    history = _auto(4, 8)
    assert [e.get("key") for e in history[1:]] == ["key5", "key6", "key7"]
    # seed: {3, {summary:1, put:2}, [key3, key4]}; cumulative covers key0..key4.
    assert history[0]["summarized_count"] == 5
    assert history[0]["op_counts"] == {"put": 5}
    assert history[0]["keys_touched"] == _keys(5)


def test_max1_collapses_to_one_summary() -> None:
    history = _auto(1, 6)
    assert len(history) == 1
    assert history[0]["summarized_count"] == 6
    assert history[0]["keys_touched"] == _keys(6)


def test_fold_counts_unknown_ops_and_skips_empty_keys() -> None:
    summary = fold(
        [{"key": "a"}, {"op": "clear", "key": None, "cleared": ["b"]}, {"op": "put", "key": ""}], 5.0
    )
    assert summary == {
        "op": "summary",
        "summarized_count": 3,
        "op_counts": {"unknown": 1, "clear": 1, "put": 1},
        "keys_touched": ["a"],
        "timestamp": 5.0,
    }


def test_fold_merges_earlier_summaries() -> None:
    earlier = {
        "op": "summary",
        "summarized_count": 4,
        "op_counts": {"put": 3, "increment": 1},
        "keys_touched": ["a"],
    }
    summary = fold([earlier, {"op": "increment", "key": "b"}], 9.0)
    assert summary["summarized_count"] == 5
    assert summary["op_counts"] == {"put": 3, "increment": 2}
    assert summary["keys_touched"] == ["a", "b"]


def test_plan_keeps_newest_half() -> None:
    entries = [{"op": "put", "key": f"k{i}"} for i in range(7)]
    plan = plan_summary(entries, 6, 1.0)
    assert plan is not None
    assert plan.folded == 4
    assert [e.get("key") for e in apply_plan(entries, plan)[1:]] == ["k4", "k5", "k6"]
