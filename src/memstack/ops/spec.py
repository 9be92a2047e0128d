"""What one operation is: its request, its handler, its result, and the doors it opens.

An :class:`Op` is declared once, on its handler in its tier's module under :mod:`memstack.ops`::

    @ops("sessions.get", "mem.sessions.get(session_id, key)", tool="session_get")
    @http("GET /v1/sessions/{session_id}/keys/{key}")
    @cli("sessions get SESSION_ID KEY")
    def _get(mem: Memory, r: OneKey) -> KeyValue:
        "Read one value of a session."

The HTTP routes, the CLI commands, the MCP tools and ``/v1/tools`` are generated from it. The door
faces are plain data (:class:`Http`, :class:`Cli`, :class:`Tool`): adding a capability to every
door is one decorated handler (and its request model).
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from ..services.memory import Memory

__all__ = ["CONTEXT", "Cli", "Handler", "Http", "Op", "Ops", "Request", "Tool", "cli", "http"]

CONTEXT: Final = ("session_id", "scope", "namespace")
"""Fields a tool call fills from its context (the MCP context arguments, the ``/v1/tools`` body)
when its arguments do not give them; a tool's parameter schema never shows them."""

Method = Literal["GET", "POST", "PUT", "DELETE"]
_PATH_FIELD: Final = re.compile(r"\{([a-z_]+)(?::path)?\}")


class Request(BaseModel):
    """The base of every request model: unknown fields are refused and JSON types are strict
    (``"5"`` is not 5, ``true`` is not 1, a float is not an int); see :mod:`memstack.ops.request`."""

    # defer_build: a model's validator is built on its first use, so the CLI starts without
    # building the schema of every operation.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


R = TypeVar("R", bound=Request)
Handler = Callable[["Memory", R], Any] | Callable[["Memory", R], Awaitable[Any]]
"""``handler(mem, request)``: runs the operation on a tenant's memory and returns its result as
JSON (built with :mod:`memstack.ops.wire`), or an awaitable of it."""


@dataclass(frozen=True, slots=True)
class Http:
    """One HTTP route of an operation.

    Attributes:
        route: ``METHOD /path``; ``{field}`` in the path names a request field (``{key:path}``
            spans ``/``).
        status: the status of a success.
        query: the fields read from the query string. None: every field outside the path for GET
            and DELETE, none for POST and PUT (the rest is the JSON body).
    """

    route: str
    status: int = 200
    query: tuple[str, ...] | None = None

    @property
    def method(self) -> Method:
        method = self.route.split(" ", 1)[0]
        assert method in ("GET", "POST", "PUT", "DELETE"), self.route
        return method  # type: ignore[return-value]  # checked just above

    @property
    def path(self) -> str:
        return self.route.split(" ", 1)[1]

    @property
    def path_fields(self) -> tuple[str, ...]:
        """The request fields the path carries, in order."""
        return tuple(_PATH_FIELD.findall(self.path))

    @property
    def has_body(self) -> bool:
        return self.method in ("POST", "PUT")

    def query_fields(self, fields: tuple[str, ...]) -> tuple[str, ...]:
        """The query fields among ``fields`` (the request model's, in order)."""
        if self.query is not None:
            return self.query
        if self.has_body:
            return ()
        return tuple(f for f in fields if f not in self.path_fields)

    def body_fields(self, fields: tuple[str, ...]) -> tuple[str, ...]:
        """The body fields among ``fields``: none for GET and DELETE."""
        if not self.has_body:
            return ()
        taken = set(self.path_fields) | set(self.query_fields(fields))
        return tuple(f for f in fields if f not in taken)


@dataclass(frozen=True, slots=True)
class Cli:
    """The command of an operation.

    Attributes:
        usage: how it is typed: ``sessions get SESSION_ID KEY`` (a group, the command, then the
            fields given as positional arguments, upper-cased) or ``context MESSAGE`` (a
            top-level command); the other fields are options.
        names: option names by field, where ``--field-name`` is not the name (``("--id",)``,
            ``("--namespace", "-n")``); for an argument, the name its help shows.
        defaults: this door's default for a field where it differs from the request model's.
        blank_is_null: fields where an empty text means null (``--parent ''``: no parent).
        env: options of the command line only, each setting an environment variable for the run
            (``{"--chat-url": ("MEMSTACK_CHAT_URL", help)}``): process settings the other doors
            take from the server's environment, never from a request (a caller must not point the
            server at an endpoint of its choosing).
    """

    usage: str
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    blank_is_null: tuple[str, ...] = ()
    env: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def _words(self) -> tuple[list[str], list[str]]:
        words = self.usage.split()
        command = [w for w in words if not w.isupper()]
        return command, [w.lower() for w in words if w.isupper()]

    @property
    def group(self) -> str | None:
        """The command group (None: a top-level command)."""
        command, _ = self._words
        return command[0] if len(command) == 2 else None

    @property
    def command(self) -> str:
        return self._words[0][-1]

    @property
    def args(self) -> tuple[str, ...]:
        """The fields given as positional arguments, in order."""
        return tuple(self._words[1])

    @property
    def words(self) -> str:
        """How it is typed, without its arguments: ``sessions get`` or ``context``."""
        return " ".join(self._words[0])


