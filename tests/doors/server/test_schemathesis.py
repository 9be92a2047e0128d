"""Schemathesis against the published OpenAPI document of a live server on loopback.

Every operation is called with generated inputs; no response may be a server error (5xx other
than the documented 503 of an unreachable engine) or break the documented status codes, content
types and response schemas.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("schemathesis")

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from _serving import serving
from memstack.doors.server import ServerSettings, create_app
from memstack.engines.memory import MemoryEngine


@pytest.fixture(scope="module")
def live_schema() -> Iterator[schemathesis.BaseSchema]:
    engine = MemoryEngine(sweep_interval=None)
    # Long-poll waits are cut to 50 ms so generated `wait` values keep the run short.
    app = create_app(engine, ServerSettings(max_wait_seconds=0.05))
    try:
        with serving(app) as base:
            yield schemathesis.openapi.from_url(f"{base}/openapi.json")
    finally:
        engine.close()


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def test_api_conforms_to_its_openapi_document(live_schema: schemathesis.BaseSchema) -> None:
    # Driven directly: schemathesis' own pytest plugin does not run under pytest 9.
    operations = [result.ok() for result in live_schema.get_all_operations()]
    assert len(operations) > 20
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def call(case: schemathesis.Case) -> None:
            case.call_and_validate(checks=CHECKS)

        call()
