"""Set before CrewAI loads (its listeners read them on import): no telemetry, no trace upload, no
interactive first-run prompt, so nothing leaves the machine and nothing waits for a keyboard."""

from __future__ import annotations

import os

for _name in ("CREWAI_TESTING", "CREWAI_DISABLE_TELEMETRY", "OTEL_SDK_DISABLED"):
    os.environ[_name] = "true"
os.environ["CREWAI_TRACING_ENABLED"] = "false"
