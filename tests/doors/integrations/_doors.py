"""What the framework tests share: the adapter's view of an engine (the tenant every door shows by
default) and the HTTP door on the same engine, to read back what an adapter wrote."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from memstack import Memory
from memstack.engines import Engine
from memstack.engines.prefixed import tenant_engine


def default_tenant(engine: Engine) -> Memory:
    """The memory a keyless server, the CLI and ``memstack.open(url)`` show: the ``default`` tenant."""
    return Memory(tenant_engine(engine, "default"))


@contextlib.contextmanager
def http_door(engine: Engine) -> Iterator[Any]:
    """A keyless HTTP client on the whole engine (its default tenant is what the adapter wrote)."""
    from fastapi.testclient import TestClient

    from memstack.doors.server import create_app

    with TestClient(create_app(engine)) as client:
        yield client
