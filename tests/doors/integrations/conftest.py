"""Set before CrewAI loads (its listeners read them on import): no telemetry, no trace upload, no
interactive first-run prompt, so nothing leaves the machine and nothing waits for a keyboard.

``MEMSTACK_REQUIRE_FRAMEWORKS=1`` (CI's frameworks venv) turns every skip of an adapter test here
(a missing extra, a missing server) into a failure: that step exists to run them, so a skip there
would hide that they never ran."""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

for _name in ("CREWAI_TESTING", "CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED"):
    os.environ[_name] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"

REQUIRE = os.environ.get("MEMSTACK_REQUIRE_FRAMEWORKS") == "1"


def _fail_a_skip(report: pytest.CollectReport | pytest.TestReport) -> None:
    if REQUIRE and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under MEMSTACK_REQUIRE_FRAMEWORKS=1: {report.longrepr}"


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, pytest.CollectReport]:
    report: pytest.CollectReport = yield
    _fail_a_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, pytest.TestReport]:
    report: pytest.TestReport = yield
    _fail_a_skip(report)
    return report
