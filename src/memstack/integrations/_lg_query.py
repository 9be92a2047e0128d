"""Pure helpers of the LangGraph store: namespace rules, BM25 text, filters, namespace matching."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.store.base import InvalidNamespaceError, MatchCondition

__all__ = ["does_match", "matches_filter", "text_of", "validate_namespace"]


def validate_namespace(namespace: tuple[str, ...]) -> None:
    """LangGraph's namespace rules.

    Raises:
        InvalidNamespaceError: empty, a non-str or empty label, a label with ``.``, or the root
            label ``langgraph`` (as LangGraph's own stores).
    """
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"Namespace labels must be strings, got {label!r} in {namespace!r}")
        if not label:
            raise InvalidNamespaceError(f"Namespace labels cannot be empty strings: {namespace!r}")
        if "." in label:
            raise InvalidNamespaceError(f"Namespace labels cannot contain periods ('.'): {namespace!r}")
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph": {namespace!r}')


def text_of(value: Any) -> str:
    """The string leaves of a JSON value, joined: what BM25 indexes."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(text_of(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(text_of(v) for v in value)
    return "" if value is None else str(value)


def matches_filter(value: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether an item's value passes a LangGraph ``filter``.

    Raises:
        ValueError: an unknown ``$`` operator (as LangGraph's stores).
    """
    return all(_matches(value.get(k), v) for k, v in wanted.items())


def _matches(value: Any, wanted: Any) -> bool:
    """LangGraph's JSONB-like filter semantics (the same operators as its in-memory store)."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, k, v) for k, v in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: bool(a == b),
    "$ne": lambda a, b: bool(a != b),
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def _operator(value: Any, name: str, operand: Any) -> bool:
    if name not in _OPERATORS:
        raise ValueError(f"Unsupported operator: {name}")
    try:
        return _OPERATORS[name](value, operand)
    except (TypeError, ValueError):  # a missing or non-numeric field never matches an ordering
        return False


def does_match(condition: MatchCondition, namespace: Sequence[str]) -> bool:
    """Whether ``namespace`` meets a ``list_namespaces`` prefix/suffix condition (``*`` = any label).

    Raises:
        ValueError: a match type other than ``prefix`` or ``suffix``.
    """
    if condition.match_type not in ("prefix", "suffix"):
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    return all(p == "*" or n == p for n, p in pairs)
