"""The one filter language of every search: parsing and checking (evaluation: :mod:`.filter_eval`).

A filter is a JSON object; its clauses are ANDed::

    {"kind": "note"}                                  equality
    {"score": {"$gte": 3, "$lt": 5}}                  operators on one field (ANDed)
    {"tags": {"$contains": "jazz"}, "lang": {"$in": ["en", "fr"]}}
    {"$or": [{"kind": "a"}, {"$not": {"score": {"$gt": 1}}}]}
    {"user": {"lang": "fr"}}                          a nested object: conditions on its keys

| operator | the field's value ... |
|---|---|
| ``$eq`` (a bare value) | equals it: JSON equality (``1 == 1.0``, ``true != 1``; missing equals ``null``) |
| ``$ne`` | does not equal it (a missing field passes unless the operand is ``null``) |
| ``$gt $gte $lt $lte`` | orders after/before it: numbers, strings or times with their like, else never |
| ``$in`` / ``$nin`` | equals one / none of a list's items (a list value: one of its items does) |
| ``$contains`` | is a list holding the operand (each item of a list operand), or a string holding it |
| ``$exists`` | is present (``true``) or missing (``false``) |

``$and``, ``$or`` (non-empty lists of filters) and ``$not`` (one filter) combine filters.

Field names: a surface has *built-in* fields (:class:`FieldSet`; long-term memory: ``id content
category tags created_at updated_at``) and user data (long-term memory and documents: the
``metadata`` object; the LangGraph store: the item's value, as in LangGraph). A name is a key of
the user data, or a dotted path into it (``user.lang``: a key holding a dot is matched first).
``$name`` always means the built-in ``name``; where :attr:`FieldSet.bare` is set (long-term memory,
documents), a bare built-in name does too and ``metadata.name`` reaches the user data's key. The
built-in ``category`` compares case-insensitively and equals its sub-categories too (``work``
equals ``work/projects``, as the ``category`` search parameter); ``tags`` compare case-insensitively;
times (``created_at``...) take timezone-aware datetimes, ISO-8601 text or epoch seconds.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from ..errors import InvalidFilter
from ..limits import short_repr

__all__ = [
    "COMPARISONS",
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
    "parse_filter",
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


def parse_filter(raw: object, fields: FieldSet) -> Filter | None:
    """``raw`` (a JSON object as above) checked and parsed; None or ``{}`` gives None. The last
    :data:`PARSED_KEPT` filters parsed are remembered (a search repeats its filter).

    Raises:
        InvalidFilter: not an object, an unknown operator or ``$`` field, a bad operand, an empty
            path segment, more than :data:`MAX_FILTER_DEPTH` levels or
            :data:`MAX_FILTER_CONDITIONS` conditions (the message names the field and operator).
    """
    if raw is None:
        return None
    key = _memo_key(raw, fields)
    if key is not None:
        with _parsed_lock:
            found = _parsed.get(key, _UNSEEN)
            if found is not _UNSEEN:
                _parsed.move_to_end(key)
                return found  # type: ignore[return-value]  # what this function stored
    flt = _parse(raw, fields)
    if key is not None:
        with _parsed_lock:
            _parsed[key] = flt
            while len(_parsed) > PARSED_KEPT:
                _parsed.popitem(last=False)
    return flt


PARSED_KEPT: Final = 512
"""Parsed filters remembered (by their exact text and types)."""
_parsed: OrderedDict[tuple[str, str], Filter | None] = OrderedDict()
_parsed_lock = threading.Lock()
_UNSEEN: Final = object()
_PLAIN: Final = (str, int, float, bool, type(None))


def _memo_key(raw: object, fields: FieldSet) -> tuple[str, str] | None:
    """A key telling ``raw`` apart from every other value (its repr, when it holds only plain
    JSON types, whose reprs never collide), or None: not remembered."""
    stack, seen = [raw], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > MAX_FILTER_CONDITIONS * 4:
            return None
        kind = type(item)
        if kind is dict:
            stack.extend(item.keys())  # type: ignore[attr-defined]  # a dict, checked above
            stack.extend(item.values())  # type: ignore[attr-defined]  # a dict, checked above
        elif kind is list:
            stack.extend(item)  # type: ignore[arg-type]  # a list, checked above
        elif kind not in _PLAIN:
            return None
    return fields.surface, repr(raw)


def _parse(raw: object, fields: FieldSet) -> Filter | None:
    parser = _Parser(fields)
    root = parser.clauses(raw, 0, "filter")
    if isinstance(root, AllOf) and not root.parts:
        return None
    return Filter(root, json.dumps(_shape(root), sort_keys=True, default=repr), parser.builtin_used)


def combine(*parts: Node | Filter | None) -> Filter | None:
    """The filter every part must pass (None: no part, every record passes)."""
    nodes = [p.root if isinstance(p, Filter) else p for p in parts if p is not None]
    if not nodes:
        return None
    root = nodes[0] if len(nodes) == 1 else AllOf(tuple(nodes))
    return Filter(root, json.dumps(_shape(root), sort_keys=True, default=repr), _uses_builtins(root))


def _uses_builtins(node: Node) -> bool:
    if isinstance(node, Condition):
        return node.builtin is not None
    if isinstance(node, NotOf):
        return _uses_builtins(node.part)
    return any(_uses_builtins(p) for p in node.parts)


class _Parser:
    def __init__(self, fields: FieldSet) -> None:
        self.fields = fields
        self.count = 0
        self.builtin_used = False

    def clauses(self, raw: object, depth: int, where: str, prefix: tuple[str, ...] = ()) -> Node:
        if depth > MAX_FILTER_DEPTH:
            raise InvalidFilter(f"{where}: nested more than {MAX_FILTER_DEPTH} levels deep")
        if not isinstance(raw, Mapping):
            raise InvalidFilter(f"{where} {short_repr(raw)}: must be an object of field to condition")
        parts: list[Node] = []
        for name, condition in raw.items():
            if not isinstance(name, str):
                raise InvalidFilter(f"{where}: field name {short_repr(name)} must be a string")
            if not prefix and name in LOGIC:
                parts.append(self.logic(name, condition, depth))
            else:
                parts.append(self.field(name, condition, depth, prefix))
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def logic(self, name: str, raw: object, depth: int) -> Node:
        if name == "$not":
            return NotOf(self.clauses(raw, depth + 1, "$not"))
        if not isinstance(raw, list | tuple) or not raw:
            raise InvalidFilter(f"{name} {short_repr(raw)}: must be a non-empty list of filters")
        parts = tuple(self.clauses(item, depth + 1, f"{name}[{n}]") for n, item in enumerate(raw))
        return AllOf(parts) if name == "$and" else AnyOf(parts)

    def field(self, name: str, raw: object, depth: int, prefix: tuple[str, ...]) -> Node:
        builtin, path = self.resolve(name, prefix)
        if isinstance(raw, Mapping) and raw and all(isinstance(k, str) and k.startswith("$") for k in raw):
            conditions = [self.condition(op, operand, builtin, path) for op, operand in raw.items()]
            return conditions[0] if len(conditions) == 1 else AllOf(tuple(conditions))
        if isinstance(raw, Mapping) and raw and builtin is None:
            if any(isinstance(k, str) and k.startswith("$") for k in raw):
                raise InvalidFilter(f"filter field {'.'.join(path)!r}: mixes operators with nested keys")
            return self.clauses(raw, depth + 1, f"filter field {'.'.join(path)!r}", path)
        return self.condition("$eq", raw, builtin, path)

    def resolve(self, name: str, prefix: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
        """``(built-in name, None)`` or ``(None, path into the user data)``."""
        if prefix:
            return None, (*prefix, name)
        fields = self.fields
        if name.startswith("$"):
            if name[1:] in fields.builtins:
                return name[1:], ()
            known = ", ".join(f"${b}" for b in fields.builtins) or "none"
            raise InvalidFilter(
                f"filter field {name!r}: not a built-in field of {fields.surface} ({known}) nor one of "
                f"{', '.join(LOGIC)}"
            )
        if not name or any(not part for part in name.split(".")):
            raise InvalidFilter(
                f"Invalid filter key {name!r}: a field name is a dotted path of non-empty keys"
            )
        if fields.bare and name in fields.builtins:
            return name, ()
        if fields.bare and name.startswith(fields.data + "."):
            return None, (name[len(fields.data) + 1 :],)
        return None, (name,)

    def condition(self, op: object, operand: Any, builtin: str | None, path: tuple[str, ...]) -> Condition:
        self.count += 1
        if self.count > MAX_FILTER_CONDITIONS:
            raise InvalidFilter(f"filter: more than {MAX_FILTER_CONDITIONS} conditions")
        kind = "json" if builtin is None else self.fields.builtins[builtin]
        field = f"${builtin}" if builtin is not None else ".".join(path)
        if op not in OPERATORS:
            raise InvalidFilter(
                f"filter operator {short_repr(op)} on field {field!r}: must be one of {', '.join(OPERATORS)}"
            )
        assert isinstance(op, str)
        _check_json(operand, f"filter {field!r} {op}", 0)
        if op == "$exists":
            if not isinstance(operand, bool):
                raise InvalidFilter(f"filter {field!r} $exists {short_repr(operand)}: must be true or false")
        elif op in ("$in", "$nin"):
            if not isinstance(operand, list | tuple):
                raise InvalidFilter(f"filter {field!r} {op} {short_repr(operand)}: must be a list")
            operand = tuple(_normal(item, kind, field, op) for item in operand)
        elif op == "$contains":
            if kind in ("time", "category") or (kind == "text" and not isinstance(operand, str)):
                raise InvalidFilter(f"filter {field!r} {op}: {short_repr(operand)} cannot be contained in it")
            items = operand if isinstance(operand, list | tuple) else None
            operand = tuple(_normal(i, kind, field, op) for i in items) if items is not None else (
                _normal(operand, kind, field, op)
            )  # fmt: skip
        else:
            operand = _normal(operand, kind, field, op)
            if op in COMPARISONS and not (
                isinstance(operand, str)
                or (isinstance(operand, int | float) and not isinstance(operand, bool))
            ):
                raise InvalidFilter(
                    f"filter {field!r} {op} {short_repr(operand)}: must be a number or a string"
                )
        if builtin is not None:
            self.builtin_used = True
        return Condition(op, operand, builtin, kind, path)


def _check_json(value: Any, where: str, depth: int) -> None:
    """A JSON-shaped operand (non-finite floats allowed: they compare as IEEE numbers)."""
    if depth > MAX_FILTER_DEPTH:
        raise InvalidFilter(f"{where}: operand nested more than {MAX_FILTER_DEPTH} levels deep")
    if value is None or isinstance(value, str | bool | int | float | datetime):
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1024:
            raise InvalidFilter(f"{where}: {short_repr(value)} is too large a number")
        return
    if isinstance(value, list | tuple):
        for item in value:
            _check_json(item, where, depth + 1)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidFilter(f"{where}: object key {short_repr(key)} must be a string")
            _check_json(item, where, depth + 1)
        return
    raise InvalidFilter(f"{where}: {short_repr(value)} is not a JSON value")


def _normal(value: Any, kind: str, field: str, op: str) -> Any:
    """An operand in the form its field's values are compared in."""
    if kind == "time":
        return _epoch(value, field, op)
    if kind in ("category", "tags"):
        if not isinstance(value, str):
            raise InvalidFilter(f"filter {field!r} {op} {short_repr(value)}: must be a string")
        return value.casefold()
    if kind == "text" and op not in ("$eq", "$ne", "$in", "$nin") and not isinstance(value, str):
        raise InvalidFilter(f"filter {field!r} {op} {short_repr(value)}: must be a string")
    if isinstance(value, datetime):
        raise InvalidFilter(f"filter {field!r} {op}: a datetime compares only with a time field")
    return _own(value)


def _own(value: Any) -> Any:
    """A copy of a JSON operand that no caller holds (lists become tuples): a remembered filter
    must not change when the dict it was parsed from does."""
    if isinstance(value, list | tuple):
        return tuple(_own(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _own(v) for k, v in value.items()}
    return value


def _epoch(value: Any, field: str, op: str) -> float:
    """A time operand as epoch seconds."""
    when: datetime | None = None
    if isinstance(value, datetime):
        when = value
    elif isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            when = None
    elif isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if when is None or when.tzinfo is None or when.utcoffset() is None:
        raise InvalidFilter(
            f"filter {field!r} {op} {short_repr(value)}: must be a timezone-aware datetime, "
            "ISO-8601 text with a zone (e.g. 2024-05-01T12:00:00Z) or epoch seconds"
        )
    return when.astimezone(UTC).timestamp()


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
