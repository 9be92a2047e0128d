"""Evaluating a :class:`~memstack.search.filters.Filter`: on one record, or from index sets.

:func:`matches` tests one record: its user data (a JSON object) and, for built-in fields, a
function giving a built-in's value (a time as epoch seconds, tags as a list). :func:`allowed`
answers a whole filter from a surface's :class:`Postings` where they can (long-term memory keeps
sets per tag, category, metadata value and a sorted list of creation times) and tests only the
records the sets leave undecided.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Final, Protocol

from .filter_ast import AllOf, AnyOf, Condition, Filter, Node, NotOf

__all__ = ["MISSING", "Postings", "allowed", "canonical", "json_equal", "matches", "value_at"]

MISSING: Final[Any] = object()
"""What :func:`value_at` gives for a field a record does not have."""

Builtin = Callable[[str], Any]


def value_at(data: Any, path: tuple[str, ...]) -> Any:
    """The user data's value at ``path`` (its first item a key, else a dotted path), or :data:`MISSING`."""
    if not path or not isinstance(data, Mapping):
        return MISSING
    head, rest = path[0], path[1:]
    if head in data:
        value = data[head]
    else:
        value = data
        for part in head.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return MISSING
            value = value[part]
    for part in rest:
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value (``1 == 1.0``), never a bool with a number, lists and
    objects item by item (tuples as lists)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(v, b[k]) for k, v in a.items())
    return type(a) is type(b) and bool(a == b)


def canonical(value: Any) -> Any:
    """A hashable form equal for :func:`json_equal` values (index keys): integral floats as ints."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, list | tuple):
        return ("l", tuple(canonical(v) for v in value))
    if isinstance(value, Mapping):
        return ("o", tuple(sorted((k, canonical(v)) for k, v in value.items())))
    return value


def matches(flt: Filter, data: Any, builtin: Builtin | None = None) -> bool:
    """Whether a record passes ``flt`` (``builtin(name)``: a built-in field's value)."""
    return _node(flt.root, data, builtin)


def _node(node: Node, data: Any, builtin: Builtin | None) -> bool:
    if isinstance(node, Condition):
        if node.builtin is not None:
            value = MISSING if builtin is None else builtin(node.builtin)
        else:
            value = value_at(data, node.path)
        return _test(node, value)
    if isinstance(node, AllOf):
        return all(_node(p, data, builtin) for p in node.parts)
    if isinstance(node, AnyOf):
        return any(_node(p, data, builtin) for p in node.parts)
    return not _node(node.part, data, builtin)


def _test(cond: Condition, value: Any) -> bool:
    op, operand, kind = cond.op, cond.operand, cond.kind
    if op == "$exists":
        return (value is not MISSING) is operand
    if op == "$eq":
        return _equal(value, operand, kind)
    if op == "$ne":
        return not _equal(value, operand, kind)
    if op == "$in":
        return _within(value, operand, kind)
    if op == "$nin":
        return not _within(value, operand, kind)
    if op == "$contains":
        wanted = operand if isinstance(operand, tuple) else (operand,)
        if isinstance(value, str) and kind != "tags":
            return all(isinstance(w, str) and w in value for w in wanted)
        if isinstance(value, list | tuple):
            return all(any(_equal(v, w, kind) for v in value) for w in wanted)
        return False
    return _ordered(value, operand, op)


def _equal(value: Any, operand: Any, kind: str) -> bool:
    if value is MISSING:
        return operand is None
    if kind == "category":
        if not isinstance(value, str):
            return False
        have = value.casefold()
        return have == operand or have.startswith(operand + "/")
    if kind == "tags":
        if isinstance(value, list | tuple):  # a tag list equals a tag when it holds it
            return any(isinstance(v, str) and v.casefold() == operand for v in value)
        return isinstance(value, str) and value.casefold() == operand
    return json_equal(value, operand)


def _within(value: Any, items: tuple[Any, ...], kind: str) -> bool:
    if isinstance(value, list | tuple) and kind != "tags":
        return any(_equal(v, item, kind) for v in value for item in items)
    return any(_equal(value, item, kind) for item in items)


def _ordered(value: Any, operand: Any, op: str) -> bool:
    if isinstance(operand, str):
        if not isinstance(value, str):
            return False
    elif isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if op == "$gt":
        return bool(value > operand)
    if op == "$gte":
        return bool(value >= operand)
    if op == "$lt":
        return bool(value < operand)
    return bool(value <= operand)


class Postings(Protocol):
    """What a surface's index sets can answer: ``lookup(condition)`` gives exactly the ids passing
    one condition, or None when the sets cannot tell; ``universe()`` every id."""

    def lookup(self, cond: Condition) -> Collection[str] | None: ...

    def universe(self) -> Collection[str]: ...


def allowed(
    flt: Filter,
    postings: Postings,
    test: Callable[[str], bool],
) -> set[str] | Collection[str]:
    """The ids passing ``flt``: from ``postings`` where they answer, ``test(id)`` (the record
    check, :func:`matches`) for the ids they leave undecided. The result may be one of the
    postings' own sets: read it, never change it."""
    found, exact = _plan(flt.root, postings)
    if exact and found is not None:
        return found
    pool: Iterable[str] = postings.universe() if found is None else found
    return {i for i in pool if test(i)}


def _plan(node: Node, postings: Postings) -> tuple[Collection[str] | None, bool]:
    """``(ids, exact)``: a superset of the passing ids (None: every id) and whether it is exactly them."""
    if isinstance(node, Condition):
        found = postings.lookup(node)
        return found, found is not None
    if isinstance(node, NotOf):
        inner, exact = _plan(node.part, postings)
        if inner is None or not exact:
            return None, False
        return set(postings.universe()).difference(inner), True
    plans = [_plan(p, postings) for p in node.parts]
    if isinstance(node, AnyOf):
        if any(ids is None or not exact for ids, exact in plans):
            return None, False
        return set().union(*(ids for ids, _ in plans if ids is not None)), True
    known = sorted((ids for ids, _ in plans if ids is not None), key=len)
    exact = all(e for _, e in plans)
    if not known:
        return None, False
    if len(known) == 1:
        return known[0], exact
    result = set(known[0]).intersection(*known[1:])
    return result, exact
