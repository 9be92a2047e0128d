"""Turning what a door received into an operation's request, strictly, the same way on every door.

The rule (README: strict inputs): a request is a JSON object of the operation's fields. A field
the operation does not have is refused, so is a value of another JSON type: ``"5"`` is not 5,
``true`` is not 1, ``5.0`` is not an int (an int is a fine float). Nothing runs before the whole
request is valid, so a refused request changes nothing. :func:`parse` raises
:class:`~memstack.foundation.errors.InvalidRequest` naming every field at fault.

Doors whose transport is text (the query string and path of a URL, the command line) convert
each field's text by its type first (:func:`from_text`); a JSON body or MCP arguments are JSON
already.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final, Literal, TypeVar

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from ..foundation.errors import InvalidRequest
from ..foundation.jsontext import loads
from ..foundation.limits import check_text, short_repr
from ..tiers.longterm.search_params import CommaList
from .spec import Request

__all__ = ["TextKind", "field_kind", "from_text", "issue_text", "parse", "problem_of"]

R = TypeVar("R", bound=Request)
TextKind = Literal["text", "int", "number", "bool", "json", "texts", "tags"]
_INT: Final = re.compile(r"-?[0-9]+")
_MAX_DIGITS: Final = 40
"""Longer text is no number a field takes (and ``int()`` of thousands of digits raises)."""


_MEMBER: Final = re.compile(r"^(?:int|float|str|bool|list|dict|none|[a-z-]+\[.*\])$")


def problem_of(error: Mapping[str, Any]) -> tuple[str, str]:
    """``(field, problem)`` of one pydantic error, without pydantic's wording of types or links
    (nor the union member that failed: ``amount.int`` is ``amount``)."""
    loc = [str(p) for p in error.get("loc", ()) if not _MEMBER.match(str(p))]
    where = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc).lstrip(".") or "request"
    kind = str(error.get("type", ""))
    if kind == "missing":
        return where, "required"
    if kind == "extra_forbidden":
        return where, "not a field of this request"
    message = str(error.get("msg", "invalid"))
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    return where, message[:1].lower() + message[1:]


def issue_text(issues: tuple[tuple[str, str], ...]) -> str:
    """``field: problem; field: problem``."""
    return "; ".join(f"{where}: {what}" for where, what in issues)


def parse(model: type[R], data: object, *, operation: str = "request") -> R:
    """``data`` (a JSON object as Python values) as a ``model`` request.

    Raises:
        InvalidRequest: not an object, an unknown or missing field, or a value of the wrong type
            (``issues`` names each field; the message starts with ``operation``).
    """
    issues: tuple[tuple[str, str], ...] = ()
    if not isinstance(data, Mapping):
        issues = (("request", f"must be a JSON object, got {type(data).__name__}"),)
    else:
        issues = tuple(
            (short_repr(key), "field names are strings") for key in data if not isinstance(key, str)
        )
    if issues:
        raise InvalidRequest(f"{operation}: {issue_text(issues)}", issues)
    assert isinstance(data, Mapping)
    try:
        return model.model_validate(dict(data), strict=True)
    except ValidationError as exc:
        issues = _merged(problem_of(e) for e in exc.errors(include_url=False, include_input=False))
        raise InvalidRequest(f"{operation}: {issue_text(issues)}", issues) from None


def _merged(issues: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """One issue per field: a union's members each failed, so their problems join with "or"."""
    by_field: dict[str, list[str]] = {}
    for where, what in issues:
        by_field.setdefault(where, []).append(what)
    return tuple((where, ", or ".join(dict.fromkeys(whats))) for where, whats in by_field.items())


def _unwrap(annotation: Any) -> tuple[Any, ...]:
    """The members of ``annotation`` without None (``X | None`` gives ``(X,)``)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return tuple(m for a in typing.get_args(annotation) for m in _unwrap(a) if m is not type(None))
    return (annotation,)


def field_kind(info: FieldInfo) -> TextKind:
    """How a field is written as text (query string, path, command line).

    ``texts``: a list of texts (a repeated query parameter, a repeated option); ``tags``: the
    same, or one comma-separated text; ``json``: JSON text (objects, lists of objects, any value);
    ``number``: an int or a float; ``text``: as is (strings, choices and ISO-8601 times, which the
    request model reads).
    """
    if any(isinstance(m, CommaList) for m in info.metadata):
        return "tags"
    members = _unwrap(info.annotation)
    if any(m is Any for m in members):
        return "json"
    if members == (bool,):
        return "bool"
    if members == (int,):
        return "int"
    if set(members) <= {int, float}:
        return "number"
    origins = {typing.get_origin(m) or m for m in members}
    if list in origins:
        inner = [typing.get_args(m)[0] for m in members if typing.get_origin(m) is list]
        if all(typing.get_origin(i) is Literal or i is str for i in inner):
            return "texts"
        return "json"
    if origins & {dict, Mapping}:
        return "json"
    if origins <= {str, datetime, Literal}:
        return "text"
    return "json"


def from_text(info: FieldInfo, name: str, text: str | list[str]) -> Any:
    """The JSON value a field's text stands for (see :func:`field_kind`).

    Raises:
        InvalidRequest: text that is not a value of the field's kind (names ``name``).
        InvalidValue: JSON text (a ``json`` field) that is not JSON or breaks a value limit.
    """
    kind = field_kind(info)
    if kind == "tags" and isinstance(text, str):
        return check_text(text, name)  # the request model splits the commas
    if isinstance(text, list):
        if kind in ("texts", "tags"):
            for item in text:
                check_text(item, name)
            return list(text)
        if len(text) != 1:
            raise InvalidRequest(f"{name}: given {len(text)} times", ((name, "given more than once"),))
        text = text[0]
    check_text(text, name)
    if kind in ("texts", "tags"):
        return [text]
    if kind == "int":
        if not _INT.fullmatch(text.strip()) or len(text) > _MAX_DIGITS:
            raise _refused(name, text, "an integer")
        return int(text)
    if kind == "number":
        return _number(name, text)
    if kind == "bool":
        if text not in ("true", "false"):
            raise _refused(name, text, "true or false")
        return text == "true"
    if kind == "json":
        # A value rule, not the schema: too deep, a lone surrogate, NaN or not JSON at all is the
        # InvalidValue (400, exit 2) the library gives (tests/doors/server/test_entry.py).
        return loads(text, name)
    return text


def _refused(name: str, text: str, what: str) -> InvalidRequest:
    problem = f"{short_repr(text)} is not {what}"
    return InvalidRequest(f"{name}: {problem}", ((name, problem),))


def _number(name: str, text: str) -> int | float:
    if len(text) > _MAX_DIGITS:
        raise _refused(name, text, "a number")
    if _INT.fullmatch(text.strip()):
        return int(text)
    try:
        number = float(text)
    except ValueError:
        raise _refused(name, text, "a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise _refused(name, text, "a finite number")
    return number


def dumps(value: Any) -> str:
    """``value`` as compact JSON text (a tool's text result)."""
    return json.dumps(value, ensure_ascii=False)
