"""The filter language's parsed form: conditions, ``$and``/``$or``/``$not`` nodes, a checked
:class:`Filter`, and the :class:`FieldSet` of a surface (the language: :mod:`memstack.search.filters`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "COMPARISONS",
    "LOGIC",
    "MAX_FILTER_CONDITIONS",
    "MAX_FILTER_DEPTH",
    "OPERATORS",
    "AllOf",
    "AnyOf",
    "Condition",
    "FieldSet",
    "Filter",
    "Node",
    "NotOf",
    "combine",
    "filter_of",
]

OPERATORS: Final = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$contains", "$exists")
COMPARISONS: Final = frozenset({"$gt", "$gte", "$lt", "$lte"})
LOGIC: Final = ("$and", "$or", "$not")
MAX_FILTER_DEPTH: Final = 16
"""Nesting levels a filter may have (``$and``/``$or``/``$not`` and nested objects)."""
MAX_FILTER_CONDITIONS: Final = 256
"""Conditions (field-operator pairs) one filter may hold."""
KINDS: Final = frozenset({"text", "category", "tags", "time"})


@dataclass(frozen=True, slots=True)
class FieldSet:
    """The fields of one surface: ``builtins`` (name -> kind: ``text``, ``category``, ``tags``,
    ``time``), ``data`` (what other names address: ``metadata`` or ``value``) and ``bare``
    (built-ins reachable without their ``$``)."""

    surface: str
    builtins: Mapping[str, str]
    data: str
    bare: bool


@dataclass(frozen=True, slots=True)
class Condition:
    """``op`` of ``operand`` on a field: a built-in (``builtin`` its name, ``kind`` its kind) or
    the user data at ``path`` (its first item a key or dotted path, the rest nested keys)."""

    op: str
    operand: Any
    builtin: str | None = None
    kind: str = "json"
    path: tuple[str, ...] = ()

    @property
    def field(self) -> str:
        """The field as a message names it."""
        return f"${self.builtin}" if self.builtin is not None else ".".join(self.path)


@dataclass(frozen=True, slots=True)
class AllOf:
    parts: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    parts: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class NotOf:
    part: Node


Node = Condition | AllOf | AnyOf | NotOf


@dataclass(frozen=True, slots=True)
class Filter:
    """A checked filter: its tree and ``key``, a canonical text (equal filters, equal keys)."""

    root: Node
    key: str
    builtins: bool  # some condition names a built-in field


def filter_of(root: Node) -> Filter:
    """``root`` as a :class:`Filter` (its key computed)."""
    return Filter(root, json.dumps(_shape(root), sort_keys=True, default=repr), _uses_builtins(root))


def combine(*parts: Node | Filter | None) -> Filter | None:
    """The filter every part must pass (None: no part, every record passes)."""
    nodes = [p.root if isinstance(p, Filter) else p for p in parts if p is not None]
    if not nodes:
        return None
    return filter_of(nodes[0] if len(nodes) == 1 else AllOf(tuple(nodes)))


def _uses_builtins(node: Node) -> bool:
    if isinstance(node, Condition):
        return node.builtin is not None
    if isinstance(node, NotOf):
        return _uses_builtins(node.part)
    return any(_uses_builtins(p) for p in node.parts)


def _shape(node: Node) -> Any:
    """A JSON-able form of ``node`` (the filter's key)."""
    if isinstance(node, Condition):
        return ["c", node.op, node.builtin, list(node.path), _plain(node.operand)]
    if isinstance(node, NotOf):
        return ["not", _shape(node.part)]
    return ["and" if isinstance(node, AllOf) else "or", [_shape(p) for p in node.parts]]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, bool) or value is None:
        return ["b", value]  # true and 1 are different filters
    return value
