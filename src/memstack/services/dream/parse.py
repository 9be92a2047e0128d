"""Reading a model's answer: strip ``<think>`` blocks, take the outermost JSON span.

Models wrap JSON in prose, code fences or reasoning preambles; RockBot's contract is to drop
``<think>…</think>`` blocks and parse from the first opening bracket to the last closing one.
Everything here is pure and raises :class:`~memstack.foundation.errors.InvalidValue` on an answer that does
not hold the expected shape, so a driver can record the cycle as skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final

from ...foundation.errors import ChatError, InvalidInput, InvalidValue, ScriptExhausted
from ...foundation.jsontext import loads

__all__ = [
    "ACTIONS",
    "MAX_ITEMS",
    "MODEL_FAILURES",
    "Decision",
    "ProposedEntry",
    "ProposedFact",
    "ProposedItem",
    "outermost",
    "parse_consolidation",
    "parse_decisions",
    "parse_expansion",
    "parse_facts",
    "parse_preferences",
    "strip_think",
]

MAX_ITEMS: Final = 5000
"""Items beyond this many in one answer make it invalid (a runaway model, not a plan)."""
MODEL_FAILURES: Final = (ChatError, ScriptExhausted, InvalidInput, TimeoutError, ConnectionError, OSError)
"""What a model can do wrong that makes a pass "skipped" rather than an error of the caller: it
failed, or answered something these parsers (or the plans) refuse."""
ACTIONS: Final = ("add", "update", "duplicate", "unrelated")
"""What the extract pass may decide for a fact (see :func:`parse_decisions`)."""

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"<think>.*\Z", re.DOTALL | re.IGNORECASE)  # never closed: all reasoning


@dataclass(frozen=True, slots=True)
class ProposedItem:
    """What every item a model proposes holds, as it said it (checked later, when planned)."""

    content: str
    category: str | None = None
    tags: tuple[str, ...] = ()
    source_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ProposedEntry(ProposedItem):
    """One entry a model asked to save, as it said it (checked later, when planned)."""

    metadata: dict[str, Any] | None = field(default=None)


@dataclass(frozen=True, slots=True)
class ProposedFact(ProposedItem):
    """One fact an extraction answer found in the turns, as the model said it."""

    valid_from: str | int | float | None = None
    """As the model gave it: a time string or epoch seconds, read later by the one strict time
    rule (:func:`memstack.foundation.timefmt.strict_instant`)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What a decision answer said of fact number ``fact`` (1-based): an action of
    :data:`ACTIONS` and the ids of the memories it updates or duplicates."""

    fact: int
    action: str
    ids: tuple[str, ...] = ()


def strip_think(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks (and without an unclosed trailing one)."""
    return _OPEN_THINK.sub("", _THINK.sub("", text))


