"""The one table from memstack's exception tree to what the service answers: the HTTP status, the
stable error name, the MCP error code, and whether to send ``Retry-After``.

Both the HTTP API (problem+json) and the MCP server (tool results with ``isError``) read it, so a
failure looks the same on every surface. Rules:

* invalid input (a value that breaks a documented rule) is **400**; a body that does not match the
  route's schema at all is 422 (FastAPI's validation, see :mod:`.problems`);
* not found (including an unknown tool) is 404; exists already and lost compare-and-set are 409;
* a named limit (namespace full, session cap) is **429**: it frees up by itself (entries expire);
* an unreachable or full engine is 503 with ``Retry-After``;
* anything else is 500 with a generic detail: no exception text reaches the caller.

Every detail goes through :func:`scrub`, the last line of defence against credentials (engine
URLs, API keys: :mod:`memstack.foundation.redact`), internal storage keys (``t:acme:rr:memory:s1:c2``) and
text JSON cannot carry (lone surrogates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ...foundation import errors
from ...foundation.keyspace.families import KEY_PREFIXES
from ...foundation.limits import one_line
from ...foundation.redact import redact

__all__ = [
    "INTERNAL",
    "RETRY_AFTER_SECONDS",
    "TABLE",
    "ErrorRule",
    "describe",
    "rule_for",
    "rule_of",
    "scrub",
]

RETRY_AFTER_SECONDS: Final = 1
MAX_DETAIL: Final = 500
"""Longest detail sent (a path into a deeply nested value can run to kilobytes)."""

# JSON-RPC codes: the MCP specification's invalid-params and resource-not-found, else internal.
_INVALID_PARAMS: Final = -32602
_NOT_FOUND: Final = -32002
_INTERNAL: Final = -32603


@dataclass(frozen=True, slots=True)
class ErrorRule:
    """How one branch of the exception tree is answered.

    Attributes:
        status: the HTTP status.
        mcp_code: the JSON-RPC error code reported with an MCP tool failure.
        retry: send ``Retry-After`` (the caller should try again later).
        detail: a fixed detail that replaces the error's own message (which may name hosts,
            paths or internals); None shows the (scrubbed) message.
    """

    status: int
    mcp_code: int
    retry: bool = False
    detail: str | None = None


_FAILED: Final = "the request failed on the server; the server log has the details"

# The first class in the error's MRO found here wins, so the order does not matter.
TABLE: Final[dict[type[BaseException], ErrorRule]] = {
    errors.InvalidInput: ErrorRule(400, _INVALID_PARAMS),
    errors.InvalidRequest: ErrorRule(422, _INVALID_PARAMS),  # a request off its schema (memstack.ops)
    errors.NotANumber: ErrorRule(409, _INVALID_PARAMS),
    errors.NotFound: ErrorRule(404, _NOT_FOUND),
    errors.AlreadyExists: ErrorRule(409, _INVALID_PARAMS),
    errors.Conflict: ErrorRule(409, _INVALID_PARAMS),
    errors.LimitReached: ErrorRule(429, _INTERNAL),
    # A guard rail refused this plan: retrying the same request gives the same answer, so no 429.
    errors.DreamRefused: ErrorRule(409, _INVALID_PARAMS),
    errors.WaitTimeout: ErrorRule(408, _INTERNAL),
    errors.EmbeddingError: ErrorRule(
        502, _INTERNAL, detail="the embedding backend failed; try again shortly"
    ),
    errors.ChatError: ErrorRule(502, _INTERNAL, detail="the chat model backend failed; try again shortly"),
    errors.EngineUnavailable: ErrorRule(
        503, _INTERNAL, retry=True, detail="the storage engine is unavailable; try again shortly"
    ),
    errors.EngineFull: ErrorRule(
        503,
        _INTERNAL,
        retry=True,
        detail="the storage engine is out of room (memory or disk); nothing was written",
    ),
    errors.NotReplicated: ErrorRule(
        503, _INTERNAL, retry=True, detail="the write was not confirmed by enough replicas; it may be lost"
    ),
    errors.EngineError: ErrorRule(500, _INTERNAL, detail=_FAILED),
    errors.MemstackError: ErrorRule(500, _INTERNAL, detail=_FAILED),
}
INTERNAL: Final = ErrorRule(500, _INTERNAL, detail=_FAILED)
"""The rule of an exception outside the tree (a bug): 500, nothing of its text shown."""


def rule_of(exc: BaseException) -> ErrorRule:
    """The rule for ``exc``: its most specific class in :data:`TABLE`, else :data:`INTERNAL`."""
    return rule_for(type(exc))


def rule_for(cls: type[BaseException]) -> ErrorRule:
    """The rule for errors of class ``cls`` (see :func:`rule_of`)."""
    for base in cls.__mro__:
        rule = TABLE.get(base)
        if rule is not None:
            return rule
    return INTERNAL


def describe(exc: BaseException) -> tuple[ErrorRule, str, str]:
    """``(rule, error name, detail)`` for ``exc``: the detail is the rule's fixed text, else the
    error's message scrubbed. An exception outside the tree is named ``InternalError``."""
    rule = rule_of(exc)
    name = "InternalError" if rule is INTERNAL else type(exc).__name__
    return rule, name, rule.detail if rule.detail is not None else scrub(str(exc))


# An internal key: an optional tenant prefix, then one of the keyspace's key prefixes (or any key
# of a tenant prefix), up to the next quote, space or bracket.
_TIERS: Final = "(?:" + "|".join(re.escape(prefix) for prefix in KEY_PREFIXES) + ")"
_KEY: Final = re.compile(rf"(?<![\w:])(?:t:[A-Za-z0-9_-]{{1,64}}:{_TIERS}?|{_TIERS})[^\s'\",;)\]]*")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def scrub(detail: str) -> str:
    """``detail`` without credentials (:func:`memstack.foundation.redact.redact`) or internal storage keys
    (each becomes ``<internal key>``), on one line, at most :data:`MAX_DETAIL` characters, with
    lone surrogates shown as ``\\udXXX`` escapes."""
    detail = _KEY.sub("<internal key>", redact(detail))
    detail = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", detail)
    detail = one_line(detail)
    return detail if len(detail) <= MAX_DETAIL else detail[: MAX_DETAIL - 1] + "…"
