"""Pure helpers of the LangGraph store: namespace rules, BM25 text, filters, namespace matching."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

from langgraph.store.base import InvalidNamespaceError, MatchCondition

from ...search.filters import FieldSet

__all__ = ["STORE_FIELDS", "check_labels", "check_namespace", "does_match", "text_of"]

STORE_FIELDS: Final = FieldSet(
    "the LangGraph store", {"key": "text", "created_at": "time", "updated_at": "time"}, "value", False
)
"""The filter language's fields of an item: names address its value (LangGraph's filters);
``$key``, ``$created_at`` and ``$updated_at`` the item's own."""


def check_labels(namespace: Sequence[object]) -> tuple[str, ...]:
    """``namespace`` as a tuple, checked by LangGraph's label rules (what every op must meet).

    Raises:
        InvalidNamespaceError: a label that is not a str, is empty, holds ``.`` or a NUL byte.
    """
    if type(namespace) is tuple and all(type(label) is str for label in namespace):
        return _checked_tuple(namespace)
    return _check(namespace)


@functools.lru_cache(maxsize=4096)
def _checked_tuple(namespace: tuple[object, ...]) -> tuple[str, ...]:
    """:func:`check_labels` of a tuple, remembered (every op checks its namespace; an error is not kept)."""
    return _check(namespace)


def _check(namespace: Sequence[object]) -> tuple[str, ...]:
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"Namespace labels must be strings, got {label!r} in {namespace!r}")
        if not label:
            raise InvalidNamespaceError(f"Namespace labels cannot be empty strings: {namespace!r}")
        if "." in label:
            raise InvalidNamespaceError(f"Namespace labels cannot contain periods ('.'): {namespace!r}")
        if "\x00" in label:
            raise InvalidNamespaceError(f"Namespace labels cannot contain NUL bytes: {namespace!r}")
    return tuple(namespace)  # type: ignore[arg-type]  # every label is a str: checked above


def check_namespace(namespace: Sequence[object]) -> tuple[str, ...]:
    """A namespace ``put`` may write (LangGraph's rules for its public ``put``).

    Raises:
        InvalidNamespaceError: empty, a bad label (:func:`check_labels`), or the root label
            ``langgraph`` (reserved by LangGraph).
    """
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    checked = check_labels(namespace)
    if checked[0] == "langgraph":
        raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph": {namespace!r}')
    return checked


def text_of(value: Any) -> str:
    """The string leaves of a JSON value, joined: what BM25 indexes."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return " ".join(text_of(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(text_of(v) for v in value)
    return "" if value is None else str(value)


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
