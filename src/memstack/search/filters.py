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

import threading
from collections import OrderedDict
from typing import Final

from .filter_ast import MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, OPERATORS, FieldSet, Filter, combine
from .filter_parse import parse

# The parsed form (conditions and nodes) is :mod:`memstack.search.filter_ast`'s.
__all__ = [
    "MAX_FILTER_CONDITIONS",
    "MAX_FILTER_DEPTH",
    "OPERATORS",
    "FieldSet",
    "Filter",
    "combine",
    "parse_filter",
]


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
    flt = parse(raw, fields)
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
