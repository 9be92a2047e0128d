"""``/metrics`` in the Prometheus text format: requests, engine batches, errors, indexes, waits.

Every label value comes from a closed set, so no traffic can grow the endpoint: routes are the
app's path templates (``/v1/sessions/{session_id}``) or ``unmatched``, never raw paths; methods
are the standard ones or ``OTHER``; statuses are HTTP's registered codes or ``other``; error
types are memstack's error names, the problem titles of plain HTTP errors, or ``other``; engines
are engine names. Index sizes are summed over every cached scope. So labels never carry tenant
data and the endpoint needs no tenant key; when ``MEMSTACK_METRICS_TOKEN`` is set it asks for
``Authorization: Bearer <that token>``.
"""

from __future__ import annotations

import hmac
import http
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

from fastapi import FastAPI, Request, Response
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.exceptions import HTTPException

from ...engines import Engine
from ...engines.base import BatchResult, Op
from ...engines.forwarding import ForwardingEngine
from ...foundation import errors
from ...index import registry as index_registry
from ...tiers.longterm import index_cache
from .access_log import method_of, route_of
from .middleware import ASGIApp, Message, Receive, Scope, Send
from .problems import TITLES

_In = TypeVar("_In")
_Out = TypeVar("_Out")

__all__ = ["CONTENT_TYPE", "TOKEN_ENV", "Metrics", "MetricsMiddleware", "TimedEngine", "install"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TOKEN_ENV = "MEMSTACK_METRICS_TOKEN"
_REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_BATCH_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
_LONG_POLL = re.compile(r"^/v1/shared/[^/]+/keys/[^/]+$")
_STATUSES = frozenset(str(int(s)) for s in http.HTTPStatus)
_ERROR_TYPES = frozenset({*TITLES.values(), "InternalError", "RequestValidationError", "HTTPError"})


def _error_label(name: str) -> str:
    """``name`` if it is a memstack error class or a known problem title, else ``other``."""
    if name in _ERROR_TYPES:
        return name
    stack: list[type[BaseException]] = [errors.MemstackError]
    while stack:  # the class tree is small and only walked for error responses
        cls = stack.pop()
        if cls.__name__ == name:
            return name
        stack.extend(cls.__subclasses__())
    return "other"


class _IndexCollector(Collector):
    """Sizes of the in-process long-term indexes, summed over scopes (no scope names), and the
    memory of every in-process index against its bound."""

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        caches = index_cache.scope_caches()
        entries = documents = vectors = 0
        for cache in caches:
            with cache.lock:
                entries += len(cache.entries)
                vectors += len(cache.vectors)
                indexes = list(cache.indexes.values())
            # Outside the cache lock and without the indexes' own: a snapshot serialising an index
            # holds its lock (0.2 s at 100,000 entries), and saves of the scope would wait behind it.
            documents += sum(index.documents for index in indexes)
        family = GaugeMetricFamily(
            "memstack_index_size", "Entries held by the in-process long-term indexes.", labels=["kind"]
        )
        family.add_metric(["scopes"], len(caches))
        family.add_metric(["entries"], entries)
        family.add_metric(["bm25_documents"], documents)
        family.add_metric(["vectors"], vectors)
        yield family
        held = index_registry.stats()
        memory = GaugeMetricFamily(
            "memstack_index_memory_bytes",
            "Estimated bytes of every in-process index, and their bound (MEMSTACK_INDEX_MEMORY_MB).",
            labels=["kind"],
        )
        memory.add_metric(["held"], held.bytes)
        memory.add_metric(["bound"], held.bound)
        yield memory
        yield GaugeMetricFamily("memstack_index_caches", "In-process indexes held.", held.entries)
        yield CounterMetricFamily(
            "memstack_index_evictions", "Indexes dropped for the count or memory bound.", held.evictions
        )


class Metrics:
    """The metric families of one app, in a registry of its own (several apps may share a process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        # Every family goes to this app's registry, never the process-wide default one.
        counter, gauge = partial(Counter, registry=self.registry), partial(Gauge, registry=self.registry)
        histogram = partial(Histogram, registry=self.registry)
        self.requests = counter(
            "memstack_http_requests",
            "HTTP requests by route template, method and status.",
            ["route", "method", "status"],
        )
        self.latency = histogram(
            "memstack_http_request_duration_seconds",
            "HTTP request latency by route template and method.",
            ["route", "method"],
            buckets=_REQUEST_BUCKETS,
        )
        self.batches = histogram(
            "memstack_engine_batch_duration_seconds",
            "Latency of one atomic engine batch, by engine.",
            ["engine", "outcome"],
            buckets=_BATCH_BUCKETS,
        )
        self.errors = counter("memstack_errors", "Error responses by error type.", ["type"])
        self.open_waits = gauge("memstack_open_waits", "Long-poll reads waiting for a shared key.")
        self.subscriptions = gauge("memstack_subscriptions", "Open live streams of shared memory changes.")
        self.registry.register(_IndexCollector())

    def render(self) -> bytes:
        """The text exposition of every family."""
        return generate_latest(self.registry)


class TimedEngine(ForwardingEngine):
    """A view of ``inner`` that times each :meth:`execute` into ``memstack_engine_batch_duration_seconds``."""

    def __init__(self, inner: Engine, metrics: Metrics) -> None:
        super().__init__(inner)
        self._ok = metrics.batches.labels(inner.name, "ok")
        self._failed = metrics.batches.labels(inner.name, "error")

    def execute(self, ops: Sequence[Op]) -> BatchResult:
        """Run ``ops`` on the inner engine (raises what it raises)."""
        return self._timed(self.inner.execute, ops)

    def execute_many(self, batches: Sequence[Sequence[Op]]) -> list[BatchResult]:
        """Run ``batches`` on the inner engine, timed as one: they go together (raises what it raises)."""
        return self._timed(self.inner.execute_many, batches)

    def _timed(self, run: Callable[[_In], _Out], what: _In) -> _Out:
        started = time.perf_counter()
        try:
            result = run(what)
        except BaseException:
            self._failed.observe(time.perf_counter() - started)
            raise
        self._ok.observe(time.perf_counter() - started)
        return result


def _waits(scope: Scope) -> bool:
    if scope.get("method") != "GET" or _LONG_POLL.match(str(scope.get("path", ""))) is None:
        return False
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    for part in query.split("&"):
        name, _, value = part.partition("=")
        if name == "wait":
            try:
                return float(value) > 0
            except ValueError:
                return False
    return False


class MetricsMiddleware:
    """Counts and times every HTTP request; reads the error type from problem+json bodies."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        state: dict[str, Any] = {"status": 500, "problem": False, "body": b""}
        waiting = _waits(scope)
        if waiting:
            self.metrics.open_waits.inc()

        async def observing_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["status"] = int(message["status"])
                headers = dict(message.get("headers") or [])
                state["problem"] = headers.get(b"content-type", b"").startswith(b"application/problem+json")
            elif message["type"] == "http.response.body" and state["problem"]:
                state["body"] += message.get("body", b"")
            await send(message)

        error: str | None = None
        try:
            await self.app(scope, receive, observing_send)
        except Exception:
            error = "InternalError"
            raise
        finally:
            if waiting:
                self.metrics.open_waits.dec()
            route, method = route_of(scope), method_of(scope)
            status = int(state["status"])
            code = str(status) if str(status) in _STATUSES else "other"
            self.metrics.requests.labels(route, method, code).inc()
            self.metrics.latency.labels(route, method).observe(time.perf_counter() - started)
            if error is None and status >= 400:
                error = _problem_title(state["body"]) or "HTTPError"
            if error is not None:
                self.metrics.errors.labels(_error_label(error)).inc()


def _problem_title(body: bytes) -> str | None:
    try:
        title = json.loads(body).get("title")
    except (ValueError, AttributeError):
        return None
    return title if isinstance(title, str) else None


def install(app: FastAPI, metrics: Metrics, *, token: str | None = None) -> None:
    """Add ``GET /metrics`` to ``app`` and the middleware that feeds it.

    ``token`` (default: env ``MEMSTACK_METRICS_TOKEN``) makes the endpoint answer 401 without
    ``Authorization: Bearer <token>``.
    """
    required = token if token is not None else os.environ.get(TOKEN_ENV) or None
    app.state.metrics = metrics

    @app.get("/metrics", include_in_schema=False)
    def metrics_text(request: Request) -> Response:
        if required is not None:
            scheme, _, given = request.headers.get("authorization", "").partition(" ")
            matches = hmac.compare_digest(given.strip().encode(), required.encode())
            if scheme.lower() != "bearer" or not matches:
                challenge = {"WWW-Authenticate": "Bearer"}
                raise HTTPException(401, "the metrics token is required", headers=challenge)
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    app.add_middleware(MetricsMiddleware, metrics=metrics)