def outermost(text: str, opening: str, closing: str) -> Any:
    """The JSON value spanning the first ``opening`` to the last ``closing`` of ``text``.

    The span is read by :func:`memstack.foundation.jsontext.loads`: its depth is measured before parsing (an
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


def _entry(item: object, index: int, *, sources: bool, metadata: bool, name: str = "toSave") -> ProposedEntry:
    if not isinstance(item, dict):
        raise InvalidValue(f"{name}[{index}] {str(item)[:80]!r}: must be an object")
    fields = {str(k).lower(): v for k, v in item.items()}
    content = fields.get("content")
    if content is not None and not isinstance(content, str):
        raise InvalidValue(f"{name}[{index}].content {content!r}: must be a string")
    category = fields.get("category")
    if category is not None and not isinstance(category, str):
        raise InvalidValue(f"{name}[{index}].category {category!r}: must be a string or null")
    meta = fields.get("metadata") if metadata else None
    if meta is not None and not isinstance(meta, dict):
        raise InvalidValue(f"{name}[{index}].metadata {str(meta)[:80]!r}: must be an object")
    return ProposedEntry(
        content=content or "",
        category=category,
        tags=_strings(fields.get("tags"), f"{name}[{index}].tags"),
        source_ids=_strings(fields.get("sourceids"), f"{name}[{index}].sourceIds") if sources else (),
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
    """``(toDelete, toSave)`` of a consolidation answer; keys are case-insensitive.

    Raises:
        InvalidValue: no JSON object, or fields of the wrong shape.
    """
    fields = _fields(text)
    if "todelete" not in fields and "tosave" not in fields:
        raise InvalidValue(f"model answer {text[:80]!r}: the object has neither toDelete nor toSave")
    to_delete = _strings(fields.get("todelete"), "toDelete")
    to_save = [
        _entry(item, i, sources=True, metadata=False)
        for i, item in enumerate(_items(fields.get("tosave"), "toSave"))
    ]
    return to_delete, to_save


def parse_preferences(text: str) -> list[ProposedEntry]:
    """The ``toSave`` items of a preference answer.

    Raises:
        InvalidValue: no JSON object, or fields of the wrong shape.
    """
    return [_entry(item, i, sources=False, metadata=True) for i, item in enumerate(_object(text, "toSave"))]


def parse_expansion(text: str) -> list[ProposedEntry]:
    """The ``[{content, category, tags}]`` array of a save_memory expansion answer.

    Raises:
        InvalidValue: no JSON array, or items of the wrong shape.
    """
    data = outermost(text, "[", "]")
    return [_entry(item, i, sources=False, metadata=False) for i, item in enumerate(_items(data, "answer"))]


def _fields(text: str) -> dict[str, object]:
    """The outermost JSON object of an answer, its keys lower-cased (models vary the case)."""
    data = outermost(text, "{", "}")
    if not isinstance(data, dict):
        raise InvalidValue(f"model answer {text[:80]!r}: must be a JSON object")
    return {str(k).lower(): v for k, v in data.items()}


def _object(text: str, key: str) -> list[object]:
    """The list under ``key`` (any case) of an answer's object, which must hold it."""
    fields = _fields(text)
    if key.lower() not in fields:
        raise InvalidValue(f"model answer {text[:80]!r}: the object has no {key}")
    return _items(fields[key.lower()], key)


def parse_facts(text: str) -> list[ProposedFact]:
    """The ``facts`` of an extraction answer (keys case-insensitive).

    Raises:
        InvalidValue: no JSON object, no ``facts``, or items of the wrong shape.
    """
    facts = []
    for i, item in enumerate(_object(text, "facts")):
        entry = _entry(item, i, sources=True, metadata=False, name="facts")
        assert isinstance(item, dict)  # _entry checked it
        valid = {str(k).lower(): v for k, v in item.items()}.get("validfrom")
        if valid is not None and (isinstance(valid, bool) or not isinstance(valid, str | int | float)):
            raise InvalidValue(
                f"facts[{i}].validFrom {str(valid)[:80]!r}: must be a time string, epoch seconds or null"
            )
        facts.append(ProposedFact(entry.content, entry.category, entry.tags, entry.source_ids, valid))
    return facts


def parse_decisions(text: str) -> list[Decision]:
    """The ``decisions`` of a decision answer: ``fact`` (a number from 1), ``action`` (one of
    :data:`ACTIONS`, case-insensitive) and ``ids``.

    Raises:
        InvalidValue: no JSON object, no ``decisions``, or items of the wrong shape.
    """
    out = []
    for i, item in enumerate(_object(text, "decisions")):
        if not isinstance(item, dict):
            raise InvalidValue(f"decisions[{i}] {str(item)[:80]!r}: must be an object")
        fields = {str(k).lower(): v for k, v in item.items()}
        fact, action = fields.get("fact"), fields.get("action")
        if isinstance(fact, bool) or not isinstance(fact, int) or fact < 1:
            raise InvalidValue(f"decisions[{i}].fact {str(fact)[:80]!r}: must be a fact number from 1")
        if not isinstance(action, str) or action.strip().lower() not in ACTIONS:
            raise InvalidValue(
                f"decisions[{i}].action {str(action)[:80]!r}: must be one of {', '.join(ACTIONS)}"
            )
        out.append(Decision(fact, action.strip().lower(), _strings(fields.get("ids"), f"decisions[{i}].ids")))
    return out
