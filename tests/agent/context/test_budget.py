"""Token budget: drop order, never-dropped parts, explanation. Pure, no engine."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstack.agent.context.budget import DROP_ORDER, ExplainItem, Line, Section, fit, render
from memstack.llm.tokens import MESSAGE_OVERHEAD


def words(text: str) -> int:
    return len(text.split())


def line(ident: str, n_words: int = 1) -> Line:
    return Line(ident, " ".join([ident] * n_words), f"because {ident}")


def sections() -> list[Section]:
    return [
        Section("system", "system", [line("sys", 5)]),
        Section("history", "user", [line("h1", 10)]),
        Section("history", "assistant", [line("h2", 10)]),
        Section("history", "user", [line("h3", 10)]),
        Section("history", "assistant", [line("h4", 10)]),
        Section("recall", "system", [line(f"r{i}", 3) for i in range(1, 6)], header="R:"),
        Section("working", "system", [line("w1", 3), line("w2", 3)], header="W:"),
        Section("patrol", "system", [line("p1", 3)], header="P:"),
        Section("subagent", "system", [line("s1", 3)], header="S:"),
        Section("user", "user", [line("msg", 5)]),
    ]


def total(sections_: list[Section]) -> int:
    return sum(MESSAGE_OVERHEAD + words(m["content"]) for s in sections_ if (m := render(s)))


def kept(result_explain: list[ExplainItem]) -> list[str]:
    return [i.ident for i in result_explain if i.included]


def test_without_budget_everything_is_kept_in_order() -> None:
    result = fit(sections())
    assert [m["role"] for m in result.messages] == [
        "system", "user", "assistant", "user", "assistant", "system", "system", "system", "system", "user"
    ]  # fmt: skip
    assert result.messages[5]["content"] == "R:\nr1 r1 r1\nr2 r2 r2\nr3 r3 r3\nr4 r4 r4\nr5 r5 r5"
    assert result.tokens is None
    assert all(i.included for i in result.explain)


def test_budget_that_fits_drops_nothing() -> None:
    full = total(sections())
    result = fit(sections(), full, words)
    assert result.tokens == full
    assert len(result.messages) == 10
    assert not result.over_budget


def test_oldest_history_goes_first_with_its_orphaned_reply() -> None:
    full = total(sections())
    result = fit(sections(), full - 1, words)
    dropped = [i.ident for i in result.explain if not i.included]
    assert dropped == ["h1", "h2"]  # h2 would open the history with an assistant message
    assert result.messages[1]["content"].startswith("h3")
    assert result.tokens is not None
    assert result.tokens <= full - 1


def test_drop_order_history_then_recall_beyond_three_then_inventories() -> None:
    result = fit(sections(), 0, words)
    dropped = [i.ident for i in result.explain if not i.included]
    assert dropped == ["h1", "h2", "h3", "h4", "r5", "r4", "s1", "p1", "w2", "w1", "r3", "r2", "r1"]
    assert [m["content"] for m in result.messages] == ["sys sys sys sys sys", "msg msg msg msg msg"]
    assert result.over_budget
    assert DROP_ORDER[0] == ("history", 0)


def test_recall_keeps_top_three_while_inventories_fit() -> None:
    base = sections()
    without_history = total([s for s in base if s.kind != "history"])
    result = fit(base, without_history - 1, words)
    assert "r4" in kept(result.explain)
    assert "r5" not in kept(result.explain)
    assert {"h1", "h2", "h3", "h4"}.isdisjoint(kept(result.explain))
    assert {"w1", "w2", "p1", "s1", "r1", "r2", "r3"} <= set(kept(result.explain))


def test_system_and_user_are_never_dropped_and_empty_blocks_vanish() -> None:
    result = fit(sections(), 1, words)
    assert [m["role"] for m in result.messages] == ["system", "user"]
    assert result.tokens == 2 * (MESSAGE_OVERHEAD + 5)


def test_excluded_items_are_explained_and_input_untouched() -> None:
    base = sections()
    gone = ExplainItem("recall", "old", False, "already injected earlier in this session")
    result = fit(base, 0, words, [gone])
    assert result.explain[-1] == gone
    assert len(base[5].lines) == 5
    assert str(result.explain[0]) == "+ system sys: because sys"
    assert str(gone) == "- recall old: already injected earlier in this session"


KINDS = ["history", "recall", "working", "patrol", "subagent"]


@given(
    blocks=st.lists(
        st.tuples(st.sampled_from(KINDS), st.lists(st.integers(1, 12), min_size=1, max_size=6)), max_size=10
    ),
    budget=st.integers(0, 200),
)
def test_fit_properties(blocks: list[tuple[str, list[int]]], budget: int) -> None:
    sections = [Section("system", "system", [line("sys", 3)])]
    n = 0
    for kind, sizes in blocks:
        units = []
        for size in sizes:
            n += 1
            units.append(line(f"u{n}", size))
        if kind == "history":
            sections += [
                Section(kind, "user" if i % 2 == 0 else "assistant", [u]) for i, u in enumerate(units)
            ]
        else:
            sections.append(Section(kind, "system", units, header="H:"))
    sections.append(Section("user", "user", [line("msg", 2)]))
    result = fit(sections, budget, words)
    idents = [i.ident for i in result.explain]
    assert sorted(idents) == sorted(u.ident for s in sections for u in s.lines)  # every item explained once
    assert result.tokens == total_messages(result.messages)
    floor = 2 * MESSAGE_OVERHEAD + 3 + 2
    assert result.over_budget == (result.tokens > budget)
    if result.over_budget:
        assert result.tokens == floor  # only the never-dropped parts are left
    assert result.messages[0]["content"] == "sys sys sys"
    assert result.messages[-1]["content"] == "msg msg"


def total_messages(messages: list[dict[str, str]]) -> int:
    return sum(MESSAGE_OVERHEAD + words(m["content"]) for m in messages)
