"""Parsing and checking a filter of the filter language (:mod:`memstack.search.filters`) into its
parsed form (:mod:`memstack.search.filter_ast`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..foundation.errors import InvalidFilter
from ..foundation.limits import short_repr
from .filter_ast import (
    COMPARISONS,
    LOGIC,
    MAX_FILTER_CONDITIONS,
    MAX_FILTER_DEPTH,
    OPERATORS,
    AllOf,
    AnyOf,
    Condition,
    FieldSet,
    Filter,
    Node,
    NotOf,
    filter_of,
)

__all__ = ["parse"]


def parse(raw: object, fields: FieldSet) -> Filter | None:
    parser = _Parser(fields)
    root = parser.clauses(raw, 0, "filter")
    if isinstance(root, AllOf) and not root.parts:
        return None
    return filter_of(root)


class _Parser:
    def __init__(self, fields: FieldSet) -> None:
        self.fields = fields
        self.count = 0

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
