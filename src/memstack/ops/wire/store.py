"""The LangGraph store's items on the wire (:mod:`memstack.ops.store`): an item's namespace (its
labels, outermost first), key, value and times; a search adds its score (null: not ranked by a
query)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from ...foundation.timefmt import iso_utc

if TYPE_CHECKING:
    from langgraph.store.base import Item, SearchItem

__all__ = ["FoundJSON", "ItemJSON", "found_json", "item_json"]


class ItemJSON(TypedDict):
    namespace: list[str]
    key: str
    value: dict[str, Any]
    created_at: str
    updated_at: str


class FoundJSON(ItemJSON):
    score: float | None


def item_json(item: Item) -> ItemJSON:
    """A store item."""
    return {
        "namespace": list(item.namespace),
        "key": item.key,
        "value": item.value,
        "created_at": iso_utc(item.created_at),
        "updated_at": iso_utc(item.updated_at),
    }


def found_json(hit: SearchItem) -> FoundJSON:
    """A store item a search found."""
    return {**item_json(hit), "score": hit.score}
