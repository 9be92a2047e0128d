"""Every operation's HTTP routes, generated from the registry (:mod:`memstack.ops`).

A route reads its request from the path, the query string and the JSON body as its
:class:`~memstack.ops.Http` binding says, strictly: a query parameter or body field the operation
does not take, a value of the wrong JSON type, a body that is not a JSON object: 422 naming the
place (``query.scope``, ``body.limit``), before anything runs. Text from the path and the query
string is read by its field's type (:func:`memstack.ops.from_text`). The OpenAPI document
describes each route from the same request model.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Final

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from ....agent.tools.schemas import inline_refs
from ....foundation.errors import InvalidRequest
from ....ops import OPERATIONS, Http, Op, arun, field_kind, from_text, parse
from ....ops.registry import client_method
from ....ops.tools import ToolCall, acall_tool
from ....ops.wire import memory_json
from ..app import TenantMemory
from ..bodies import is_json
from ..slow_work import SLOW_OPS, SlowWork
from ..vacuum_gate import VacuumGate
from ._common import ERRORS

__all__ = ["routers"]

_TAGS: Final = {
    "sessions": "sessions",
    "conversations": "conversations",
    "memories": "long-term memory",
    "working": "working memory",
    "shared": "shared memory",
    "cache": "shared memory: cache and documents",
    "documents": "shared memory: cache and documents",
    "dream": "dream",
}


def _fail(issues: list[tuple[str, str, str]]) -> RequestValidationError:
    """A 422 naming each ``(place, field, problem)``."""
    return RequestValidationError(
        [
            {"loc": (place, *field.split(".")), "msg": problem, "type": "invalid"}
            for place, field, problem in issues
        ]
    )


def _place(binding: Http, fields: tuple[str, ...], field: str) -> str:
    root = field.split(".", 1)[0].split("[", 1)[0]
    if root in binding.path_fields:
        return "path"
    return "query" if root in binding.query_fields(fields) else "body"


async def _body(
    request: Request, allowed: tuple[str, ...], issues: list[tuple[str, str, str]]
) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    if not is_json(request.headers.get("content-type")):
        issues.append(("body", "body", "must be application/json"))
        return {}
    try:
        body = json.loads(raw)
    except ValueError as exc:
        issues.append(("body", "body", f"not JSON ({exc})"))
        return {}
    if not isinstance(body, dict):
        issues.append(("body", "body", f"must be a JSON object, got {type(body).__name__}"))
        return {}
    for key in body:
        if key not in allowed:
            issues.append(
                ("body", key, "not a field of this request" if allowed else "this route takes no body")
            )
    return {k: v for k, v in body.items() if k in allowed}


async def _read(request: Request, op: Op[Any], binding: Http) -> Any:
    """The request of ``op`` from an HTTP request.

    Raises:
        RequestValidationError: anything out of place, missing or of the wrong type (422).
    """
    fields = op.fields
    query_fields = binding.query_fields(fields)
    issues: list[tuple[str, str, str]] = []
    texts: dict[str, list[str]] = defaultdict(list)
    for key, value in request.query_params.multi_items():
        texts[key].append(value)
    data: dict[str, Any] = {}
    for place, given, allowed in (
        ("path", {k: [v] for k, v in request.path_params.items()}, binding.path_fields),
        ("query", texts, query_fields),
    ):
        for key, values in given.items():
            if key not in allowed:
                issues.append((place, key, "not a parameter of this route"))
                continue
            try:
                data[key] = from_text(op.request.model_fields[key], key, values)
            except InvalidRequest as exc:
                issues += [(place, key, problem) for _, problem in exc.issues]
    if binding.has_body:
        data.update(await _body(request, binding.body_fields(fields), issues))
    if not issues:
        try:
            return parse(op.request, data, operation=op.name)
        except InvalidRequest as exc:
            issues += [(_place(binding, fields, field), field, problem) for field, problem in exc.issues]
    raise _fail(issues)


def _create_once(mem: Any, request: Any) -> Any:
    """``POST /v1/memories`` with an id creates (the id is its idempotency key; PUT updates): a
    retry with the same content changes nothing; over other content, written since by anyone, it
    is refused rather than overwriting it. The check is part of the save's guarded write.

    Raises:
        AlreadyExists: the id holds other content.
    """
    entry = mem.long_term(request.scope).save(**request.model_dump(exclude={"scope"}), create=True)
    return memory_json(entry)


def _endpoint(op: Op[Any], binding: Http) -> Any:
    async def endpoint(request: Request, mem: TenantMemory) -> Any:
        parsed = await _read(request, op, binding)
        wait = getattr(parsed, "wait", None)
        cap = float(request.app.state.settings.max_wait_seconds)
        if isinstance(wait, float | int) and wait > cap:  # long polls are cut at the server's limit
            parsed = parsed.model_copy(update={"wait": cap})
        if binding.method == "POST" and op.name == "memories.save" and parsed.id is not None:
            created = await anyio.to_thread.run_sync(_create_once, mem, parsed)
            return JSONResponse(created, status_code=binding.status)
        if getattr(parsed, "vacuum", False) is True:  # rebuilds every tenant's file
            gate: VacuumGate = request.app.state.vacuum_gate
            await anyio.to_thread.run_sync(gate.admit, request.headers.get("authorization"))
        if op.name == "tools.call":  # a tool that waits on a model (dream_dry_run): the model threads
            runner = request.app.state.slow_work.runner(str(request.state.tenant))
            call = ToolCall(parsed.session_id, parsed.scope, parsed.namespace)
            answer = await acall_tool(mem, parsed.name, parsed.arguments, call, runner)
            return JSONResponse(
                {"name": answer.name, "result": answer.text, "data": answer.data}, status_code=binding.status
            )
        # The result is JSON already (memstack.ops.wire, typed by op.output): no second validation.
        if op.name in SLOW_OPS:  # a model call: its own threads and a share per tenant
            slow: SlowWork = request.app.state.slow_work
            result = await slow.run(str(request.state.tenant), op.handler, mem, parsed)
            return JSONResponse(result, status_code=binding.status)
        return JSONResponse(await arun(op, mem, parsed), status_code=binding.status)

    endpoint.__name__ = op.name.replace(".", "_")
    return endpoint


def _schemas(op: Op[Any]) -> dict[str, Any]:
    schema = op.request.model_json_schema()
    defs = schema.get("$defs", {})
    properties = {name: inline_refs(prop, defs) for name, prop in schema.get("properties", {}).items()}
    for prop in properties.values():
        prop.pop("title", None)
    return {"properties": properties, "required": set(schema.get("required", []))}


# What clients generated from the OpenAPI document read for their retries: a write that names the
# field making it idempotent (sent again with the same value, it is applied once: the retry answers
# AlreadyExists), and what may be sent twice: a PUT (it writes the value at its address: a retry
# writes the same, or answers Conflict for a compare-and-set that already took), and tiers whose
# every operation may (a store put replaces its item, a delete of nothing is no error, reads at
# most restart TTLs).
_IDEMPOTENCY_KEYS = {"conversations.append": "message_id", "memories.save": "id"}
_SAFE_TIERS = frozenset({"store"})


def _openapi(op: Op[Any], binding: Http) -> dict[str, Any]:
    """The parameters and the body of one route, from the request model."""
    described = _schemas(op)
    properties, required = described["properties"], described["required"]
    parameters = []
    for place, names in (("path", binding.path_fields), ("query", binding.query_fields(op.fields))):
        for name in names:
            schema = dict(properties[name])
            kind = field_kind(op.request.model_fields[name])
            if kind == "json":  # an object in a URL is JSON text
                schema = {"type": "string", "description": f"JSON: {schema.get('description', '')}"}
            elif kind == "texts":
                schema = {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": schema.get("description", ""),
                }
            parameters.append(
                {
                    "name": name,
                    "in": place,
                    "required": place == "path" or name in required,
                    "description": schema.get("description", ""),
                    "schema": schema,
                }
            )
    extra: dict[str, Any] = {
        "parameters": parameters,
        "x-memstack-client": client_method(op.name),
        "x-memstack-operation": op.name,  # the client generates the methods of registry operations
    }
    if op.name in _IDEMPOTENCY_KEYS:
        extra["x-memstack-idempotency-key"] = _IDEMPOTENCY_KEYS[op.name]
    if binding.method == "PUT" or op.name.split(".", 1)[0] in _SAFE_TIERS:
        extra["x-memstack-safe"] = True
    body = binding.body_fields(op.fields)
    if body:
        body_schema = {
            "type": "object",
            "properties": {name: properties[name] for name in body},
            "required": [name for name in body if name in required],
            "additionalProperties": False,
        }
        extra["requestBody"] = {
            "required": bool(body_schema["required"]),
            "content": {"application/json": {"schema": body_schema}},
        }
    return extra


def _prefix(path: str) -> str:
    """The router of a route: its first two segments (``/v1/sessions``)."""
    return "/".join(path.split("/", 3)[:3])


def _install() -> None:
    for op in OPERATIONS.values():
        for index, binding in enumerate(op.http):
            name = op.name.replace(".", "_") + (f"_{index}" if index else "")
            prefix = _prefix(binding.path)
            if prefix not in _by_prefix:
                _by_prefix[prefix] = APIRouter(prefix=prefix)
            _by_prefix[prefix].add_api_route(
                binding.path[len(prefix) :],
                _endpoint(op, binding),
                methods=[binding.method],
                status_code=binding.status,
                response_model=None,
                summary=op.summary.rstrip("."),
                tags=[_TAGS.get(op.name.split(".", 1)[0], op.name.split(".", 1)[0])],
                responses={binding.status: {"model": op.output, "description": op.summary}, **ERRORS},
                openapi_extra=_openapi(op, binding),
                operation_id=name,
                name=name,
            )


# One router per path prefix: FastAPI prepares a router's routes when a request first reaches it,
# so a request prepares only its own tier's routes.
_by_prefix: dict[str, APIRouter] = {}
_install()
routers: list[APIRouter] = list(_by_prefix.values())