@dataclass(frozen=True, slots=True)
class Tool:
    """The agent tool (MCP and ``/v1/tools``) of an operation.

    Attributes:
        name: the tool's name.
        fields: the arguments the tool takes (None: every field but the context ones); the
            others keep their defaults.
        fixed: fields set to these values and not offered (a dry run stays a dry run).
        defaults: this door's default for a field where it differs from the request model's.
        description: what the model is told (default: the operation's summary).
    """

    name: str
    fields: tuple[str, ...] | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    description: str | None = None


@dataclass(frozen=True, slots=True)
class Op(Generic[R]):
    """One operation.

    Attributes:
        name: ``tier.verb``, unique (``sessions.get``).
        summary: the one-line help every door shows.
        request: the request model (a :class:`Request`).
        handler: see :data:`Handler`.
        output: the type of the JSON result (a ``TypedDict`` of :mod:`memstack.ops.wire` or of the
            tier's module; ``str`` for a text result).
        library: how the library spells it, for the README's table.
        http: its HTTP routes (several when one operation has two addresses, e.g. POST and PUT).
        cli: its command, or None.
        tool: its agent tool, or None.
    """

    name: str
    summary: str
    request: type[R]
    handler: Handler[R]
    output: Any
    library: str
    http: tuple[Http, ...] = ()
    cli: Cli | None = None
    tool: Tool | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        """The request's field names, in declaration order."""
        return tuple(self.request.model_fields)

    @property
    def reads(self) -> bool:
        """True when the operation only reads (its routes are GETs): it must never write."""
        return bool(self.http) and all(h.method == "GET" for h in self.http)

    def tool_fields(self) -> tuple[str, ...]:
        """The arguments its tool offers (empty without a tool)."""
        if self.tool is None:
            return ()
        chosen = self.tool.fields if self.tool.fields is not None else self.fields
        return tuple(f for f in chosen if f not in CONTEXT and f not in self.tool.fixed)


F = TypeVar("F", bound=Callable[..., Any])


def http(route: str, *, status: int = 200, query: tuple[str, ...] | None = None) -> Callable[[F], F]:
    """Declare an HTTP route of the operation below (stack one per route, in order); see :class:`Http`."""

    def attach(handler: F) -> F:
        handler.__dict__.setdefault("_ops_http", []).insert(0, Http(route, status, query))
        return handler

    return attach


def cli(usage: str, **options: Any) -> Callable[[F], F]:
    """Declare the command of the operation below; see :class:`Cli`."""

    def attach(handler: F) -> F:
        handler.__dict__["_ops_cli"] = Cli(usage, **options)
        return handler

    return attach


class Ops:
    """The operations of one module, in declaration order: ``@ops(name, library, tool=…)`` on a
    handler (under its :func:`http` and :func:`cli`) declares one.

    The handler's annotations give the request model (its second parameter) and the type of its
    result; the first line of its docstring is the operation's one-line help.
    """

    def __init__(self) -> None:
        self.all: list[Op[Any]] = []

    def __call__(self, name: str, library: str, *, tool: Tool | str | None = None) -> Callable[[F], F]:
        def declare(handler: F) -> F:
            hints = typing.get_type_hints(handler)
            request = hints[list(inspect.signature(handler).parameters)[1]]
            summary = (handler.__doc__ or "").strip().split("\n", 1)[0]
            http_routes = tuple(handler.__dict__.get("_ops_http", ()))
            face = Tool(tool) if isinstance(tool, str) else tool
            op = Op(
                name,
                summary,
                request,
                handler,
                hints["return"],
                library,
                http_routes,
                handler.__dict__.get("_ops_cli"),
                face,
            )
            self.all.append(op)
            return handler

        return declare
