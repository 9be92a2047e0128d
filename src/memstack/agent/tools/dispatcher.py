"""How a tool call's arguments are read and its failures worded, for the one tool dispatcher
(:func:`memstack.ops.tools.call_tool`, behind ``MemoryTools``, MCP and ``POST /v1/tools/{name}``).

What an LLM produced (arguments as JSON text, possibly malformed) is decoded and checked against
:mod:`memstack.foundation.limits` here; a failure's one-line message names the tool and the argument.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...foundation.errors import InvalidValue, MemstackError, UnknownTool
from ...foundation.limits import MAX_DEPTH, MAX_INT_DIGITS, check_json, check_text
from .refusals import is_worded, refused

__all__ = ["check_arguments", "decode_arguments", "failed", "unknown_tool", "worded"]


def decode_arguments(name: str, arguments: object) -> dict[str, Any]:
    """The arguments of a call to tool ``name`` as a dict (JSON text, a mapping, or None for none).

    Raises:
        InvalidValue: not JSON, or not a JSON object.
    """
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    raw: object = arguments
    if isinstance(arguments, str):
        try:
            raw = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise InvalidValue(
                f"the arguments of '{name}' are not valid JSON ({exc.msg} at position {exc.pos})."
            ) from None
        except RecursionError:
            raise InvalidValue(
                f"the arguments of '{name}' are nested deeper than {MAX_DEPTH} levels."
            ) from None
        except ValueError:  # CPython's own cap on integer digits, met while parsing
            raise InvalidValue(
                f"the arguments of '{name}' hold an integer of more than {MAX_INT_DIGITS} digits."
            ) from None
    elif isinstance(arguments, Mapping):
        raw = dict(arguments)
    if not isinstance(raw, dict):
        raise InvalidValue(f"the arguments of '{name}' must be a JSON object, got {type(raw).__name__}.")
    return raw


def check_arguments(name: str, raw: dict[str, Any]) -> dict[str, Any]:
    """``raw`` when every argument name is text and every value JSON within :mod:`memstack.foundation.limits`.

    Raises:
        InvalidValue: the first argument breaking a limit (``invalid arguments for '{name}': …``).
    """
    try:
        for key, value in raw.items():
            check_text(key, "argument name")
            check_json(value, key)
    except InvalidValue as exc:
        raise InvalidValue(f"invalid arguments for '{name}': {exc}.") from None
    return raw


def unknown_tool(name: object, known: Iterable[str]) -> UnknownTool:
    """The error for a tool name that is not in ``known`` (the message lists every known tool)."""
    shown = name[:80] if isinstance(name, str) else name  # repr() escapes lone surrogates
    return UnknownTool(f"unknown tool {shown!r}. Available tools: {', '.join(known)}.")


def failed(name: str, exc: MemstackError) -> MemstackError:
    """``exc`` re-worded as ``'{name} failed: {message}'``, keeping its type (so its status); a
    refusal the tool worded itself (:func:`~memstack.agent.tools.refusals.refused`) stays as it is."""
    if is_worded(exc):
        return exc
    try:
        # Worded once: the registry's tool door and the dispatcher both wrap a call.
        return refused(type(exc), f"{name} failed: {exc}")
    except TypeError:  # an error type with its own constructor keeps its own words
        return exc


@contextlib.contextmanager
def worded(name: str) -> Iterator[None]:
    """A :class:`~memstack.MemstackError` raised inside re-raised as :func:`failed` words it."""
    try:
        yield
    except MemstackError as exc:
        reworded = failed(name, exc)
        if reworded is exc:
            raise
        raise reworded from exc
