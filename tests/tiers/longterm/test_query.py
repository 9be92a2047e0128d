"""Pure search logic: document text (spec item 16), filters (item 12), recency (item 13)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstack.tiers.longterm.entry import MemoryEntry
from memstack.tiers.longterm.query import Filters, distinct_sorted, document_text, most_recent

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def entry(i: str, category: str | None = None, tags: tuple[str, ...] = (), days: int = 0,
          updated: int | None = None) -> MemoryEntry:  # fmt: skip
    return MemoryEntry(
        id=i,
        content=f"content {i}",
        category=category,
        tags=tags,
        created_at=T0 + timedelta(days=days),
        updated_at=None if updated is None else T0 + timedelta(days=updated),
    )


def test_document_text_joins_content_tags_and_category() -> None:
    e = MemoryEntry(id="a", content="Likes jazz", category="user-preferences/music", tags=("x", "y"))
    assert document_text(e) == "Likes jazz x y user preferences music"
    assert document_text(MemoryEntry(id="a", content="only")) == "only"


def test_category_filter_exact_or_prefix_segment_case_insensitive() -> None:
    entries = [
        entry("1", "project-context"),
        entry("2", "project-context/rockbot"),
        entry("3", "project-contextual"),
        entry("4", None),
        entry("5", "Project-Context/Other"),
    ]
    assert [e.id for e in Filters(category="project-context").apply(entries)] == ["1", "2", "5"]
    assert [e.id for e in Filters(category="PROJECT-CONTEXT/rockbot").apply(entries)] == ["2"]


def test_every_tag_required_case_insensitively() -> None:
    entries = [entry("1", tags=("Jazz", "music")), entry("2", tags=("jazz",)), entry("3")]
    assert [e.id for e in Filters(tags=("JAZZ", "Music")).apply(entries)] == ["1"]
    assert [e.id for e in Filters(tags=("jazz",)).apply(entries)] == ["1", "2"]


def test_date_bounds_are_inclusive() -> None:
    entries = [entry("0", days=0), entry("1", days=1), entry("2", days=2)]
    f = Filters(created_after=T0 + timedelta(days=1), created_before=T0 + timedelta(days=2))
    assert [e.id for e in f.apply(entries)] == ["1", "2"]
    assert Filters().empty
    assert not f.empty


def test_most_recent_uses_updated_or_created() -> None:
    entries = [entry("a", days=5), entry("b", days=1, updated=9), entry("c", days=3), entry("d", days=3)]
    assert [e.id for e in most_recent(entries, 3)] == ["b", "a", "c"]


def test_distinct_sorted_case_insensitive() -> None:
    assert distinct_sorted(["b", "A", "a", "B", "c"]) == ["A", "b", "c"]
