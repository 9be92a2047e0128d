"""The agent memory tools' arguments as pydantic models, and their OpenAI tool JSON schemas.

Each tool is one row of :data:`TOOLS`: its name, description and argument model. The JSON schema
an LLM sees is generated from the model (titles dropped, ``X | None`` shown as optional ``X``), so
the schema and the validation of a call can never disagree.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from ...foundation.errors import InvalidValue
from ...tiers.longterm.search_params import SearchParams

__all__ = ["TOOLS", "ToolSpec", "inline_refs", "parameters", "tool_schemas"]

_TAGS = "Optional comma-separated tags, e.g. 'inbox, urgent'."
_CATEGORY = "Optional category path, e.g. 'user-preferences/music'."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=False, defer_build=True)


_SUPERSEDES = (
    "Optional comma-separated ids of memories this one replaces (an old address, a changed "
    "preference): they stay in the history but are no longer recalled."
)


class SaveMemoryArgs(_Args):
    content: str = Field(description="The fact, preference or note to remember, self-contained.")
    category: str | None = Field(None, description=_CATEGORY)
    tags: str | None = Field(None, description=_TAGS)
    supersedes: str | None = Field(None, description=_SUPERSEDES)


class UpdateMemoryArgs(_Args):
    id: str = Field(description="The id of the memory entry, as shown by search_memory.")
    content: str = Field(description="The corrected fact, preference or note, self-contained.")
    category: str | None = Field(None, description=_CATEGORY)
    tags: str | None = Field(None, description=_TAGS)
    supersedes: str | None = Field(None, description=_SUPERSEDES)


class SearchMemoryArgs(SearchParams, _Args):
    """The search parameters every door takes (``SearchParams``)."""


class DeleteMemoryArgs(_Args):
    id: str = Field(description="The id of the memory entry, as shown by search_memory.")


class NoArgs(_Args):
    pass


class SaveToWorkingMemoryArgs(_Args):
    key: str = Field(description="A short key (stored under your own namespace), e.g. 'emails_inbox'.")
    data: str = Field(description="The text to store.")
    ttl_minutes: float | None = Field(None, description="Minutes to keep it (default 5).", gt=0)
    category: str | None = Field(None, description=_CATEGORY)
    tags: str | None = Field(None, description=_TAGS)


class KeyArgs(_Args):
    key: str = Field(
        description="A plain key of your own namespace, or a full path such as 'patrol/heartbeat/alerts'."
    )


class ListWorkingMemoryArgs(_Args):
    namespace: str | None = Field(
        None,
        description="A namespace or prefix to browse, e.g. 'patrol' or 'subagent/t1'; omit for your own.",
    )


class SearchWorkingMemoryArgs(_Args):
    query: str | None = Field(None, description="Words to search for; omit to list the newest entries.")
    category: str | None = Field(None, description="Only entries in this category or its sub-categories.")
    tags: str | None = Field(
        None, description="Only entries carrying every one of these comma-separated tags."
    )
    namespace: str | None = Field(None, description="A namespace or prefix to search; omit for your own.")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One agent tool: its name, what the LLM is told about it, and its argument model."""

    name: str
    description: str
    args: type[BaseModel]

    def schema(self) -> dict[str, Any]:
        """The tool in the OpenAI format: ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters(self.args),
            },
        }


TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        "save_memory",
        "Save a durable fact, preference or note to long-term memory so it can be recalled in later "
        "conversations.",
        SaveMemoryArgs,
    ),
    ToolSpec(
        "update_memory",
        "Correct an existing long-term memory entry by its id (its content, category and tags are "
        "replaced; its history keeps the old version).",
        UpdateMemoryArgs,
    ),
    ToolSpec(
        "search_memory",
        "Search long-term memory by keywords, optionally filtered by category and tags.",
        SearchMemoryArgs,
    ),
    ToolSpec("delete_memory", "Delete one long-term memory entry by its id.", DeleteMemoryArgs),
    ToolSpec("list_memory_categories", "List the categories of long-term memory.", NoArgs),
    ToolSpec(
        "save_to_working_memory",
        "Store scratch data (large tool results, partial work) in your working-memory namespace for "
        "a few minutes, to read back later instead of keeping it in the conversation.",
        SaveToWorkingMemoryArgs,
    ),
    ToolSpec(
        "get_from_working_memory",
        "Read a working-memory entry by plain key (your namespace) or full path (any namespace).",
        KeyArgs,
    ),
    ToolSpec(
        "delete_from_working_memory",
        "Delete a working-memory entry of your own namespace.",
        KeyArgs,
    ),
    ToolSpec(
        "list_working_memory",
        "List working-memory keys (with expiry, category and tags, without values) in your namespace "
        "or under another prefix.",
        ListWorkingMemoryArgs,
    ),
    ToolSpec(
        "search_working_memory",
        "Search working memory by keywords, category and tags, in your namespace or under another prefix.",
        SearchWorkingMemoryArgs,
    ),
)
_BY_NAME: Final = {spec.name: spec for spec in TOOLS}


def tool_schemas(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The OpenAI tool schemas of ``names`` (default: every tool), in :data:`TOOLS` order.

    Raises:
        InvalidValue: an unknown tool name.
    """
    if names is None:
        return [spec.schema() for spec in TOOLS]
    wanted = list(names)
    unknown = [n for n in wanted if n not in _BY_NAME]
    if unknown:
        raise InvalidValue(f"unknown tool(s) {unknown!r}: known tools are {', '.join(_BY_NAME)}")
    return [spec.schema() for spec in TOOLS if spec.name in wanted]


def parameters(model: type[BaseModel], fields: Iterable[str] | None = None) -> dict[str, Any]:
    """The JSON schema of a tool's arguments: ``model``'s fields (or only ``fields``), without
    titles, ``X | None`` as an optional ``X``, no other property allowed; references inlined."""
    schema = model.model_json_schema()
    defs = schema.get("$defs", {})
    wanted = None if fields is None else set(fields)
    properties = {
        name: _clean(inline_refs(prop, defs))
        for name, prop in schema.get("properties", {}).items()
        if wanted is None or name in wanted
    }
    out: dict[str, Any] = {"type": "object", "properties": properties}
    out["required"] = [name for name in schema.get("required", []) if name in properties]
    out["additionalProperties"] = False
    return out


def inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/X"}`` replaced by X (the models have no cycles)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = defs[ref.rsplit("/", 1)[1]]
            return inline_refs({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs)
        return {k: inline_refs(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [inline_refs(v, defs) for v in node]
    return node


def _clean(prop: dict[str, Any]) -> dict[str, Any]:
    prop = copy.deepcopy(prop)
    prop.pop("title", None)
    if prop.get("default", ...) is None:
        del prop["default"]
    variants = prop.pop("anyOf", None)
    if variants is not None:
        # ``X | None`` becomes an optional ``X``: the LLM omits it rather than sending null.
        real = [v for v in variants if v.get("type") != "null"]
        if len(real) == 1:
            prop = {**real[0], **prop}
        else:
            prop["anyOf"] = real
    return {k: prop[k] for k in sorted(prop, key=lambda k: (k != "type", k != "description", k))}
