"""Reading a model's answer: strip ``<think>`` blocks, take the outermost JSON span (spec 54, 65).

Models wrap JSON in prose, code fences or reasoning preambles; the seed's contract is to drop
``<think>…</think>`` blocks and parse from the first opening bracket to the last closing one.
Everything here is pure and raises :class:`~memstack.errors.InvalidValue` on an answer that does
not hold the expected shape, so a driver can record the cycle as skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from .._jsontext import loads
from ..errors import InvalidValue

__all__ = [
    "MAX_ITEMS",
    "ProposedEntry",
    "outermost",
    "parse_consolidation",
    "parse_expansion",
    "parse_preferences",
    "strip_think",
]

MAX_ITEMS: Final = 5000
"""Items beyond this many in one answer make it invalid (a runaway model, not a plan)."""

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)  # never closed: all reasoning


@dataclass(frozen=True, slots=True)
class ProposedEntry:
    """One entry a model asked to save, as it said it (checked later, when planned)."""

    content: str
    category: str | None = None
    tags: tuple[str, ...] = ()
    source_ids: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = field(default=None)


def strip_think(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks (and without an unclosed trailing one)."""
    return _OPEN_THINK.sub("", _THINK.sub("", text))


def outermost(text: str, opening: str, closing: str) -> Any:
    """The JSON value spanning the first ``opening`` to the last ``closing`` of ``text``.

    The span is read by :func:`memstack._jsontext.loads`: its depth is measured before parsing (an
    answer nested thousands deep is refused, never a ``RecursionError``), and lone surrogates,
    ``NaN`` and over-long integers are refused like any value no engine stores.

    Raises:
        InvalidValue: no such span, or it is not JSON within the value limits.
    """
    body = strip_think(text)
    start, end = body.find(opening), body.rfind(closing)
    if start < 0 or end <= start:
        raise InvalidValue(f"model answer {text[:80]!r}: holds no {opening}…{closing} span")
    return loads(body[start : end + 1], f"model answer {text[:80]!r}: the {opening}…{closing} span")


def _strings(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidValue(f"{what} {str(value)[:80]!r}: must be a list of strings")
    if len(value) > MAX_ITEMS:
        raise InvalidValue(f"{what}: {len(value)} items, more than the {MAX_ITEMS} allowed")
    return tuple(value)


def _entry(item: object, index: int, *, sources: bool, metadata: bool) -> ProposedEntry:
    if not isinstance(item, dict):
        raise InvalidValue(f"toSave[{index}] {str(item)[:80]!r}: must be an object")
    fields = {str(k).lower(): v for k, v in item.items()}
    content = fields.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidValue(f"toSave[{index}].content {content!r}: must be a string")
    category = fields.get("category")
    if category is not None and not isinstance(category, str):
        raise InvalidValue(f"toSave[{index}].category {category!r}: must be a string or null")
    meta = fields.get("metadata") if metadata else None
    if meta is not None and not isinstance(meta, dict):
        raise InvalidValue(f"toSave[{index}].metadata {str(meta)[:80]!r}: must be an object")
    return ProposedEntry(
        content=content or "",
        category=category,
        tags=_strings(fields.get("tags"), f"toSave[{index}].tags"),
        source_ids=_strings(fields.get("sourceids"), f"toSave[{index}].sourceIds") if sources else (),
        metadata=meta,
    )


def _items(value: object, what: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidValue(f"{what} {str(value)[:80]!r}: must be a list")
    if len(value) > MAX_ITEMS:
        raise InvalidValue(f"{what}: {len(value)} items, more than the {MAX_ITEMS} allowed")
    return value


def parse_consolidation(text: str) -> tuple[tuple[str, ...], list[ProposedEntry]]:
    """``(toDelete, toSave)`` of a consolidation answer (spec 65); keys are case-insensitive.

    Raises:
        InvalidValue: no JSON object, or fields of the wrong shape.
    """
    data = outermost(text, "{", "}")
    if not isinstance(data, dict):
        raise InvalidValue(f"model answer {text[:80]!r}: must be a JSON object")
    fields = {str(k).lower(): v for k, v in data.items()}
    if "todelete" not in fields and "tosave" not in fields:
        raise InvalidValue(f"model answer {text[:80]!r}: the object has neither toDelete nor toSave")
    to_delete = _strings(fields.get("todelete"), "toDelete")
    to_save = [
        _entry(item, i, sources=True, metadata=False)
        for i, item in enumerate(_items(fields.get("tosave"), "toSave"))
    ]
    return to_delete, to_save


def parse_preferences(text: str) -> list[ProposedEntry]:
    """The ``toSave`` items of a preference answer (spec 68).

    Raises:
        InvalidValue: no JSON object, or fields of the wrong shape.
    """
    data = outermost(text, "{", "}")
    if not isinstance(data, dict):
        raise InvalidValue(f"model answer {text[:80]!r}: must be a JSON object")
    fields = {str(k).lower(): v for k, v in data.items()}
    if "tosave" not in fields:
        raise InvalidValue(f"model answer {text[:80]!r}: the object has no toSave")
    return [
        _entry(item, i, sources=False, metadata=True)
        for i, item in enumerate(_items(fields.get("tosave"), "toSave"))
    ]


def parse_expansion(text: str) -> list[ProposedEntry]:
    """The ``[{content, category, tags}]`` array of a save_memory expansion answer (spec 54).

    Raises:
        InvalidValue: no JSON array, or items of the wrong shape.
    """
    data = outermost(text, "[", "]")
    return [_entry(item, i, sources=False, metadata=False) for i, item in enumerate(_items(data, "answer"))]
